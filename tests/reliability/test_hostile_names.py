"""Issue 33's lazy tool registry and lazy command tables attacked with hostile names: paths, ``module:attr`` strings
(the tables' own form), dunder and private names, standard modules with side effects on import, controls, 10^5
characters. Over the Python API, the MCP server's ``call_tool`` and the CLI: each is a one-line error naming the
field, and nothing a name names is imported. Real registry, real workspace (``MABOS_EMBEDDER=none``: no handler runs).
"""

from __future__ import annotations

import pytest

#: Names a neighbouring agent might send for a tool or a command: paths, ``module:attr`` strings (the lazy tables'
#: own form), dunder and private names of the registry, standard modules with side effects on import, controls.
HOSTILE_NAMES = [
    "../../etc/passwd", "/etc/passwd", "os:system", "cli.tools.memory:memory_recall", "cli.commands.memory:memory",
    "json.tool:main", "this", "antigravity", "__main__", "__class__", "__getattr__", "__dict__", "_tools", "_table",
    "load_all", "registry", "tool_table", "mcp_server", "COMMANDS", "", " ", "\x00", "memory_recall\n",
    "memory_recall\r\nX-Injected: 1", "MEMORY_RECALL", "memory_recall\u200b", "x" * 100_000, "%s%s%n", "{0.__class__}",
]  # fmt: skip
_SIDE_EFFECT_MODULES = ("this", "antigravity", "json.tool", "os.system")


def _one_line_error(message: str, *, bound: int = 1_000) -> None:
    assert "\n" not in message and "\r" not in message and len(message) <= bound, message[:300]


def test_hostile_tool_names_are_one_line_errors_on_every_path(tmp_path, monkeypatch):
    # attacks: the lazy registry through the Python API (tools.call), the MCP server's call_tool and REGISTRY's
    # mapping face: each name is refused in one line naming the field; nothing it names is imported
    import sys  # noqa: PLC0415

    import kg  # noqa: PLC0415
    from cli import tools  # noqa: PLC0415
    from cli.tools import REGISTRY  # noqa: PLC0415
    from cli.tools.mcp_calls import call_tool  # noqa: PLC0415
    from kg.errors import InputError  # noqa: PLC0415

    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    with kg.init_workspace(tmp_path / "ws") as ws:
        ws.agents.add("a")
    before = {m for m in _SIDE_EFFECT_MODULES if m in sys.modules}
    with tools.context(tmp_path / "ws", agent="a") as ctx:
        for name in HOSTILE_NAMES:
            with pytest.raises(InputError) as refused:
                tools.call(name, workspace=tmp_path / "ws", agent="a")
            assert str(refused.value).startswith("tool: no tool "), name[:80]
            _one_line_error(str(refused.value))
            assert name not in REGISTRY and REGISTRY.get(name) is None
            result = call_tool(ctx, name, {"agent_id": "a"})
            assert result.is_error and result.content[0].text.startswith("error: tool: no tool "), name[:80]
            _one_line_error(result.content[0].text)
    assert {m for m in _SIDE_EFFECT_MODULES if m in sys.modules} == before


def test_a_name_that_is_no_tools_prefix_gets_no_suggestions(tmp_path, monkeypatch):
    # attacks: the "did you mean" hint of an unknown tool: a dunder or empty name shares no prefix with any tool, and
    # listing the first five tools in the alphabet as if they were close is a wrong hint
    from cli import tools  # noqa: PLC0415
    from kg.errors import InputError  # noqa: PLC0415

    for name in ["__class__", "", "_tools", "__init__"]:
        with pytest.raises(InputError) as refused:
            tools.call(name, agent_id="a")
        assert "did you mean" not in str(refused.value), str(refused.value)
    with pytest.raises(InputError, match=r"did you mean memory_recall\b"):
        tools.call("memory_recal", agent_id="a")


@pytest.mark.parametrize("where", [[], ["memory"], ["fact"], ["tools"]], ids=["top", "memory", "fact", "tools"])
def test_hostile_command_names_are_one_line_errors(where):
    # attacks: the lazy command tables of the CLI (the top level and lazy groups): a name is looked up, never
    # imported; click answers "No such command" in one line and exits 2
    import sys  # noqa: PLC0415

    from click.testing import CliRunner  # noqa: PLC0415

    from cli.main import cli  # noqa: PLC0415

    before = {m for m in _SIDE_EFFECT_MODULES if m in sys.modules}
    for name in [n for n in HOSTILE_NAMES if n.strip() and "\x00" not in n and len(n) < 1000]:
        result = CliRunner().invoke(cli, [*where, name])
        assert result.exit_code == 2, (name, result.output)
        last = result.output.strip().splitlines()[-1]
        assert last.startswith("Error: No such command"), (name, result.output)
    assert {m for m in _SIDE_EFFECT_MODULES if m in sys.modules} == before
