"""``mabos demo``: build a small workspace with the Python API and report what each step showed.

The demo is a list of sections (:data:`SECTIONS`), each an independent module's function that takes the
workspace and the section to write to; :func:`build_demo` runs them in order. The demo only ever deletes a
directory it made itself (see :mod:`cli.demo.report`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cli.demo import basics, memory, reasoning
from cli.demo.report import DEFAULT_DEMO_PATH, FINANCE, MARKER, PROJECT, SALES, DemoReport, Section, prepare
from kg.workspace import Workspace, init_workspace

#: The demo's sections, in order: (title, what fills it).
SECTIONS: list[tuple[str, Callable[[Workspace, Section], None]]] = [
    ("Agents", basics.agents),
    ("Facts", basics.facts),
    ("BDI graph", basics.bdi_graph),
    ("Scopes", basics.scopes),
    ("Memory", lambda ws, out: memory.memory(ws, SALES, out)),
    ("BDI maintenance", lambda ws, out: memory.bdi_cycle(ws, SALES, out)),
    ("Reasoning", lambda ws, out: reasoning.reasoning(ws, SALES, out)),
    ("Reasoning methods", lambda ws, out: reasoning.methods(ws, SALES, out)),
    ("Recall indexes", memory.indexes),
    ("Status", basics.status),
]


def build_demo(path: Path) -> DemoReport:
    """Build the demo workspace at ``path`` and return what each step showed."""
    prepare(path)
    with init_workspace(path, name="mabos-demo") as ws:
        (path / MARKER).write_text("made by 'mabos demo'; the next 'mabos demo' here wipes it\n", encoding="utf-8")
        report = DemoReport(workspace=path.resolve())
        for title, run in SECTIONS:
            run(ws, report.section(title))
    where = f"mabos --workspace {path}"
    report.try_commands = [
        f"{where} fact query --agent {SALES} --subject acme",
        f"{where} graph path --agent {SALES} belief goal plan",
        f"{where} goal list --agent {SALES} --json",
        f'{where} memory recall --agent {SALES} "acme security" --depth 2',
        f"{where} bdi cycle --agent {SALES} --json",
        f"{where} infer backward --agent {SALES} acme assignTo us-sales",
        f'{where} knowledge explain --agent {SALES} "Is acme a target?"',
    ]
    return report


__all__ = [
    "DEFAULT_DEMO_PATH",
    "FINANCE",
    "PROJECT",
    "SALES",
    "SECTIONS",
    "DemoReport",
    "Section",
    "build_demo",
    "prepare",
]
