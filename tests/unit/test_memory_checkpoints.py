"""Checkpoints (R3): file layout, same-minute names, latest resolution, round-trips, the flush rule."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.clock import FixedClock
from kg.errors import InputError
from kg.memory.checkpoints import (
    SECTIONS,
    checkpoint_files,
    checkpoints_dir,
    latest_checkpoint,
    make_checkpoint,
    parse_checkpoint,
    render_checkpoint,
    should_flush,
    write_checkpoint,
)
from kg.models import Checkpoint
from tests.budget import examples

AGENT = "a"
T0 = datetime(2024, 5, 1, 12, 7, 42, 123456, tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


def write(ws: Path, clock: FixedClock, context: str = "Closing the Acme deal", **lists: list[str]) -> Path:
    return write_checkpoint(ws, AGENT, context=context, clock=clock, **lists)


def test_a_checkpoint_has_the_five_sections_in_order(tmp_path: Path, clock: FixedClock) -> None:
    path = write(tmp_path, clock, decisions=["Offer the annual plan", "Keep the discount under 10%"],
                 findings=["Acme renews in June"], next_steps=["Send the quote"])  # fmt: skip
    assert path == checkpoints_dir(tmp_path, AGENT) / "2024-05-01-1207.md"
    text = path.read_text()
    positions = [text.index(f"\n## {title}\n") for title in SECTIONS.values()]
    assert positions == sorted(positions)
    assert "## Active Decisions\n\n- Offer the annual plan\n- Keep the discount under 10%\n" in text
    assert "## Current Task Context\n\nClosing the Acme deal\n" in text
    assert "## Open Questions\n\n_None._\n" in text


def test_the_latest_checkpoint_reads_back_what_was_written(tmp_path: Path, clock: FixedClock) -> None:
    path = write(tmp_path, clock, decisions=["d1"], findings=["f1", "f2"], next_steps=["n1"], open_questions=["q?"])
    latest = latest_checkpoint(tmp_path, AGENT)
    assert latest is not None and latest.path == path
    cp = latest.checkpoint
    assert (cp.context, cp.decisions, cp.findings, cp.next_steps, cp.open_questions) == (
        "Closing the Acme deal", ["d1"], ["f1", "f2"], ["n1"], ["q?"])  # fmt: skip
    assert cp.agent_id == AGENT and cp.scope == "agent:a" and cp.created_at == T0 and cp.uid.startswith("K-")


def test_checkpoints_in_the_same_minute_never_overwrite_each_other(tmp_path: Path, clock: FixedClock) -> None:
    paths = [write(tmp_path, clock, context=f"step {n}") for n in range(3)]
    assert [p.name for p in paths] == ["2024-05-01-1207.md", "2024-05-01-1207-2.md", "2024-05-01-1207-3.md"]
    assert [p.read_text().count("step") for p in paths] == [1, 1, 1]
    latest = latest_checkpoint(tmp_path, AGENT)
    assert latest is not None and latest.checkpoint.context == "step 2"
    clock.advance(timedelta(minutes=1))
    later = write(tmp_path, clock, context="next minute")
    assert later.name == "2024-05-01-1208.md"
    assert latest_checkpoint(tmp_path, AGENT).checkpoint.context == "next minute"  # type: ignore[union-attr]


def test_suffix_ten_sorts_after_suffix_nine(tmp_path: Path, clock: FixedClock) -> None:
    for n in range(10):
        write(tmp_path, clock, context=f"n{n}")
    assert [p.name for _, _, p in checkpoint_files(tmp_path, AGENT)][-2:] == [
        "2024-05-01-1207-9.md", "2024-05-01-1207-10.md"]  # fmt: skip
    assert latest_checkpoint(tmp_path, AGENT).checkpoint.context == "n9"  # type: ignore[union-attr]


def test_concurrent_writers_get_distinct_files(tmp_path: Path, clock: FixedClock) -> None:
    threads = [threading.Thread(target=write, args=(tmp_path, clock, f"writer {n}")) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    found = checkpoint_files(tmp_path, AGENT)
    assert len(found) == 8
    contexts = {parse_checkpoint(p.read_text(), agent_id=AGENT, created_at=T0).context for _, _, p in found}
    assert contexts == {f"writer {n}" for n in range(8)}
    assert not [p for p in checkpoints_dir(tmp_path, AGENT).iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("setup", ["no agent dir", "no checkpoint dir", "empty checkpoint dir", "other files only"])
def test_no_checkpoint_is_none_not_an_error(tmp_path: Path, setup: str) -> None:
    directory = checkpoints_dir(tmp_path, AGENT)
    if setup == "no checkpoint dir":
        directory.parent.mkdir(parents=True)
    elif setup != "no agent dir":
        directory.mkdir(parents=True)
    if setup == "other files only":
        (directory / "notes.md").write_text("## Current Task Context\n\nx\n")
        (directory / "2024-02-30-1200.md").write_text("## Current Task Context\n\nimpossible date\n")
        (directory / "2024-05-01-1260.md").write_text("## Current Task Context\n\nimpossible minute\n")
    assert latest_checkpoint(tmp_path, AGENT) is None


def test_a_hand_written_checkpoint_parses_with_stable_ids(tmp_path: Path) -> None:
    directory = checkpoints_dir(tmp_path, AGENT)
    directory.mkdir(parents=True)
    (directory / "2024-04-30-0915.md").write_text(
        "# Checkpoint\n\n## Current task context\nMigrating auth\n\n## Key Findings\n* tokens expire\n"
        "  after 1h\nsecond line\n\n## Something else\nignored\n"
    )
    first, second = latest_checkpoint(tmp_path, AGENT), latest_checkpoint(tmp_path, AGENT)
    assert first is not None and second is not None
    cp = first.checkpoint
    assert cp.uid == second.checkpoint.uid and cp.uid.startswith("K-")
    assert cp.created_at == datetime(2024, 4, 30, 9, 15, tzinfo=UTC)
    assert (cp.context, cp.findings, cp.decisions) == ("Migrating auth", ["tokens expire\nafter 1h\nsecond line"], [])


def test_a_checkpoint_without_context_names_the_file(tmp_path: Path) -> None:
    directory = checkpoints_dir(tmp_path, AGENT)
    directory.mkdir(parents=True)
    (directory / "2024-04-30-0915.md").write_text("## Next Steps\n- x\n")
    with pytest.raises(InputError, match=r"2024-04-30-0915\.md: context"):
        latest_checkpoint(tmp_path, AGENT)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"context": "   \n "}, "context"),
        ({"context": ""}, "context"),
        ({"decisions": ["ok", "  "]}, "decisions[1]"),
        ({"findings": "one string"}, "findings"),
        ({"next_steps": [3]}, "next_steps[0]"),
        ({"context": "a\x00b"}, "context"),
        ({"agent_id": "../x"}, "agent"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(tmp_path: Path, clock: FixedClock, kwargs: dict[str, object],
                                                 field: str) -> None:  # fmt: skip
    args: dict[str, object] = {"agent_id": AGENT, "context": "ctx", **kwargs}
    with pytest.raises(InputError) as caught:
        write_checkpoint(tmp_path, clock=clock, **args)  # type: ignore[arg-type]
    assert caught.value.field == field
    assert not (tmp_path / "agents").exists()


def test_text_is_normalised_before_it_is_stored(tmp_path: Path, clock: FixedClock) -> None:
    path = write(tmp_path, clock, context="  line one\r\nline two  \n", decisions=["\tdo it\r"])
    cp = latest_checkpoint(tmp_path, AGENT)
    assert cp is not None and cp.path == path
    assert (cp.checkpoint.context, cp.checkpoint.decisions) == ("line one\nline two", ["do it"])


def test_text_that_looks_like_markdown_structure_survives(tmp_path: Path, clock: FixedClock) -> None:
    tricky = "## Active Decisions\n\\escaped?\n# title\n_None._\n- not a list"
    write(
        tmp_path, clock, context=tricky, decisions=["- a dash", "two\n\n  lines", "_None._"], findings=["## Next Steps"]
    )
    cp = latest_checkpoint(tmp_path, AGENT)
    assert cp is not None
    assert cp.checkpoint.context == tricky
    assert cp.checkpoint.decisions == ["- a dash", "two\n\n  lines", "_None._"]
    assert cp.checkpoint.findings == ["## Next Steps"] and cp.checkpoint.next_steps == []


_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
_items = st.lists(_text.filter(lambda s: s.replace("\r", "\n").strip()), max_size=4)


@settings(max_examples=examples(200), deadline=None)
@given(context=_text.filter(lambda s: s.replace("\r", "\n").strip()), decisions=_items, findings=_items,
       next_steps=_items, open_questions=_items)  # fmt: skip
def test_parse_of_render_round_trips(context: str, decisions: list[str], findings: list[str],
                                     next_steps: list[str], open_questions: list[str]) -> None:  # fmt: skip
    cp = make_checkpoint(AGENT, context=context, decisions=decisions, findings=findings, next_steps=next_steps,
                         open_questions=open_questions, clock=FixedClock(T0))  # fmt: skip
    assert parse_checkpoint(render_checkpoint(cp), agent_id="other", created_at=datetime(2000, 1, 1, tzinfo=UTC)) == cp


def test_a_checkpoint_is_a_checkpoint_model(clock: FixedClock) -> None:
    cp = make_checkpoint(AGENT, context="x", clock=clock, scope="project:q3")
    assert isinstance(cp, Checkpoint) and cp.scope == "project:q3"
    assert parse_checkpoint(render_checkpoint(cp), agent_id=AGENT, created_at=T0).scope == "project:q3"


# ------------------------------------------------------------------------------------- flushing


def test_should_flush_at_window_minus_floor_minus_threshold() -> None:
    assert should_flush(115_999, context_window=128_000) is False
    assert should_flush(116_000, context_window=128_000) is True
    assert should_flush(0, context_window=100, reserve_floor=0, soft_threshold=0) is False
    assert should_flush(100, context_window=100, reserve_floor=0, soft_threshold=0) is True
    assert should_flush(0, context_window=10_000) is True  # window smaller than floor + threshold: always


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"total_tokens": -1}, "total_tokens"),
        ({"context_window": 0}, "context_window"),
        ({"reserve_floor": -5}, "reserve_floor"),
        ({"soft_threshold": 1.5}, "soft_threshold"),
        ({"total_tokens": True}, "total_tokens"),
        ({"context_window": "128000"}, "context_window"),
    ],
)
def test_should_flush_refuses_bad_numbers(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"total_tokens": 10, "context_window": 128_000, **kwargs}
    with pytest.raises(InputError) as caught:
        should_flush(**args)  # type: ignore[arg-type]
    assert caught.value.field == field
