"""Agent memory: three stores, recall, consolidation (R1), time hierarchy (R2), checkpoints (R3),
recursive search (R4) and the Markdown files that keep it readable."""
