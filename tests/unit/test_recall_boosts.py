"""Entity-, date- and time-aware boosts (kg.recall.boosts) and the decay strength, alone and through a real recall.

The recall test runs the real engine over SQLite FTS5 with the embedder off (``MABOS_EMBEDDER=none``): the
boosts act on fused scores whichever branch found the items.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kg
from kg.clock import FixedClock
from kg.recall import boosts
from kg.recall.boosts import (
    asks_when,
    bare_months,
    bonuses,
    places_in_time,
    query_dates,
    query_entities,
    subject,
    without_dates,
)
from kg.recall.decay import ChunkMeta, DecaySettings, decay_boost
from tests.forked import FORK_EACH

NOW = datetime(2024, 6, 1, tzinfo=UTC)


def test_query_entities_are_capitalised_non_stopwords_without_possessives():
    assert query_entities("When did Caroline's family visit Paris with Melanie?") == ["Caroline", "Paris", "Melanie"]
    assert query_entities("What did they decide in May 2023?") == []  # question words and months are not names
    assert query_entities("what about lowercase words") == []


def test_query_dates_name_days_months_and_iso_dates():
    day = datetime(2023, 11, 16, tzinfo=UTC)
    assert query_dates("Where was Tim in the week before 16 November 2023?") == [
        (day - timedelta(days=8), day + timedelta(days=2))
    ]
    assert query_dates("on 2023-11-16") == [(day - timedelta(days=8), day + timedelta(days=2))]
    [(start, end)] = query_dates("Which tournament did Nate win in November 2022?")
    assert (start, end) == (datetime(2022, 10, 29, tzinfo=UTC), datetime(2022, 12, 4, tzinfo=UTC))
    assert query_dates("on 31 February 2023") == query_dates("in February 2023")  # no such day: its month
    assert query_dates("When did Nate win?") == []


def test_bonuses_add_the_entity_and_the_date_boost():
    class Item:
        def __init__(self, content: str, created_at: datetime) -> None:
            self.content, self.created_at = content, created_at

    items = {
        "both": Item("Caroline: I went to the support group", datetime(2023, 5, 7, tzinfo=UTC)),
        "name": Item("Caroline: hello", datetime(2023, 1, 1, tzinfo=UTC)),
        "date": Item("Melanie: we went camping", datetime(2023, 5, 8, tzinfo=UTC)),
        "none": Item("Carolineville is a town", datetime(2022, 1, 1, tzinfo=UTC)),  # a whole word only
    }
    found = bonuses("What did Caroline do on 8 May 2023?", items, entity_boost=0.2, date_boost=0.3)  # type: ignore[arg-type]
    assert found == {"both": pytest.approx(0.5), "name": 0.2, "date": 0.3}
    assert bonuses("What did Caroline do on 8 May 2023?", items, entity_boost=0, date_boost=0) == {}  # type: ignore[arg-type]


class Item:
    def __init__(self, content: str, created_at: datetime = NOW) -> None:
        self.content, self.created_at = content, created_at


def test_a_named_subject_gets_the_whole_entity_boost_a_mention_its_share():
    assert subject("Caroline: I went") == "Caroline" and subject("Caroline's dog barked") == "Caroline"
    assert subject("Met Caroline, at last") == "Met" and subject("") == ""
    items = {
        "speaker": Item("Caroline: I joined a mentorship program"),
        "possessive": Item("Caroline's program starts in May"),
        "mention": Item("Melanie: way to go, Caroline!"),
        "other": Item("Melanie: I painted a sunset"),
    }
    found = bonuses("What did Caroline join?", items, entity_boost=0.2, date_boost=0.0, mention_share=0.5)  # type: ignore[arg-type]
    assert found == {"speaker": 0.2, "possessive": 0.2, "mention": pytest.approx(0.1)}
    everywhere = bonuses("What did Caroline join?", items, entity_boost=0.2, date_boost=0.0, mention_share=1.0)  # type: ignore[arg-type]
    assert everywhere == {"speaker": 0.2, "possessive": 0.2, "mention": 0.2}


def test_a_when_question_lifts_items_that_place_an_event_in_time():
    assert places_in_time("see you on Saturday") and places_in_time("in May, we") and places_in_time("today!")
    assert not places_in_time("in Chicago") and not places_in_time("Maybe later") and not places_in_time("last of them")
    assert asks_when("When did Jon get mentored?") and asks_when("what date was the party?")
    assert asks_when("How long ago did Maria move?")
    assert not asks_when("What did Jon do when he lost his job?") and not asks_when("How long is the trip?")
    items = {
        "yesterday": Item("Jon: I got mentored by a business owner yesterday!"),
        "last": Item("Jon: here is a pic from last Friday"),
        "ago": Item("Jon: we moved two weeks ago"),
        "month": Item("Jon: the studio opens in June"),
        "verb": Item("Gina: you may want a mentor"),  # "may" the verb names no month
        "none": Item("Gina: mentors are great"),
    }
    found = bonuses("When did Jon get mentored?", items, entity_boost=0.0, date_boost=0.0, time_boost=0.15)  # type: ignore[arg-type]
    assert found == dict.fromkeys(("yesterday", "last", "ago", "month"), 0.15)
    assert bonuses("Who mentored Jon?", items, entity_boost=0.0, date_boost=0.0, time_boost=0.15) == {}  # type: ignore[arg-type]


def test_a_month_without_a_year_is_the_last_one_before_now():
    june_2023 = (datetime(2023, 5, 29, tzinfo=UTC), datetime(2023, 7, 4, tzinfo=UTC))
    assert bare_months("When did Melanie go camping in June?", datetime(2023, 10, 1, tzinfo=UTC)) == [june_2023]
    assert bare_months("camping in June", datetime(2024, 3, 1, tzinfo=UTC)) == [june_2023]  # not June 2024 yet
    assert bare_months("camping in June", datetime(2023, 6, 10, tzinfo=UTC)) == [june_2023]  # this month
    assert bare_months("camping in June 2022", datetime(2023, 10, 1, tzinfo=UTC)) == []  # a year: query_dates
    items = {
        "june": Item("camping", datetime(2023, 6, 20, tzinfo=UTC)),
        "may": Item("camping", datetime(2023, 5, 2, tzinfo=UTC)),
    }
    question = "When did we go camping in June?"
    assert bonuses(question, items, entity_boost=0, date_boost=0.2, now=datetime(2023, 10, 1, tzinfo=UTC)) == {
        "june": 0.2
    }  # type: ignore[arg-type]
    assert bonuses(question, items, entity_boost=0, date_boost=0.2) == {}  # type: ignore[arg-type]  # no now, no month


def test_a_when_question_ranks_the_item_that_says_when_first(tmp_path, monkeypatch):
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    clock = FixedClock(datetime(2023, 5, 8, 12, tzinfo=UTC))
    with kg.init_workspace(tmp_path / "w", clock=clock) as ws:
        ws.agents.add("a")
        dated = ws.memory.store_item("a", "Jon: I got mentored by a business owner yesterday", store="long_term").item
        clock.set(datetime(2023, 5, 9, 12, tzinfo=UTC))
        plain = ws.memory.store_item("a", "Jon: a business owner mentored me, it was inspiring", store="long_term").item
        asked = ws.memory.recall("a", "When did Jon get mentored by a business owner?", explain=True)
        assert asked.hits[0].item.uid == dated.uid
        assert asked.hits[0].explain.bonus == pytest.approx(0.2 + 0.15)  # Jon is its subject; "yesterday"
        other = ws.memory.recall("a", "Who was Jon mentored by, a business owner?", explain=True)
        assert other.hits[0].item.uid == plain.uid  # equal matches without "when": the newer first
        assert [h.explain.bonus for h in other.hits] == [0.2, 0.2]


def test_a_date_named_in_the_query_lifts_the_item_of_that_day(tmp_path, monkeypatch):
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    clock = FixedClock(datetime(2023, 4, 1, 12, tzinfo=UTC))
    with kg.init_workspace(tmp_path / "w", clock=clock) as ws:
        ws.agents.add("a")
        stored = {}
        for day, text in ((-20, "Went hiking on the ridge"), (8, "Went hiking by the lake"),
                          (20, "Went hiking in the hills")):  # fmt: skip
            clock.set(datetime(2023, 5, 1, 12, tzinfo=UTC) + timedelta(days=day - 1))  # 11 April, 8 and 20 May
            stored[day] = ws.memory.store_item("a", text, store="long_term").item
        plain = ws.memory.recall("a", "hiking", explain=True)
        dated = ws.memory.recall("a", "hiking on 8 May 2023", explain=True)
        assert plain.hits[0].item.uid == stored[20].uid  # equal BM25: the newest first
        assert dated.hits[0].item.uid == stored[8].uid and dated.hits[0].explain.bonus == pytest.approx(0.2)
        assert [h.explain.bonus for h in dated.hits[1:]] == [0.0, 0.0]


def test_decay_strength_scales_the_boost_towards_one():
    old = ChunkMeta(created_at=NOW - timedelta(days=400), importance=0.0)
    full = decay_boost(old, NOW, DecaySettings()).boost
    assert full == pytest.approx(0.3)  # clamped at boost_min
    assert decay_boost(old, NOW, DecaySettings(strength=0.25)).boost == pytest.approx(1 - 0.25 * 0.7)
    assert decay_boost(old, NOW, DecaySettings(strength=0.0)).boost == 1.0


# The patterns alone, as boosts.py ran them before its substring pre-checks (a 10 MB query no longer runs them).


def _entities_by_pattern(text: str) -> list[str]:
    names = (m.removesuffix("'s") for m in boosts._NAME.findall(text))
    return list(dict.fromkeys(n for n in names if n.lower() not in boosts.STOPWORDS and n.lower() not in boosts.MONTHS))


def _dates_by_pattern(text: str) -> list[tuple[datetime, datetime]]:
    days = [boosts._day(y, m, d) for d, m, y in boosts._DAY_MONTH_YEAR.findall(text)]
    days += [boosts._day(y, m, d) for m, d, y in boosts._MONTH_DAY_YEAR.findall(text)]
    days += [boosts._day(y, m, d) for y, m, d in boosts._ISO.findall(text)]
    ranges = [r for r in days if r is not None]
    if ranges:
        return ranges
    for month, year in boosts._MONTH_YEAR.findall(text):
        start = datetime(int(year), boosts._number(month), 1, tzinfo=UTC)
        end = (start + timedelta(days=32)).replace(day=1)
        ranges.append((start - timedelta(days=3), end + timedelta(days=3)))
    return ranges


def _without_dates_by_pattern(text: str) -> str:
    for pattern in (boosts._DAY_MONTH_YEAR, boosts._MONTH_DAY_YEAR, boosts._ISO, boosts._MONTH_YEAR):
        text = pattern.sub(" ", text)
    return text


def _months_by_pattern(text: str, now: datetime) -> list[tuple[datetime, datetime]]:
    out = []
    for month in boosts._BARE_MONTH.findall(text):
        number = boosts._number(month)
        start = datetime(now.year if number <= now.month else now.year - 1, number, 1, tzinfo=UTC)
        end = (start + timedelta(days=32)).replace(day=1)
        out.append((start - timedelta(days=3), end + timedelta(days=3)))
    return out


#: Pieces that make the patterns match, almost match, or match only through Unicode: a long s and a dotless i
#: match "s" and "i" case-insensitively, Arabic-Indic digits are \d, a Kelvin sign is a capital K only in Unicode.
_PIECES = ["in", "by", "June", "june", "JUNE", "Augu\u017ft", "Apr\u0131l", "May", "mAy", "16", "2023", "1st",
           "-", "2023-11-16", "\u0662\u0660\u0662\u0663", "Caroline's", "\u212aate", "x", ",", "  ", "\u00e9",
           "Tim"]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=4), max_size=12).map(" ".join))
def test_the_pre_checks_change_no_result(text: str) -> None:
    """The substring tests that skip the patterns (no capital, no digit, no month name in ASCII text) never skip
    a match: every function returns what its patterns alone return."""
    now = datetime(2023, 10, 1, tzinfo=UTC)
    assert query_entities(text) == _entities_by_pattern(text)
    assert query_dates(text) == _dates_by_pattern(text)
    assert without_dates(text) == _without_dates_by_pattern(text)
    assert bare_months(text, now) == _months_by_pattern(text, now)


def test_a_month_the_patterns_match_through_unicode_case_rules_has_its_number() -> None:
    """re matches August with a long s (U+017F) and April with a dotless i (U+0131) as month names: a query naming
    them raised KeyError."""
    assert query_dates("Augu\u017ft 2023") == query_dates("August 2023") != []
    assert query_dates("16 Apr\u0131l 2023") == query_dates("16 April 2023") != []
    assert bare_months("in AUGU\u017fT", NOW) == bare_months("in August", NOW) != []


@pytest.mark.parametrize("text", ["x" * 1_000_000, "in june 2023 " + "x" * 100_000, "by june" + "\u00e9" * 10])
def test_the_pre_checks_agree_on_long_queries(text: str) -> None:
    now = datetime(2023, 10, 1, tzinfo=UTC)
    assert query_dates(text) == _dates_by_pattern(text) and bare_months(text, now) == _months_by_pattern(text, now)
    assert query_entities(text) == _entities_by_pattern(text) and without_dates(text) == _without_dates_by_pattern(text)


#: Imports the boosts once, then answers each query in a child forked from that process: each child starts from a
#: module that compiled nothing yet, as a fresh interpreter would, without paying for one per query.
_COMPILED = (
    FORK_EACH
    + """
import json
from datetime import UTC, datetime
from kg.recall import boosts


def answer(query):
    boosts.bonuses(query, {}, entity_boost=0.2, date_boost=0.2, time_boost=0.15, now=datetime.now(UTC))
    print(json.dumps([query, ",".join(n for n in boosts._LAZY_PATTERNS if n in vars(boosts))]))


fork_each(sys.argv[1:], answer)
"""
)
COMPILED_BY_QUERY = {
    "renewal terms": "", "what did we agree on renewal": "", "when did we sign": "",
    "What did Caroline say": "_NAME", "in june": "_BARE_MONTH",
    "before 16 november 2023": "_DAY_MONTH_YEAR,_MONTH_DAY_YEAR",
}  # fmt: skip


@pytest.fixture(scope="module")
def compiled() -> dict[str, str]:
    """The patterns each query of :data:`COMPILED_BY_QUERY` compiled, each in a process that had compiled none."""
    done = subprocess.run([sys.executable, "-c", _COMPILED, *COMPILED_BY_QUERY], capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dict(json.loads(line) for line in done.stdout.splitlines())


@pytest.mark.parametrize("query", COMPILED_BY_QUERY)
def test_a_query_compiles_only_the_patterns_its_text_can_match(query: str, compiled: dict[str, str]) -> None:
    """The date, name and time patterns compile on first use (each query in a process that compiled none): a query
    without a capital, a digit or a month name - most recalls - compiles none of them."""
    assert compiled[query] == COMPILED_BY_QUERY[query]
    assert boosts.TIME_WORDS.pattern == boosts._LAZY_PATTERNS["TIME_WORDS"][0]  # still a module attribute
