"""BERT's uncased WordPiece tokenizer for ASCII text, in Python: a query's token ids without the Rust tokenizer.

Loading Hugging Face's ``tokenizers`` and parsing ``tokenizer.json`` with it took 144 million instructions of a
cold hybrid recall (a quarter of what the vector branch adds; ``docs/decisions/2026-11-29-cold-hybrid-recall.md``),
most of it its JSON deserialiser building a generic value tree of the 30,522-entry vocabulary. A query is a few
words of (usually) ASCII text, and for ASCII text the BERT pipeline is short and exact:

- ``BertNormalizer`` with ``clean_text``: control characters (Unicode ``Cc``: 0x00-0x1F and 0x7F) are removed,
  except tab, newline and carriage return, which become spaces; ``lowercase``: ASCII letters are lowered (Chinese
  characters and accents do not occur in ASCII);
- ``BertPreTokenizer``: split on spaces, and every ASCII punctuation character is a word of its own;
- ``WordPiece``: greedy longest match from the left, continuation pieces prefixed ``##``; a word longer than
  ``max_input_chars_per_word`` characters, or one the vocabulary cannot cover, is the unknown token;
- the ``TemplateProcessing`` post-processor: ``[CLS] ... [SEP]``, truncated (on the right) to the model's window.

:meth:`WordPiece.ids` answers only for such text: it returns None for text with a non-ASCII character or the
text of a special token (``[CLS]``, ``[MASK]`` ...: the Rust tokenizer matches those before normalising), and
the caller tokenizes it with ``tokenizers``. :meth:`WordPiece.of` accepts only a ``tokenizer.json`` that declares
exactly this pipeline. The ids are the Rust tokenizer's: ``tests/unit/test_wordpiece.py`` compares them on LoCoMo's
turns and questions, generated ASCII strings and hostile input (controls, NUL, DEL, long words, truncation).
"""

from __future__ import annotations

import re
from typing import Any

#: After cleaning and lowering: a run of letters and digits, or one punctuation character (spaces separate).
_WORDS = re.compile(r"[a-z0-9]+|[^a-z0-9 ]")
#: clean_text on ASCII: tab, newline and carriage return become spaces, the other control characters go.
_CLEAN = {c: None for c in [*range(0x20), 0x7F]} | {0x09: " ", 0x0A: " ", 0x0D: " "}
_NORMALIZER = {"type": "BertNormalizer", "clean_text": True, "lowercase": True}


def _special_id(post: dict[str, Any], name: str) -> int | None:
    found = post.get("special_tokens", {}).get(name, {}).get("ids")
    return int(found[0]) if isinstance(found, list) and len(found) == 1 else None


class WordPiece:
    """Token ids of ASCII text as the model's ``tokenizers`` pipeline gives them (see the module's docstring)."""

    def __init__(self, vocab: dict[str, int], *, unk: int, cls: int, sep: int, prefix: str, max_chars: int,
                 max_tokens: int, specials: list[str]) -> None:  # fmt: skip
        self.vocab, self.unk, self.cls, self.sep = vocab, unk, cls, sep
        self.prefix, self.max_chars, self.max_tokens = prefix, max_chars, max_tokens
        self.specials = [s.lower() for s in specials]

    @classmethod
    def of(cls, config: dict[str, Any], max_tokens: int) -> WordPiece | None:
        """The tokenizer of a parsed ``tokenizer.json``, or None when it declares another pipeline than BERT's
        uncased one (another normalizer, pre-tokenizer, model or template)."""
        normalizer, model = config.get("normalizer") or {}, config.get("model") or {}
        post = config.get("post_processor")
        if any(normalizer.get(k) != v for k, v in _NORMALIZER.items()):
            return None
        if config.get("pre_tokenizer") != {"type": "BertPreTokenizer"} or not isinstance(post, dict):
            return None
        if model.get("type") != "WordPiece" or not isinstance(model.get("vocab"), dict):
            return None
        single = [next(iter(part.values())).get("id") for part in post.get("single", [])]
        cls_id, sep_id = _special_id(post, "[CLS]"), _special_id(post, "[SEP]")
        if post.get("type") != "TemplateProcessing" or single != ["[CLS]", "A", "[SEP]"] or None in (cls_id, sep_id):
            return None
        vocab: dict[str, int] = model["vocab"]
        if model.get("unk_token") not in vocab:
            return None
        specials = [str(t.get("content", "")) for t in config.get("added_tokens", [])]
        return cls(vocab, unk=vocab[model["unk_token"]], cls=int(cls_id or 0), sep=int(sep_id or 0),
                   prefix=str(model.get("continuing_subword_prefix", "##")),
                   max_chars=int(model.get("max_input_chars_per_word", 100)), max_tokens=max_tokens,
                   specials=[s for s in specials if s])  # fmt: skip

    def ids(self, text: str) -> list[int] | None:
        """``[CLS]``, the word pieces (at most ``max_tokens - 2``) and ``[SEP]``; None when ``text`` is not ASCII or
        holds a special token's text (the caller then uses the full tokenizer)."""
        if not text.isascii():
            return None
        lowered = text.translate(_CLEAN).lower()
        if any(special in lowered for special in self.specials):
            return None
        budget = self.max_tokens - 2
        pieces: list[int] = []
        for word in _WORDS.findall(lowered):
            pieces.extend(self._word(word))
            if len(pieces) >= budget:
                break
        return [self.cls, *pieces[:budget], self.sep]

    def _word(self, word: str) -> list[int]:
        if len(word) > self.max_chars:
            return [self.unk]
        pieces: list[int] = []
        start = 0
        while start < len(word):
            for end in range(len(word), start, -1):
                found = self.vocab.get(word[start:end] if start == 0 else self.prefix + word[start:end])
                if found is not None:
                    pieces.append(found)
                    start = end
                    break
            else:
                return [self.unk]
        return pieces


__all__ = ["WordPiece"]
