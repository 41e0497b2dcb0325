"""Time hierarchy (R2): ISO periods, daily-log parsing, summaries, stale-only rebuilds, search.

Everything runs on real files under ``tmp_path``; daily logs are written in the shape of
:func:`kg.memory.files.daily_log_entry`, or by hand.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kg.clock import FixedClock
from kg.errors import InputError
from kg.memory import files
from kg.memory.hierarchy import (
    FORMAT,
    HEADER_RE,
    build_hierarchy,
    parse_daily_log,
    period_of,
    query_terms,
    search_hierarchy,
)

AGENT = "a"
CLOCK = FixedClock(datetime(2025, 6, 1, 12, 0, tzinfo=UTC))


def uid(n: int) -> str:
    return f"M-{n:026d}"


def entry(day: date, n: int, content: str, *, type_: str = "event", importance: float = 0.5,
          tags: tuple[str, ...] = ()) -> str:  # fmt: skip
    when = datetime(day.year, day.month, day.day, 9, n % 60, tzinfo=UTC)
    return files.daily_log_entry(when=when, uid=uid(day.toordinal() * 100 + n), type_=type_, importance=importance,
                                 store="working", tags=list(tags), content=content)  # fmt: skip


def write_log(ws: Path, day: date, *entries: str) -> Path:
    path = files.daily_log_path(ws, AGENT, day)
    files.atomic_write(path, files.daily_log_header(day) + "".join(entries))
    return path


def write_days(ws: Path, *days: date) -> None:
    for day in days:
        write_log(ws, day, entry(day, 0, f"Routine sync on {day.isoformat()}"))


def memory(ws: Path) -> Path:
    return files.memory_dir(ws, AGENT)


def names(paths: list[Path]) -> list[str]:
    return sorted(f"{p.parent.name}/{p.stem}" for p in paths)


def build(ws: Path, **kwargs: object) -> object:
    return build_hierarchy(ws, AGENT, clock=CLOCK, **kwargs)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------- periods


@pytest.mark.parametrize(
    ("day", "label", "start", "end"),
    [
        (date(2024, 12, 30), "2025-W01", date(2024, 12, 30), date(2025, 1, 5)),
        (date(2021, 1, 3), "2020-W53", date(2020, 12, 28), date(2021, 1, 3)),
        (date(2021, 1, 4), "2021-W01", date(2021, 1, 4), date(2021, 1, 10)),
        (date(2024, 1, 1), "2024-W01", date(2024, 1, 1), date(2024, 1, 7)),
        (date(2026, 12, 31), "2026-W53", date(2026, 12, 28), date(2027, 1, 3)),
    ],
)
def test_iso_weeks_run_monday_to_sunday_across_years(day: date, label: str, start: date, end: date) -> None:
    week = period_of("weekly", day)
    assert (week.label, week.start, week.end) == (label, start, end)


def test_months_and_quarters() -> None:
    assert period_of("monthly", date(2024, 2, 29)).label == "2024-02"
    assert period_of("monthly", date(2024, 2, 10)).end == date(2024, 2, 29)
    assert period_of("monthly", date(2024, 12, 5)).end == date(2024, 12, 31)
    q4 = period_of("quarterly", date(2024, 11, 15))
    assert (q4.label, q4.start, q4.end) == ("2024-Q4", date(2024, 10, 1), date(2024, 12, 31))
    assert period_of("quarterly", date(2025, 3, 31)).label == "2025-Q1"
    assert q4.following().label == "2025-Q1"


@given(st.dates(min_value=date(1900, 1, 1), max_value=date(2999, 12, 31)))
def test_every_day_lies_in_exactly_one_period_of_each_level(day: date) -> None:
    week = period_of("weekly", day)
    year, number, _ = day.isocalendar()
    assert week.label == f"{year}-W{number:02d}"
    assert week.start.weekday() == 0 and week.end - week.start == timedelta(days=6)
    for level in ("weekly", "monthly", "quarterly"):
        period = period_of(level, day)  # type: ignore[arg-type]
        assert period.start <= day <= period.end
        assert period.following().start == period.end + timedelta(days=1)


# ------------------------------------------------------------------------------------- parsing


def test_structured_entries_are_parsed_with_their_header_fields() -> None:
    day = date(2024, 5, 1)
    text = files.daily_log_header(day) + entry(day, 3, "JWT uses RS256", type_="decision", importance=0.8,
                                               tags=("auth", "jwt"))  # fmt: skip
    [parsed] = parse_daily_log(text, day)
    assert parsed.type == "decision" and parsed.importance == 0.8 and parsed.time == "09:03"
    assert parsed.uid == uid(day.toordinal() * 100 + 3)
    assert parsed.tags == ("auth", "jwt") and parsed.text == "JWT uses RS256"
    assert text.split("\n")[parsed.line - 1].startswith("## 09:03 decision")


def test_hand_written_text_counts_as_notes() -> None:
    day = date(2024, 5, 1)
    text = "# My day\n\nMet Acme about pricing\nand the renewal.\n\n- call Bob\n* send the contract\n## Later\nidea\n"
    notes = parse_daily_log(text, day)
    assert [n.text for n in notes] == [
        "My day",
        "Met Acme about pricing and the renewal.",
        "call Bob",
        "send the contract",
        "Later",
        "idea",
    ]
    assert {n.type for n in notes} == {"note"} and all(n.importance is None for n in notes)
    assert [n.line for n in notes] == [1, 3, 6, 7, 8, 9]


def test_free_text_before_structured_entries_is_kept() -> None:
    day = date(2024, 5, 1)
    text = files.daily_log_header(day) + "Hand note first.\n\n" + entry(day, 1, "Then a stored item")
    parsed = parse_daily_log(text, day)
    assert [(p.type, p.text) for p in parsed] == [("note", "Hand note first."), ("event", "Then a stored item")]


def test_crlf_and_empty_logs() -> None:
    assert parse_daily_log("", date(2024, 5, 1)) == []
    assert [n.text for n in parse_daily_log("one\r\n\r\ntwo\r\n", date(2024, 5, 1))] == ["one", "two"]


# ------------------------------------------------------------------------------------- building


def test_weekly_summary_counts_types_ranks_importance_and_lists_sources(tmp_path: Path) -> None:
    monday = date(2024, 5, 6)
    write_log(tmp_path, monday, entry(monday, 1, "Kickoff with Globex", importance=0.3, tags=("globex",)),
              entry(monday, 2, "JWT uses RS256 for authentication", type_="decision", importance=0.9,
                    tags=("auth", "jwt")))  # fmt: skip
    friday = monday + timedelta(days=4)
    write_log(tmp_path, friday, entry(friday, 1, "Authentication rollout done", type_="outcome", importance=0.7,
                                      tags=("auth",)))  # fmt: skip
    result = build(tmp_path, scope="week")
    weekly = memory(tmp_path) / "weekly" / "2024-W19.md"
    assert result.created == [weekly] and result.updated == [] and result.daily_logs == 2
    text = weekly.read_text()
    header = HEADER_RE.match(text.split("\n")[0])
    assert header and header["level"] == "weekly" and header["label"] == "2024-W19" and header["format"] == FORMAT
    assert "2024-05-06 to 2024-05-12: 3 entries in 2 daily logs" in text
    assert "- decision: 1\n- event: 1\n- outcome: 1" in text
    top = [line for line in text.split("\n") if line.startswith("- 2024-05-")]
    assert top[0].startswith(f"- 2024-05-06 09:02 decision (0.90) {uid(monday.toordinal() * 100 + 2)}: JWT uses")
    assert top[0].endswith("(2024-05-06.md:8)")  # title, blank, first entry (4 lines + blank), then this one
    assert [line.split()[1] for line in top] == ["2024-05-06", "2024-05-10", "2024-05-06"]
    assert "- auth: 2" in text and "- authentication: 2" in text
    assert "- ../2024-05-06.md sha256:" in text and "- ../2024-05-10.md sha256:" in text


def test_summaries_are_deterministic(tmp_path: Path) -> None:
    for ws in (tmp_path / "one", tmp_path / "two"):
        write_days(ws, date(2024, 5, 6), date(2024, 5, 20))
        build(ws)
    for level in ("weekly", "monthly", "quarterly"):
        for path in sorted((memory(tmp_path / "one") / level).iterdir()):
            assert path.read_bytes() == (memory(tmp_path / "two") / level / path.name).read_bytes()


def test_a_rebuild_rewrites_nothing_when_no_log_changed(tmp_path: Path) -> None:
    write_days(tmp_path, date(2024, 5, 6), date(2024, 6, 3))
    first = build(tmp_path)
    assert len(first.created) == 2 + 2 + 1  # weeks 19 and 23, May and June, Q2
    stamps = {p: p.stat().st_mtime_ns for p in first.created}
    second = build(tmp_path)
    assert second.created == second.updated == [] and sorted(second.unchanged) == sorted(first.created)
    assert {p: p.stat().st_mtime_ns for p in first.created} == stamps


def test_touching_one_log_rebuilds_only_its_week_month_and_quarter(tmp_path: Path) -> None:
    # 2024-W40 runs from Monday 30 September to Sunday 6 October: it spans two months and two quarters.
    write_days(tmp_path, date(2024, 9, 16), date(2024, 9, 30), date(2024, 10, 2), date(2024, 10, 21))
    build(tmp_path)
    files.atomic_append(files.daily_log_path(tmp_path, AGENT, date(2024, 10, 2)), "A late hand-written note.\n")
    result = build(tmp_path)
    assert names(result.updated) == ["monthly/2024-10", "quarterly/2024-Q4", "weekly/2024-W40"]
    assert names(result.unchanged) == ["monthly/2024-09", "quarterly/2024-Q3", "weekly/2024-W38", "weekly/2024-W43"]
    assert "late hand-written note" in (memory(tmp_path) / "weekly" / "2024-W40.md").read_text()


def test_a_week_spanning_two_months_contributes_its_days_to_each(tmp_path: Path) -> None:
    write_log(tmp_path, date(2024, 1, 30), entry(date(2024, 1, 30), 1, "January side"),
              entry(date(2024, 1, 30), 2, "January again"))  # fmt: skip
    write_log(tmp_path, date(2024, 2, 2), entry(date(2024, 2, 2), 1, "February side"))
    build(tmp_path)
    january = (memory(tmp_path) / "monthly" / "2024-01.md").read_text()
    february = (memory(tmp_path) / "monthly" / "2024-02.md").read_text()
    weekly = (memory(tmp_path) / "weekly" / "2024-W05.md").read_text()
    assert "3 entries in 2 daily logs" in weekly
    assert "- [2024-W05](../weekly/2024-W05.md): 2 entries in 1 day of this month" in january
    assert "February side" not in january and "January side" not in february
    assert "- [2024-W05](../weekly/2024-W05.md): 1 entry in 1 day of this month" in february
    quarter = (memory(tmp_path) / "quarterly" / "2024-Q1.md").read_text()
    assert "- [2024-01](../monthly/2024-01.md): 2 entries in 1 day of this quarter" in quarter
    assert "- ../monthly/2024-01.md sha256:" in quarter and "- ../monthly/2024-02.md sha256:" in quarter


def test_a_week_without_daily_logs_is_skipped_without_error(tmp_path: Path) -> None:
    write_days(tmp_path, date(2024, 5, 6), date(2024, 5, 27))  # weeks 19 and 22; 20 and 21 have no log
    result = build(tmp_path, scope="week")
    assert result.skipped == ["2024-W20", "2024-W21"]
    assert sorted(p.name for p in (memory(tmp_path) / "weekly").iterdir()) == ["2024-W19.md", "2024-W22.md"]


@pytest.mark.parametrize("setup", ["no agent dir", "empty memory dir", "only summaries"])
def test_no_daily_logs_gives_an_empty_result(tmp_path: Path, setup: str) -> None:
    if setup != "no agent dir":
        memory(tmp_path).mkdir(parents=True)
    if setup == "only summaries":
        files.atomic_write(memory(tmp_path) / "weekly" / "2024-W01.md", "old\n")
    result = build(tmp_path)
    assert (result.created, result.updated, result.unchanged, result.skipped) == ([], [], [], [])
    assert result.daily_logs == 0


def test_hand_written_logs_without_entry_headers_are_summarised(tmp_path: Path) -> None:
    path = files.daily_log_path(tmp_path, AGENT, date(2024, 5, 7))
    files.atomic_write(path, "Met Acme about pricing.\n\n- call Bob about the renewal\n- renewal deadline Friday\n")
    build(tmp_path, scope="week")
    text = (memory(tmp_path) / "weekly" / "2024-W19.md").read_text()
    assert "3 entries in 1 daily log." in text and "- note: 3" in text
    assert "- 2024-05-07 note: Met Acme about pricing. (2024-05-07.md:1)" in text
    assert "- renewal: 2" in text


def test_logs_named_with_impossible_dates_are_ignored(tmp_path: Path) -> None:
    write_days(tmp_path, date(2024, 2, 28))
    (memory(tmp_path) / "2024-02-30.md").write_text("## never a real day\n")
    (memory(tmp_path) / "notes.md").write_text("not a daily log\n")
    result = build(tmp_path)
    assert result.ignored == ["2024-02-30.md"] and result.daily_logs == 1
    assert "2024-02-30" not in (memory(tmp_path) / "monthly" / "2024-02.md").read_text()


def test_since_keeps_periods_ending_on_or_after_it(tmp_path: Path) -> None:
    write_days(tmp_path, date(2024, 3, 4), date(2024, 4, 30), date(2024, 5, 6))
    result = build(tmp_path, since=date(2024, 5, 1))
    # week 2024-W18 (29 Apr - 5 May) ends after the date, April does not; Q2 does.
    assert names(result.created) == ["monthly/2024-05", "quarterly/2024-Q2", "weekly/2024-W18", "weekly/2024-W19"]


def test_scope_limits_the_levels(tmp_path: Path) -> None:
    write_days(tmp_path, date(2024, 5, 6))
    assert names(build(tmp_path, scope="month").created) == ["monthly/2024-05"]
    assert names(build(tmp_path, scope="quarter").created) == ["quarterly/2024-Q2"]
    assert names(build(tmp_path, scope="week").created) == ["weekly/2024-W19"]
    assert not build(tmp_path, scope="all").written


def test_summaries_not_written_by_mabos_are_kept(tmp_path: Path) -> None:
    write_days(tmp_path, date(2024, 5, 6))
    mine = memory(tmp_path) / "weekly" / "2024-W19.md"
    files.atomic_write(mine, "# My own weekly notes\n")
    result = build(tmp_path, scope="week")
    assert result.foreign == [mine] and mine.read_text() == "# My own weekly notes\n"


def test_an_older_format_is_rebuilt(tmp_path: Path) -> None:
    write_days(tmp_path, date(2024, 5, 6))
    path = memory(tmp_path) / "weekly" / "2024-W19.md"
    files.atomic_write(path, f"<!-- mabos-summary v0 weekly 2024-W19 sources=sha256:{'0' * 64} -->\nold\n")
    assert build(tmp_path, scope="week").updated == [path]
    assert path.read_text().startswith(f"<!-- mabos-summary {FORMAT} weekly 2024-W19")


def test_the_bdi_cycle_call_signature(tmp_path: Path) -> None:
    write_days(tmp_path, date(2024, 5, 6))
    result = build_hierarchy(tmp_path, AGENT, scope="week", since=None, clock=CLOCK)
    assert result.built_at == CLOCK.now() and result.scope == "week"


def test_bad_input_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="agent"):
        build_hierarchy(tmp_path, "../x", clock=CLOCK)
    with pytest.raises(InputError, match="scope"):
        build(tmp_path, scope="year")
    assert not (tmp_path / "agents").exists()


# ------------------------------------------------------------------------------------- search


@pytest.fixture
def searchable(tmp_path: Path) -> Path:
    """Two weeks in two months and two quarters: auth work in March, pricing work in April."""
    march = date(2024, 3, 27)
    write_log(tmp_path, march, entry(march, 1, "JWT uses RS256 for authentication", type_="decision",
                                     importance=0.9, tags=("auth",)),
              entry(march, 2, "Lunch with the team"))  # fmt: skip
    april = date(2024, 4, 9)
    write_log(tmp_path, april, entry(april, 1, "Acme pricing call: they want annual billing", importance=0.8),
              entry(april, 2, "Pricing page draft"))  # fmt: skip
    files.atomic_write(files.daily_log_path(tmp_path, AGENT, date(2024, 4, 10)), "Hand note: pricing for Globex\n")
    build(tmp_path)
    return tmp_path


def line_of(path: Path, number: int) -> str:
    return path.read_text().split("\n")[number - 1].lower()


@pytest.mark.parametrize(
    ("level", "first"),
    [("daily", "2024-04-09"), ("weekly", "2024-W15"), ("monthly", "2024-04"), ("quarterly", "2024-Q2")],
)
def test_search_finds_the_period_at_each_level(searchable: Path, level: str, first: str) -> None:
    hits = search_hierarchy(searchable, AGENT, "acme pricing", level=level)  # type: ignore[arg-type]
    assert hits and hits[0].period == first and hits[0].score == 1.0 and hits[0].level == level
    assert all(h.period.startswith("2024-") and "2024-03" not in h.period for h in hits)
    for hit in hits:
        assert 1 <= hit.line_start <= hit.line_end
        assert any(term in line_of(hit.path, hit.line_start) for term in hit.matched)


def test_daily_search_cites_one_entry(searchable: Path) -> None:
    [hit, *_] = search_hierarchy(searchable, AGENT, "authentication", level="daily")
    assert hit.path.name == "2024-03-27.md" and hit.line_start == hit.line_end
    assert "JWT uses RS256" in hit.snippet and hit.matched == ["authentication"]


def test_search_ranks_by_coverage_then_occurrences(searchable: Path) -> None:
    hits = search_hierarchy(searchable, AGENT, "pricing globex", level="daily", limit=10)
    assert [(h.period, h.score) for h in hits] == [("2024-04-10", 1.0), ("2024-04-09", 0.5), ("2024-04-09", 0.5)]
    assert len(search_hierarchy(searchable, AGENT, "pricing", level="daily", limit=1)) == 1


def test_search_stems_plurals_and_drops_stop_words() -> None:
    assert query_terms("The prices of the Contracts") == ["price", "contract"]
    assert query_terms("the of") == ["the", "of"]


def test_search_without_files_finds_nothing(tmp_path: Path) -> None:
    for level in ("daily", "weekly", "monthly", "quarterly"):
        assert search_hierarchy(tmp_path, AGENT, "anything", level=level) == []  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"query": "  ... "}, "query"), ({"level": "yearly"}, "level"), ({"limit": 0}, "limit"),
     ({"limit": True}, "limit"), ({"agent_id": "../x"}, "agent")],
)  # fmt: skip
def test_search_refuses_bad_input(tmp_path: Path, kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"agent_id": AGENT, "query": "pricing", "level": "daily", "limit": 10, **kwargs}
    with pytest.raises(InputError) as caught:
        search_hierarchy(tmp_path, **args)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_search_skips_files_that_are_not_summaries(searchable: Path) -> None:
    weekly = memory(searchable) / "weekly"
    (weekly / "notes.md").write_text("pricing pricing\n")
    (weekly / ".2024-W15.md.abc.tmp").write_text("pricing\n")
    assert {h.path.name for h in search_hierarchy(searchable, AGENT, "pricing", level="weekly")} == {"2024-W15.md"}


def test_summary_header_lines_are_not_searched(searchable: Path) -> None:
    assert search_hierarchy(searchable, AGENT, "mabos", level="weekly") == []
