"""kg/text: words, tokens, stems, stopwords and month names said once (issue 34), and no copies elsewhere."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from kg.text.contractions import expand_contractions, straight_quotes
from kg.text.dates import MONTH_NAMES, MONTH_NUMBERS, MONTH_PATTERN, MONTHS, WEEKDAY_NAMES, month_number
from kg.text.stem import light_stem, strip_plural
from kg.text.stopwords import INDEX_STOPWORDS, LOG_STOPWORDS, STOPWORDS, content_words
from kg.text.terms import search_terms
from kg.text.words import CJK_RE, CJK_WORD_RE, NO_SPACE_RE, TOKEN_RE, cjk_ngrams, lower_words, words

ROOT = Path(__file__).resolve().parents[2]


def test_words_are_letters_and_digits_without_underscore() -> None:
    assert words("It's v2_beta, naïve café!") == ["It", "s", "v2", "beta", "naïve", "café"]
    assert lower_words("The DEPLOYMENTS") == ["the", "deployments"]
    assert words("--- ... ___") == []


def test_tokens_split_cjk_per_character_and_keep_underscores() -> None:
    assert TOKEN_RE.findall("JWT uses RS256.") == ["JWT", "uses", "RS256"]
    assert TOKEN_RE.findall("東京タワー") == ["東", "京", "タ", "ワ", "ー"]
    assert TOKEN_RE.findall("snake_case") == ["snake_case"]
    assert CJK_WORD_RE.findall("snake_case 東京") == ["snake", "case", "東", "京"]
    # the compatibility and supplementary Han blocks are CJK too
    assert CJK_WORD_RE.findall("a\uf900\U00020000b") == ["a", "\uf900", "\U00020000", "b"]


def test_cjk_ngrams_are_overlapping_bigrams() -> None:
    assert cjk_ngrams("東京タワー") == ["東京", "京タ", "タワ", "ワー"]
    assert cjk_ngrams("中") == ["中"]


def test_light_stem_handles_inflections_only() -> None:
    assert light_stem("renewals") == light_stem("renewal") == "renewal"
    assert light_stem("deployed") == light_stem("deploying") == light_stem("deploys") == light_stem("deploy")
    assert light_stem("caresses") == "caress"
    assert light_stem("ponies") == "poni"
    assert light_stem("hopping") == "hop"
    assert light_stem("filing") == "file"
    assert light_stem("generalization") == "generalization"  # derivations stay (Porter steps 2-4 not run)


def test_strip_plural() -> None:
    assert [strip_plural(w) for w in ["prefers", "class", "gas", "is", "cats"]] == [
        "prefer",
        "class",
        "gas",
        "is",
        "cat",
    ]


def test_search_terms_fold_stem_and_drop_index_stopwords() -> None:
    assert search_terms("The DEPLOYMENTS were Deployed") == ["deployment", "deploi"]
    assert search_terms("東京タワー 中") == ["東京", "京タ", "タワ", "ワー", "中"]
    assert search_terms("snake_case x2") == ["snake_case", "x2"]


def test_content_words_drop_stopwords_unless_nothing_is_left() -> None:
    assert content_words(["What", "did", "Caroline", "do", "caroline"]) == ["caroline"]
    assert content_words(["what", "is", "it"]) == ["what", "is", "it"]
    assert INDEX_STOPWORDS < STOPWORDS | INDEX_STOPWORDS and "caroline" not in STOPWORDS
    # the time hierarchy's list is a part of STOPWORDS that keeps topic words such as "past" and "kind"
    assert LOG_STOPWORDS < STOPWORDS and {"past", "kind", "near"}.isdisjoint(LOG_STOPWORDS)


def test_scripts_without_spaces() -> None:
    assert NO_SPACE_RE.search("東京") and NO_SPACE_RE.search("ภาษาไทย") and NO_SPACE_RE.search("ខ្មែរ")
    assert NO_SPACE_RE.search("\U00031000")  # Han extension G, beyond CJK_RE's blocks
    assert not NO_SPACE_RE.search("Ünïcödé words, Ελληνικά, русский") and not CJK_RE.search("ภาษาไทย")


def test_contractions_are_written_out_in_any_case_and_quote() -> None:
    assert straight_quotes("\u201cI\u2019m\u201d") == '"I\'m"'
    assert expand_contractions("I\u2019m sure we'll go; DON'T wait, she's gonna call") == (
        "I am sure we will go; do not wait, she is going to call"
    )
    assert expand_contractions("Anna's car, won'tcha, I'dn't") == "Anna's car, won'tcha, I'dn't"


def test_month_tables() -> None:
    assert MONTH_NAMES[0] == "January" and len(MONTH_NAMES) == 12 and WEEKDAY_NAMES[0] == "Monday"
    assert MONTHS["december"] == 12
    assert month_number("Sept") == month_number("SEP") == month_number("september") == MONTH_NUMBERS["sep"] == 9
    assert month_number("Mayday") is None
    assert re.fullmatch(MONTH_PATTERN, "june", re.IGNORECASE) and not re.fullmatch(MONTH_PATTERN, "jun")


@given(st.text(max_size=80))
def test_tokens_and_words_cover_only_word_characters(text: str) -> None:
    for token in TOKEN_RE.findall(text) + words(text):
        assert CJK_RE.fullmatch(token) or (token and all(ch.isalnum() or ch == "_" for ch in token)), token


_COPY = re.compile(
    r"""^\s*_?[A-Z_]*STOPWORD[A-Z_]*\s*=   # a stopword list
    |(?i:["']january)                      # a month table
    |(?i:["']monday)                       # a weekday table
    |\\u4e00|\\u0e00                       # a CJK or Thai range
    |\[\^\\W_\]                             # the word class, however it is embedded
    |re\.compile\(r"\\w(?:\+|\{\d+,\})"\)     # the \w+ words, or the \w{3,} ones
    |^def\s+_?(?:light_)?stem\(             # a stemmer of one's own (module level)
    """,
    re.MULTILINE | re.VERBOSE,
)


def test_the_copy_pattern_knows_each_kind_of_copy() -> None:
    copies = [
        "_STOPWORDS = frozenset(words)",
        '_MONTHS = ("January|February"',
        'DAYS = ["monday", "tuesday"]',
        '_NO_SPACES = re.compile("[\\u0e00-\\u0e7f]")',
        '_TOKEN = re.compile(r"[^\\W_]+(?:[\'-][^\\W_]+)*")',
        '_WORD = re.compile(r"\\w{3,}")',
        '_WORD_RE = re.compile(r"\\w+")',
        "def _stem(word: str) -> str:",
    ]
    assert [c for c in copies if not _COPY.search(c)] == []
    assert not _COPY.search('_KEY = re.compile(r"[\\w\\-]{1,64}")\nSTOP = 3')


def test_no_module_keeps_its_own_copy_of_the_text_kernel() -> None:
    """Word regexes, month tables, CJK ranges, stopword lists and stemmers live in kg/text only."""
    copies = set()
    for package in ("kg", "reasoning", "sync", "cli"):
        for path in (ROOT / package).rglob("*.py"):
            relative = path.relative_to(ROOT).as_posix()
            if not relative.startswith("kg/text/") and _COPY.search(path.read_text(encoding="utf-8")):
                copies.add(relative)
    assert not copies, sorted(copies)
