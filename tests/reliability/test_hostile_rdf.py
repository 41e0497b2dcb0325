"""Hostile RDF for the streamed import (issue 33's kg/rdf and the bulk load), beyond what the import tests cover.

Covered elsewhere and not repeated here: DTDs and entity bombs (test_xml_bombs), a NUL, non-UTF-8 bytes, documents
over the 100 MB cap (/dev/zero), malformed documents after written batches, a kill -9 mid-load in rollback-journal
mode with a concurrent opener (tests/unit/test_facts_bulk_journal.py). What is new: small documents nested deep,
which pyoxigraph's parsers handle in memory or time that grows with the square of the depth, and a huge literal,
a huge blank-node label and 10^5 triples of one subject, which are answered as the rules say.

Each import runs as ``mabos fact import`` in a child process under resource limits (address space and CPU time),
so a parser that runs away is stopped by the kernel rather than taking the machine: the limits are bounds, not
timed assertions; what is asserted is the answer (a one-line error naming the document, nothing imported).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import kg
from tests.budget import sizes

#: The child's bounds: 1 GiB of address space, 4 s of CPU (a refused document needs well under a second).
MEMORY_BYTES = 1 << 30
CPU_SECONDS = 4


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    path = tmp_path / "ws"
    with kg.init_workspace(path) as ws:
        ws.agents.add("r")
    return path


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def _import(workspace: Path, document: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cli.main", "fact", "import", "--workspace", str(workspace), "--agent", "r",
               str(document)]  # fmt: skip
    env = {**os.environ, "MABOS_EMBEDDER": "none"}
    return subprocess.run(command, check=False, capture_output=True, text=True, env=env, preexec_fn=_limits,
                          timeout=120)  # fmt: skip


def _facts(workspace: Path) -> int:
    with kg.open_workspace(workspace) as ws:
        return len(ws.facts.query("r", limit=100_000))


def _refused(workspace: Path, document: Path) -> None:
    done = _import(workspace, document)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, f"exit {done.returncode}: {done.stderr[-500:]}"
    assert len(lines) == 1 and lines[0].startswith("error: ") and document.name in lines[0], done.stderr[-500:]
    assert _facts(workspace) == 0


def _json_ld(depth: int) -> str:
    return '{"@id": "http://x/s", "http://x/p": ' + '{"http://x/q": ' * depth + '"x"' + "}" * depth + "}"


def _rdf_xml_resources(depth: int) -> str:
    opening = '<x:p rdf:parseType="Resource">' * depth
    return ('<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            f'xmlns:x="http://x/">\n<rdf:Description rdf:about="http://x/a">{opening}{"</x:p>" * depth}'
            "</rdf:Description>\n</rdf:RDF>\n")  # fmt: skip


def test_json_ld_nested_deep_is_refused_in_one_line(workspace: Path, tmp_path: Path) -> None:
    # attacks: the JSON-LD parser with a small document whose objects nest 3,000 deep
    document = tmp_path / "deep.jsonld"
    document.write_text(_json_ld(3_000))
    _refused(workspace, document)


def test_rdf_xml_resources_nested_deep_are_refused_in_one_line(workspace: Path, tmp_path: Path) -> None:
    # attacks: the RDF/XML parser with property elements of parseType="Resource" nested 100,000 deep
    document = tmp_path / "deep.rdf"
    document.write_text(_rdf_xml_resources(100_000))
    _refused(workspace, document)


def test_a_huge_literal_is_refused_naming_the_field(workspace: Path, tmp_path: Path) -> None:
    # attacks: one literal of 2 * 10^6 characters: refused by the fact's object bound, nothing imported
    document = tmp_path / "huge.nt"
    document.write_text('<http://x/s> <http://x/p> "' + "a" * 2_000_000 + '" .\n')
    done = _import(workspace, document)
    assert done.returncode == 1 and "facts[0].object: String should have at most" in done.stderr, done.stderr[-500:]
    assert len(done.stderr.strip().splitlines()) == 1 and _facts(workspace) == 0


@pytest.mark.parametrize("count", sizes((20_000,), (100_000,)))
def test_triples_of_one_subject_import_within_the_bounds(workspace: Path, tmp_path: Path, count: int) -> None:
    # attacks: 2*10^4 (10^5 in the long run) triples sharing one subject (one hot key in every index), under the same
    # memory and CPU bounds
    document = tmp_path / "one-subject.nt"
    document.write_text("".join(f'<http://x/s> <http://x/p{n % 7}> "v{n}" .\n' for n in range(count)))
    done = _import(workspace, document)
    assert done.returncode == 0, done.stderr[-500:]
    assert f"Imported {count} triples: {count} created" in done.stdout
    assert _facts(workspace) == count


#: A process that opens the workspace as every mabos process does and prints what it sees.
OPENER = """
import json, sys
import kg
with kg.open_workspace(sys.argv[1]) as ws:
    db = ws._store.db
    print(json.dumps({"facts": len(ws.facts.query("r", limit=100_000)), "integrity": db.integrity_ok(),
                      "mode": db.conn.execute("PRAGMA journal_mode").fetchone()[0]}))
"""


def test_kill_9_mid_import_then_three_concurrent_openers_see_the_store_as_before(workspace: Path, tmp_path: Path):
    # attacks: 'mabos fact import' killed with SIGKILL while its bulk load writes with a rollback journal (a hot
    # journal left beside the database), then three processes opening the store at the same moment, racing to roll
    # the journal back and switch to WAL: each opens, sees exactly the facts from before the import, intact, in WAL
    import signal  # noqa: PLC0415
    import time  # noqa: PLC0415

    before = tmp_path / "before.nt"
    before.write_text("".join(f'<http://x/s{n}> <http://x/p> "v{n}" .\n' for n in range(40)))
    assert _import(workspace, before).returncode == 0
    document = tmp_path / "big.nt"
    document.write_text("".join(f'<http://x/t{n}> <http://x/q{n % 5}> "w{n}" .\n' for n in range(150_000)))
    journal = workspace / ".mabos" / "kg.sqlite-journal"
    env = {**os.environ, "MABOS_EMBEDDER": "none"}
    loader = subprocess.Popen([sys.executable, "-m", "cli.main", "fact", "import", "--workspace", str(workspace),
                               "--agent", "r", str(document)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        for _ in range(6_000):  # until the load writes (a count of polls, not a timing assertion)
            if journal.exists() or loader.poll() is not None:
                break
            time.sleep(0.005)
        assert journal.exists(), "the import never wrote with a rollback journal"
        time.sleep(0.2)  # well into the load: pages spilled to the database file
    finally:
        loader.send_signal(signal.SIGKILL)
        loader.wait(timeout=60)
    assert loader.returncode == -signal.SIGKILL
    openers = [subprocess.Popen([sys.executable, "-c", OPENER, str(workspace)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(3)]  # fmt: skip
    seen = []
    for opener in openers:
        out, errors = opener.communicate(timeout=120)
        assert opener.returncode == 0, errors[-800:]
        seen.append(json.loads(out))
    assert seen == [{"facts": 40, "integrity": True, "mode": "wal"}] * 3
    assert not journal.exists()
