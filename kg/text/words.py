"""Words and tokens of a text, with the CJK scripts split where they put no spaces between words.

- a **word** (:data:`WORD_RE`) is a run of Unicode letters and digits (``_`` excluded): ``"it's v2_beta"`` has
  the words ``it``, ``s``, ``v2``, ``beta``;
- a **token** (:data:`TOKEN_RE`) is what a chunk's size is counted in: a CJK character on its own, or a run of
  other word characters (``_`` included, as ``\\w`` has it);
- a **CJK word** (:data:`CJK_WORD_RE`): a CJK character on its own, or a word as above;
- text in a script written without spaces (:data:`NO_SPACE_RE`: CJK, Thai, Khmer...) is searched by substrings;
- CJK runs become overlapping character bigrams for search (:func:`cjk_ngrams`), as Lucene's CJK analyzer does.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kg.faces import LazyPatterns  # this module's patterns, and boosts', compile on first use

#: Han, Hiragana, Katakana, Hangul and the compatibility and supplementary Han blocks.
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff"
#: The blocks BERT's basic tokenizer pads with spaces as Chinese characters (its ``_is_chinese_char``): the CJK
#: Unified Ideographs and extensions A to E, the compatibility ideographs and their supplement. Not Kana or Hangul.
BERT_HAN_CHARS = (
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df\U0002a700-\U0002ceaf\U0002f800-\U0002fa1f"
)
#: The scripts written without spaces between words: CJK as above (with Han extensions G and H), Bopomofo,
#: halfwidth Katakana, Thai, Lao, Myanmar and Khmer. A word tokenizer cannot split their text into words.
NO_SPACE_CHARS = (
    f"{CJK_CHARS}\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff\u3100-\u312f\u31f0-\u31ff\uff66-\uff9f"
    "\U00030000-\U0003134f"
)


#: The pattern of one word: letters and digits, no ``_``.
WORD = r"[^\W_]+"
WORD_RE = re.compile(WORD)
#: A run of word characters, ``_`` included (``\w+``): the words of the Markdown index's search terms.
WORD_CHARS_RE = re.compile(r"\w+")

#: The patterns over the CJK ranges, compiled on first use: each takes about 10 ms to compile (``re`` builds a
#: character map of the ranges), which a command that never splits text (``fact query``) should not pay.
_LAZY_PATTERNS = LazyPatterns(
    __name__,
    {
        "CJK_RE": rf"[{CJK_CHARS}]",  # one CJK character
        "NO_SPACE_RE": rf"[{NO_SPACE_CHARS}]",  # one character of a script written without spaces
        "TOKEN_RE": rf"[{CJK_CHARS}]|[^\W{CJK_CHARS}]+",  # a CJK character, or a run of other word characters
        "CJK_WORD_RE": rf"[{CJK_CHARS}]|[^\W_{CJK_CHARS}]+",  # a CJK character, or a word of other letters and digits
        "CJK_RUN_OR_WORD_RE": rf"([{CJK_CHARS}]+)|([^\W{CJK_CHARS}]+)",  # a CJK run (1) or other word characters (2)
    },
)
if TYPE_CHECKING:
    CJK_RE: re.Pattern[str]
    NO_SPACE_RE: re.Pattern[str]
    TOKEN_RE: re.Pattern[str]
    CJK_WORD_RE: re.Pattern[str]
    CJK_RUN_OR_WORD_RE: re.Pattern[str]
else:
    __getattr__ = _LAZY_PATTERNS.module_getattr


def words(text: str) -> list[str]:
    """The words of ``text`` in order, as written."""
    return WORD_RE.findall(text)


def lower_words(text: str) -> list[str]:
    """The words of ``text`` in order, lower-cased."""
    return [w.lower() for w in WORD_RE.findall(text)]


def cjk_ngrams(run: str) -> list[str]:
    """A run of CJK characters as search terms: overlapping bigrams, a lone character as itself."""
    if len(run) == 1:
        return [run]
    return [run[k : k + 2] for k in range(len(run) - 1)]


__all__ = [
    "CJK_CHARS",
    "CJK_RE",
    "CJK_RUN_OR_WORD_RE",
    "CJK_WORD_RE",
    "NO_SPACE_CHARS",
    "NO_SPACE_RE",
    "TOKEN_RE",
    "WORD",
    "WORD_CHARS_RE",
    "WORD_RE",
    "cjk_ngrams",
    "lower_words",
    "words",
]
