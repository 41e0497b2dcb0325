"""Engines of the reasoning methods, imported when a method runs.

:data:`ENGINE_TABLE` names where each of the seed's 32 methods is computed: canonical (hyphenated) method id ->
``"module:attribute"`` in this package, the module that defines the engine and its ``DOCS`` entry.
:func:`engine` imports that module on first use, so running one method loads its own engine and libraries only
(deductive: no NumPy, networkx, nashpy or scipy). The category modules (:mod:`.formal`, :mod:`.probabilistic`,
:mod:`.causal`, :mod:`.experience`, :mod:`.social`, :mod:`.meta`) keep their ``ENGINES`` tables, and the table
here is checked against them (tests/unit/test_reason_startup.py). :func:`engines` and :func:`method_docs` import
everything (the catalogue listing and the generated docs); a module that fails to import is a bug and is
reported as such (never silently skipped).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reasoning.router.methods.base import Engine
    from reasoning.router.methods.docs import MethodDoc

#: The category modules, in catalogue order.
CATEGORY_MODULES = ("formal", "probabilistic", "causal", "experience", "social", "meta")

#: Where each method's engine is defined: method id -> "module:attribute" (in catalogue order).
ENGINE_TABLE: dict[str, str] = {
    "deductive": "formal:deductive",
    "inductive": "formal:inductive",
    "abductive": "formal:abductive",
    "analogical": "structure:analogical",
    "modal": "modal:modal",
    "deontic": "norms_time:deontic",
    "temporal": "norms_time:temporal",
    "bayesian": "probabilistic:bayesian",
    "decision-theory": "decisions:decision_theory",
    "expected-utility": "probabilistic:expected_utility",
    "info-theory": "info_theory:info_theory",
    "monte-carlo": "montecarlo:monte_carlo",
    "causal": "causal_effect:causal",
    "counterfactual": "counterfactual:counterfactual",
    "interventional": "causal:interventional",
    "root-cause": "root_cause:root_cause",
    "systems-thinking": "causal:systems_thinking",
    "heuristic": "recognition:heuristic",
    "case-based": "recognition:case_based",
    "pattern-recognition": "experience:pattern_recognition",
    "satisficing": "experience:satisficing",
    "naturalistic": "recognition:naturalistic",
    "game-theory": "social:game_theory",
    "negotiation": "social:negotiation",
    "social-choice": "social:social_choice_engine",
    "argumentation": "social:argumentation_engine",
    "stakeholder": "social:stakeholder",
    "meta-cognitive": "meta:meta_cognitive",
    "strategy-selection": "meta:strategy_selection",
    "learning-to-reason": "learning:learning_to_reason",
    "reflection": "learning:reflection",
    "calibration": "calibration:calibration",
}

_CACHE: dict[str, Engine] = {}


def has_engine(method_id: str) -> bool:
    """Whether ``method_id`` (canonical) is computed by an engine (imports nothing)."""
    return method_id in ENGINE_TABLE


def _module(method_id: str) -> tuple[ModuleType, str]:
    module, _, attr = ENGINE_TABLE[method_id].partition(":")
    return importlib.import_module(f"{__name__}.{module}"), attr


def engine(method_id: str) -> Engine | None:
    """The engine of ``method_id`` (canonical), its module imported on first use; None for a method without one."""
    if method_id not in ENGINE_TABLE:
        return None
    if method_id not in _CACHE:
        module, attr = _module(method_id)
        found = getattr(module, attr, None)
        if not callable(found):
            raise RuntimeError(f"ENGINE_TABLE[{method_id!r}] = {ENGINE_TABLE[method_id]!r} is not an engine")
        _CACHE[method_id] = found
    return _CACHE[method_id]


def engines() -> dict[str, Engine]:
    """Every engine by canonical method id (imports every engine module)."""
    return {method_id: found for method_id in ENGINE_TABLE if (found := engine(method_id)) is not None}


def method_doc(method_id: str) -> MethodDoc | None:
    """The :class:`MethodDoc` of ``method_id`` (canonical), from its engine's module; None without an engine."""
    if method_id not in ENGINE_TABLE:
        return None
    module, _ = _module(method_id)
    table = getattr(module, "DOCS", None)
    return table.get(method_id) if isinstance(table, dict) else None


def method_docs() -> dict[str, MethodDoc]:
    """Every method's :class:`MethodDoc`, from the ``DOCS`` tables of all modules of this package."""
    found: dict[str, MethodDoc] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        table = getattr(module, "DOCS", None)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise RuntimeError(f"reasoning.router.methods.{info.name}.DOCS must be a dict[str, MethodDoc]")
        for method, doc in table.items():
            if method in found and found[method] is not doc:
                raise RuntimeError(f"DOCS of {method!r} defined twice")
            found[method] = doc
    return found


__all__ = [
    "CATEGORY_MODULES",
    "ENGINE_TABLE",
    "engine",
    "engines",
    "has_engine",
    "method_doc",
    "method_docs",
]
