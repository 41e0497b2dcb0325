"""The reasoning-method router: 35 methods in 6 categories, scored against a problem profile.

``reason(problem)`` classifies the problem and runs the best-scored method (auto mode);
``reason(problem, "deductive")`` runs one method; ``reason(problem, [...])`` runs several and adds a
fusion report. Bayesian updating and expected utility compute here; deductive, abductive and
case-based reasoning compute through engines the caller injects; every other method comes back as a
structured prompt for the caller's own LLM (``kind="llm_prompt"``).

Example:
    >>> from reasoning.router import Problem, reason
    >>> problem = Problem(text="Which supplier should we pick?", inputs={"expected_utility": {"options": [
    ...     {"name": "A", "outcomes": [{"probability": 1.0, "utility": 5}]}]}})
    >>> reason(problem, "expected_utility").results[0].answer
    'A'
"""

from reasoning.router.catalogue import METHODS, get_method, list_methods, method_ids
from reasoning.router.engines import (
    BayesHypothesis,
    BayesInput,
    BayesPosterior,
    BayesStep,
    DecisionInput,
    DecisionOption,
    DecisionOutcome,
    DecisionResult,
    Evidence,
    OptionValue,
    bayesian_update,
    decide,
    expected_utility,
    hypothesis_from_fact,
    posterior,
)
from reasoning.router.models import (
    Category,
    ComputedResult,
    DimensionScores,
    Disagreement,
    Domain,
    FusionReport,
    IdealProfile,
    Level,
    MethodResult,
    MethodScore,
    MethodSpec,
    Position,
    Problem,
    ProblemProfile,
    PromptResult,
    RouterResult,
)
from reasoning.router.run import AUTO, Engine, build_prompt, fuse, reason, run
from reasoning.router.scoring import WEIGHTS, classification_signals, classify_problem, score_methods_for_problem

__all__ = [
    "AUTO",
    "METHODS",
    "WEIGHTS",
    "BayesHypothesis",
    "BayesInput",
    "BayesPosterior",
    "BayesStep",
    "Category",
    "ComputedResult",
    "DecisionInput",
    "DecisionOption",
    "DecisionOutcome",
    "DecisionResult",
    "DimensionScores",
    "Disagreement",
    "Domain",
    "Engine",
    "Evidence",
    "FusionReport",
    "IdealProfile",
    "Level",
    "MethodResult",
    "MethodScore",
    "MethodSpec",
    "OptionValue",
    "Position",
    "Problem",
    "ProblemProfile",
    "PromptResult",
    "RouterResult",
    "bayesian_update",
    "build_prompt",
    "classification_signals",
    "classify_problem",
    "decide",
    "expected_utility",
    "fuse",
    "get_method",
    "hypothesis_from_fact",
    "list_methods",
    "method_ids",
    "posterior",
    "reason",
    "run",
    "score_methods_for_problem",
]
