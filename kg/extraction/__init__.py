"""From conversation to knowledge: memory and fact extraction (issue 21)."""
