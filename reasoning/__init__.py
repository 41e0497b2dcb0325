"""Reasoning over the knowledge graph: the rule engine (forward, backward, abduction, constraints, policies),
its service over the stores, OWL 2 RL (our engine in :mod:`reasoning.owl2rl`, owlrl as reference), case-based
reasoning, BDI maintenance (R5), cross-agent graph queries and the reasoning-method router with an engine
behind every method of the seed's catalogue."""
