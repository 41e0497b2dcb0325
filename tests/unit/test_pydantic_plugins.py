"""pydantic's plugins in the ``mabos`` process (cli/pydantic_plugins.py; issue 33).

Every check runs in a fresh interpreter: what it does to ``sys.modules`` and the environment must not reach this one.
A real plugin is installed for some of them: a distribution on ``PYTHONPATH`` with a ``pydantic`` entry point whose
plugin records each validator pydantic asks it about.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Runs ``mabos --help`` through the console entry point, then builds one model, and reports what happened.
_ENTRY = """
import contextlib, io, json, os, sys
from cli.main import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(["--help"])
from pydantic import BaseModel
from pydantic_core import SchemaValidator
class Probe(BaseModel):
    x: int = 0
assert Probe(x="3").x == 3
loader = sys.modules["pydantic.plugin._loader"]
print(json.dumps({"switch": os.environ.get("PYDANTIC_DISABLE_PLUGINS"), "stand_in": not hasattr(loader, "__file__"),
                  "metadata": "importlib.metadata" in sys.modules,
                  "plain": type(Probe.__pydantic_validator__) is SchemaValidator,
                  "plugin": sorted(sys.modules.get("probe_plugin", None).__dict__.get("SEEN", []))
                            if "probe_plugin" in sys.modules else None}))
"""


def _run(code: str, env: dict[str, str | None], *args: str) -> dict[str, Any]:
    environ = {k: v for k, v in os.environ.items() if k not in ("PYDANTIC_DISABLE_PLUGINS", "MABOS_PYDANTIC_PLUGINS")}
    environ.update({k: v for k, v in env.items() if v is not None})
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, env=environ,
                          check=True)  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A directory holding an installed pydantic plugin (its module and its distribution's entry point)."""
    where = tmp_path_factory.mktemp("plugin")
    (where / "probe_plugin.py").write_text(
        "SEEN = []\n"
        "class Plugin:\n"
        "    def new_schema_validator(self, schema, schema_type, path, kind, config, settings):\n"
        "        SEEN.append(path.name)\n"
        "        return None, None, None\n"
        "plugin = Plugin()\n",
        encoding="utf-8",
    )
    dist = where / "probe_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: probe-plugin\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[pydantic]\nprobe = probe_plugin:plugin\n", encoding="utf-8")
    return str(where)


def test_mabos_builds_plain_validators_without_pydantics_plugin_loader():
    """By default the ``mabos`` process turns plugins off with pydantic's switch and stands in for its loader:
    validators are plain ``SchemaValidator``s and ``importlib.metadata`` is never imported."""
    seen = _run(_ENTRY, {})
    assert seen == {"switch": "__all__", "stand_in": True, "metadata": False, "plain": True, "plugin": None}


@pytest.mark.parametrize(
    ("env", "switch", "loaded"),
    [
        ({"PYDANTIC_DISABLE_PLUGINS": ""}, "", True),  # the caller's empty switch: plugins on, as pydantic reads it
        ({"PYDANTIC_DISABLE_PLUGINS": "other"}, "other", True),  # other plugins off, this one on
        ({"PYDANTIC_DISABLE_PLUGINS": "probe"}, "probe", False),  # the plugin named off: pydantic's loader skips it
        ({"MABOS_PYDANTIC_PLUGINS": "1"}, None, True),  # mabos's opt-out: pydantic alone decides (nothing set)
        ({"MABOS_PYDANTIC_PLUGINS": "1", "PYDANTIC_DISABLE_PLUGINS": "true"}, "true", False),
        ({"PYDANTIC_DISABLE_PLUGINS": "1"}, "1", False),  # the caller's own "all off": the stand-in serves it
    ],
    ids=["empty", "others-off", "named-off", "opt-out", "opt-out-all-off", "caller-all-off"],
)
def test_the_caller_keeps_pydantics_switch_and_plugins(plugin: str, env: dict[str, str], switch: Any, loaded: bool):
    """An installed plugin: ``mabos`` ignores it by default; the caller's ``PYDANTIC_DISABLE_PLUGINS`` keeps pydantic's
    meaning and ``MABOS_PYDANTIC_PLUGINS=1`` leaves the switch alone, with pydantic's real loader reading it."""
    seen = _run(_ENTRY, {**env, "PYTHONPATH": plugin})
    assert seen["switch"] == switch
    assert seen["plugin"] == (["Probe"] if loaded else None)
    assert seen["plain"] is not loaded  # a plugin in use wraps the validator (pydantic's PluggableSchemaValidator)
    all_off = switch in ("__all__", "1", "true")
    assert seen["stand_in"] is (all_off and "MABOS_PYDANTIC_PLUGINS" not in env)
    assert seen["metadata"] is not seen["stand_in"]


def test_mabos_ignores_an_installed_plugin_by_default(plugin: str):
    seen = _run(_ENTRY, {"PYTHONPATH": plugin})
    assert seen == {"switch": "__all__", "stand_in": True, "metadata": False, "plain": True, "plugin": None}


_LIBRARY = """
import json, os, sys
import kg
from kg.config import WorkspaceConfig
WorkspaceConfig.model_validate({"name": "w"})
print(json.dumps({"switch": os.environ.get("PYDANTIC_DISABLE_PLUGINS"),
                  "plugin": sys.modules["probe_plugin"].SEEN if "probe_plugin" in sys.modules else None}))
"""


def test_the_python_api_leaves_its_hosts_plugins_alone(plugin: str):
    """``import kg`` changes nothing of pydantic's: a host's plugin sees mabos's models (``mabos`` turns it off)."""
    assert _run(_LIBRARY, {"PYTHONPATH": plugin}) == {"switch": None, "plugin": ["WorkspaceConfig"]}


_FALLBACK = """
import json, os, sys
from cli import pydantic_plugins
name = sys.argv[1]
stood_in = pydantic_plugins.configure(name)
stand_in = sys.modules.get(name)
found = {"stood_in": stood_in}
if sys.argv[2] == "renamed":  # pydantic imports its loader under its own name: the stand-in is never asked
    from pydantic import BaseModel
    class Probe(BaseModel):
        x: int = 0
    found["valid"] = Probe(x="3").x == 3
    found["asked"] = hasattr(stand_in, "get_plugins_v3")  # a moved loader: nothing to answer from, no error
elif sys.argv[2] == "new-name":  # pydantic asks its loader for a name the stand-in lacks
    from pydantic.plugin._loader import PYDANTIC_ENTRY_POINT_GROUP
    found["value"] = PYDANTIC_ENTRY_POINT_GROUP
else:  # the switch turned on in the process after the start: pydantic's own answer
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = ""
    found["plugins"] = list(stand_in.get_plugins())
found["metadata"] = "importlib.metadata" in sys.modules
found["real"] = hasattr(sys.modules.get("pydantic.plugin._loader"), "__file__")
print(json.dumps(found))
"""


def test_a_renamed_loader_replaces_nothing_and_only_costs_the_import():
    """If pydantic moved its loader, the stand-in sits under a name nobody imports: models validate as ever, with
    pydantic's own loader (and ``importlib.metadata``), and asking the stand-in anything is a plain no."""
    seen = _run(_FALLBACK, {}, "pydantic.plugin._loader_moved", "renamed")
    assert seen == {"stood_in": True, "valid": True, "asked": False, "metadata": True, "real": True}


@pytest.mark.parametrize("case", ["new-name", "switched-on"])
def test_what_the_stand_in_cannot_answer_pydantics_loader_answers(case: str):
    """A name the stand-in does not define, or the switch turned on later: pydantic's loader is imported in its
    place (sys.modules holds the real module from then on) and answers."""
    seen = _run(_FALLBACK, {}, "pydantic.plugin._loader", case)
    expected = {"value": "pydantic"} if case == "new-name" else {"plugins": []}
    assert seen == {"stood_in": True, **expected, "metadata": True, "real": True}


def test_a_loader_imported_already_is_kept():
    code = "import pydantic.plugin._loader, sys\nfrom cli import pydantic_plugins\nprint(pydantic_plugins.configure())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "False"
