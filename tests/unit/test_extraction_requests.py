"""kg.extraction.requests: the memory extract request names what the extraction code defines (issue 34)."""

from __future__ import annotations

import pytest

from kg.errors import InputError
from kg.extraction.requests import ADMISSION_PRESETS, WINDOW, ExtractRequest
from kg.extraction.workspace import extract
from kg.memory.admission import PRESETS
from kg.workspace import Workspace


def test_the_request_names_every_admission_preset_without_importing_admission():
    assert tuple(sorted(PRESETS)) == ADMISSION_PRESETS  # the CLI's --admission choices are these and 'off'
    assert ExtractRequest().window == WINDOW


@pytest.mark.usefixtures("no_embedder")
def test_extract_takes_the_request_or_its_fields_validated_once(ws: Workspace) -> None:
    ws.conversations.ingest("a", "s1", [{"role": "user", "content": "I moved to Paris last year."}])
    with pytest.raises(InputError, match="window"):
        extract(ws, "a", window=0)
    with pytest.raises(InputError, match="since: give it in the ExtractRequest"):
        extract(ws, "a", ExtractRequest(), since=3)  # a field beside the request would be ignored: refused
    report = extract(ws, "a", ExtractRequest(extractor="deterministic", admission="off", session="s1"))
    assert report.totals()["windows"] == 1 and report.messages == 1
    assert extract(ws, "a", extractor="deterministic", session="s1").messages == 0  # read once: the mark moved
