"""Structural cues: what a problem's wording says about the method it needs.

Each cue is a named regular expression over the casefolded problem text and the methods it points to, with a
weight. A cue is evidence of a problem's *structure* (a test result with a sensitivity, payoffs that depend on
another party, ranked ballots, dated intervals, a feedback loop, "what caused", "what if we had not", an
obligation, an aspiration level, past forecasts against outcomes ...), not a topic: "vote" alone does not make
a ballot, "ranked ... ballots" does. A method's cue score is the sum of the weights of its distinct cues that
match, capped at :data:`CUE_CAP`, so one problem with many cues of one method cannot drown the others.

Example:
    >>> [hit.name for hit in find_cues("The test is 95% sensitive and she tested positive.")][:2]
    ['test-result', 'sensitivity']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The most a method can gain from cues.
CUE_CAP = 2.0


@dataclass(frozen=True)
class Cue:
    """A named structural cue and the methods it points to (method id -> weight)."""

    name: str
    pattern: re.Pattern[str]
    methods: dict[str, float]


@dataclass(frozen=True)
class CueHit:
    """A cue that matched, with the text that matched it."""

    name: str
    text: str
    methods: dict[str, float]


_N = r"\d[\d,.]*"  # a number as written in prose
_PCT = rf"(?:{_N}\s*(?:%|percent)|0?\.\d+)"


def _cue(name: str, pattern: str, **methods: float) -> Cue:
    return Cue(name, re.compile(pattern, re.I), {k.replace("_", "-"): v for k, v in methods.items()})


# fmt: off
CUES: tuple[Cue, ...] = (
    # ---- probabilities, tests and evidence -------------------------------------------------------------
    _cue("test-result", r"\btest(?:ed|s)? (?:positive|negative)|\b(?:was|were|is|got) (?:flagged|rejected|"
         r"detected)\b|positive (?:test|result|screen)", bayesian=1.0),
    _cue("sensitivity", r"\bsensitiv(?:e|ity)\b|\bspecificity\b|false[- ]positive|false[- ]alarm|"
         rf"(?:catches|flags|detects|identifies) {_PCT}", bayesian=0.8),
    _cue("base-rate", r"\bprevalence\b|\bbase rate\b|\b(?:1|one) in (?:a )?[\d,]+\b|\brare (?:disease|condition)",
         bayesian=0.6),
    _cue("posterior", r"\bhow (?:likely|probable) is it that\b|\bwhat is the (?:chance|probability) (?:that )?"
         r"(?:it|she|he|they|this) (?:is|has|was)\b|\bhow probable\b|\bposterior\b|\bupdate (?:our|my) belief",
         bayesian=0.6),
    # ---- decisions under risk -------------------------------------------------------------------------
    _cue("lottery", rf"\b(?:pays?|wins?|yields?|gives?|earns?) \$?{_N}.{{0,30}}\b(?:with )?(?:probability|chance)|"
         rf"\b{_PCT} chance of (?:an? )?\$?{_N}|\bfor sure\b|\bprobability {_N} and\b", expected_utility=1.0,
         decision_theory=0.5),
    _cue("worth-it", r"\bis it worth\b|\bworth (?:buying|paying|it)\b|\bexpected (?:utility|value|payoff)\b|"
         r"\bextended warranty\b|\binsurance\b", expected_utility=0.9, decision_theory=0.3),
    _cue("decision-table", r"\bdecision (?:table|tree|matrix)\b|\bmaximin\b|\bminimax\b|\bregret\b|\bhurwicz\b|"
         r"\bunder (?:risk|uncertainty)\b|\bper state\b|\bstates? of (?:the world|nature)\b", decision_theory=1.2),
    _cue("choice", r"^\s*(?:should (?:we|i)|shall we|do we)\b|\bhow should (?:we|i) (?:think about|approach|decide)\b|"
         r"\bwhat should (?:we|i) do\b|\bshould we (?:enter|launch|open|expand|buy|build|"
         r"invest|acquire|move)\b|\bor (?:wait|expand|not)\b", decision_theory=0.6, expected_utility=0.3),
    _cue("uncertain-states", r"\b(?:demand|market|prices?|rates?) (?:may|might|could) be\b|\buncertain demand\b|"
         r"\bpossible (?:exchange-rate|market|demand) states?\b|\bstrong, average or weak\b", decision_theory=0.7),
    # ---- information ------------------------------------------------------------------------------------
    _cue("information", r"\bentropy\b|\binformation gain\b|\bbits?\b|\bmutual information\b|\bkl divergence\b|"
         r"\btell us the most\b|\bmost informative\b|\bhow much does (?:knowing|learning)\b", info_theory=1.2),
    # ---- simulation -------------------------------------------------------------------------------------
    _cue("simulation", r"\bsimulat(?:e|ion|ed)\b|\bmonte[- ]carlo\b|\b[\d,]+ (?:runs|trials|draws|samples)\b|"
         r"\b(?:normally|uniformly|triangular(?:ly)?) distributed\b|\b(?:triangular|normal|uniform|lognormal) "
         r"distribution\b|\bpercentile\b|\boptimistic, likely and pessimistic\b", monte_carlo=1.2),
    # ---- formal -----------------------------------------------------------------------------------------
    _cue("syllogism", r"\b(?:all|every|each) \w+(?: \w+){0,4} (?:need|must|are|is|have|has|get)\b.{0,80}\b(?:is|are)"
         r" (?:an?|one of)\b|\bif (?:a|an|the)? ?\w+ (?:is|are|has)\b.{0,60}\bthen\b|\bwhat follows\b|"
         r"\bdoes it (?:follow|need)\b|\bnecessarily follows?\b", deductive=1.0),
    _cue("generalise", r"\bgeneral(?:ise|ize|isation|ization)\b|\bgeneral rule\b|\bwhat rule can\b|"
         r"\b(?:every|each) (?:one|store|time|case) (?:that|we|which)\b.{0,60}\b(?:had|was|caused|showed)\b|"
         r"\bin the last [\d,]+\b", inductive=1.0, pattern_recognition=0.3),
    _cue("explain-observation", r"\b(?:best|most plausible|likely) explanation\b|\bexplain (?:this|the|why)\b|"
         r"\balthough\b.{0,60}\b(?:said|expected|forecast)\b|\bhow (?:come|do we explain)\b", abductive=1.0),
    _cue("analogy", r"\banalog(?:y|ous|ical)\b|\b(?:is|looks) (?:similar to|like)\b|\blike (?:a|the) \w+ who\b|"
         r"\b(?:carry|carries|transfer) (?:over|from)\b|\bthat comparison\b|\bhow is our situation similar\b|"
         r"\bthe early days of\b|\bwhat does the \w+ (?:story|case) suggest\b", analogical=1.2),
    _cue("modality", r"\bnecessar(?:y|ily)\b.{0,60}\bpossib|\bpossib\w+.{0,60}\bnecessar|\bpossible worlds?\b|"
         r"\bin every (?:world|scenario)\b|\bin (?:all|any) (?:the )?(?:possible )?scenarios?\b|"
         r"\bis it possible\b.{0,80}\b(?:scenario|world)", modal=1.2),
    _cue("norms", r"\bpermit(?:ted|s)?\b|\bforbidden\b|\bprohibit\w*|\bobliga\w+|\ballowed to\b|\bmay (?:approve|"
         r"export|share)\b|\bentitled\b|\bmust not\b|\bcomplian\w+|\b(?:policy|regulation) (?:says|requires)\b",
         deontic=1.1),
    _cue("intervals", r"\bfrom (?:\d{1,2} )?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w* ?\d{0,2}\b.{0,30}"
         r"\b(?:to|until)\b|\boverlap\b|\bstarted first\b|\bstill valid on\b|\bduring which (?:dates|days)\b|"
         r"\b(?:before|after|during) (?:the )?\w+ (?:phase|period|freeze)\b|\bwhich dates\b", temporal=1.2),
    # ---- causal -----------------------------------------------------------------------------------------
    _cue("causal-effect", r"\b(?:actually|really) (?:increase|reduce|improve|cause)\w*\b|\bcausal effect\b|"
         r"\bconfound\w*\b|\bidentifiable\b|\bobservational data\b|\bdoes \w+(?: \w+)? cause\b|"
         r"\bjust (?:sign up|open|happen)\b", causal=1.0, interventional=0.4),
    _cue("intervention", r"\bdo\(|\bif we (?:force|set|make) (?:every|all|the)\b|\bas opposed to (?:merely )?"
         r"observing\b|\bsetting (?:the )?\w+ to\b|\bcompared with just seeing\b|\bintervene on\b",
         interventional=1.3, causal=0.3),
    _cue("counterfactual", r"\bwhat if we had(?:n't| not)\b|\bhad (?:the|we|they|it|she|he) \w+(?:,| )|"
         r"\bif we had(?:n't| not)\b|\bwould (?:we|it|they|our \w+) (?:still )?have\b|\bwould have\b",
         counterfactual=1.3),
    _cue("root-cause", r"\broot cause\b|\bwhat caused\b|\bwhy did\b.{0,60}\b(?:fail|crash|break|drop)|"
         r"\btrace it back\b|\bunderlying cause\b|\bupstream failure\b|\bkeeps (?:timing out|failing|crashing)\b",
         root_cause=1.3),
    _cue("feedback", r"\bfeedback loops?\b|\breinforcing\b|\bbalancing\b|\bvicious circle\b|\bfeed back into\b|"
         r"\bleverage points?\b|\bwhich funds more\b|\b\w+ leads to more \w+\b.{0,80}\bmore\b|\bexplain the loop\b",
         systems_thinking=1.3),
    # ---- experience -------------------------------------------------------------------------------------
    _cue("rule-of-thumb", r"\brule of thumb\b|\bquick(?:ly)? (?:rule|guess|heuristic)\b|\bwithout looking "
         r"anything up\b|\bheuristic\b|\btake[- ]the[- ]best\b|\btallying\b", heuristic=1.2),
    _cue("past-cases", r"\bpast (?:cases?|clients?|customer|escalations?)\b|\bsimilar (?:outage|case|situation)\b|"
         r"\b(?:earlier|previous) (?:clients|cases|customers)\b|\bresemble this\b|\breuse what worked\b|"
         r"\bwhat (?:resolution )?worked (?:for them|there)\b|\bsame profile as\b", case_based=1.2),
    _cue("patterns", r"\bfrequently bought together\b|\bassociation rules?\b|\brecurring (?:patterns?|"
         r"combinations?)\b|\btend to (?:appear|occur) together\b|\bfrequent (?:patterns|itemsets)\b|"
         r"\b(?:transaction|sensor) logs\b", pattern_recognition=1.3),
    _cue("aspiration", r"\bgood enough\b|\bfirst (?:one|listing|option|apartment|offer|bid)?\b.{0,60}\b(?:meets?|"
         r"under|good enough|that is)\b|\baspiration\b|\bminimum (?:quality|threshold)\w*\b|\bwe do not need the "
         r"best\b|\bdon't look for the perfect\b", satisficing=1.2),
    _cue("recognition-primed", r"\bexperienced (?:commander|nurse|pilot|doctor|operator)\b|\bwith seconds to act\b|"
         r"\bno time to compare\b|\byears of experience\b|\bsenses that\b|\bright now\b.{0,20}$",
         naturalistic=1.2, heuristic=0.3),
    # ---- social -----------------------------------------------------------------------------------------
    _cue("strategic-payoffs", r"\bprice war\b|\bour (?:only )?competitor\b|\beach (?:firm|one|player)'s \w+ "
         r"depends? on\b|\bdepends? on (?:what|whether) the other\b|\bif one \w+ and the other\b|\bnash\b|"
         r"\bprisoner'?s dilemma\b|\bstable\b.{0,20}\bchoices\b|\bwhich choices are stable\b|\bsettle on\b",
         game_theory=1.3),
    _cue("ballots", r"\bballots?\b|\bvoted\b|\bvoters?\b|\branked\b.{0,40}\b(?:candidates|designs|options|"
         r"from best)\b|\bborda\b|\bcondorcet\b|\bmajority vote\b|\bprefer \w+ over\b|\bapproved by the most\b|"
         r"\bwho wins\b|\bwhich \w+ (?:should )?wins?\b|\b\w+ prefer \w+\b", social_choice=1.3),
    _cue("bargaining", r"\bwalk[- ]away\b|\breservation (?:price|value)\b|\bzone of possible agreement\b|\bzopa\b|"
         r"\bbargain\w*\b|\bnegotiat\w+\b|\breach a deal\b|\bwill not pay above\b|\basks for\b.{0,40}\boffers\b",
         negotiation=1.3),
    _cue("arguments", r"\bargu(?:es|ment|ments)\b.{0,80}\b(?:attack|rebut|counter)\w*|\bcounter-arguments?\b|"
         r"\brebut\w*\b|\bdefeated\b|\bdefensible\b|\bclaims? and (?:several )?(?:counter|rebut)", argumentation=1.3),
    _cue("stakeholders", r"\bstakeholders?\b|\bpower/interest\b|\bpower and interest\b|\bhow influential\b|"
         r"\b(?:people|groups) affected\b|\bwho (?:are|will be) affected\b|\bwill be affected\b",
         stakeholder=1.3),
    # ---- meta -------------------------------------------------------------------------------------------
    _cue("know-unknowns", r"\bwhat (?:do )?we actually know\b|\bknowledge gaps?\b|\bwhat (?:don't|do not) we "
         r"know\b|\bassumptions we are unsure\b|\bhow confident should we be\b|\bwhat to find out first\b",
         meta_cognitive=1.3),
    _cue("choose-method", r"\bwhich (?:reasoning )?(?:method|approach|strategy) should\b|\breasoning (?:method|"
         r"strateg\w+)\b.{0,40}\b(?:fit|use|pick|rank)|\brank the reasoning\b", strategy_selection=1.3,
         learning_to_reason=0.2),
    _cue("method-outcomes", r"\bmethod priors\b|\b(?:which )?reasoning methods worked\b|\bearlier reasoning runs\b|"
         r"\blearn from the (?:success|history)\b|\bwhich approach tends to work\b", learning_to_reason=1.5),
    _cue("plan-vs-actual", r"\bexpected \w+.{0,40}\b(?:and|but) (?:shipped|got|made|delivered)\b|\blooking back\b|"
         r"\blessons?\b|\bcompared? with (?:the )?plan\b|\bwhat (?:went wrong|did we learn)\b|\bintended with what"
         r" actually\b|\bwe planned\b", reflection=1.2),
    _cue("forecasts-vs-outcomes", r"\bcalibrat\w+\b|\bbrier\b|\boverconfident\b|\bforecasts?\b.{0,60}\b(?:outcomes?|"
         r"happened)\b|\bstated probabilities\b|\bhow reliable are its probabilities\b|\b\d+% chances? of \w+ on "
         r"days\b", calibration=1.4),
)
# fmt: on


def find_cues(text: str) -> list[CueHit]:
    """The cues that match ``text``, in :data:`CUES` order."""
    hits = []
    for cue in CUES:
        found = cue.pattern.search(text)
        if found:
            hits.append(CueHit(cue.name, found.group(0)[:80], cue.methods))
    return hits


def cue_scores(hits: list[CueHit]) -> dict[str, float]:
    """Each method's cue score: the sum of its matched cues' weights, capped at :data:`CUE_CAP`."""
    scores: dict[str, float] = {}
    for hit in hits:
        for method, weight in hit.methods.items():
            scores[method] = scores.get(method, 0.0) + weight
    return {m: round(min(CUE_CAP, s), 4) for m, s in scores.items()}


__all__ = ["CUES", "CUE_CAP", "Cue", "CueHit", "cue_scores", "find_cues"]
