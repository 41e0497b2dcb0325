"""Run the shell blocks of README.md and docs/*.md as a reader would type them (issue 35.2: docs are code).

A *shell block* is a fenced block marked ``bash``/``sh``/``shell``/``console``, or an unmarked one whose lines
start with ``mabos`` or ``$ mabos``. Each page runs in order in a scratch folder of its own:

- the files the pages name (``case.json``, ``network.json``, ``messages.jsonl`` ...) come from
  ``docs/examples/``, copied in;
- ``$MABOS_WORKSPACE`` (commands without ``--workspace``) and ``./my-workspace`` are copies of one prepared
  workspace (the demo's graph plus the agents the pages use); ``W`` and ``./w`` are made by the page's own
  ``mabos init``;
- a placeholder uid such as ``F-01J...`` or ``O-...`` stands for the newest record of that kind the page's
  earlier commands printed (else one in the prepared workspace), ``<ID>`` for the newest token id;
- ``a && b`` runs both; ``> file`` writes stdout to the file; ``VAR=value mabos ...`` sets the variable;
- a ``# exit N`` comment expects exit code N (default 0; 1 when a ``console`` block shows ``error: ...``);
- ``a | jq ...`` runs ``a`` (the right side only reshapes its output);
- in a ``console`` block (or any block of ``$ command`` lines), the lines after a command are the output the
  page shows: each must be found in a line of the real output, in order, ``...`` standing for anything, after
  uids, times and decimals are normalised and a trailing ``  # comment`` is dropped
  (JSON is compared as JSON, decimals and times excepted).

Commands that do not end by themselves (``serve``, ``ui``) and the demo (tested in tests/cli/test_demo.py)
are parsed, not run: their options are checked by click. Non-mabos commands (benchmarks, pip, pytest) are
checked to name a script and flags that exist.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

from cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
SHELL_LANGS = {"bash", "sh", "shell", "console"}
#: ``mabos <first word>`` commands that never end by themselves, or are covered elsewhere: parsed only.
PARSE_ONLY = {"serve", "ui", "demo"}
#: Commands that exist for the vector index: they run with the shipped model; every other command runs with the
#: embedder off (BM25 recall, the ladder's next rung) so that the pages do not each embed the demo's memories.
EMBEDDING_GROUPS = {"index"}
UID = re.compile(r"\b([A-Z]{1,4})-[0-9A-HJKMNP-TV-Z]{26}\b")
PLACEHOLDER = re.compile(r"\b([A-Z]{1,4})-(?:01J)?\.\.\.")
TOKEN_ID = re.compile(r"(?:token revoke |^)([0-9a-f]{12})\b", re.M)  # `token create` and `token list` print it
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
DECIMAL = re.compile(r"-?\d+\.\d+")
FENCE = re.compile(r"^[ \t]*```(\w*)[^\n]*\n(.*?)^[ \t]*```", re.S | re.M)


@dataclass
class Command:
    """One command of a page: where it is, its words, what it expects."""

    page: str
    line: int
    text: str
    exit_code: int = 0
    output: list[str] = field(default_factory=list)


def _logical_lines(block: str) -> list[tuple[int, str]]:
    lines, current, start = [], "", 0
    for number, raw in enumerate(block.splitlines()):
        if not current:
            start = number
        if raw.rstrip().endswith("\\"):
            current += raw.rstrip()[:-1] + " "
            continue
        lines.append((start, current + raw))
        current = ""
    if current:
        lines.append((start, current))
    return lines


def _expected_exit(text: str) -> int:
    found = re.search(r"#\s*exit\s+(\d)\b", text)
    return int(found.group(1)) if found else 0


def commands(page: Path) -> list[Command]:
    """The commands of ``page``'s shell blocks, in order (console output attached)."""
    source = page.read_text(encoding="utf-8")
    found: list[Command] = []
    for match in FENCE.finditer(source):
        lang, block = match.group(1), match.group(2)
        first = source.count("\n", 0, match.start(2)) + 1
        is_shell = lang in SHELL_LANGS or (lang == "" and re.search(r"^\s*(\$ )?mabos(\s|$)", block, re.M))
        if not is_shell:
            continue
        console = lang == "console" or bool(re.search(r"^\s*\$ ", block, re.M))  # a transcript: $ command, output
        heredoc = None
        for offset, line in _logical_lines(block):
            stripped = line.strip()
            if heredoc is not None:  # the body of a `python - <<'PY'` example: not a command
                heredoc = None if stripped == heredoc else heredoc
                continue
            if console and not stripped.startswith("$ "):
                if found and stripped:
                    if not found[-1].output and stripped.startswith("error:") and "# exit" not in found[-1].text:
                        found[-1].exit_code = 1  # the page shows the one-line error: exit 1
                    found[-1].output.append(stripped)
                continue
            text = stripped[2:] if stripped.startswith("$ ") else stripped
            if not text or text.startswith("#"):
                continue
            if lang == "" and not re.match(r"(\w+=\S+\s+)*mabos(\s|$)", text):
                continue  # an unmarked block's non-command lines (a tree, an output) are not run
            here = re.search(r"<<-?\s*'?(\w+)'?", text)
            if here:
                heredoc = here.group(1)
            found.append(Command(page.name, first + offset, text, _expected_exit(text)))
    return found


@dataclass
class PageRun:
    """The state of one page's run: its folder, environment and the uids its commands printed."""

    cwd: Path
    workspace: Path
    seen: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    def harvest(self, database: Path) -> None:
        """Uids of the prepared workspace: what a placeholder means before the page printed one of its kind."""
        self.remember(database.read_bytes().decode("latin-1"))

    def remember(self, text: str) -> None:
        for match in UID.finditer(text):
            self.seen[match.group(1)] = match.group(0)
        for match in TOKEN_ID.finditer(text):
            self.seen["<ID>"] = match.group(1)

    def substitute(self, text: str) -> str:
        def uid(match: re.Match[str]) -> str:
            prefix = match.group(1)
            if prefix not in self.seen:
                raise AssertionError(f"placeholder {match.group(0)}: no {prefix}- record printed before it")
            return self.seen[prefix]

        return PLACEHOLDER.sub(uid, text)


def _words(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars="&|>;")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def _normal(text: str) -> str:
    text = text.removeprefix("✓ ")  # rich prints the mark on a terminal only
    text = UID.sub(lambda m: f"{m.group(1)}-<uid>", text)
    text = TIME.sub("<time>", text)
    return DECIMAL.sub("<num>", text)


def _same_json(expected: Any, actual: Any, path: str = "$") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object"
        missing = set(expected) - set(actual)
        assert not missing, f"{path}: keys {sorted(missing)} shown in the docs are not in the output"
        for key, value in expected.items():
            _same_json(value, actual[key], f"{path}.{key}")
    elif isinstance(expected, float) or isinstance(actual, float):
        return  # timings and scores vary run to run
    elif isinstance(expected, str) and (TIME.fullmatch(expected) or UID.fullmatch(expected) or "..." in expected):
        return
    elif isinstance(expected, list):
        assert isinstance(actual, list), f"{path}: expected a list"
    else:
        assert expected == actual, f"{path}: the docs show {expected!r}, the command printed {actual!r}"


def check_output(command: Command, stdout: str) -> None:
    """The output a ``console`` block shows, against the real one."""
    if not command.output:
        return
    shown = "\n".join(command.output)
    try:
        expected = json.loads(shown)
    except ValueError:
        expected = None
    if expected is not None:
        _same_json(expected, json.loads(stdout))
        return
    actual = [_normal(line.strip()) for line in stdout.splitlines()]
    position = 0
    for line in command.output:
        shown = re.sub(r"\s{2,}#\s.*$", "", line)  # a comment the page adds to an output line
        pattern = ".*".join(re.escape(part) for part in _normal(shown).split("..."))
        for index in range(position, len(actual)):
            # In order; one printed line may hold several shown ones (the page wraps long lines).
            if re.search(pattern, actual[index]):
                position = index
                break
        else:
            raise AssertionError(f"the docs show {line!r}; the command printed:\n{stdout}")


def _check_script(words: list[str]) -> None:
    """A non-mabos command: the script it names exists and knows every flag it is given."""
    scripts = [w for w in words if w.endswith(".py")]
    for script in scripts:
        path = ROOT / script
        assert path.is_file(), f"{script} does not exist"
        source = path.read_text(encoding="utf-8")
        for flag in (w.split("=")[0] for w in words if w.startswith("--")):
            assert f'"{flag}"' in source or f"'{flag}'" in source, f"{script} has no option {flag}"


def _expand(arg: str, cwd: Path) -> list[str]:
    """A path pattern as the shell expands it (``data/*.owl``); anything else as it is."""
    if "*" not in arg or "/" not in arg:
        return [arg]
    base = Path(arg) if Path(arg).is_absolute() else cwd / arg
    found = sorted(str(p) for p in base.parent.glob(base.name))
    return found or [arg]


def needs_typedb(args: list[str], env: dict[str, str | None]) -> bool:
    """Whether the command talks to a TypeDB server that is not there (``--typedb``, the environment, or a
    command that needs one: ``typedb ...``, ``sync push``)."""
    address = env.get("MABOS_TYPEDB_ADDRESS")
    if "--typedb" in args:
        address = args[args.index("--typedb") + 1]
    words = [a for a in args if not a.startswith("-")]
    wants = words[:1] == ["typedb"] or words[:2] == ["sync", "push"] or address is not None
    return wants and not (address and typedb_reachable(address))


def typedb_reachable(address: str) -> bool:
    """Whether something listens at ``host:port`` (a TCP connect, at most half a second)."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host or "localhost", int(port)), timeout=0.5):
            return True
    except (OSError, ValueError):
        return False


def parse_only(args: list[str]) -> None:
    """Check that click accepts ``args`` (the command and every option) without running it."""
    group: click.Command = cli
    parent = click.Context(cli, info_name="mabos")
    while isinstance(group, click.Group) and args and not args[0].startswith("-"):
        sub = group.get_command(parent, args[0])
        assert sub is not None, f"no command {args[0]!r}"
        parent, group, args = click.Context(sub, info_name=args[0], parent=parent), sub, args[1:]
    group.make_context(group.name or "mabos", list(args), parent=parent.parent)


def run(command: Command, state: PageRun, runner: CliRunner) -> None:
    """Run ``command`` in ``state`` and check its exit code (and its output where the page shows it)."""
    for piece in command.text.split(" && "):  # placeholders are filled just before their part runs
        text = piece.split(" | ")[0]  # a pipe's left side runs (jq and the like only reshape its output)
        if "<ID>" in text:
            if "<ID>" not in state.seen:
                raise AssertionError("placeholder <ID>: no token id printed before it")
            text = text.replace("<ID>", state.seen["<ID>"])
        run_part(command, [state.substitute(word) for word in _words(text)], state, runner)


def run_part(command: Command, part: list[str], state: PageRun, runner: CliRunner) -> None:
    """One command of a ``&&`` chain."""
    if part:
        env: dict[str, str | None] = dict(state.env)
        while part and re.fullmatch(r"[A-Z_]+=.*", part[0]):
            name, _, value = part.pop(0).partition("=")
            env[name] = value
        target = None
        if ">" in part:
            at = part.index(">")
            part, target = part[:at], part[at + 1]
        if part[:1] == ["export"]:
            for assignment in part[1:]:
                name, _, value = assignment.partition("=")
                state.env[name] = value
            return
        program = Path(part[0]).name if part else ""
        part = [*part[:1], *(word for arg in part[1:] for word in _expand(arg, state.cwd))]
        if (program == "mabos" and needs_typedb(part[1:], env)) or any("shared/data" in arg for arg in part):
            # No TypeDB server here, or the benchmark data sets (bench/ imports them): checked by click, not run.
            parse_only(part[1:]) if program == "mabos" else _check_script(part)
            return
        if program != "mabos":
            _check_script(part)
            return
        args = part[1:]
        rest = args[2:] if args[:1] == ["--workspace"] else args
        if rest and rest[0] in PARSE_ONLY:
            parse_only(rest)
            return
        if EMBEDDING_GROUPS & set(rest[:1]):
            env["MABOS_EMBEDDER"] = None  # these commands are about the vectors: the shipped model runs
        old = Path.cwd()
        os.chdir(state.cwd)
        try:
            result = runner.invoke(cli, args, env={"MABOS_WORKSPACE": str(state.workspace), **env})
        finally:
            os.chdir(old)
        where = f"{command.page}:{command.line}: {command.text}"
        assert result.exit_code == command.exit_code, (
            f"{where}\nexit {result.exit_code}, expected {command.exit_code}\nstdout: {result.stdout[-2000:]}\n"
            f"stderr: {result.stderr[-2000:]}"
        )
        state.remember(result.stdout)
        if target is not None:
            (state.cwd / target).write_text(result.stdout, encoding="utf-8")
        check_output(command, result.stdout if command.exit_code == 0 else result.stdout + result.stderr)


__all__ = ["EXAMPLES", "ROOT", "Command", "PageRun", "commands", "parse_only", "run"]
