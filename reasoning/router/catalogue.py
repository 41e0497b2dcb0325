"""The catalogue: 35 reasoning methods in 6 categories, each with its ideal problem profile.

A profile reads ``(uncertainty, complexity, domains, data availability, stakes)``; ``steps`` are the
instructions the router puts into the prompt for the caller's LLM when it does not compute the
method itself. ``engine`` says who computes: ``builtin`` (this package), ``injected`` (an engine the
caller passes, e.g. the rule engine for deduction) or nobody (a prompt is returned).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from kg.errors import InputError
from reasoning.router.models import Category, Domain, EngineKind, IdealProfile, Level, MethodSpec

L, M, H = Level.LOW, Level.MEDIUM, Level.HIGH
FIN, OPS, STR, LEG, TEC, MKT, PPL, GEN = (
    Domain.FINANCE,
    Domain.OPERATIONS,
    Domain.STRATEGY,
    Domain.LEGAL,
    Domain.TECHNICAL,
    Domain.MARKETING,
    Domain.PEOPLE,
    Domain.GENERAL,
)


def _method(
    category: Category,
    method_id: str,
    name: str,
    profile: tuple[Level, Level, Iterable[Domain], Level, Level],
    *,
    description: str,
    steps: tuple[str, ...],
    engine: EngineKind | None = None,
) -> MethodSpec:
    uncertainty, complexity, domains, data, stakes = profile
    ideal = IdealProfile(uncertainty=uncertainty, complexity=complexity, domains=frozenset(domains),
                         data_availability=data, stakes=stakes)  # fmt: skip
    return MethodSpec(id=method_id, name=name, category=category, description=description, profile=ideal,
                      steps=steps, engine=engine)  # fmt: skip


_F, _P, _C = Category.FORMAL_LOGICAL, Category.PROBABILISTIC, Category.CAUSAL_SYSTEMS
_E, _D, _S = Category.EXPERIENTIAL, Category.DECISION_MAKING, Category.SOCIAL_ETHICAL_CREATIVE

# fmt: off
METHODS: tuple[MethodSpec, ...] = (
    # ---- formal and logical -------------------------------------------------------------------
    _method(_F, "deductive", "Deductive reasoning", (L, M, (LEG, TEC, GEN), H, H),
        description="Derives what necessarily follows from known rules and facts (forward and backward chaining).",
        steps=("List the rules and the facts that are known to hold.",
               "Apply the rules until nothing new follows, or work back from the goal to the facts it needs.",
               "State what follows necessarily, and which missing conditions block what does not."),
        engine="injected"),
    _method(_F, "inductive", "Inductive reasoning", (M, M, (GEN, OPS, MKT, TEC), H, L),
        description="Generalises a rule or trend from observed instances, as strong as the evidence behind it.",
        steps=("Collect the observed instances and the features they share.",
               "Propose the narrowest generalisation that covers them and note any counter-examples.",
               "Rate the generalisation's strength by the number and variety of instances.")),
    _method(_F, "abductive", "Abductive reasoning", (H, M, (TEC, OPS, GEN), M, M),
        description="Finds the most plausible explanation for observations, ranking hypotheses by what they explain.",
        steps=("List the observations that need explaining.",
               "Generate candidate explanations and check which observations each one accounts for.",
               "Rank the explanations by coverage and plausibility and name what would confirm the best one."),
        engine="injected"),
    _method(_F, "analogical", "Analogical reasoning", (M, M, (STR, GEN), L, M),
        description="Transfers the solution of a structurally similar problem from another setting.",
        steps=("Describe the structure of the problem (actors, relations, constraints), not its surface.",
               "Find a well-understood situation with the same structure.",
               "Map its solution across and check where the analogy breaks down.")),
    _method(_F, "deontic", "Deontic reasoning", (L, M, (LEG, OPS), M, H),
        description="Reasons about obligations, permissions and prohibitions under laws, contracts or policies.",
        steps=("Identify the norms that apply (laws, contract clauses, policies) and whom they bind.",
               "Classify each relevant action as obligatory, permitted or forbidden; resolve conflicts by precedence.",
               "State what must, may and must not be done, citing the norm for each.")),
    _method(_F, "constraint_satisfaction", "Constraint satisfaction", (L, H, (OPS, TEC), H, M),
        description="Searches for assignments (schedules, configurations, allocations) meeting every hard constraint.",
        steps=("List the variables, their possible values, and the hard and soft constraints.",
               "Prune values that break hard constraints and search the remaining space systematically.",
               "Report a feasible (or best soft-constraint) assignment, or the constraints that make it infeasible.")),
    _method(_F, "temporal", "Temporal reasoning", (L, M, (OPS, TEC, LEG), M, M),
        description="Reasons about the order, duration, deadlines and overlap of events and tasks.",
        steps=("Place the events and tasks on a timeline with their durations and dependencies.",
               "Derive the orderings, the critical path and conflicts between intervals.",
               "State which deadlines hold, which slip, and why.")),
    # ---- probabilistic and statistical --------------------------------------------------------
    _method(_P, "bayesian_update", "Bayesian updating", (H, M, (FIN, TEC, GEN), M, M),
        description="Revises a hypothesis's probability (a fact's confidence) with evidence via P(e|h) and P(e|not h).",
        steps=("State the hypothesis and its prior probability.",
               "For each piece of evidence, estimate how likely it is if the hypothesis is true and if it is false.",
               "Multiply the prior odds by each likelihood ratio and convert back to a probability."),
        engine="builtin"),
    _method(_P, "statistical_inference", "Statistical inference", (M, M, (TEC, MKT, OPS, FIN), H, M),
        description="Draws conclusions about a population from sample data with estimates, intervals and tests.",
        steps=("Define the quantity or hypothesis and the data that bear on it.",
               "Choose an estimator or test that fits the data and check its assumptions.",
               "Report the estimate with its uncertainty, and what it does not show.")),
    _method(_P, "monte_carlo", "Monte Carlo simulation", (H, H, (FIN, OPS, TEC), M, H),
        description="Estimates the distribution of outcomes by sampling uncertain inputs many times.",
        steps=("Model the outcome as a function of uncertain inputs, with a distribution for each input.",
               "Sample the inputs many times and compute the outcome each time.",
               "Summarise the distribution of outcomes: mean, spread and tail risks.")),
    _method(_P, "fuzzy_logic", "Fuzzy reasoning", (M, M, (TEC, OPS), L, L),
        description="Handles vague categories ('high demand', 'slightly late') with degrees of membership, not yes/no.",
        steps=("Define each vague term as a membership function over a measurable quantity.",
               "Apply if-then rules that combine the memberships.",
               "Turn the combined result into a concrete value or action.")),
    _method(_P, "risk_assessment", "Risk assessment", (H, M, (FIN, OPS, LEG, TEC), M, H),
        description="Ranks hazards by likelihood and impact and proposes mitigations for the largest exposures.",
        steps=("List what could go wrong.",
               "Rate each risk's likelihood and impact and compute its exposure.",
               "Propose mitigations for the largest exposures and state the residual risk.")),
    _method(_P, "forecasting", "Forecasting", (M, M, (FIN, OPS, MKT), H, M),
        description="Projects future values from history, trends and seasonality, with an uncertainty band.",
        steps=("Gather the history of the quantity and the drivers that move it.",
               "Fit a trend and seasonality model (or a reference class) and project it forward.",
               "Give the forecast with a range and the assumptions that would invalidate it.")),
    # ---- causal and systems -------------------------------------------------------------------
    _method(_C, "causal_inference", "Causal inference", (M, H, (TEC, MKT, GEN), H, H),
        description="Estimates an intervention's effect by separating cause from correlation (confounders, trials).",
        steps=("Draw the causal graph: the intervention, the outcome and the confounders between them.",
               "Choose an identification strategy the data support (experiment, controls, natural experiment).",
               "Estimate the effect and state the assumptions it depends on.")),
    _method(_C, "counterfactual", "Counterfactual reasoning", (M, M, (LEG, STR, GEN), M, M),
        description="Asks what would have happened had something been different, to judge responsibility or learn.",
        steps=("State the actual course of events and the change to consider.",
               "Trace how the change would have propagated, holding everything else fixed.",
               "Compare the imagined outcome with the actual one and say what that implies.")),
    _method(_C, "systems_thinking", "Systems thinking", (M, H, (STR, OPS), M, H),
        description="Models feedback loops, delays, stocks and flows to understand how a system behaves over time.",
        steps=("Map the elements, stocks and flows, and the reinforcing and balancing loops between them.",
               "Identify the delays and the leverage points.",
               "Predict how the system responds to the proposed change, side effects included.")),
    _method(_C, "root_cause_analysis", "Root-cause analysis", (M, M, (OPS, TEC), M, M),
        description="Traces a failure back through its causes (five whys, fishbone) to the cause worth fixing.",
        steps=("Describe the failure precisely: what, where, when and how often.",
               "Ask why repeatedly and group the candidate causes (people, process, tools, environment).",
               "Name the root cause with its evidence and a fix that prevents recurrence.")),
    _method(_C, "scenario_planning", "Scenario planning", (H, H, (STR, FIN), L, H),
        description="Builds a few distinct, plausible futures from key uncertainties and tests options against each.",
        steps=("Pick the two or three driving uncertainties with the largest impact.",
               "Combine them into three or four distinct, internally consistent scenarios.",
               "Test each option against every scenario and prefer the robust ones.")),
    _method(_C, "second_order_thinking", "Second-order thinking", (M, H, (STR, FIN, GEN), L, H),
        description="Follows the consequences of consequences, including how others react and the long-run effects.",
        steps=("State the immediate effect of the decision.",
               "Ask what happens next, who reacts and how, over weeks, months and years.",
               "Weigh the later effects against the immediate ones.")),
    # ---- experiential -------------------------------------------------------------------------
    _method(_E, "case_based", "Case-based reasoning", (M, M, (OPS, STR, GEN), M, M),
        description="Retrieves similar past cases (beliefs, desires, context) and adapts the solution that worked.",
        steps=("Describe the current situation as beliefs, desires and context.",
               "Retrieve the most similar past cases and their outcomes.",
               "Adapt the best successful solution to the differences, and avoid what failed."),
        engine="injected"),
    _method(_E, "heuristic", "Heuristic reasoning", (M, L, (GEN,), L, L),
        description="Applies rules of thumb to reach a good-enough answer quickly.",
        steps=("Name the rules of thumb experts use for this kind of problem.",
               "Apply them to get a quick answer.",
               "Note where the heuristic is known to mislead and whether that applies here.")),
    _method(_E, "recognition_primed", "Recognition-primed decision", (H, M, (OPS, GEN), L, M),
        description="Matches the situation to a familiar pattern and simulates the typical response before acting.",
        steps=("Recognise which familiar kind of situation this is, and its typical cues.",
               "Take the typical response and simulate it mentally in this situation.",
               "Adopt it if the simulation works; otherwise adjust it or try the next typical response.")),
    _method(_E, "experimentation", "Experimentation", (H, L, (MKT, TEC, OPS), L, L),
        description="Learns by small, cheap, reversible trials and measuring what happens.",
        steps=("Turn the question into a hypothesis with a measurable signal of success.",
               "Design the smallest safe trial (A/B test, pilot, prototype).",
               "Decide in advance which result would change the plan.")),
    _method(_E, "retrospective", "Lessons-learned review", (L, L, (OPS, PPL, GEN), M, L),
        description="Reviews what went well and badly in past work to derive lessons for the next attempt.",
        steps=("Reconstruct what was planned and what actually happened.",
               "Find the differences and why they arose.",
               "Write the lessons as concrete changes to how the next attempt is run.")),
    # ---- decision-making ----------------------------------------------------------------------
    _method(_D, "expected_utility", "Expected utility (decision theory)", (H, M, (FIN, STR, GEN), M, H),
        description="Chooses the option with the highest probability-weighted utility over its possible outcomes.",
        steps=("List the options and, for each, its possible outcomes.",
               "Estimate each outcome's probability (summing to 1 per option) and its utility on one scale.",
               "Compute each option's expected utility, choose the highest, and note how sensitive the choice is."),
        engine="builtin"),
    _method(_D, "multi_criteria", "Multi-criteria decision analysis", (L, H, (OPS, STR, GEN), M, M),
        description="Scores options on several weighted criteria (cost, quality, risk ...) to rank them transparently.",
        steps=("Choose the criteria and agree their weights.",
               "Score every option on every criterion on a common scale.",
               "Rank by weighted sum and check whether the ranking survives plausible changes of the weights.")),
    _method(_D, "game_theoretic", "Game-theoretic reasoning", (M, H, (STR, FIN, LEG), M, H),
        description="Analyses decisions whose outcome depends on the choices of other strategic parties.",
        steps=("Identify the players, their options and their payoffs.",
               "Find each player's best responses and the equilibria.",
               "Choose a strategy that is robust to how the others will likely respond, including in repeated play.")),
    _method(_D, "cost_benefit", "Cost-benefit analysis", (L, M, (FIN, OPS), H, M),
        description="Compares the monetised costs and benefits of options over time (net present value, ROI).",
        steps=("List every cost and benefit of each option and when it occurs.",
               "Express them in money and discount future amounts.",
               "Compare net present values and state the assumptions with the most influence.")),
    _method(_D, "minimax_regret", "Minimax regret", (H, M, (STR, FIN), L, H),
        description="Under deep uncertainty, picks the option whose worst-case regret is smallest.",
        steps=("Tabulate each option's payoff in each possible state of the world.",
               "For each state, compute each option's regret against the best option in that state.",
               "Choose the option whose largest regret is smallest.")),
    _method(_D, "satisficing", "Satisficing", (M, L, (OPS, GEN), L, L),
        description="Takes the first option that meets explicit minimum requirements instead of seeking the best.",
        steps=("Set the minimum acceptable level for each requirement.",
               "Examine the options in a sensible order.",
               "Take the first option that meets every requirement, and stop.")),
    # ---- social, ethical and creative ---------------------------------------------------------
    _method(_S, "ethical", "Ethical reasoning", (M, M, (LEG, PPL, GEN), L, H),
        description="Weighs duties, rights, consequences and fairness to find the most defensible course of action.",
        steps=("Identify who is affected and which duties, rights and values are at stake.",
               "Assess the options by their consequences, the duties they honour or break, and their fairness.",
               "Recommend the most defensible option and state the trade-offs openly.")),
    _method(_S, "stakeholder_analysis", "Stakeholder analysis", (M, M, (STR, PPL, MKT), M, M),
        description="Maps the affected parties, their interests and influence, to shape a decision they will support.",
        steps=("List the stakeholders and what each of them wants.",
               "Rate their influence and how each option affects them.",
               "Choose and frame the option that secures the support it needs.")),
    _method(_S, "dialectical", "Dialectical reasoning", (M, H, (STR, LEG, GEN), L, M),
        description="Confronts a position with its strongest opposite and builds a synthesis of what holds in both.",
        steps=("State the thesis at its strongest.",
               "State the strongest antithesis.",
               "Build a synthesis that resolves the tension and keeps the valid points of each.")),
    _method(_S, "lateral_thinking", "Lateral thinking", (H, M, (MKT, STR), L, L),
        description="Generates unconventional options by challenging assumptions and reframing the problem.",
        steps=("List the assumptions the obvious solutions share.",
               "Break or invert each assumption to generate new options.",
               "Pick the most promising unconventional options and say how to test them cheaply.")),
    _method(_S, "first_principles", "First-principles reasoning", (M, H, (TEC, STR), L, M),
        description="Breaks a problem down to basic truths and rebuilds a solution from them, not from convention.",
        steps=("Question the problem until only the facts that must be true remain.",
               "Rebuild the solution from those facts, ignoring how it is usually done.",
               "Compare the rebuilt solution with the conventional one and explain the differences.")),
)
# fmt: on

_BY_ID: dict[str, MethodSpec] = {method.id: method for method in METHODS}


def method_ids() -> list[str]:
    """Every method id, in catalogue order."""
    return list(_BY_ID)


def get_method(method_id: str, *, field: str = "method") -> MethodSpec:
    """The catalogue entry of ``method_id``.

    Raises:
        InputError: no such method; the message suggests close ids and where to list them.
    """
    found = _BY_ID.get(method_id)
    if found is not None:
        return found
    close = difflib.get_close_matches(str(method_id), _BY_ID, n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
    raise InputError(
        field,
        f"unknown reasoning method {method_id!r}; {hint}valid ids come from "
        "reasoning.router.method_ids() (the table in docs/cbr-and-router.md), or use 'auto'",
    )


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


__all__ = ["METHODS", "get_method", "list_methods", "method_ids"]
