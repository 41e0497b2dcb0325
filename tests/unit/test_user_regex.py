"""User-supplied regular expressions (kg/regex.py): linear time (RE2), one-line refusals, caps, a deadline."""

from __future__ import annotations

import re

import pytest

from kg import regex
from kg.errors import InputError

EVIL = [r"(a+)+$", r"(a|aa)+$", r"(a*)*b", r"(.*a){20}$", r"^(\w+\s?)*$"]


@pytest.mark.parametrize("pattern", EVIL)
def test_catastrophic_patterns_run_in_linear_time(pattern):
    """Each of these backtracks exponentially in Python's re on the text below (2^34 steps for the first)."""
    found = regex.compile_regex(pattern)
    assert found.search("a" * 34 + "!") is None or pattern.startswith("^(")
    assert found.matches("a" * 200_000 + "!") == (found.search("a" * 200_000 + "!") is not None)


def test_python_syntax_it_supports_matches_as_re_does():
    text = "Error E42 at host7; error e7 ÜBER über"
    assert regex.compile_regex(r"[Ee]\d+").finditer(text) == [m.span() for m in re.finditer(r"[Ee]\d+", text)]
    assert regex.compile_regex(r"(?i)^error").search(text) == (0, 5)
    assert regex.compile_regex(r"(?i)über").finditer(text) == [m.span() for m in re.finditer(r"(?i)über", text)]
    assert regex.compile_regex(r"(?P<host>host\d)").search(text) == (13, 18)
    assert regex.compile_regex("北京|東京").matches("我在東京")


@pytest.mark.parametrize(("pattern", "why"), [
    (r"(a)\1", "backreference"),
    (r"foo(?=bar)", "lookaround"),
    (r"(?<!x)y", "lookaround"),
    ("([", "missing"),
    ("a{1001}", "repetition"),
    ("", "empty"),
    ("x" * 1_001, "at most 1000"),
    ("a\x00", "NUL"),
])  # fmt: skip
def test_patterns_it_cannot_run_are_refused_in_one_line_naming_the_field(pattern, why):
    with pytest.raises(InputError) as caught:
        regex.compile_regex(pattern, field="query.pattern")
    message = str(caught.value)
    assert message.startswith("query.pattern: ") and "\n" not in message
    assert why.lower() in message.lower()


def test_a_pattern_too_large_for_the_memory_cap_is_refused():
    with pytest.raises(InputError, match=r"^pattern: .*too large"):
        regex.compile_regex(r"\pL{1000}")


def test_only_the_first_max_text_characters_are_searched():
    text = "x" * regex.MAX_TEXT + "needle"
    assert regex.compile_regex("needle").search(text) is None
    assert regex.compile_regex("needle").search(text[-100:]) == (94, 100)


def test_finditer_stops_at_its_limit():
    assert len(regex.compile_regex("a").finditer("a" * 50, limit=7)) == 7


def test_literal_words_match_any_case_and_escape_metacharacters():
    finder = regex.literal_regex(["c++", "Ünit"])
    assert finder.finditer("C++ and üNIT and c+") == [(0, 3), (8, 12)]
    many = regex.literal_regex([f"w{i:03d}.x" for i in range(200)])  # 1,400 characters once escaped
    assert len(many.pattern) > regex.MAX_PATTERN and many.search("a w123.x b") == (2, 8)


def test_after_the_deadline_nothing_more_matches_and_it_says_so():
    found = regex.compile_regex("a")
    with regex.deadline(0) as budget:
        assert not found.matches("a")
    assert budget.expired
    with regex.deadline(60) as budget:
        assert found.matches("a")
    assert not budget.expired
    assert found.matches("a")  # no deadline outside the block


def test_the_deadline_is_checked():
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(InputError, match=r"^deadline: "), regex.deadline(bad):
            pass
