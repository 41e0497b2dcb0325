"""The seed's catalogue: 32 reasoning methods in 6 categories, each with its ideal problem profile.

A profile reads ``(uncertainty, complexity, domain, data_availability, stakes)`` in the seed's
classification. ``engine`` says how the method computes: ``builtin`` (from its inputs alone),
``graph`` (reads the agent's knowledge graph when inputs are missing) or ``prompt``; what
``mabos reason methods`` reports is the engine actually registered (a method with no registered
engine is listed as ``prompt``). The 16 methods mabos has beyond the seed are in
:mod:`reasoning.router.catalogue_extension` (category ``extension``).

Ids are the seed's hyphenated names; ``_`` is accepted for ``-`` and the ids of earlier versions
are aliases (``bayesian_update`` -> ``bayesian``).
"""

from __future__ import annotations

import difflib

from kg.errors import InputError
from reasoning.router.catalogue_extension import EXTENSION, spec
from reasoning.router.models import Category, MethodSpec

_F, _P, _C = Category.FORMAL, Category.PROBABILISTIC, Category.CAUSAL
_X, _S, _M = Category.EXPERIENCE, Category.SOCIAL, Category.META

# fmt: off
SEED: tuple[MethodSpec, ...] = (
    # ---- formal ---------------------------------------------------------------------------------
    spec(_F, "deductive", "Deductive reasoning", "low moderate formal rich high", "graph",
         "What necessarily follows from the agent's facts and rules (backward chaining to a goal, else forward).",
         ("Collect the known facts and rules.", "Chain the rules forward, or backward from the goal.",
          "State what follows necessarily and the missing conditions of what does not.")),
    spec(_F, "inductive", "Inductive reasoning", "medium moderate empirical rich medium", "graph",
         "Mines candidate rules 'X p a => X q b' from facts, with support and confidence; proposes them disabled.",
         ("Group the facts by subject.", "Count how often one property co-occurs with another.",
          "Keep the generalisations with enough support and confidence; propose them for review.")),
    spec(_F, "abductive", "Abductive reasoning", "high moderate empirical moderate medium", "graph",
         "The most plausible explanations of an observation: rules that conclude it, ranked by what they need.",
         ("State the observation.", "Find the rules whose conclusion matches it.",
          "Rank the hypotheses by how much of their premise already holds.")),
    spec(_F, "analogical", "Analogical reasoning", "medium complex mixed sparse medium", "graph",
         "Structure mapping between a source and a target (cases or fact subgraphs): which relations carry over.",
         ("Describe source and target as relations between entities.", "Find the entity mapping that "
          "preserves the most relations.", "Carry over the source relations that the target lacks (inferences).")),
    spec(_F, "modal", "Modal reasoning", "medium complex formal sparse medium", "builtin",
         "Necessity and possibility of propositions over explicit possible worlds or scenarios.",
         ("List the possible worlds (scenarios) and what holds in each.", "A proposition is necessary if it "
          "holds in every accessible world, possible if in one.", "Report necessary, possible and impossible.")),
    spec(_F, "deontic", "Deontic reasoning", "low moderate formal moderate high", "graph",
         "Obligations, permissions and prohibitions of actions under policy rules, with their conflicts.",
         ("Collect the norms that apply.", "Classify each action as obliged, permitted or forbidden.",
          "Report conflicts (obliged and forbidden) and resolve them by priority.")),
    spec(_F, "temporal", "Temporal reasoning", "low moderate formal rich medium", "graph",
         "Allen interval relations between events or fact validity intervals, and what holds as of a time.",
         ("Place the intervals on a timeline.", "Compute the Allen relation of each pair.",
          "State what holds at the asked instant.")),
    # ---- probabilistic --------------------------------------------------------------------------
    spec(_P, "bayesian", "Bayesian inference", "high moderate empirical rich medium", "graph",
         "P(query | evidence) in a Bayesian network by exact enumeration; or sequential updates of hypotheses.",
         ("State the variables, their parents and conditional probabilities.", "Enter the evidence.",
          "Sum the joint distribution over the hidden variables and normalise.")),
    spec(_P, "decision-theory", "Decision theory", "high complex empirical moderate high", "builtin",
         "Decision tables or trees under risk and uncertainty: expected value, risk attitude, maximin, regret.",
         ("Tabulate acts by states with payoffs (and state probabilities).",
          "Apply the decision criteria (expected utility with a risk attitude, maximin, minimax regret, Hurwicz).",
          "Choose and report where the criteria disagree.")),
    spec(_P, "expected-utility", "Expected utility", "medium moderate empirical moderate high", "builtin",
         "The option with the highest probability-weighted utility over its outcomes.",
         ("List the options and their outcomes.", "Weight each outcome's utility by its probability.",
          "Choose the highest expected utility.")),
    spec(_P, "info-theory", "Information theory", "high moderate empirical rich low", "graph",
         "Entropy of a distribution, mutual information of a joint one, and which question is worth most.",
         ("Write the distribution of the unknown.", "Compute its entropy and each question's expected "
          "information gain.", "Ask the question with the largest gain.")),
    spec(_P, "monte-carlo", "Monte Carlo simulation", "high complex empirical sparse high", "builtin",
         "A seeded simulation of a formula over uncertain inputs, with mean, percentiles and confidence intervals.",
         ("Give each uncertain input a distribution.", "Sample many times and evaluate the outcome.",
          "Summarise the outcome distribution with intervals.")),
    # ---- causal ---------------------------------------------------------------------------------
    spec(_C, "causal", "Causal inference", "medium complex empirical rich high", "graph",
         "Identification of a causal effect on a causal graph: a back-door adjustment set, or why none exists.",
         ("Draw the causal graph (from inputs or 'causes' facts).", "Find a set blocking every back-door path.",
          "State the adjustment formula (and the effect when probabilities are given).")),
    spec(_C, "counterfactual", "Counterfactual reasoning", "medium complex mixed moderate medium", "graph",
         "What would no longer (or newly) hold if given facts were false: re-derivation with the rule engine.",
         ("Take the facts as they are and derive the goal.", "Remove the counterfactual facts and derive again.",
          "Compare: what is lost and what is gained.")),
    spec(_C, "interventional", "Interventional reasoning", "medium complex empirical moderate high", "builtin",
         "The effect of do(X = x) in a causal Bayesian network (graph surgery), compared with observing X = x.",
         ("Cut the arrows into the intervened variable.", "Fix its value and compute the query.",
          "Compare with conditioning to show the confounding.")),
    spec(_C, "root-cause", "Root-cause analysis", "medium moderate empirical rich high", "graph",
         "Ranks candidate root causes of a symptom over causal/dependency edges, by reach and evidence.",
         ("Walk back from the symptom over cause edges.", "Keep causes with no cause of their own (roots).",
          "Rank them by the share of observed symptoms they explain and their evidence.")),
    spec(_C, "systems-thinking", "Systems thinking", "high complex mixed moderate high", "graph",
         "Feedback loops with their polarity (reinforcing or balancing) and leverage points of a signed graph.",
         ("Map the variables and signed influences.", "Find the cycles; an even number of negative links "
          "makes a loop reinforcing.", "Name the variables on most loops as leverage points.")),
    # ---- experience -----------------------------------------------------------------------------
    spec(_X, "heuristic", "Heuristic reasoning", "high simple mixed sparse low", "graph",
         "Recognition from the closest past cases, then a quick check of the chosen action.",
         ("Recognise the closest past case.", "Take what worked there.", "Check it quickly against the rules.")),
    spec(_X, "case-based", "Case-based reasoning", "medium moderate mixed moderate medium", "graph",
         "Retrieves the most similar past cases and reuses the solution that worked.",
         ("Describe the situation.", "Retrieve similar cases.", "Adapt the best successful solution.")),
    spec(_X, "pattern-recognition", "Pattern recognition", "medium moderate empirical rich low", "graph",
         "Frequent patterns (itemsets and association rules) in facts or memories.",
         ("Turn the records into transactions.", "Mine the frequent itemsets.", "Report the strong rules.")),
    spec(_X, "satisficing", "Satisficing", "medium simple empirical moderate low", "graph",
         "The first option, in the order considered, that meets every aspiration level.",
         ("Set the aspiration levels.", "Examine the options in order.", "Take the first that meets them all.")),
    spec(_X, "naturalistic", "Naturalistic decision making", "high complex mixed sparse high", "graph",
         "Recognition-primed decision: the typical action of the closest case, simulated forward with the rules.",
         ("Recognise the situation from cues.", "Take the typical action.",
          "Simulate it with the rules; adopt it or try the next.")),
    # ---- social ---------------------------------------------------------------------------------
    spec(_S, "game-theory", "Game theory", "medium complex social moderate high", "builtin",
         "Pure and mixed Nash equilibria of a two-player normal-form game.",
         ("List players, actions and payoffs.", "Find best responses.", "Report the equilibria.")),
    spec(_S, "negotiation", "Negotiation", "medium moderate social moderate high", "graph",
         "The zone of possible agreement from reservation values, and the Nash bargaining split.",
         ("State each party's reservation value.", "Intersect the acceptable ranges.",
          "Propose the Nash bargaining point.")),
    spec(_S, "social-choice", "Social choice", "low moderate social rich medium", "builtin",
         "Aggregates ballots: plurality, Borda, Condorcet (with cycle detection), approval, instant runoff.",
         ("Collect the ballots.", "Apply the voting rule.", "Report the winner and the scores.")),
    spec(_S, "argumentation", "Argumentation", "high complex social sparse medium", "graph",
         "Extensions of an abstract argumentation framework: grounded, preferred, stable.",
         ("List arguments and attacks.", "Compute the extensions under the semantics.",
          "Report what is sceptically and credulously accepted.")),
    spec(_S, "stakeholder", "Stakeholder analysis", "medium moderate social moderate medium", "graph",
         "A power/interest grid of stakeholders, from inputs or from agents and their goals.",
         ("List the stakeholders.", "Rate power and interest.", "Place each on the grid with its strategy.")),
    # ---- meta -----------------------------------------------------------------------------------
    spec(_M, "meta-cognitive", "Meta-cognitive reasoning", "high complex mixed sparse medium", "graph",
         "What is known, unknown and uncertain about a problem: knowledge gaps and low-confidence support.",
         ("Try to prove what the problem needs.", "List the gaps and weak support.",
          "Say what to find out first.")),
    spec(_M, "strategy-selection", "Strategy selection", "high moderate mixed moderate medium", "builtin",
         "The router's ranking of methods for a classification, with the reasons.",
         ("Classify the problem.", "Score every method.", "Pick the best and explain the ranking.")),
    spec(_M, "learning-to-reason", "Learning to reason", "medium complex mixed rich low", "graph",
         "Method priors updated from the recorded outcomes of earlier runs.",
         ("Collect earlier runs and their outcomes.", "Update each method's success rate.",
          "Re-rank the methods.")),
    spec(_M, "reflection", "Reflection", "low moderate mixed moderate low", "graph",
         "Expected against actual outcomes of cases and intentions, and the lessons.",
         ("Collect what was expected.", "Compare with what happened.", "Draw the lessons.")),
    spec(_M, "calibration", "Calibration", "medium simple empirical rich medium", "graph",
         "Brier score and reliability bins of predictions or beliefs against their resolved outcomes.",
         ("Pair each probability with its outcome.", "Compute the Brier score.", "Bin and compare.")),
)
# fmt: on

#: The whole catalogue: the seed's 32 methods, then the 16 extension methods.
METHODS: tuple[MethodSpec, ...] = SEED + EXTENSION

#: Ids of earlier versions (and short names) that still work.
ALIASES: dict[str, str] = {
    "bayesian-update": "bayesian", "bayes": "bayesian", "causal-inference": "causal",
    "root-cause-analysis": "root-cause", "recognition-primed": "naturalistic", "game-theoretic": "game-theory",
    "stakeholder-analysis": "stakeholder", "decision": "expected-utility", "eu": "expected-utility",
    "cbr": "case-based",
}  # fmt: skip

_BY_ID: dict[str, MethodSpec] = {method.id: method for method in METHODS}


def canonical(method_id: str) -> str | None:
    """The canonical id of ``method_id`` (``_`` read as ``-``, aliases resolved), or None if unknown."""
    key = str(method_id).strip().casefold().replace("_", "-")
    key = ALIASES.get(key, key)
    return key if key in _BY_ID else None


def method_ids(*, seed_only: bool = False) -> list[str]:
    """Every canonical method id, in catalogue order (``seed_only``: the seed's 32)."""
    return [m.id for m in (SEED if seed_only else METHODS)]


def get_method(method_id: str, *, field: str = "method") -> MethodSpec:
    """The catalogue entry of ``method_id`` (any accepted spelling).

    Raises:
        InputError: no such method; the message suggests close ids.
    """
    found = canonical(method_id)
    if found is not None:
        return _BY_ID[found]
    close = difflib.get_close_matches(str(method_id).replace("_", "-"), [*_BY_ID, *ALIASES], n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
    raise InputError(field, f"unknown reasoning method {str(method_id)[:64]!r}; {hint}list them with "
                            "'mabos reason methods', or use 'auto'")  # fmt: skip


def list_methods(category: Category | str | None = None) -> list[MethodSpec]:
    """The catalogue, optionally one category, in catalogue order."""
    if category is None:
        return list(METHODS)
    try:
        wanted = Category(category)
    except ValueError:
        valid = ", ".join(c.value for c in Category)
        raise InputError("category", f"must be one of {valid}, got {category!r}") from None
    return [method for method in METHODS if method.category is wanted]


__all__ = ["ALIASES", "METHODS", "SEED", "canonical", "get_method", "list_methods", "method_ids"]
