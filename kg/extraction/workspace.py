"""The extraction run of a workspace: its chat model, ontology, embedder and daily logs."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from kg.conversation.llm import configured_chat
from kg.errors import InputError
from kg.extraction.deterministic import DeterministicExtractor
from kg.extraction.entities import Vocabulary
from kg.extraction.llm import LLMExtractor
from kg.extraction.report import ExtractionReport
from kg.extraction.requests import ExtractRequest
from kg.extraction.service import MARK, TAG, WINDOW, ExtractionService
from kg.memory.daily_log import append_items
from kg.memory.files import daily_log_path, directory_lock, logged_uids, memory_dir
from kg.memory.importance import recalculated
from kg.memory.service import MemoryService
from kg.models import MemoryItem
from kg.models.conversation import MessageQuery
from kg.models.request import requested
from kg.ports import ChatModel, Extractor

if TYPE_CHECKING:
    from kg.workspace import Workspace

EXTRACTORS = ("auto", "deterministic", "llm")


def workspace_chat(ws: Workspace) -> ChatModel | None:
    """The workspace's chat model (:func:`kg.conversation.llm.configured_chat`), else None."""
    return configured_chat(ws.config)


def append_daily_logs(ws: Workspace, agent_id: str, uids: list[str]) -> None:
    """Append the daily-log entries of committed items ``uids`` that their logs lack (under the directory lock,
    as :meth:`MemoryService.store_item` does; the open-time catch-up completes them if this never runs)."""
    found = ws.ports.memory.get_many(uids)
    by_day: dict[object, list[MemoryItem]] = defaultdict(list)
    for uid in uids:
        if uid in found:
            by_day[found[uid].created_at.date()].append(found[uid])
    with directory_lock(memory_dir(ws.path, agent_id)):
        missing: list[MemoryItem] = []
        for items in by_day.values():
            path = daily_log_path(ws.path, agent_id, items[0].created_at.date())
            logged = logged_uids(path) if path.exists() else set()
            missing += [i for i in items if i.uid not in logged]
        if missing:
            append_items(ws.path, agent_id, missing)


def extraction_service(ws: Workspace, *, extractor: str = "auto", admission: str | None = "balanced",
                       window: int = WINDOW, speaker: str = "user") -> ExtractionService:  # fmt: skip
    """The extraction run over ``ws`` with the chosen extractor (``auto``, ``deterministic`` or ``llm``)."""
    if extractor not in EXTRACTORS:
        raise InputError("extractor", f"must be auto, deterministic or llm, got {extractor!r}")
    chat = workspace_chat(ws) if extractor != "deterministic" else None
    if extractor == "llm" and chat is None:
        raise InputError("extractor", "llm needs [conversation] llm_url (or MABOS_LLM_URL)")
    vocabulary = Vocabulary.from_directory(ws.path / "ontologies")
    chosen: Extractor = (LLMExtractor(chat, vocabulary=vocabulary, attempts=ws.config.llm.attempts,
                                      max_tokens=ws.config.llm.max_tokens)
                         if chat is not None else DeterministicExtractor())  # fmt: skip
    memory = MemoryService(ws.ports, ws.scopes, ws.clock, None, limits=ws.memory.limits, engine=ws.recall_engine)
    return ExtractionService(
        ws.ports, ws.ports.marks, ws.ports.transactions, memory, ws.facts, ws.clock, chosen, embedder=ws.embedder,
        chat=chat, vocabulary=vocabulary, admission=admission, window=window,
        speaker=speaker, after_commit=lambda agent, uids: append_daily_logs(ws, agent, uids),
    )  # fmt: skip


def extract(ws: Workspace, agent_id: str, request: ExtractRequest | None = None, **fields: object) -> ExtractionReport:
    """Extract the agent's conversation messages not yet extracted, as ``request`` asks (or its fields: ``session``,
    ``since``, ``extractor``, ``admission``, ``window``), with a run made for it (:func:`extraction_service`)."""
    request = requested(ExtractRequest, request, fields)
    admission = None if request.admission == "off" else request.admission
    service = extraction_service(ws, extractor=request.extractor, admission=admission, window=request.window)
    return service.extract(agent_id, session=request.session, since=request.since)


Trigger = Literal["compact", "ingest", "nightly"]
REPORTS = Path(".mabos") / "extraction-reports"


def configured_service(ws: Workspace) -> ExtractionService:
    """The run as ``[extraction]`` in ``mabos.toml`` configures it."""
    cfg = ws.config.extraction
    admission = None if cfg.admission == "off" else cfg.admission
    return extraction_service(ws, extractor=cfg.extractor, admission=admission, window=cfg.window)


def pending_messages(ws: Workspace, agent_id: str, session: str) -> int:
    """Messages of the agent's session not yet extracted."""
    conv = ws.ports.conversations.find(agent_id, session)
    if conv is None:
        return 0
    return len(ws.ports.conversations.messages(MessageQuery(conversation_uid=conv.uid,
                                                            from_seq=ws.ports.marks.get(MARK + conv.uid))))  # fmt: skip


def auto_extract(
    ws: Workspace, agent_id: str, *, trigger: Trigger, session: str | None = None
) -> ExtractionReport | None:
    """Extraction run by a trigger when ``[extraction]`` asks for it (``compact``: ``after_compact``; ``ingest``:
    once ``every_messages`` messages of the session wait), its report saved; None when not due."""
    cfg = ws.config.extraction
    if trigger == "compact" and not cfg.after_compact:
        return None
    if trigger == "ingest" and (not cfg.every_messages or session is None
                                or pending_messages(ws, agent_id, session) < cfg.every_messages):  # fmt: skip
        return None
    report = configured_service(ws).extract(agent_id, session=session)
    save_report(ws, report, trigger)
    return report


def reweigh(ws: Workspace, agent_id: str) -> int:
    """Recompute the importance of the agent's active extracted items (the spec's formula: access count, age and
    tags change it; an explicit importance is left alone); how many changed. The nightly ``extract`` step runs it
    (the spec's maintenance pass)."""
    now = ws.clock.now()
    found = recalculated(ws.memory.list_items(agent_id, include_archived=False, tags=[TAG]), now)
    changes = [(uid, {"importance": value}) for uid, value in found.items()]
    if changes:
        ws.ports.memory.update(changes, now=now)
    return len(changes)


def save_report(ws: Workspace, report: ExtractionReport, trigger: str) -> Path:
    """Write the report as JSON and Markdown under ``.mabos/extraction-reports/`` (the JSON path is returned)."""
    folder = ws.path / REPORTS
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"extraction-{ws.clock.now():%Y%m%dT%H%M%S%f}-{report.agent_id}-{trigger}"
    payload = report.model_dump_json(indent=2)
    for suffix, text in ((".json", payload), (".md", report.markdown())):
        tmp = folder / f".{stem}{suffix}.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(folder / f"{stem}{suffix}")
    return folder / f"{stem}.json"


__all__ = ["EXTRACTORS", "REPORTS", "Trigger", "append_daily_logs",
           "auto_extract", "configured_service", "extract", "extraction_service", "pending_messages",
           "reweigh", "save_report", "workspace_chat"]  # fmt: skip
