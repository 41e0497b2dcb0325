"""Worked problems of each seed method: the texts a problem is compared with for semantic similarity.

A method's texts are its catalogue description and two short textbook problems it solves. They are written
for the method, not copied from the router's dev or held-out sets (``tests/data/reasoning/router_*.jsonl``).
"""

from __future__ import annotations

# fmt: off
WORKED: dict[str, tuple[str, ...]] = {
    "deductive": ("All mammals are warm-blooded and whales are mammals; are whales warm-blooded?",
                  "Orders above the credit limit require review; this order is above it. Does it require review?"),
    "inductive": ("Every batch from this supplier so far met spec; what can we generalise about its next batch?",
                  "From many observed cases, infer a general rule with its support and confidence."),
    "abductive": ("The car will not start and the lights are dim; what is the most plausible explanation?",
                  "Infer the hypothesis that best explains a surprising observation."),
    "analogical": ("The atom is like the solar system: which relations carry over from one to the other?",
                   "Map the structure of a familiar source situation onto a new target and transfer inferences."),
    "modal": ("Is it necessary that the plan succeeds in every possible world, or only possible in some?",
              "Decide whether a proposition is necessary, possible or impossible across scenarios."),
    "deontic": ("Is an employee obliged, permitted or forbidden to share client data under the policy?",
                "Which actions do the rules require, allow or prohibit, and where do duties conflict?"),
    "temporal": ("Meeting A ran 9:00-10:30 and meeting B 10:00-11:00; do they overlap, and which came first?",
                 "Relate events by their time intervals (before, during, overlaps) and say what held on a date."),
    "bayesian": ("A diagnostic test with known sensitivity and false positive rate comes back positive; given the "
                 "prevalence, what is the probability of the disease?",
                 "Update the probability of a hypothesis after observing evidence with known likelihoods."),
    "decision-theory": ("Choose among acts whose payoffs depend on uncertain states of the world, by expected value,"
                        " maximin and minimax regret.",
                        "Build a payoff table of options against scenarios and pick the best act under risk."),
    "expected-utility": ("A gamble pays 100 with probability one half; a sure thing pays 40. Which is better in "
                         "expectation?",
                         "Weight each outcome's utility by its probability and choose the highest expected value."),
    "info-theory": ("Which question reduces our uncertainty the most, measured as entropy in bits?",
                    "Compute the entropy of a distribution and the information gain of an observation."),
    "monte-carlo": ("Draw thousands of random samples of uncertain costs to estimate the distribution of profit.",
                    "Simulate an outcome many times from input distributions and report percentiles."),
    "causal": ("Does the treatment cause recovery, or is the association due to a confounder? Find the adjustment "
               "set.", "Identify a causal effect from observational data on a causal graph."),
    "interventional": ("What happens to sales if we set the price ourselves, rather than observing prices?",
                       "Compute the effect of an intervention do(X) by cutting the arrows into X."),
    "counterfactual": ("Had the patient not taken the drug, would she have recovered?",
                       "Reason about what would have happened in the same situation had something been different."),
    "root-cause": ("The website is down; trace the failures back through dependencies to the originating fault.",
                   "Find the underlying cause that explains the observed symptoms."),
    "systems-thinking": ("Population growth raises food demand, which raises prices, which slows growth: map the "
                         "loops.", "Find reinforcing and balancing feedback loops and leverage points in a system."),
    "heuristic": ("Use a fast and frugal rule of thumb to choose quickly with little information.",
                  "Decide by recognition or a single best cue instead of weighing everything."),
    "case-based": ("Retrieve the most similar past case and adapt its solution to the new problem.",
                   "How did we solve this kind of customer complaint before?"),
    "pattern-recognition": ("Which items co-occur frequently in the records? Mine the association rules.",
                            "Find recurring patterns in logs or transactions."),
    "satisficing": ("Take the first option that meets every minimum requirement rather than searching for the best.",
                    "Set aspiration levels and stop at the first alternative that satisfies them."),
    "naturalistic": ("An expert under time pressure recognises the situation and acts on the first workable option.",
                     "Recognition-primed decision making in a fast-moving emergency."),
    "game-theory": ("Two firms choose prices and each one's profit depends on the other's choice: find the Nash "
                    "equilibrium.", "Strategic interaction where payoffs depend on what the other player does."),
    "negotiation": ("Buyer and seller have reservation prices; find the zone of possible agreement and a fair "
                    "split.", "How should two parties bargain to a deal both accept?"),
    "social-choice": ("Voters rank the candidates; who wins by plurality, Borda count or Condorcet?",
                      "Aggregate individual preferences or ballots into a group decision."),
    "argumentation": ("Arguments attack each other; which set of arguments is acceptable together?",
                      "Weigh claims and counterclaims to see which positions survive the attacks."),
    "stakeholder": ("List the parties affected by a project and place them on a power/interest grid.",
                    "Who has influence over this decision and who cares about it?"),
    "meta-cognitive": ("What do we know, what don't we know, and how sure are we about this problem?",
                       "Assess our own knowledge gaps and the weak points of our reasoning before deciding."),
    "strategy-selection": ("Which reasoning approach fits this kind of problem best, and why?",
                           "Classify the problem and rank the candidate methods to choose one."),
    "learning-to-reason": ("Use the recorded successes and failures of previous reasoning to improve method "
                           "choice.", "Update how much we trust each method from its track record."),
    "reflection": ("Compare what we planned with what actually happened and draw lessons.",
                   "Review a finished project's expected versus actual outcomes."),
    "calibration": ("Check whether the probabilities someone gave match how often those events occurred.",
                    "Score past probability forecasts against outcomes with the Brier score and reliability."),
}
# fmt: on

__all__ = ["WORKED"]
