"""Cognitive files: an agent's BDI state and lessons as editable Markdown, exported and imported back.

Files under ``agents/<id>/``: ``Beliefs.md``, ``Desires.md``, ``Goals.md``, ``Intentions.md``,
``Plans.md`` (plan steps as ``### `` sections under their plan) and ``Learnings.md`` (memory items
of type lesson). One ``## `` section per record::

    # Goals

    ## Grow revenue
    > a second line of the goal's text
    priority: 8
    status: active
    progress: 0.25
    level: strategic
    [deadline: 2024-06-01T00:00:00.000000Z]
    [updated: 2024-05-01T12:00:00.000000Z]
    id: G-01J...

The heading is the first line of the text, ``> `` lines continue it. :func:`import_cognitive`
reads the files back: a section with a known ``id:`` updates only the fields that differ, a
section without one creates a record (or, when a record of that kind with the same text and scope
exists, updates that one), text before the first section (bullets or paragraphs, the seed's
header-less files) becomes new records. Every file is parsed and validated before anything is
written; a bad value raises :class:`~kg.errors.InputError` naming the file, line and field.
Export then import changes nothing. ``docs/markdown-files.md`` has the full rules.

The format (sections, markers, the parser) is :mod:`kg.memory.cognitive_format`; export and import are
:mod:`kg.memory.cognitive_export` and :mod:`kg.memory.cognitive_import`. The round-trip tests hold the
writer and the reader together.
"""

from kg.memory.cognitive_export import export_cognitive
from kg.memory.cognitive_format import (
    CognitiveKind,
    ExportResult,
    ImportResult,
    ParsedFile,
    Section,
    cognitive_kinds,
    content_lines,
    lesson_section,
    node_section,
    normalize_content,
    parse_cognitive,
    split_marker,
)
from kg.memory.cognitive_import import import_cognitive

__all__ = [
    "CognitiveKind",
    "ExportResult",
    "ImportResult",
    "ParsedFile",
    "Section",
    "cognitive_kinds",
    "content_lines",
    "export_cognitive",
    "import_cognitive",
    "lesson_section",
    "node_section",
    "normalize_content",
    "parse_cognitive",
    "split_marker",
]
