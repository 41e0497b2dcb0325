"""The hits of a search over an agent's Markdown files: a matching chunk and, as recall returns it, a file span.

They live apart from the index (:mod:`kg.recall.markdown_index`) and the file fallback (:mod:`kg.recall.fallback`)
because a recall's result names them in its type (``RecallResult.files``) whether or not the files are searched:
a recall of memory items loads neither the index nor its chunker (issue 33).
"""

from typing import Literal

from kg.models import Model
from kg.recall.fusion_types import ScoreBreakdown

FileMethod = Literal["hybrid", "bm25", "vector", "substring"]


class MarkdownHit(Model):
    """A chunk of an agent's Markdown file that matched a query; ``path`` is relative to the workspace."""

    path: str
    line_start: int
    line_end: int
    heading: str
    text: str
    score: float
    agent_id: str
    chunk_id: str


class FileHit(MarkdownHit):
    """A span of an agent's Markdown file (``path`` relative to the workspace) found by recall.

    ``fallback`` is true when the files answered because the database or vector index could not
    (``reason`` says why); ``explain`` holds the score breakdown when asked for.
    """

    method: FileMethod
    fallback: bool = False
    reason: str | None = None
    explain: ScoreBreakdown | None = None


__all__ = ["FileHit", "FileMethod", "MarkdownHit"]
