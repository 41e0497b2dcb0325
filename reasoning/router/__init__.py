"""The reasoning-method router: the seed's 32 methods in 6 categories (plus 16 extension methods), scored
against the seed's problem classification, each computed by an engine in :mod:`reasoning.router.methods`.

Example:
    >>> from reasoning.router import MethodContext, reason
    >>> inputs = {"expected-utility": {"options": [{"name": "A", "outcomes": [{"probability": 1.0, "utility": 5}]}]}}
    >>> reason(MethodContext("a"), method="expected_utility", inputs=inputs).results[0].conclusion
    'choose A (expected utility 5)'
"""

from reasoning.router.catalogue import ALIASES, METHODS, SEED, canonical, get_method, list_methods, method_ids
from reasoning.router.fusion import fuse
from reasoning.router.llm import build_prompt
from reasoning.router.methods import engines, has_engine
from reasoning.router.methods.base import Engine, MethodContext, MethodOutcome, MissingInputs
from reasoning.router.models import (
    Category,
    FusionReport,
    MethodScore,
    MethodSpec,
    ProblemClassification,
    RouterResult,
)
from reasoning.router.run import AUTO, reason, run
from reasoning.router.scoring import WEIGHTS, classification_signals, classify_problem, score_methods_for_problem


def engine_kind(method: MethodSpec) -> str:
    """What ``mabos reason methods`` reports: the catalogue's engine kind when an engine is registered, else prompt."""
    return method.engine if has_engine(method.id) else "prompt"


__all__ = [
    "ALIASES",
    "AUTO",
    "METHODS",
    "SEED",
    "WEIGHTS",
    "Category",
    "Engine",
    "FusionReport",
    "MethodContext",
    "MethodOutcome",
    "MethodScore",
    "MethodSpec",
    "MissingInputs",
    "ProblemClassification",
    "RouterResult",
    "build_prompt",
    "canonical",
    "classification_signals",
    "classify_problem",
    "engine_kind",
    "engines",
    "fuse",
    "get_method",
    "list_methods",
    "method_ids",
    "reason",
    "run",
    "score_methods_for_problem",
]
