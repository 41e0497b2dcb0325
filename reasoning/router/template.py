"""What to send when a method cannot compute: the inputs object to fill, what is missing, and a short prompt.

The template comes from the method's :class:`~reasoning.router.methods.docs.MethodDoc` (its ``example``, with
the required fields of its ``inputs`` model), overlaid with whatever the problem text gave (:mod:`.extract`). A
method with no ``DOCS`` entry gets a template from what is known: what its engine said it needs.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from reasoning.router.catalogue import get_method
from reasoning.router.extract import Extraction
from reasoning.router.methods import method_doc
from reasoning.router.methods.docs import MethodDoc


@dataclass
class Template:
    """A ready-to-fill inputs object for one method."""

    method: str
    inputs: dict[str, Any]
    missing: list[str] = field(default_factory=list)
    graph: str = ""
    source: str = "docs"

    def as_json(self) -> dict[str, Any]:
        """The JSON form added to a result (``value.template`` and ``RouterResult.templates``)."""
        return {"inputs": {self.method: self.inputs}, "missing": self.missing, "graph": self.graph,
                "source": self.source, "rerun": f"mabos reason --agent <id> --method {self.method} --inputs "
                                               "inputs.json"}  # fmt: skip


def required_fields(doc: MethodDoc) -> list[str]:
    """The top-level fields the method's inputs model requires (its JSON schema's ``required``)."""
    if doc.inputs is None:
        return []
    schema = doc.inputs.model_json_schema()
    return [str(name) for name in schema.get("required", [])]


def build(method_id: str, given: dict[str, Any] | None, extraction: Extraction | None, needed: str) -> Template:
    """The template of ``method_id``: the text's partial inputs, else the documented example, else what is known."""
    method = get_method(method_id).id
    doc = method_doc(method)  # imports that method's engine module only
    graph = doc.graph if doc is not None else ""
    if extraction is not None and extraction.template:
        return Template(method, copy.deepcopy(extraction.template), list(extraction.missing), graph, "problem text")
    if doc is not None and doc.example is not None:
        filled = {**copy.deepcopy(doc.example), **(given or {})}
        missing = [name for name in required_fields(doc) if not (given or {}).get(name)] or [needed]
        return Template(method, filled, missing, graph, "the documented example: replace its values with yours")
    return Template(method, dict(given or {}), [needed], graph, "engine message (no documented example yet)")


def fill_prompt(problem: str, template: Template) -> str:
    """A short prompt asking an LLM caller to fill ``template`` from ``problem``."""
    spec = get_method(template.method)
    body = json.dumps(template.inputs, default=str)
    missing = "; ".join(template.missing)
    return (
        f"Fill the inputs of the reasoning method {spec.id!r} ({spec.description}) from the problem below. "
        f"Missing: {missing} (values shown come from {template.source}). Keep the JSON shape; use only numbers "
        f"the problem states or you can justify, and say which you assumed.\n\n"
        f"Problem:\n{problem.strip() or '(none)'}\n\nInputs (JSON):\n{body}\n\n"
        f"Reply with the JSON only; it is run with: mabos reason --agent <id> --method {spec.id} --inputs FILE"
    )


__all__ = ["Template", "build", "fill_prompt", "required_fields"]
