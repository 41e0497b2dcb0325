"""The console's Jinja2 templates (``cli/ui/templates``), compiled when this module is imported.

A console worker's forkserver imports this module once (:data:`cli.ui.lanes.CONSOLE_WORKERS`, ``preload``), so
every worker forks with the templates compiled instead of compiling them itself (about 0.4 s of CPU per worker on
this 2-core machine under load). Autoescaping is on for every ``.html`` template: the pages show what agents wrote as
text (docs/security.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

TEMPLATE_DIR = Path(__file__).with_name("templates")


def short(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _environment() -> Environment:
    environment = Environment(loader=PackageLoader("cli.ui", "templates"), autoescape=select_autoescape(["html"]))
    environment.filters["short"] = lambda value, width=80: short(str(value), int(width))
    for template in sorted(TEMPLATE_DIR.glob("*.html")):
        environment.get_template(template.name)
    return environment


#: The templates, compiled.
TEMPLATES = _environment()


def render(template: str, **context: Any) -> str:
    """Template ``template`` rendered with ``context``."""
    return TEMPLATES.get_template(template).render(**context)


__all__ = ["TEMPLATES", "TEMPLATE_DIR", "render", "short"]
