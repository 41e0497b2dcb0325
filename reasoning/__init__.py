"""Reasoning over the knowledge graph: rules, inference, CBR, BDI maintenance (later issues)."""
