"""The deterministic extractive summariser: the most informative sentences of a span, quoted in order.

Steps:

1. **Split** each text into lines and each line into sentences: ``.``, ``!``, ``?`` or ``…`` followed by a
   space, or the CJK full stop, exclamation and question marks. Common abbreviations ("e.g.", "Dr.") do not
   end a sentence; lines inside a code fence are kept whole. A speaker label at the start of a line
   (``Caroline:``, ``user:``, ``[2024-05-01 12:00] assistant:``) is kept with every sentence of that line,
   so who said what survives. Sentences longer than twice the target in characters (80 at least, 1,200 at
   most) are cut at spaces into pieces. Marker lines of earlier extractive summaries are dropped, so that
   condensing them does not nest markers.
2. **Score** every sentence: the BM25-style salience of its terms against the whole span (terms frequent in
   the span but not everywhere weigh most; divided by the square root of the sentence length, so that long
   sentences do not win by size alone), or, with an embedder, the cosine to the span's centroid. The
   speakers' own names are not terms. Scores are divided by the best one, then **boosted** for concrete
   content: numbers (+0.25), dates, times and durations (+0.3), names (capitalised words after the first,
   other than the speakers and their short forms, +0.2), file paths (+0.35), URLs (+0.3), decisions
   ("decided", "agreed", "will", "must" ..., +0.3), TODO/FIXME and open-question markers (+0.35), a
   question (+0.1). Sentences of fewer than three content words count half.
3. **Select** best first (ties: the earlier sentence) while the output stays within the target, skipping
   sentences scored 0 and repeats (a Jaccard overlap of 0.8 with the words of a sentence already chosen);
   if no sentence fits, the best one alone. The chosen sentences are restored to their original order.
4. **Label**: the content starts with ``[extractive summary: k of n sentences, quoted in order]`` and
   ``SummaryText.method`` is ``extractive``.

The output stays within ``target_tokens`` (summing the estimator over its lines), except when not a single
sentence fits, and then it is exactly one sentence. An embedder that fails falls back to BM25 salience.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from kg.errors import BackendUnavailableError, InputError
from kg.models.conversation import SummaryMethod, TokenEstimator, estimate_tokens
from kg.ports import Embedder, SummaryText
from kg.text.dates import MONTH_NUMBERS, WEEKDAY_NAMES
from kg.text.stopwords import STOPWORDS
from kg.text.words import TOKEN_RE

log = logging.getLogger("mabos.conversation")

#: How every extractive summary begins (the full first line is ``[extractive summary: k of n sentences ...]``).
EXTRACTIVE_MARKER = "[extractive summary"
#: The longest sentence piece in characters (pieces are also at most twice the target in characters).
MAX_SENTENCE_CHARS = 1_200
MIN_SENTENCE_CHARS = 80
DUPLICATE_JACCARD = 0.8
_K1, _B = 1.2, 0.75

_MARKER_LINE = re.compile(r"^\s*\[extractive summary\b[^\]\n]*\]\s*$", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_APOSTROPHES = "'\u2019"
_CLOSERS = "\"'\u201d\u2019)]"  # what may follow a sentence's final mark: quotes and brackets
_OPENERS = "(\"'\u201c\u2018"
_CJK_ENDS = "\u3002\uff01\uff1f"  # ideographic full stop, fullwidth exclamation and question marks
_WORD = rf"[^\W\d_][\w.{_APOSTROPHES}-]{{0,30}}"
_LABEL = re.compile(rf"^(?P<label>(?:\[[^\]\n]{{1,40}}\][ \t]*)?(?P<name>{_WORD}(?: {_WORD}){{0,2}})):[ \t]+(?=\S)")
_ROLES = frozenset({"user", "assistant", "system", "tool"})
_NOT_LABELS = frozenset(
    ["todo", "fixme", "xxx", "hack", "bug", "note", "nb", "warning", "error", "info", "debug", "http", "https",
     "ftp", "file", "ps", "re", "fyi", "tip", "important", "update", "edit", "question", "answer", "q", "a",
     "decision", "example", "summary", "result", "results", "output", "input", "step"]
)  # fmt: skip
_END = re.compile(rf"[.!?…]+[{re.escape(_CLOSERS)}]*(?=\s|$)|[{_CJK_ENDS}]+")
_ABBREVIATIONS = frozenset(
    ["e.g", "i.e", "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "cf", "al", "approx", "fig", "no",
     "nos", "vol", "p.m", "a.m", "u.s", "inc", "ltd", "dept", "est"]
)  # fmt: skip

_NUMBER = re.compile(r"\d")
_MONTHS = "|".join(name.capitalize() for name in MONTH_NUMBERS)  # full names and abbreviations ("Sept")
_DAYS = "|".join(WEEKDAY_NAMES)
_DATE = re.compile(
    rf"\b(?:{_MONTHS}|{_DAYS})\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{2,4}}\b"
    r"|\b\d{1,2}:\d{2}\b|\b\d{1,2} ?(?:am|pm|a\.m\.|p\.m\.)"
    r"|\b(?i:yesterday|today|tomorrow|tonight|weekend|ago|(?:last|next|this) (?:week|month|year|night|time))\b"
    r"|\b(?i:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a few|several) "
    r"(?i:years?|months?|weeks?|days?|hours?)\b"
)
_PATH = re.compile(
    r"(?<![\w/])(?:~|\.{1,2})?/?[\w.-]+(?:/[\w.-]+)+/?"
    r"|\b[\w-]+\.(?:py|md|json|ya?ml|toml|txt|csv|jsonl|js|ts|sql|sh|cfg|ini|log|rs|go|java|c|h|cpp|html|css)\b"
)
_URL = re.compile(r"\bhttps?://\S+|\bwww\.\S+", re.IGNORECASE)
_DECISION = re.compile(
    r"\b(?:decided|decision|agreed|will|won't|must|going to|plan(?:ned|s)? to|chose|choose|settled on|"
    r"commit(?:ted)? to|promised?|let's|we'll|i'll)\b",
    re.IGNORECASE,
)
_TODO = re.compile(
    r"\b(?:TODO|FIXME|XXX|TBD)\b|\b(?i:open question|unresolved|follow[- ]up|action item|not sure|need(?:s)? to)\b"
)
_CAPITALISED = re.compile(rf"(?<=\s)[A-Z][\w{_APOSTROPHES}-]*[a-z][\w{_APOSTROPHES}-]*")
_NOT_NAMES = frozenset({"I", "I'm", "I've", "I'll", "I'd", "OK", "Ok"})
#: Words of chat small talk that say nothing about the topic (ignored like stopwords when scoring).
FILLER = frozenset(
    ["hi", "hey", "hello", "bye", "thanks", "thank", "thx", "wow", "cool", "yeah", "yep", "yes", "ok", "okay",
     "lol", "haha", "awesome", "nice", "sure", "totally", "really", "glad", "amazing", "great", "oh", "ah", "um",
     "uh", "hmm"]
)  # fmt: skip

IGNORED = STOPWORDS | FILLER
_BOOSTS = ((_NUMBER, 0.25), (_DATE, 0.3), (_PATH, 0.35), (_URL, 0.3), (_DECISION, 0.3), (_TODO, 0.35))


@dataclass(frozen=True)
class Sentence:
    """One sentence (or piece of a long one) of the texts being summarised.

    Attributes:
        text: the sentence, without its line's speaker label.
        label: the speaker label of its line (``Caroline``, ``[2024-05-01 12:00] user``), or None.
        source: the index of the text it comes from.
        position: its place among all sentences of the texts (0-based).
    """

    text: str
    label: str | None
    source: int
    position: int

    def render(self) -> str:
        """The sentence as an output line: ``label: text``, or the text alone."""
        return f"{self.label}: {self.text}" if self.label else self.text


def split_sentences(texts: Sequence[str], *, max_chars: int = MAX_SENTENCE_CHARS) -> list[Sentence]:
    """Every sentence of ``texts`` in order (see the module docstring for the rules).

    Args:
        texts: the messages or summaries to split.
        max_chars: sentences longer than this are cut at spaces (hard cut when there is none) into pieces.
    """
    if max_chars < 1:
        raise InputError("max_chars", "must be at least 1")
    out: list[Sentence] = []
    for source, text in enumerate(texts):
        fenced = False
        for line in text.splitlines():
            if _FENCE.match(line):
                fenced = not fenced
                continue
            if not line.strip() or (not fenced and _MARKER_LINE.match(line)):
                continue
            label, body = (None, line.strip()) if fenced else _split_label(line.strip())
            for sentence in [body] if fenced else _cut(body):
                for piece in _pieces(sentence, max_chars):
                    out.append(Sentence(piece, label, source, len(out)))
    return out


def _split_label(line: str) -> tuple[str | None, str]:
    match = _LABEL.match(line)
    if match is None:
        return None, line
    name = match["name"]
    first = name.split()[0].lower()
    is_role = name.lower() in _ROLES
    if first in _NOT_LABELS or not (is_role or all(w[0].isupper() for w in name.split())):
        return None, line
    return match["label"], line[match.end() :]


def _cut(line: str) -> list[str]:
    """A line cut after each sentence end that is not an abbreviation."""
    pieces, start = [], 0
    for match in _END.finditer(line):
        piece = line[start : match.end()].strip()
        if match.group().startswith(".") and _abbreviated(piece):
            continue
        if piece:
            pieces.append(piece)
        start = match.end()
    tail = line[start:].strip()
    if tail:
        pieces.append(tail)
    return pieces


def _abbreviated(piece: str) -> bool:
    words = piece.rstrip(_CLOSERS).rstrip(".").split()
    if not words:
        return False
    last = words[-1].lower().lstrip(_OPENERS)
    return last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha() and words[-1][-1].isupper())


def _pieces(sentence: str, max_chars: int) -> list[str]:
    pieces = []
    while len(sentence) > max_chars:
        cut = sentence.rfind(" ", 0, max_chars + 1)
        if cut < max_chars // 2:
            cut = max_chars
        pieces.append(sentence[:cut].rstrip())
        sentence = sentence[cut:].lstrip()
    if sentence:
        pieces.append(sentence)
    return pieces


def terms(text: str) -> list[str]:
    """The content words of ``text``: lower-cased; stopwords, small talk and single Latin letters dropped."""
    words = (w.lower() for w in TOKEN_RE.findall(text))
    return [w for w in words if w not in IGNORED and (len(w) > 1 or w.isdigit() or not w.isascii())]


def bm25_salience(sentence_terms: Sequence[Sequence[str]]) -> list[float]:
    """Each sentence's BM25 score against the span's own term frequencies, per square root of its length."""
    n = len(sentence_terms)
    df = Counter(t for ts in sentence_terms for t in set(ts))
    span_tf = Counter(t for ts in sentence_terms for t in ts)
    average = (sum(len(ts) for ts in sentence_terms) / n) if n else 1.0
    scores = []
    for ts in sentence_terms:
        tf = Counter(ts)
        norm = _K1 * (1 - _B + _B * len(ts) / (average or 1.0))
        score = sum(
            math.log1p((n - df[t] + 0.5) / (df[t] + 0.5)) * math.log1p(span_tf[t]) * f * (_K1 + 1) / (f + norm)
            for t, f in tf.items()
        )
        scores.append(score / math.sqrt(max(1, len(ts))))
    return scores


def centrality(vectors: Sequence[Sequence[float]]) -> list[float]:
    """Each vector's cosine to the mean direction of all of them."""
    unit = [_unit(v) for v in vectors]
    centroid = _unit([math.fsum(col) for col in zip(*unit, strict=True)]) if unit else []
    return [math.fsum(a * b for a, b in zip(v, centroid, strict=True)) for v in unit]


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else [0.0 for _ in vector]


def _scaled(scores: Sequence[float]) -> list[float]:
    """Scores divided by the best one (negative ones count 0), so that 0 still means "no content"."""
    high = max(scores, default=0.0)
    return [max(0.0, s) / high if high > 0 else 0.0 for s in scores]


def feature_boost(text: str, speakers: frozenset[str] = frozenset()) -> float:
    """What concrete content adds to a sentence's score (see the module docstring for the weights).

    Args:
        text: the sentence.
        speakers: names that do not count as names here (the span's own speakers, addressed in every turn).
    """
    boost = sum(weight for pattern, weight in _BOOSTS if pattern.search(text))
    if any(w not in _NOT_NAMES and w not in speakers for w in _CAPITALISED.findall(text)):
        boost += 0.2
    if text.rstrip(_CLOSERS + " ").endswith(("?", "\uff1f")):
        boost += 0.1
    return boost


class ExtractiveSummarizer:
    """A :class:`~kg.ports.Summarizer` that quotes the best sentences of the span, in their original order.

    Args:
        estimator: the token estimate the target is measured with (default chars/4).
        embedder: when given, sentences are scored by closeness to the span's centroid instead of BM25
            salience (an embedder that fails falls back to BM25, logged).

    Example:
        >>> s = ExtractiveSummarizer().summarize(["Hi! We decided to ship v2.1 on 3 May."], target_tokens=40, depth=0)
        >>> s.content.splitlines()
        ['[extractive summary: 1 of 2 sentences, quoted in order]', 'We decided to ship v2.1 on 3 May.']
    """

    def __init__(self, *, estimator: TokenEstimator = estimate_tokens, embedder: Embedder | None = None) -> None:
        self.estimator = estimator
        self.embedder = embedder

    def summarize(self, texts: Sequence[str], *, target_tokens: int, depth: int) -> SummaryText:
        """The best sentences of ``texts`` within ``target_tokens`` (``depth`` does not change the method).

        Raises:
            InputError: ``target_tokens`` below 1, a negative depth, or texts without any sentence.
        """
        if target_tokens < 1:
            raise InputError("target_tokens", "must be at least 1")
        if depth < 0:
            raise InputError("depth", "must be 0 (leaf) or more (condensed)")
        max_chars = min(MAX_SENTENCE_CHARS, max(MIN_SENTENCE_CHARS, 2 * target_tokens))
        sentences = split_sentences(texts, max_chars=max_chars)
        if not sentences:
            raise InputError("texts", "nothing to summarise: no sentence in the texts")
        chosen = self.select(sentences, target_tokens)
        header = _header(len(chosen), len(sentences))
        content = "\n".join([header, *(s.render() for s in chosen)])
        return SummaryText(content=content, method=SummaryMethod.EXTRACTIVE.value)

    def scores(self, sentences: Sequence[Sentence]) -> list[float]:
        """Each sentence's final score: base salience (0-1) halved for very short sentences, plus boosts."""
        speakers = _speakers(sentences)
        sentence_terms = _content_terms(sentences, speakers)
        base = _scaled(self._base(sentences, sentence_terms))
        return [
            b * (0.5 if len(ts) < 3 else 1.0) + feature_boost(s.text, speakers)
            for s, ts, b in zip(sentences, sentence_terms, base, strict=True)
        ]

    def select(self, sentences: Sequence[Sentence], target_tokens: int) -> list[Sentence]:
        """The chosen sentences in original order: best first within the budget, repeats skipped."""
        scores = self.scores(sentences)
        words = [
            frozenset(ts) or frozenset({s.text.lower()})
            for s, ts in zip(sentences, _content_terms(sentences, _speakers(sentences)), strict=True)
        ]
        budget = target_tokens - self.estimator(_header(len(sentences), len(sentences)))
        chosen: list[int] = []
        used = 0
        for i in sorted(range(len(sentences)), key=lambda k: (-scores[k], k)):
            if chosen and scores[i] <= 0:  # no content word and nothing concrete: never worth a line
                continue
            if any(_jaccard(words[i], words[j]) >= DUPLICATE_JACCARD for j in chosen):
                continue
            cost = self.estimator(sentences[i].render() + "\n")
            if used + cost <= budget:
                chosen.append(i)
                used += cost
        if not chosen:  # not one sentence fits: the best one alone
            chosen = [min(range(len(sentences)), key=lambda k: (-scores[k], k))]
        return [sentences[i] for i in sorted(chosen)]

    def _base(self, sentences: Sequence[Sentence], sentence_terms: list[list[str]]) -> list[float]:
        if self.embedder is not None:
            try:
                return centrality(self.embedder.embed([s.text for s in sentences], batch=True))
            except BackendUnavailableError as exc:
                log.warning("extractive summary scores by BM25: the embedder failed (%s)", exc)
        return bm25_salience(sentence_terms)


def _speakers(sentences: Sequence[Sentence]) -> frozenset[str]:
    """The speakers' names and their short forms (``Mel`` for ``Melanie``: three letters or more); roles such
    as ``user`` are not names."""
    labels = (re.sub(r"^\[[^\]]*\]\s*", "", s.label) for s in sentences if s.label)
    names = {w for label in labels if label.lower() not in _ROLES for w in label.split() if w[:1].isupper()}
    return frozenset(names | {n[:k] for n in names for k in range(3, len(n))})


def _content_terms(sentences: Sequence[Sentence], speakers: frozenset[str]) -> list[list[str]]:
    """Each sentence's terms without the speakers' names (addressing someone says nothing about the topic)."""
    names = {n.lower() for n in speakers}
    return [[t for t in terms(s.text) if t not in names] for s in sentences]


def _header(kept: int, total: int) -> str:
    return f"{EXTRACTIVE_MARKER}: {kept} of {total} sentences, quoted in order]"


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


__all__ = [
    "EXTRACTIVE_MARKER",
    "ExtractiveSummarizer",
    "Sentence",
    "bm25_salience",
    "centrality",
    "feature_boost",
    "split_sentences",
    "terms",
]
