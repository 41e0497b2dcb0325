"""OWL 2 RL in mabos's own engine: semi-naive rules over integer terms, equality by representatives.

``closure(triples)`` computes the OWL 2 RL closure that owlrl computes (the reference implementation in
the tests), much faster. See ``docs/owl-rl.md``.
"""

from reasoning.owl2rl.engine import Closure, closure

__all__ = ["Closure", "closure"]
