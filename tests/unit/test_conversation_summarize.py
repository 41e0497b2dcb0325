"""The extractive summariser on realistic conversation text.

Data: ``tests/data/conversation/summarize-dialogue.jsonl``, 117 turns of two friends (Noor and Tomas) chatting
over six sessions from March to June 2024: small talk, numbers, dates, names, places, a decision, a TODO and
questions. Original text written for mabos's tests, no third-party data (see the ``.md`` file next to it).
Nothing is mocked: the real splitter, scorer and selector, and for the embedder path the real packaged
all-MiniLM-L6-v2 embedder (skipped with a reason when it cannot load).
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.conversation.extractive import MAX_SENTENCE_CHARS, feature_boost, split_sentences
from kg.conversation.summarize import EXTRACTIVE_MARKER, ExtractiveSummarizer, format_message
from kg.errors import BackendUnavailableError, InputError
from kg.models.conversation import estimate_tokens
from kg.recall.http_embedder import HttpEmbedder
from tests.budget import examples

DATA = Path(__file__).resolve().parents[1] / "data" / "conversation" / "summarize-dialogue.jsonl"
TURNS = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
TEXTS = [format_message(t["speaker"], t["text"]) for t in TURNS]
HEADER = re.compile(r"^\[extractive summary: (\d+) of (\d+) sentences, quoted in order\]$")
DATE_WORDS = re.compile(
    r"\d|yesterday|last (?:week|night)|weekend|ago|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
    r"|February|March|April|May|June|July|October|years|weeks",
    re.IGNORECASE,
)


def session(n: int) -> list[str]:
    return [format_message(t["speaker"], t["text"]) for t in TURNS if t["session"] == n]


def body(content: str) -> list[str]:
    """The quoted lines of an extractive summary (its header checked and dropped)."""
    header, *lines = content.splitlines()
    assert HEADER.match(header), header
    return lines


def is_subsequence(lines: list[str], of: list[str]) -> bool:
    it = iter(of)
    return all(any(line == candidate for candidate in it) for line in lines)


def test_the_dialogue_is_what_the_header_says():
    assert len(TURNS) == 117
    assert {t["speaker"] for t in TURNS} == {"Noor", "Tomas"}
    assert {t["session"] for t in TURNS} == {1, 2, 3, 4, 5, 6}
    assert TURNS[0]["dia_id"] == "D1:1"
    assert TURNS[-1]["dia_id"] == "D6:21"


# ------------------------------------------------------------------------------------------ the summary


@pytest.mark.parametrize("target", [40, 120, 400, 1200])
def test_the_target_is_respected_on_real_text(target):
    result = ExtractiveSummarizer().summarize(TEXTS, target_tokens=target, depth=0)
    lines = body(result.content)
    assert lines
    assert estimate_tokens(result.content) <= target or len(lines) == 1
    assert sum(estimate_tokens(line + "\n") for line in lines) + estimate_tokens(result.content.splitlines()[0]) <= (
        target
    )


def test_the_output_is_labelled_extractive():
    result = ExtractiveSummarizer().summarize(TEXTS, target_tokens=300, depth=0)
    assert (result.method, result.model) == ("extractive", None)
    assert result.content.startswith(EXTRACTIVE_MARKER)
    header = HEADER.match(result.content.splitlines()[0])
    assert header is not None
    kept, total = int(header[1]), int(header[2])
    assert kept == len(body(result.content))
    assert total == len(split_sentences(TEXTS, max_chars=MAX_SENTENCE_CHARS))
    assert kept < total


def test_it_is_deterministic():
    first = ExtractiveSummarizer().summarize(TEXTS, target_tokens=300, depth=0)
    again = ExtractiveSummarizer().summarize(list(TEXTS), target_tokens=300, depth=0)
    assert first == again


def test_sentences_keep_their_original_order_and_speakers():
    lines = body(ExtractiveSummarizer().summarize(TEXTS, target_tokens=500, depth=0).content)
    rendered = [s.render() for s in split_sentences(TEXTS, max_chars=MAX_SENTENCE_CHARS)]
    assert is_subsequence(lines, rendered)
    assert all(line.startswith(("Noor: ", "Tomas: ")) for line in lines)  # who said it survives


def test_sentences_with_numbers_dates_and_names_are_preferred():
    sentences = split_sentences(TEXTS)
    lines = body(ExtractiveSummarizer().summarize(TEXTS, target_tokens=400, depth=0).content)
    kept_share = sum(bool(DATE_WORDS.search(line.split(": ", 1)[1])) for line in lines) / len(lines)
    base_share = sum(bool(DATE_WORDS.search(s.text)) for s in sentences) / len(sentences)
    assert kept_share > 2 * base_share
    joined = "\n".join(lines)
    # concrete facts of the dialogue that a summary must not lose: a date, a number, a decision, a TODO
    assert "I signed up for the Riverside Half Marathon yesterday" in joined
    assert "We have to migrate 3,000 customer accounts before the end of June" in joined
    assert "I decided to run the 10K instead of the half marathon" in joined
    assert "My TODO for Friday: call the hardware store about renting a grill." in joined


def test_small_talk_is_left_out_first():
    lines = body(ExtractiveSummarizer().summarize(TEXTS, target_tokens=400, depth=0).content)
    texts = [line.split(": ", 1)[1] for line in lines]
    assert "Hey Tom!" not in texts
    assert "Good to see you!" not in texts
    assert "Thanks, Tom!" not in texts
    assert "Thank you!" not in texts


def test_a_short_span_can_be_kept_whole_but_never_its_empty_sentences():
    result = ExtractiveSummarizer().summarize(session(1)[:3], target_tokens=2400, depth=0)
    lines = body(result.content)
    assert "Noor: I signed up for the Riverside Half Marathon yesterday and I'm already nervous about it." in lines
    assert "Noor: Hey Tom!" not in lines  # nothing in it worth a line ("Tom" is the speaker Tomas)


def test_condensing_extractive_summaries_does_not_nest_markers():
    leaves = [ExtractiveSummarizer().summarize(session(n), target_tokens=150, depth=0).content for n in (1, 2, 3)]
    condensed = ExtractiveSummarizer().summarize(leaves, target_tokens=120, depth=1)
    lines = body(condensed.content)
    assert condensed.content.count(EXTRACTIVE_MARKER) == 1
    leaf_lines = [line for leaf in leaves for line in body(leaf)]
    assert is_subsequence(lines, leaf_lines)  # quoted from the leaves, in chronological order


def test_repeated_sentences_are_kept_once():
    texts = ["Alice: We will deploy v3 on 2 May.", "Bob: Ok.", "Alice: We will deploy v3 on 2 May."]
    lines = body(ExtractiveSummarizer().summarize(texts, target_tokens=200, depth=0).content)
    assert lines == ["Alice: We will deploy v3 on 2 May."]


def test_a_sentence_longer_than_the_target_is_cut_into_pieces():
    long = "alpha beta gamma delta " * 400  # one 9,200-character sentence without punctuation
    pieces = split_sentences([long], max_chars=200)
    assert len(pieces) > 9_200 // 200
    assert all(len(p.text) <= 200 for p in pieces)
    assert " ".join(p.text for p in pieces) == long.strip()
    result = ExtractiveSummarizer().summarize([long], target_tokens=100, depth=0)
    lines = body(result.content)
    assert len(lines) == 1  # every piece has the same words: the others are repeats
    assert len(lines[0]) <= 200  # pieces are at most twice the target in characters (80 minimum)
    assert lines[0] in long


def test_when_nothing_fits_the_best_sentence_alone_is_returned():
    result = ExtractiveSummarizer().summarize(TEXTS, target_tokens=1, depth=0)
    assert len(body(result.content)) == 1


def test_bad_input_is_an_input_error():
    summarizer = ExtractiveSummarizer()
    with pytest.raises(InputError, match="texts"):
        summarizer.summarize([], target_tokens=100, depth=0)
    with pytest.raises(InputError, match="texts"):
        summarizer.summarize(
            ["  ", "\n", "[extractive summary: 0 of 0 sentences, quoted in order]"], target_tokens=9, depth=1
        )
    with pytest.raises(InputError, match="target_tokens"):
        summarizer.summarize(TEXTS, target_tokens=0, depth=0)
    with pytest.raises(InputError, match="depth"):
        summarizer.summarize(TEXTS, target_tokens=10, depth=-1)


# ------------------------------------------------------------------------------------------ splitting and boosts


def test_sentence_splitting_rules():
    texts = [
        "[2024-05-01 12:00] user: Dr. Smith agreed, e.g. on the plan. We ship v2.1 today! Really?",
        "assistant: Done.\n```\nx = compute(a.b)\nprint(x.y)\n```\n小明去了北京。他很开心\uff01",
        "TODO: fix the parser. Then test it.",
    ]
    rendered = [s.render() for s in split_sentences(texts)]
    assert rendered == [
        "[2024-05-01 12:00] user: Dr. Smith agreed, e.g. on the plan.",
        "[2024-05-01 12:00] user: We ship v2.1 today!",
        "[2024-05-01 12:00] user: Really?",
        "assistant: Done.",
        "x = compute(a.b)",
        "print(x.y)",
        "小明去了北京。",
        "他很开心\uff01",
        "TODO: fix the parser.",  # a marker word is not a speaker
        "Then test it.",
    ]
    assert [s.source for s in split_sentences(texts)] == [0, 0, 0, 1, 1, 1, 1, 1, 2, 2]


@pytest.mark.parametrize(
    ("sentence", "feature"),
    [
        ("The config lives in ~/.mabos/config.toml now.", "path"),
        ("See https://example.org/spec for details.", "url"),
        ("We decided to use SQLite.", "decision"),
        ("FIXME the retry loop.", "todo"),
        ("It happened on 12 March.", "date"),
        ("We spoke with Priya about it.", "name"),
    ],
)
def test_concrete_sentences_get_a_boost(sentence, feature):
    plain = "we talked about it for a while."
    assert feature_boost(sentence) > feature_boost(plain), feature


def test_the_speakers_own_names_are_not_boosted_as_names():
    assert feature_boost("That is great, Tomas.", frozenset({"Tomas"})) == 0.0
    assert feature_boost("That is great, Tomas.") > 0.0


# ------------------------------------------------------------------------------------------ embedder path


def test_a_failing_embedder_falls_back_to_bm25():
    with socket.socket() as sock:  # a real embedder client pointed at a port with no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = HttpEmbedder(f"http://127.0.0.1:{port}/v1", model="none", dimension=4, timeout=2)
    with_failing = ExtractiveSummarizer(embedder=embedder).summarize(TEXTS, target_tokens=300, depth=0)
    assert with_failing == ExtractiveSummarizer().summarize(TEXTS, target_tokens=300, depth=0)


def test_embedder_centrality_on_the_real_model():
    from kg.recall.embedder import SentenceTransformerEmbedder  # noqa: PLC0415 - seconds to load

    embedder = SentenceTransformerEmbedder()
    try:
        embedder.embed(["probe"])
    except BackendUnavailableError as exc:  # pragma: no cover - the model package ships with the dev extra
        pytest.skip(f"the packaged embedder cannot load here: {exc}")
    texts = session(1) + session(2)
    first = ExtractiveSummarizer(embedder=embedder).summarize(texts, target_tokens=200, depth=0)
    again = ExtractiveSummarizer(embedder=embedder).summarize(texts, target_tokens=200, depth=0)
    assert first == again
    lines = body(first.content)
    assert estimate_tokens(first.content) <= 200
    assert is_subsequence(lines, [s.render() for s in split_sentences(texts)])


# ------------------------------------------------------------------------------------------ property


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    picks=st.lists(st.integers(min_value=0, max_value=len(TEXTS) - 1), min_size=1, max_size=40),
    target=st.integers(min_value=1, max_value=800),
    depth=st.integers(min_value=0, max_value=3),
)
def test_output_sentences_are_a_subsequence_of_the_input_sentences(picks, target, depth):
    texts = [TEXTS[i] for i in picks]
    max_chars = min(MAX_SENTENCE_CHARS, max(80, 2 * target))
    result = ExtractiveSummarizer().summarize(texts, target_tokens=target, depth=depth)
    lines = body(result.content)
    assert lines
    assert is_subsequence(lines, [s.render() for s in split_sentences(texts, max_chars=max_chars)])
    assert estimate_tokens(result.content) <= target or len(lines) == 1
    assert result == ExtractiveSummarizer().summarize(texts, target_tokens=target, depth=depth)
