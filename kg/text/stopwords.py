"""Stopwords: English function words and the words questions are made of.

:data:`STOPWORDS` is what a recall query (and every feature that wants a text's content words) leaves out:
"what", "did", "she" and "the" match most of a conversation and push the turns that carry the question's
content words down the list. Dropping them from the *query* (the index keeps every word) raised recall@10
on LoCoMo by about 0.01 for hybrid and 0.05-0.08 for BM25 alone (bench/locomo_recall.py;
docs/recall-scoring.md). :data:`INDEX_STOPWORDS` is the shorter list the Markdown index drops from the
texts it indexes (:func:`kg.text.terms.search_terms`), and :data:`LOG_STOPWORDS` the list of the time hierarchy
(kg/memory/hierarchy_logs.py).
"""

from __future__ import annotations

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
#: The function and question words a query's content words are found without.
STOPWORDS = frozenset(" ".join(_GROUPS).split())

#: The function words the Markdown index leaves out of the texts it indexes.
_INDEX_TEXT = (
    "a an and are as at be been but by can could did do does for from had has have he her his i if in into is "
    "it its me my no not of on or our she so than that the their them then there these they this those to was "
    "we were what when where which who will with would you your"
)
INDEX_STOPWORDS = frozenset(_INDEX_TEXT.split())

_LOG_TEXT = (
    "a an and are as at be been but by can could did do does for from had has have he her his how i if in into is "
    "it its just more most no not of on or our out over she so some such than that the their them then there these "
    "they this those to too under up was we were what when where which while who why will with would you your "
    "about after again also because before being both down during each few further here itself only other own same "
    "should through until very"
)
#: The function words the time hierarchy (daily logs and their summaries) leaves out of the terms it counts and
#: searches: a part of :data:`STOPWORDS` that keeps words such as "past", "near" or "kind", which name topics in a
#: day's notes.
LOG_STOPWORDS = frozenset(_LOG_TEXT.split())


def content_words(words: list[str]) -> list[str]:
    """The distinct lower-cased ``words`` (in order) without :data:`STOPWORDS`; all of them when every word is
    a stopword, so that "what is it" still searches for something."""
    distinct = list(dict.fromkeys(w.lower() for w in words))
    kept = [w for w in distinct if w not in STOPWORDS]
    return kept or distinct


__all__ = ["INDEX_STOPWORDS", "LOG_STOPWORDS", "STOPWORDS", "content_words"]
