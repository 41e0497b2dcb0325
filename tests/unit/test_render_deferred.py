"""cli/render.py's renderings are made on first use (docs/decisions/2026-11-28-json-output-without-rich.md).

They print exactly as the rich objects they stand for, a text's ``append`` waits with them, and nothing imports rich
until a rendering is printed or read.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from cli import render

ROOT = Path(__file__).resolve().parents[2]


def _printed(*items: object) -> str:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system="truecolor")  # styles show as escapes
    for item in items:
        console.print(item)
    return out.getvalue()


def test_a_deferred_text_prints_as_the_text_it_stands_for():
    eager = Text("Imported 3 triples", style="green")
    eager.append("\n  parse 0.10 s", style="")
    eager.append(" (dim part)", style="dim")
    later = render.done("Imported 3 triples")
    later.append("\n  parse 0.10 s", style="")
    later.append(" (dim part)", style="dim")
    assert _printed(later, render.note("a hint")) == _printed(eager, Text("a hint", style="dim"))
    assert str(later) == "Imported 3 triples\n  parse 0.10 s (dim part)"


def test_an_append_after_the_text_was_made_goes_to_the_made_text():
    text = render.done("first")
    assert _printed(text) == _printed(Text("first", style="green"))  # made now
    text.append(" second", style="")
    assert str(text) == "first second"


def test_a_deferred_table_prints_as_the_table_and_reads_its_attributes():
    rows = [("F-1", "acme", None), ("F-2", "globex", "2024-05-01")]
    eager = Table(title="Facts", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                  header_style="bold")  # fmt: skip
    for i, name in enumerate(("uid", "subject", "when")):
        eager.add_column(name, no_wrap=i == 0)
    for row in rows:
        eager.add_row(*(render.cell(value) for value in row))
    later = render.table("Facts", ("uid", "subject", "when"), rows)
    assert _printed(later) == _printed(eager)
    assert later.row_count == 2 and [c.header for c in later.columns] == ["uid", "subject", "when"]


def test_nothing_imports_rich_until_a_rendering_is_printed_or_read():
    code = (
        "import json, sys\n"
        "from cli import render\n"
        "line = render.done('stored'); line.append(' 3 facts')\n"
        "table = render.table('Facts', ('uid',), [('F-1',)])\n"
        "before = 'rich' in sys.modules\n"
        "print(json.dumps({'before': before, 'text': str(line), 'rows': table.row_count,\n"
        "                  'after': 'rich' in sys.modules}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(done.stdout) == {"before": False, "text": "stored 3 facts", "rows": 1, "after": True}
