"""Words a recall query can do without: English function words and the words questions are made of.

BM25 gives every query term a say; "what", "did", "she" and "the" match most of a conversation and push
the turns that carry the question's content words down the list. Dropping them from the *query* (the
index keeps every word) raised recall@10 on LoCoMo by about 0.01 for hybrid and 0.05-0.08 for BM25 alone
(bench/locomo_recall.py; docs/recall-scoring.md). A query made only of such words is searched as it is.
"""

from __future__ import annotations

import re

_GROUPS = (
    # articles, determiners, quantifiers
    "a an the this that these those some any each every either neither no none all both few more most other "
    "such own same",
    # pronouns and possessives
    "i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself she her "
    "hers herself it its itself they them their theirs themselves one",
    # auxiliaries and modals with their contracted pieces
    "am is are was were be been being have has had having do does did doing will would shall should can could "
    "may might must ought s t d ll m re ve don doesn didn isn aren wasn weren hasn haven hadn won wouldn shan "
    "shouldn couldn mustn mightn needn",
    # prepositions and particles
    "about above across after against along among around at before behind below beneath beside between beyond "
    "by down during except for from in inside into near of off on onto out outside over past since through "
    "throughout till to toward towards under until up upon via with within without",
    # conjunctions and adverbs that carry no topic
    "and but or nor so yet if then else than because as while whereas though although unless whether also just "
    "only very too quite rather again further once here there now ever never not",
    # question words and the nouns questions use to ask for a category
    "what when where which who whom whose why how whatever whenever wherever kind type sort",
)
STOPWORDS = frozenset(" ".join(_GROUPS).split())
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def query_terms(text: str) -> list[str]:
    """The distinct words of ``text`` (lower-cased, in order) without stopwords; all of them when every
    word is a stopword, so that "what is it" still searches for something."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))
    kept = [w for w in words if w not in STOPWORDS]
    return kept or words


__all__ = ["STOPWORDS", "query_terms"]
