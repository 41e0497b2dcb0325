"""Checkpoints (R3): snapshots of an agent's working context, and the rule that says when to take one.

A checkpoint is ``agents/<id>/memory/checkpoints/YYYY-MM-DD-HHmm.md`` (UTC minute of its creation;
a second one in the same minute gets ``-2``, then ``-3`` ...; a name is never reused, even by two
processes at once)::

    <!-- mabos-checkpoint uid=K-01J... agent=sales-agent scope=agent:sales-agent created_at=2024-05-01T12:00:00Z -->
    # Checkpoint 2024-05-01 12:00 UTC

    ## Current Task Context

    Closing the Acme deal.

    ## Active Decisions

    - Offer the annual plan
      (a second line of the same item is indented by two spaces)

    ## Key Findings

    _None._

    ## Next Steps ... ## Open Questions ...

Context lines that start with ``#`` or ``\\`` are written with a ``\\`` in front (Markdown's escape),
so no text can be mistaken for a section heading; :func:`parse_checkpoint` reverses it, and
``parse_checkpoint(render_checkpoint(cp)) == cp`` for every checkpoint :func:`write_checkpoint` writes.
Hand-written checkpoints without the first line still parse: the time comes from the file name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from kg.clock import Clock
from kg.errors import InputError
from kg.ids import new_id
from kg.memory import files
from kg.models import Checkpoint, Model, format_ts, parse

#: Section titles in file order, by Checkpoint field.
SECTIONS: dict[str, str] = {
    "context": "Current Task Context",
    "decisions": "Active Decisions",
    "findings": "Key Findings",
    "next_steps": "Next Steps",
    "open_questions": "Open Questions",
}
LIST_FIELDS = ("decisions", "findings", "next_steps", "open_questions")
NONE_MARK = "_None._"
NAME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})-(\d{2})(\d{2})(?:-([1-9]\d{0,5}))?\.md$")
META_RE = re.compile(r"^<!-- mabos-checkpoint (?P<pairs>.*?) -->\s*$")
_ITEM_RE = re.compile(r"^[-*+] ?")
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
MAX_SUFFIX = 999_999


class CheckpointFile(Model):
    """A checkpoint read back from its file."""

    path: Path
    checkpoint: Checkpoint


def checkpoints_dir(workspace: Path, agent_id: str) -> Path:
    """``agents/<id>/memory/checkpoints`` (the agent id is validated)."""
    return files.memory_dir(workspace, agent_id) / "checkpoints"


# ------------------------------------------------------------------------------------- writing


def write_checkpoint(workspace: Path, agent_id: str, *, context: str, decisions: Sequence[str] = (),
                     findings: Sequence[str] = (), next_steps: Sequence[str] = (),
                     open_questions: Sequence[str] = (), clock: Clock, scope: str | None = None) -> Path:  # fmt: skip
    """Write a new checkpoint and return its path (validated first: bad input writes nothing).

    Text is normalised before it is validated: line endings become ``\\n`` and surrounding
    whitespace is trimmed from the context and from every item. An empty context or item is refused.

    Args:
        workspace: The workspace directory.
        agent_id: The agent whose working context this is.
        context: What the agent is working on (required, non-empty).
        decisions: Active decisions.
        findings: Key findings.
        next_steps: Next steps.
        open_questions: Open questions.
        clock: Tells the creation time, which names the file (UTC minute).
        scope: The checkpoint's scope (default: the agent's own).
    """
    directory = checkpoints_dir(workspace, agent_id)  # validates the agent id first
    checkpoint = make_checkpoint(agent_id, context=context, decisions=decisions, findings=findings,
                                 next_steps=next_steps, open_questions=open_questions, clock=clock,
                                 scope=scope)  # fmt: skip
    text = render_checkpoint(checkpoint)
    stem = f"{checkpoint.created_at:%Y-%m-%d-%H%M}"
    for n in range(1, MAX_SUFFIX + 1):
        path = directory / (f"{stem}.md" if n == 1 else f"{stem}-{n}.md")
        if not path.exists() and files.create_new(path, text):
            return path
    raise InputError("checkpoint", f"more than {MAX_SUFFIX} checkpoints in the minute {stem}")


def make_checkpoint(agent_id: str, *, context: str, decisions: Sequence[str] = (), findings: Sequence[str] = (),
                    next_steps: Sequence[str] = (), open_questions: Sequence[str] = (), clock: Clock,
                    scope: str | None = None) -> Checkpoint:  # fmt: skip
    """A validated :class:`~kg.models.Checkpoint` with normalised text (see :func:`write_checkpoint`)."""
    lists = {"decisions": decisions, "findings": findings, "next_steps": next_steps, "open_questions": open_questions}
    data: dict[str, object] = {"uid": new_id("checkpoint"), "agent_id": agent_id, "scope": scope,
                               "created_at": clock.now(), "context": _clean(context, "context")}  # fmt: skip
    for name, items in lists.items():
        if isinstance(items, str):  # a lone string would otherwise become one item per character
            raise InputError(name, "must be a list of strings, not a string")
        data[name] = [_clean(item, f"{name}[{i}]") for i, item in enumerate(items)]
    return parse(Checkpoint, data)


def _clean(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(name, f"must be a string, got {type(value).__name__}")
    text = value.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        raise InputError(name, "must not be empty or only whitespace")
    return text


def render_checkpoint(checkpoint: Checkpoint) -> str:
    """The Markdown text of a checkpoint."""
    meta = (f"uid={checkpoint.uid} agent={checkpoint.agent_id} scope={checkpoint.scope} "
            f"created_at={format_ts(checkpoint.created_at)}")  # fmt: skip
    out = [f"<!-- mabos-checkpoint {meta} -->", f"# Checkpoint {checkpoint.created_at:%Y-%m-%d %H:%M} UTC", ""]
    out += [f"## {SECTIONS['context']}", "", *(_escape(line) for line in checkpoint.context.split("\n")), ""]
    for name in LIST_FIELDS:
        items: list[str] = getattr(checkpoint, name)
        out += [f"## {SECTIONS[name]}", ""]
        out += [_bullet(item) for item in items] or [NONE_MARK]
        out.append("")
    return "\n".join(out)


def _escape(line: str) -> str:
    return "\\" + line if line.startswith(("#", "\\")) else line


def _bullet(item: str) -> str:
    first, *rest = item.split("\n")
    return "\n".join([f"- {first}", *(f"  {line}" for line in rest)])


# ------------------------------------------------------------------------------------- reading


def parse_checkpoint(text: str, *, agent_id: str, created_at: datetime, uid: str | None = None) -> Checkpoint:
    """Parse a checkpoint file's text.

    The first line (uid, agent, scope, creation time) wins over the arguments, which stand in for a
    hand-written file without it. Missing list sections are empty; a missing or empty context is an
    :class:`InputError`.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    titles = {title.lower(): name for name, title in SECTIONS.items()}
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    meta: dict[str, str] = {}
    for line in lines:
        if line.startswith("## "):
            name = titles.get(line[3:].strip().lower())
            current = sections.setdefault(name, []) if name else None
        elif current is not None:
            current.append(line)
        elif not sections and (match := META_RE.match(line)):
            meta = dict(pair.split("=", 1) for pair in match["pairs"].split() if "=" in pair)
    if "context" not in sections:
        raise InputError("context", f"no '## {SECTIONS['context']}' section")
    data: dict[str, object] = {
        "uid": meta.get("uid") or uid or _derived_uid(text),
        "agent_id": meta.get("agent") or agent_id,
        "scope": meta.get("scope"),
        "created_at": meta.get("created_at") or created_at,
        "context": "\n".join(line[1:] if line.startswith("\\") else line for line in _trim(sections["context"])),
    }
    for name in LIST_FIELDS:
        data[name] = _items(_trim(sections.get(name, [])))
    return parse(Checkpoint, data)


def _trim(lines: list[str]) -> list[str]:
    """Without the blank lines around them."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _items(lines: list[str]) -> list[str]:
    """Bullet items; an indented or unbulleted line continues the item before it."""
    if lines == [NONE_MARK]:
        return []
    items: list[list[str]] = []
    for line in lines:
        if _ITEM_RE.match(line) and not line.startswith("  "):
            items.append([_ITEM_RE.sub("", line, count=1)])
        elif items:
            items[-1].append(line[2:] if line.startswith("  ") else line.strip())
        elif line.strip():
            items.append([line.strip()])
    return ["\n".join(_trim(item)) for item in items]


def _derived_uid(text: str) -> str:
    """A stable checkpoint id for a hand-written file (from its text), so re-reading it gives the same id."""
    value = int.from_bytes(hashlib.sha256(text.encode()).digest()[:17], "big") >> 6  # 130 bits -> 26 digits
    digits = "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))
    return f"K-{digits}"


def checkpoint_files(workspace: Path, agent_id: str) -> list[tuple[datetime, int, Path]]:
    """Checkpoint files oldest first as (minute, suffix, path); other or impossible names are ignored."""
    directory = checkpoints_dir(workspace, agent_id)
    if not directory.is_dir():
        return []
    found = []
    for path in directory.iterdir():
        minute = _minute(path.name)
        if minute is not None and path.is_file():
            found.append((minute, _suffix(path.name), path))
    return sorted(found)


def _minute(name: str) -> datetime | None:
    """The UTC minute a checkpoint file name stands for (None: not a checkpoint name, or no such date)."""
    match = NAME_RE.match(name)
    if not match:
        return None
    year, month, day, hour, minute = (int(match[i]) for i in range(1, 6))
    try:
        return datetime(year, month, day, hour, minute, tzinfo=UTC)
    except ValueError:
        return None


def _suffix(name: str) -> int:
    match = NAME_RE.match(name)
    return int(match[6]) if match and match[6] else 1


def read_checkpoint(path: Path, agent_id: str) -> CheckpointFile:
    """Read and parse one checkpoint file of ``agent_id``."""
    text = path.read_text(encoding="utf-8", errors="replace")
    created = _minute(path.name) or datetime.fromtimestamp(path.stat().st_mtime, UTC)
    try:
        checkpoint = parse_checkpoint(text, agent_id=agent_id, created_at=created)
    except InputError as exc:
        raise InputError(f"checkpoint {path.name}: {exc.field}", exc.rule) from None
    return CheckpointFile(path=path, checkpoint=checkpoint)


def latest_checkpoint(workspace: Path, agent_id: str) -> CheckpointFile | None:
    """The newest checkpoint of an agent, parsed; None when there is none (or no directory)."""
    found = checkpoint_files(workspace, agent_id)
    return read_checkpoint(found[-1][2], agent_id) if found else None


# ------------------------------------------------------------------------------------- flushing


def should_flush(total_tokens: int, *, context_window: int, reserve_floor: int = 8000,
                 soft_threshold: int = 4000) -> bool:  # fmt: skip
    """Whether the context is full enough to write a checkpoint (flush) now.

    True when ``total_tokens >= context_window - reserve_floor - soft_threshold``: the reserve
    floor is kept free for the answer, the soft threshold gives room to write the checkpoint.

    Raises:
        InputError: an argument is not an integer, is negative, or the window is 0.
    """
    values = {"total_tokens": total_tokens, "context_window": context_window,
              "reserve_floor": reserve_floor, "soft_threshold": soft_threshold}  # fmt: skip
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(name, f"must be an integer, got {value!r}")
        if value < 0:
            raise InputError(name, f"must be >= 0, got {value}")
    if context_window == 0:
        raise InputError("context_window", "must be > 0")
    return total_tokens >= context_window - reserve_floor - soft_threshold
