"""Sentence rules of the deterministic extractor: first-person English statements -> statements and facts.

One sentence gives at most one memory statement (the first rule that matches, in the order of
:data:`RULES`) and any number of facts. The sentences come from :func:`kg.extraction.sentences.sentences`
(questions, boilerplate, metadata and very short sentences left out before any rule; :func:`sentences` and
:func:`skipped` stay importable here). docs/extraction.md lists what each rule finds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from kg.extraction.dates import FoundDate, find_date
from kg.extraction.sentences import sentences, skipped

RELATIVES = ("sister", "brother", "mother", "mom", "mum", "father", "dad", "wife", "husband", "partner",
             "girlfriend", "boyfriend", "son", "daughter", "friend", "best friend", "boss", "colleague",
             "roommate", "cousin", "aunt", "uncle", "grandmother", "grandma", "grandfather", "grandpa", "kids",
             "children", "dog", "cat", "pet", "manager", "neighbor", "neighbour", "fiance", "fiancee")  # fmt: skip
OCCUPATIONS = ("engineer", "developer", "programmer", "teacher", "nurse", "doctor", "student", "designer",
               "manager", "writer", "artist", "lawyer", "scientist", "researcher", "counselor", "counsellor", "chef",
               "consultant", "accountant", "architect", "painter", "musician", "photographer", "therapist",
               "analyst", "entrepreneur", "founder", "volunteer", "mother", "father", "parent")  # fmt: skip
TOPICS: dict[str, tuple[str, ...]] = {
    "food and drink": ("food", "eat", "cook", "pizza", "sushi", "pasta", "coffee", "tea", "wine", "beer", "restaurant",
                       "dish", "meal", "cuisine", "chocolate", "vegan", "vegetarian", "bake", "cake", "fruit",
                       "olive", "cheese"),
    "music": ("music", "song", "band", "concert", "guitar", "piano", "violin", "sing", "jazz", "rock", "album"),
    "sports and outdoors": ("sport", "run", "hike", "hiking", "swim", "yoga", "gym", "football", "soccer",
                            "tennis", "climb", "camp", "bike", "cycling", "ski", "outdoor", "nature", "beach"),
    "reading and writing": ("book", "read", "novel", "author", "poem", "poetry", "write", "writing"),
    "film and tv": ("movie", "film", "series", "show", "tv", "cinema", "netflix"),
    "travel": ("travel", "trip", "flight", "country", "city", "abroad", "vacation", "holiday"),
    "animals": ("dog", "cat", "pet", "animal", "horse", "bird"),
    "art and making": ("paint", "art", "draw", "pottery", "craft", "photograph", "museum", "sculpt"),
    "work and tech": ("work", "code", "coding", "program", "software", "python", "rust", "editor", "mode", "tool",
                      "meeting", "project", "language", "database"),
    "games": ("game", "chess", "puzzle", "board game", "video game"),
}  # fmt: skip

_CUT = re.compile(
    r"\s*(?:,\s*(?:but|because|so|and then|which|I|we|it|he|she|they|though|although)\b|"
    r"\s+(?:because|but|although|though|whereas|since then)\b|;|\s+-\s+|[.!?]).*$",
    re.I,
)
#: Words a phrase does not end with ("I love tea now" -> "tea").
_FILLER = re.compile(r"(?:\s+(?:now|anymore|any more|though|too|as well|a lot|so much|very much|these days|"
                     r"right now|at the moment|lately|nowadays|again|then|either))+\s*$", re.I)  # fmt: skip
_PLACE = r"([A-Z][\w'&.-]*(?:\s+(?:(?:de|del|da|of|upon|am|la|le)\s+)?(?!I\b)[A-Z][\w'&-]*)*)"
#: Adverbs between "I" and the verb ("I now work as", "I still live in").
_ADV = r"(?:(?:now|currently|still|also|just|recently|really|actually|finally|officially|already|even) )*"


@dataclass
class Statement:
    """What one sentence says: category, memory kind, the phrase, its topic and facts ``(s, p, o, entity)``."""

    category: str
    kind: str
    sentence: str
    phrase: str
    speaker: str
    when: datetime
    date: FoundDate | None = None
    topic: str = ""
    group: str = ""
    facts: list[tuple[str, str, str, bool]] = field(default_factory=list)
    #: Facts the sentence says stopped holding (:mod:`kg.extraction.changes`).
    ends: list[tuple[str, str, str, bool]] = field(default_factory=list)


def slug(text: str) -> str:
    """An entity id from a name: lower case words joined by ``_`` (``New York`` -> ``new_york``)."""
    return re.sub(r"[^\w]+", "_", text.strip().lower(), flags=re.UNICODE).strip("_") or "thing"


def clean(phrase: str, *, words: int = 12) -> str:
    """A phrase cut at its first clause break and to ``words`` words."""
    cut = _FILLER.sub("", _CUT.sub("", phrase.strip())).strip(" ,;:'\"")
    return " ".join(cut.split()[:words])


def topic_of(phrase: str) -> str:
    """The topic a preference is aggregated by (a small keyword lexicon; ``general`` otherwise)."""
    low = phrase.lower()
    for topic, keys in TOPICS.items():
        if any(re.search(rf"\b{re.escape(k)}", low) for k in keys):
            return topic
    return "general"


def _camel(*parts: str) -> str:
    words = [w for p in parts for w in re.split(r"[^A-Za-z0-9]+", p) if w]
    return words[0].lower() + "".join(w.capitalize() for w in words[1:]) if words else "relatedTo"


Rule = Callable[[str, str, datetime], "Statement | None"]


_NAME_RE = re.compile(
    r"\b(?i:my name is|call me|calls me|people call me|I go by|I am called) "
    r"([A-Z][\w'-]+(?: [A-Z][\w'-]+)?)"
)
#: Endings and words of occupations beyond :data:`OCCUPATIONS` ("illustrator", "pilot", "data scientist").
_JOB_END = re.compile(
    r"(?:er|or|ist|ian|ant|ent|eer|ect|ic|nurse|chef|pilot|cook|clerk|waiter|waitress|dentist|"
    r"surgeon|cashier|barista|paramedic|vet|coach|tutor|student|intern|freelancer|carpenter|"
    r"plumber|mechanic|baker|farmer|soldier|officer|judge|professor|journalist|editor)$"
)
_NOT_JOBS = frozenset({"vegetarian", "vegan", "fan", "member", "beginner", "lover", "person", "introvert",
                       "extrovert", "optimist", "pessimist", "perfectionist", "christian", "other", "winter",
                       "summer", "mother", "father", "parent", "brother", "sister", "daughter", "son", "partner",
                       "owner", "user", "customer", "dreamer", "early riser", "night owl", "regular"})  # fmt: skip


def _job(phrase: str) -> str | None:
    """``phrase`` ("freelance illustrator") when its last word names an occupation, else None."""
    words = phrase.lower().split()
    if not words or words[-1] in _NOT_JOBS or " ".join(words[-2:]) in _NOT_JOBS:
        return None
    last = words[-1]
    return phrase.lower() if last in OCCUPATIONS or _JOB_END.search(last) else None


def _profile_facts(s: str, who: str) -> list[tuple[str, str, str, bool]]:
    """Every profile fact of a clause: name, age, home, origin, employer, occupation."""
    facts: list[tuple[str, str, str, bool]] = []
    if m := _NAME_RE.search(s):
        facts.append((who, "name", m[1], False))
    if m := re.search(r"\bI am (\d{1,3})(?:\s+years?(?:\s+old)?)?\s*(?:$|[.,!]|and\b)", s):
        facts.append((who, "age", m[1], False))
    if m := re.search(
        rf"\bI {_ADV}(?:live|am living|have been living|have lived|reside|am based|am settled)"
        rf"(?: here)? in {_PLACE}|\bbased in {_PLACE}",
        s,
    ):
        facts.append((who, "livesIn", m[1] or m[2], True))
    if m := re.search(rf"\bI {_ADV}(?:am|come) (?:originally )?from {_PLACE}", s):
        facts.append((who, "comesFrom", m[1], True))
    work = (
        rf"\bI {_ADV}(?:work|am working|have worked|have been working|started working|started|joined|"
        rf"started a (?:new )?job|got a (?:new )?job|took a (?:new )?job)(?: (?:at|for|with))? {_PLACE}"
    )
    employer = rf"\bI {_ADV}(?:am|work as) an? [\w -]+? (?:at|for|with) {_PLACE}"
    if ((m := re.search(work, s)) and not re.match(r"(?:A|An|The|My|It)\b", m[1])) or (m := re.search(employer, s)):
        facts.append((who, "worksAt", m[1], True))
    if m := re.search(
        rf"\bI {_ADV}(?:am|work as|am working as|started working as|became) an? "
        r"((?:[\w-]+ ){0,3}?[\w-]+?)(?= based| from| living| at| for| with| in|,|$|\.| and)",
        s,
    ):
        job = _job(m[1]) if "work as" not in m[0] and "working as" not in m[0] else clean(m[1], words=4).lower()
        if job:
            facts.append((who, "occupation", job, False))
    return facts


def _profile(s: str, who: str, now: datetime) -> Statement | None:
    facts = _profile_facts(s, who)
    if not facts:
        return None
    words = {"name": "name is", "age": "is", "livesIn": "lives in", "comesFrom": "is from", "worksAt": "works at",
             "occupation": "is a"}  # fmt: skip
    phrase = "; ".join(f"{words[p]} {o}{' years old' if p == 'age' else ''}" for _, p, o, _ in facts)
    return Statement("profile", "identity", s, phrase, who, now, facts=facts)


def _moved(s: str, who: str, now: datetime) -> Statement | None:
    if m := re.search(rf"\bI {_ADV}(?:have |had )?{_ADV}(?:moved|relocated) (?:back |over |here )?to {_PLACE}", s):
        return Statement("events", "event", s, f"moved to {m[1]}", who, now, facts=[(who, "livesIn", m[1], True)])
    return None


def _relation(s: str, who: str, now: datetime) -> Statement | None:
    rel = "|".join(r.replace(" ", r"\s+") for r in RELATIVES)
    m = re.search(rf"\bmy (?:older |younger |little |big |new |twin |best |old )?({rel})(?:,?\s+([A-Z][a-z]+),?)?"
                  rf"\s+{_ADV}(lives in|works at|works for|works as an?|is called|is named|moved to|studies|likes|"
                  r"loves|enjoys|hates|is)"
                  r"\s+(.+)",
                  s, re.I)  # fmt: skip
    if m is None:
        m2 = re.search(rf"\bI {_ADV}(?:have|had|adopted|got|have got|rescued) an? "
                       r"(?:older |younger |little |big |new )?"
                       rf"({rel})\s+(?:named|called)\s+"
                       r"([A-Z][a-z]+)",
                       s, re.I)  # fmt: skip
        if m2 is None:
            return None
        relation, name = m2[1].lower(), m2[2]
        facts = [(who, _camel("has", relation), slug(name), True), (slug(name), "name", name, False)]
        return Statement(
            "entities", "fact", s, f"has a {relation} named {name}", who, now, group=slug(name), facts=facts
        )
    relation, name, verb, rest = m[1].lower(), m[2], m[3].lower(), clean(m[4])
    if not rest:
        return None
    if verb in ("is called", "is named") and not name:
        name = rest.split()[0].strip(",.")  # "my girlfriend is called Nora": the entity is nora
        rest = name
    entity = slug(name) if name else f"{who}_{slug(relation)}"
    facts = [(who, _camel("has", relation), entity, True)]
    if verb in ("is called", "is named"):
        facts.append((entity, "name", name, False))
    elif verb.startswith(("lives in", "moved to", "works at", "works for")):
        place = re.match(_PLACE, rest)
        obj = place[1] if place else rest
        pred = "livesIn" if verb in ("lives in", "moved to") else "worksAt"
        facts.append((entity, pred, obj, bool(place)))
    elif verb.startswith("works as"):
        facts.append((entity, "occupation", rest.lower(), False))
    elif verb in ("likes", "loves", "enjoys", "hates"):
        facts.append((entity, "dislikes" if verb == "hates" else "likes", rest, False))
    elif verb == "is" and (job := re.match(r"an? ([\w -]+)$", rest)) and (occupation := _job(job[1])):
        facts.append((entity, "occupation", occupation, False))
    elif name:
        facts.append((entity, "name", name, False))
    phrase = f"{relation}{' ' + name if name else ''} {verb} {rest}"
    return Statement("entities", "fact", s, phrase, who, now, group=entity, facts=facts)


_LIKE = {"love": "likes", "like": "likes", "enjoy": "likes", "adore": "likes", "prefer": "prefers", "hate": "dislikes",
         "dislike": "dislikes", "cannot stand": "dislikes", "do not like": "dislikes", "am into": "likes",
         "am a fan of": "likes", "am a big fan of": "likes", "am passionate about": "likes", "switched to": "likes",
         "have switched to": "likes", "do not enjoy": "dislikes", "cannot bear": "dislikes",
         "really like": "likes"}  # fmt: skip


def _preference(s: str, who: str, now: datetime) -> Statement | None:
    if m := re.search(r"\bmy (?:all[- ]time )?favou?rite ([\w ]{2,30}?) (?:is|are|was) (.+)", s, re.I):
        thing, value = m[1].strip().lower(), clean(m[2])
        if value:
            fact = (who, _camel("favorite", thing), value, False)
            return Statement("preferences", "preference", s, f"favorite {thing} is {value}", who, now,
                             topic=topic_of(f"{thing} {value}"), facts=[fact])  # fmt: skip
    verbs = "|".join(sorted((re.escape(v) for v in _LIKE), key=len, reverse=True))
    m = re.search(
        rf"\bI (?:really |absolutely |also |just |still |totally |truly |actually |now |even |kind of )*"
        rf"({verbs})\s+(.+)",
        s,
        re.I,
    )
    if m is None:
        return None
    verb, what = m[1].lower(), clean(m[2])
    if not what or what.lower() in ("it", "this", "that", "them", "you"):
        return None
    pred = _LIKE[verb]
    return Statement("preferences", "preference", s, f"{pred} {what}", who, now, topic=topic_of(what),
                     facts=[(who, pred, what, False)])  # fmt: skip


_PLAN = (
    r"\bI (?:am going to|am planning to|am planning on|plan to|intend to|want to|hope to|would like to|"
    r"am about to|will|am thinking about|am considering|aim to|am hoping to|would love to)\s+(.+)"
)
_DECISION = r"\b(?:I|we) (?:have |finally |just )*((?:decided|chose|picked|settled on|agreed)\s+(?:to\s+|on\s+)?)(.+)"
_LESSON = (
    r"\b(?:I (?:have )?(?:learned|learnt|realized|realised|found out|discovered)|lesson learned:?|it turned out|"
    r"the (?:fix|solution|problem|issue|mistake|root cause) (?:was|is))\s+(?:that\s+)?(.+)"
)


def _said(pattern: str, s: str, group: int, words: int) -> tuple[re.Match[str], str] | None:
    """The match of ``pattern`` in ``s`` (any case) and its ``group`` cut by :func:`clean`; None if either is empty."""
    m = re.search(pattern, s, re.I)
    if m is None or not (what := clean(m[group], words=words)):
        return None
    return m, what


def _plan(s: str, who: str, now: datetime) -> Statement | None:
    if (found := _said(_PLAN, s, 1, words=14)) is None:
        return None
    what = found[1]
    return Statement("events", "goal", s, f"plans to {what}", who, now, facts=[(who, "plansTo", what, False)])


def _decision(s: str, who: str, now: datetime) -> Statement | None:
    if (found := _said(_DECISION, s, 2, words=14)) is None:
        return None
    m, what = found
    return Statement("events", "decision", s, f"{m[1].strip()} {what}", who, now, facts=[(who, "decided", what, False)])


def _case(s: str, who: str, now: datetime) -> Statement | None:
    found = _said(_LESSON, s, 1, words=20)
    return None if found is None else Statement("cases", "lesson", s, found[1], who, now)


def _pattern(s: str, who: str, now: datetime) -> Statement | None:
    habit = r"\bI (?:always|usually|often|normally|typically|tend to|never|regularly)\s+(.+)"
    m = re.search(habit, s, re.I) or re.search(
        r"\b(?:every|each) (?:morning|evening|day|week|weekend|night|month|year|monday|tuesday|wednesday|thursday|"
        r"friday|saturday|sunday),? I (.+)|\bwhenever (?:.+?), I (.+)", s, re.I)  # fmt: skip
    if m is None:
        return None
    what = clean(next(g for g in m.groups() if g), words=14)
    return Statement("patterns", "skill", s, what, who, now) if what else None


_PAST = ("went", "visited", "attended", "started", "finished", "joined", "got", "bought", "met", "ran", "signed up",
         "graduated", "adopted", "painted", "took", "gave", "made", "won", "lost", "saw", "traveled", "travelled",
         "celebrated", "returned", "read", "wrote", "completed", "launched", "shipped", "deployed", "received",
         "volunteered", "organized", "organised", "hosted", "participated", "married", "had", "did", "tried",
         "learned", "passed", "opened", "created", "built", "found", "fixed", "released", "spent",
         "watched")  # fmt: skip


_NOT_ONGOING = ("going", "feeling", "thinking", "hoping", "wondering", "trying", "kidding", "saying", "sorry")


def _ongoing(s: str, who: str, now: datetime) -> Statement | None:
    """An activity the speaker is doing or has been doing ("I have been volunteering at the youth center")."""
    m = re.search(
        r"\bI (?:have been|am|was|have just been|had been)(?: \w+ly| still| also)* (\w+ing)\b\s+(.+)", s, re.I
    )
    if m is None or m[1].lower() in _NOT_ONGOING or len(m[2].split()) < 2:
        return None
    phrase = clean(f"{m[1]} {m[2]}", words=14)
    return Statement("events", "event", s, phrase, who, now) if phrase else None


def _past(s: str, who: str, now: datetime) -> Statement | None:
    """A first-person sentence with a regular past-tense verb and at least three words after it."""
    m = re.search(r"\b(?:I|we)(?: \w+ly| just| also| finally)? ([a-z]+ed)\b\s+(.+)", s)
    if m is None or len(m[2].split()) < 3:
        return None
    phrase = clean(f"{m[1]} {m[2]}", words=16)
    return Statement("events", "event", s, phrase, who, now) if phrase else None


def _event(s: str, who: str, now: datetime) -> Statement | None:
    verbs = "|".join(v.replace(" ", r"\s+") for v in _PAST)
    m = re.search(rf"\b(?:I|we|my \w+)(?: \w+ly)? (?:just |recently |finally |also )?(?:{verbs})\b\s*(.*)", s, re.I)
    if m is None and not (find_date(s, now) and re.search(r"\b(?:I|we|my)\b", s)):
        return None
    phrase = clean(m[0] if m else s, words=18)
    return Statement("events", "event", s, phrase, who, now) if phrase else None


def _about_self(s: str, who: str, now: datetime) -> Statement | None:
    """Any other statement of at least six words that names someone or something (a pronoun, a name, a number:
    "my kids loved it", "Luna and Oliver are so playful"): an event memory quoting it, without facts, so that
    recall can still find what the rules above do not read. Small talk about one's mood is left out."""
    if len(s.split()) < 6 or not re.search(
        r"\b(?:I|my|me|we|our|us|mine|they|their|he|she|his|her|it|this|these|that)\b|\d|\s[A-Z][a-z]", s, re.I
    ):
        return None
    if re.search(rf"\bI (?:am|was|have been) (?:\w+ly )?(?:{'|'.join(_NOT_ONGOING)})\b", s):
        return None  # small talk: "I am feeling great", "I was wondering about that"
    phrase = clean(s, words=18)
    return Statement("events", "event", s, phrase, who, now) if len(phrase.split()) >= 4 else None


#: The rules in order: the first that matches gives the sentence's memory statement.
RULES: tuple[Rule, ...] = (_profile, _moved, _relation, _preference, _decision, _plan, _case, _pattern, _event,
                           _ongoing, _past, _about_self)  # fmt: skip
#: Fact-only rules also tried after the first match (a sentence may state several facts).
FACT_RULES: tuple[Rule, ...] = (_profile, _moved, _relation)


def statements(sentence: str, speaker: str, when: datetime) -> Statement | None:
    """The statement of one sentence (with every fact any rule finds in it), or None."""
    found: Statement | None = None
    for rule in RULES:
        found = rule(sentence, speaker, when)
        if found is not None:
            break
    if found is None:
        return None
    for rule in FACT_RULES:
        extra = rule(sentence, speaker, when)
        if extra is not None:
            found.facts += [f for f in extra.facts if f not in found.facts]
    found.date = find_date(sentence, when)
    return found


__all__ = ["RULES", "Statement", "clean", "sentences", "skipped", "slug", "statements", "topic_of"]
