"""The extension category: 16 methods mabos had before it followed the seed's catalogue.

They are not in the seed's ``REASONING_METHODS``; they stay so that nothing that worked breaks, are
listed under category ``extension``, return a prompt for the caller's LLM (``engine: prompt``) and
take no part in auto-selection (which scores the seed's 32 methods, as the seed does).
"""

from __future__ import annotations

from reasoning.router.models import (
    Category,
    Complexity,
    DataAvailability,
    Domain,
    EngineKind,
    IdealProfile,
    MethodSpec,
    Stakes,
    Uncertainty,
)


def spec(  # noqa: PLR0917 - one row of the catalogue table
    category: Category, method_id: str, name: str, profile: str, engine: EngineKind, description: str,
    steps: tuple[str, ...],
) -> MethodSpec:  # fmt: skip
    """A catalogue entry; ``profile`` is "uncertainty complexity domain data_availability stakes"."""
    u, c, d, data, s = profile.split()
    ideal = IdealProfile(uncertainty=Uncertainty(u), complexity=Complexity(c), domain=Domain(d),
                         data_availability=DataAvailability(data), stakes=Stakes(s))  # fmt: skip
    return MethodSpec(id=method_id, name=name, category=category, description=description, profile=ideal,
                      steps=steps, engine=engine)  # fmt: skip


_E = Category.EXTENSION

# fmt: off
EXTENSION: tuple[MethodSpec, ...] = (
    spec(_E, "constraint-satisfaction", "Constraint satisfaction", "low complex formal rich medium", "prompt",
         "Searches for assignments (schedules, configurations) meeting every hard constraint.",
         ("List variables, domains and constraints.", "Prune and search.", "Report an assignment or the conflict.")),
    spec(_E, "statistical-inference", "Statistical inference", "medium moderate empirical rich medium", "prompt",
         "Conclusions about a population from a sample with estimates, intervals and tests.",
         ("Define the quantity.", "Choose an estimator or test.", "Report it with its uncertainty.")),
    spec(_E, "fuzzy-logic", "Fuzzy reasoning", "medium moderate empirical sparse low", "prompt",
         "Vague categories with degrees of membership instead of yes/no.",
         ("Define membership functions.", "Apply the fuzzy rules.", "Defuzzify to a value.")),
    spec(_E, "risk-assessment", "Risk assessment", "high moderate empirical moderate high", "prompt",
         "Ranks hazards by likelihood and impact and proposes mitigations.",
         ("List what could go wrong.", "Rate likelihood and impact.", "Mitigate the largest exposures.")),
    spec(_E, "forecasting", "Forecasting", "medium moderate empirical rich medium", "prompt",
         "Projects future values from history, trend and seasonality, with a band.",
         ("Gather the history.", "Fit and project.", "Give a range and its assumptions.")),
    spec(_E, "scenario-planning", "Scenario planning", "high complex mixed sparse high", "prompt",
         "A few distinct plausible futures from key uncertainties; options tested against each.",
         ("Pick the driving uncertainties.", "Build consistent scenarios.", "Prefer robust options.")),
    spec(_E, "second-order-thinking", "Second-order thinking", "medium complex mixed sparse high", "prompt",
         "Consequences of consequences, including how others react.",
         ("State the immediate effect.", "Ask what happens next, and who reacts.", "Weigh later effects.")),
    spec(_E, "experimentation", "Experimentation", "high simple empirical sparse low", "prompt",
         "Learning by small, cheap, reversible trials.",
         ("Form a hypothesis with a signal.", "Design the smallest trial.", "Decide what result changes the plan.")),
    spec(_E, "retrospective", "Lessons-learned review", "low simple mixed moderate low", "prompt",
         "What went well and badly, turned into lessons.",
         ("Reconstruct plan and reality.", "Find the differences and why.", "Write lessons as changes.")),
    spec(_E, "multi-criteria", "Multi-criteria decision analysis", "low complex mixed moderate medium", "prompt",
         "Scores options on weighted criteria to rank them transparently.",
         ("Choose criteria and weights.", "Score each option.", "Rank and test the weights' sensitivity.")),
    spec(_E, "cost-benefit", "Cost-benefit analysis", "low moderate empirical rich medium", "prompt",
         "Monetised costs and benefits over time (net present value).",
         ("List costs and benefits with dates.", "Discount them.", "Compare net present values.")),
    spec(_E, "minimax-regret", "Minimax regret", "high moderate mixed sparse high", "prompt",
         "Under deep uncertainty, the option whose worst regret is smallest.",
         ("Tabulate payoffs by state.", "Compute regrets.", "Choose the smallest maximum regret.")),
    spec(_E, "ethical", "Ethical reasoning", "medium moderate social sparse high", "prompt",
         "Duties, rights, consequences and fairness weighed for the most defensible action.",
         ("Identify who is affected.", "Assess options by duties and consequences.", "Recommend, with trade-offs.")),
    spec(_E, "dialectical", "Dialectical reasoning", "medium complex social sparse medium", "prompt",
         "A position confronted with its strongest opposite, and a synthesis.",
         ("State the thesis.", "State the antithesis.", "Build the synthesis.")),
    spec(_E, "lateral-thinking", "Lateral thinking", "high moderate mixed sparse low", "prompt",
         "Unconventional options from challenged assumptions.",
         ("List shared assumptions.", "Break each one.", "Pick options to test cheaply.")),
    spec(_E, "first-principles", "First-principles reasoning", "medium complex formal sparse medium", "prompt",
         "Rebuilds a solution from basic truths instead of convention.",
         ("Reduce to what must be true.", "Rebuild from there.", "Compare with the usual solution.")),
)
# fmt: on

__all__ = ["EXTENSION", "spec"]
