"""Bad input (issue 10, point 3): hypothesis fuzzing of every input boundary of mabos.

Targets: every tool's input model through :func:`cli.tools.call` (61 tools), rule conditions
(:meth:`reasoning.service.RuleService.create`), ontology proposals and malformed JSON-LD domain files
(:class:`kg.ontology.proposals.OntologyService`), cognitive Markdown files
(:func:`kg.memory.cognitive.import_cognitive`), the TypeQL literal encoder (:mod:`kg.store.typedb.literals`, pure
functions), agent ids and 10 MB contents.

The invariant for every case: the call either succeeds, or raises a :class:`kg.errors.MabosError` whose message is one
line of the form ``<field>: <rule>`` (never another exception type), and a refused call leaves the workspace
byte-for-byte unchanged (``tests.conftest.snapshot_workspace``: digests of the database content and the file tree).

Runs: the default run tries a modest number of examples per target (profile ``mabos-fuzz``). The full run,
``pytest -m slow tests/reliability/test_bad_input.py`` (or ``MABOS_SLOW=1``; profile ``mabos-fuzz-slow``), tries many
more and writes the tally (cases tried, accepted, refused, crashes, state changes per target) as JSON to
``build/reliability/bad-input.json`` (``MABOS_FUZZ_REPORT`` overrides the path). Real workspace, real SQLite, no mocks;
``MABOS_EMBEDDER=none`` and no TypeDB address, so the four typedb tools answer "not configured".
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

import kg
from cli import tools
from kg.errors import InputError, MabosError
from kg.memory.cognitive import CognitiveKind, import_cognitive
from kg.models import AGENT_ID_RE, MAX_CONTENT
from kg.ontology.proposals import OntologyService
from kg.store.typedb import literals as lit
from kg.workspace import Workspace
from reasoning.service import RuleService
from tests.conftest import snapshot_workspace
from tests.records import TAXABLE, VENDOR

# ------------------------------------------------------------------------------------------ profiles and tally

SLOW_ENV = os.environ.get("MABOS_SLOW") == "1"
_COMMON = {
    "deadline": None,
    "database": None,
    # no shrinking: a 1 MB label shrinks for minutes; a failure prints the example as generated
    "phases": (Phase.explicit, Phase.reuse, Phase.generate),
    "suppress_health_check": [
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.large_base_example,
    ],
}
settings.register_profile("mabos-fuzz", max_examples=8, **_COMMON)  # type: ignore[arg-type]
settings.register_profile("mabos-fuzz-slow", max_examples=400, **_COMMON)  # type: ignore[arg-type]
#: Examples per target relative to the profile's max_examples (heavy targets run fewer).
MODES = ["short", pytest.param("full", marks=pytest.mark.slow)]
REPORT = Path(
    os.environ.get("MABOS_FUZZ_REPORT", Path(__file__).resolve().parents[2] / "build/reliability/bad-input.json")
)
#: The longest error message we accept: a refusal must not echo a huge input back.
MAX_MESSAGE = 1_000
_FIELD_PREFIX = re.compile(r"^\S[^\n]{0,300}?: \S")

TALLY: dict[str, Counter[str]] = {}
#: The last snapshot of each workspace, valid until a call is accepted (a refused call must not change it).
_SNAPSHOTS: dict[Path, dict[str, str]] = {}
_FULL_RAN: list[str] = []


def fuzz_settings(mode: str, request: pytest.FixtureRequest, scale: float = 1.0) -> settings:
    """The profile for ``mode`` (the full one only when slow tests were asked for), scaled for heavy targets."""
    if mode == "full":
        if "slow" not in str(request.config.getoption("-m") or "") and not SLOW_ENV:
            pytest.skip("full fuzz run: pytest -m slow (or MABOS_SLOW=1)")
        _FULL_RAN.append(request.node.name)
        profile = settings.get_profile("mabos-fuzz-slow")
    else:
        profile = settings.get_profile("mabos-fuzz")
    return settings(profile, max_examples=max(3, int(profile.max_examples * scale)))


@pytest.fixture(scope="module", autouse=True)
def _write_tally() -> Iterator[None]:
    """Write the tally as JSON: ``REPORT`` after a full run (the figures of docs/reliability-input.md), else next to it
    as ``bad-input-short.json``."""
    yield
    if not TALLY:
        return
    path = REPORT if _FULL_RAN else REPORT.with_name("bad-input-short.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    totals = Counter[str]()
    for counts in TALLY.values():
        totals.update({k: v for k, v in counts.items() if ":" not in k})
    data = {
        "targets": {k: dict(sorted(v.items())) for k, v in sorted(TALLY.items())},
        "total": dict(sorted(totals.items())),
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def check_refusal(exc: MabosError) -> None:
    """A refusal is one line naming the field (``<field>: <rule>``) and does not echo a huge input."""
    message = str(exc)
    assert "\n" not in message and "\r" not in message, f"multi-line message: {message[:300]!r}"
    assert len(message) <= MAX_MESSAGE, f"message of {len(message)} characters: {message[:200]!r}..."
    assert _FIELD_PREFIX.match(message), f"message names no field: {message[:300]!r}"
    if isinstance(exc, InputError):
        assert exc.field and message.startswith(exc.field)


def changed(root: Path) -> None:
    """Forget the cached snapshot of ``root`` (the test itself changed the workspace)."""
    _SNAPSHOTS.pop(root, None)


def attempt(target: str, root: Path, action: Callable[[], object]) -> str:
    """Run ``action`` on the workspace at ``root``: "accepted", or "refused" with the invariants checked."""
    counts = TALLY.setdefault(target, Counter())
    counts["tried"] += 1
    before = _SNAPSHOTS.pop(root, None) or snapshot_workspace(SimpleNamespace(path=root))  # type: ignore[arg-type]
    try:
        action()
    except MabosError as exc:
        counts["refused"] += 1
        counts[f"refused:{type(exc).__name__}"] += 1
        if currently_in_test_context():
            event(f"{target}: {type(exc).__name__}")
        check_refusal(exc)
        if snapshot_workspace(SimpleNamespace(path=root)) != before:  # type: ignore[arg-type]
            counts["state_changes"] += 1
            raise AssertionError(f"{target}: refused ({exc}) but the workspace changed") from exc
        _SNAPSHOTS[root] = before
        return "refused"
    except Exception:
        counts["crashes"] += 1
        raise
    counts["accepted"] += 1
    if currently_in_test_context():
        event(f"{target}: accepted")
    return "accepted"


# ------------------------------------------------------------------------------------------ nasty values

LOOKALIKES = [
    "\u0455ales-agent",  # Cyrillic dze for s
    "s\u0430les-agent",  # Cyrillic a
    "sales\u2011agent",  # non-breaking hyphen
    "sales-agent\u200b",  # zero-width space
    "\uff41",  # fullwidth a
    "a\u0301",  # combining accent
    "\u202egnp.exe",  # right-to-left override
    "\ufeffa",  # BOM
    "\u0391",  # Greek capital alpha
]
PATHS = ["../", "..", "../../etc/passwd", "/etc/passwd", "/", "a/../../b", "..\\..\\x", "C:\\Windows", "~", "./a"]
DATES = [
    "2024-02-30",
    "2024-02-30T00:00:00Z",
    "2023-02-29",
    "2024-13-01",
    "2024-00-10",
    "2024-01-01T24:00:00",
    "2024-01-01T23:60:00Z",
    "0000-01-01",
    "0000-01-01T00:00:00Z",
    "0001-01-01T00:00:00+01:00",
    "9999-12-31T23:59:59-01:00",
    "10000-01-01",
    "+10000-01-01T00:00:00Z",
    "-0001-01-01",
    "99999-12-31",
    "2024-05-01T12:00:00+25:00",
    "1970-01-01T00:00:00Z",
    "2024-W01",
    "tomorrow",
    "1e10",
]
NUMBERS: list[object] = [
    0,
    -1,
    1,
    2,
    10,
    2**31,
    2**63,
    -(2**63) - 1,
    10**100,
    -0.0,
    0.5,
    1.0000001,
    -1e-300,
    1e308,
    math.nan,
    math.inf,
    -math.inf,
    "NaN",
    "Infinity",
    "-inf",
    "1e309",
    "0x10",
    "1_000",
    Decimal("NaN"),
    Decimal("1e-400"),
    True,
    False,
]
STRINGS: list[object] = [
    "",
    " ",
    "\t\n",
    "\x00",
    "a\x00b",
    "abc\n",
    "\r\n",
    "?x",
    "?",
    "*",
    "%",
    "_",
    "global",
    "agent:b",
    "agent:../a",
    "project:",
    "user:x/y",
    "'; DROP TABLE facts; --",
    '" ; match $x isa thing; delete $x;',
    "\\",
    "\ud800",
    "\udfff",
    "x" * 65,
    "x" * 257,
    "x" * 1025,
    "x" * 8193,
    "x" * (MAX_CONTENT + 1),
    "\U0001f600" * 40,
    "@graph",
    "{}",
    "[]",
    "null",
    "true",
    "1",
    *LOOKALIKES,
    *PATHS,
    *DATES,
]
OBJECTS: list[object] = [
    None,
    [],
    [None],
    [""],
    ["x"] * 1_001,
    [[]],
    {},
    {"a": 1},
    {"": None},
    {"@id": "x"},
    b"\xff\xfe",
    bytearray(b"x"),
    date(1, 1, 1),
    datetime.min,
    datetime.max,
    datetime(9999, 12, 31, 23, 59, tzinfo=timezone(-timedelta(hours=14))),
    datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))),
    timedelta(days=1),
    object(),
    1j,
    {1, 2},
    (1, 2),
]
NASTY = st.sampled_from([*NUMBERS, *STRINGS, *OBJECTS])
SCALARS = st.one_of(st.text(max_size=30), st.integers(), st.floats(), st.booleans(), st.none())
VALUES = st.one_of(
    NASTY,
    SCALARS,
    st.lists(SCALARS, max_size=4),
    st.dictionaries(st.text(max_size=8), SCALARS, max_size=3),
)
#: Extra argument names (never "workspace"/"agent": those are keywords of tools.call itself).
EXTRA = ["colour", "uid", "id", "created_at", "scope", "agent_name", "__class__", "", "\x00", "subject ", "Content"]


# ------------------------------------------------------------------------------------------ the seeded workspace


@pytest.fixture(scope="module")
def env() -> Iterator[None]:
    """No embedder, and no TypeDB server of a developer's environment."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MABOS_EMBEDDER", "none")
    for name in ("MABOS_TYPEDB_ADDRESS", "MABOS_TYPEDB_DATABASE", "MABOS_WORKSPACE"):
        mp.delenv(name, raising=False)
    yield
    mp.undo()


@pytest.fixture
def ab_root(env: None, tmp_path: Path) -> Path:
    """The folder of a new workspace with agents a and b (closed again)."""
    root = tmp_path / "ws"
    with kg.init_workspace(root) as ws:
        ws.agents.add("a")
        ws.agents.add("b")
    return root


@pytest.fixture(scope="module")
def seeded(
    env: None, tmp_path_factory: pytest.TempPathFactory, long_dialogue: Callable[[int], list[dict[str, Any]]]
) -> tuple[Path, dict[str, Any]]:
    """A workspace with agents a and b, a fact, a rule, a memory, a proposal and a compacted conversation."""
    root = tmp_path_factory.mktemp("fuzz") / "ws"
    with kg.init_workspace(root) as ws:
        ws.agents.add("a")
        ws.agents.add("b")
        fact, _ = ws.facts.assert_fact("a", "acme", "hasRevenue", "2000000")
        ws.facts.assert_fact("a", "acme", "locatedIn", "US")
        rules = RuleService(ws.ports, ws.scopes, ws.clock)
        rule = rules.create("a", **TAXABLE)
        doomed = rules.create("a", **{**TAXABLE, "name": "doomed"})  # rule_delete's target (the first call deletes it)
        ws.memory.store_item("a", "Acme needs SSO", tags=["auth"])
        goal = ws.bdi.add("goal", "a", "Grow Acme revenue", priority=6)
        belief = ws.bdi.add("belief", "a", "Acme is growing", certainty=0.8)
        proposal = _ontology(ws).propose("a", **VENDOR)  # type: ignore[arg-type]
        doomed_proposal = _ontology(ws).propose("a", **{**VENDOR, "node_id": "biz:DoomedVendor", "label": "Doomed"})  # type: ignore[arg-type]
        ws.conversations.ingest("a", "long", long_dialogue(2))
        summaries = list(ws.conversations.compact("a", "long").created)
    seed = {
        "fact": fact.uid,
        "rule": rule.uid,
        "doomed": doomed.uid,
        "proposal": proposal.uid,
        "goal": goal.uid,
        "belief": belief.uid,
        "doomed_proposal": doomed_proposal.uid,  # ontology_reject_proposal's target
    }
    return root, {**seed, "summary": summaries[0]}


def _ontology(ws: Workspace) -> OntologyService:
    return OntologyService(ws.ports, ws.scopes, ws.clock, ws.path / "ontologies")


def baselines(seed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Valid arguments of every tool (agent a): mutations start from these, so they reach the handlers."""
    triple = {"subject": "acme", "predicate": "isTaxable", "object": "true"}
    return {
        "cbr_store": {
            "situation": {"beliefs": ["price sensitive"], "desires": ["grow"]},
            "solution": {"actions": ["act"]},
            "outcome": {"success": True, "lessons": ["keep it short"]},
        },
        "cbr_retrieve": {"beliefs": ["price sensitive"], "desires": ["grow"]},
        "reason": {"problem": "should we raise prices for small teams"},
        "lcm_grep": {"pattern": "Lisbon"},
        "lcm_describe": {"summary_uid": seed["summary"]},
        "lcm_expand": {"summary_uid": seed["summary"], "include_messages": True},
        "context_assemble": {"session_key": "long", "budget": 4000},
        "fact_assert": {"subject": "globex", "predicate": "hasRevenue", "object": "$50000", "confidence": 0.8},
        "fact_retract": {"subject": "tmpco"},
        "fact_query": {"subject": "acme*"},
        "fact_explain": {"fact_id": seed["fact"]},
        "fact_import": {"documents": [{"name": "d.nt", "format": "nt", "content": '<urn:a> <urn:b> "c" .\n'}]},
        "bdi_cycle": {},
        "bdi_add": {"kind": "goal", "content": "Win Globex", "priority": 7, "hierarchy_level": "tactical"},
        "bdi_list": {"kind": "goal", "status": "pending"},
        "bdi_update": {"uid": seed["goal"], "progress": 0.5},
        "graph_link": {"relation": "belief-supports-goal", "source_uid": seed["belief"], "target_uid": seed["goal"]},
        "graph_relations": {"uid": seed["goal"]},
        "graph_path": {"kinds": ["belief", "goal"], "limit": 10},
        "conversation_ingest": {"session_key": "fresh", "messages": [{"role": "user", "content": "Acme wants SSO"}]},
        "conversation_compact": {"session_key": "long", "budget": 128_000},
        "memory_admit": {"candidates": [{"content": "Globex renews in March", "type": "fact", "key": "k1"}]},
        "ontology_reject_proposal": {"uid": seed["doomed_proposal"], "reason": "a duplicate"},
        "ontology_diff": {"uid": seed["proposal"]},
        "ontology_check": {},
        "ontology_to_typeql": {},
        "memory_materialize": {},
        "memory_export": {"kind": "beliefs"},
        "memory_import": {"kind": "all"},
        "reason_owl_rl": {"dry_run": True, "limit": 10},
        "graph_query": {"name": "lineage", "uid": seed["fact"]},
        "memory_store_item": {"content": "Globex prefers annual billing", "tags": ["billing"], "importance": 0.7},
        "memory_recall": {"query": "SSO", "limit": 5},
        "memory_consolidate": {"dry_run": True},
        "memory_checkpoint": {"context": "closing acme", "decisions": ["annual plan"]},
        "memory_build_hierarchy": {"scope": "week"},
        "memory_hierarchy_search": {"query": "acme", "level": "daily"},
        "memory_status": {},
        "memory_extract": {"extractor": "deterministic", "window": 4},
        "memory_list": {"category": "preferences", "include_archived": False},
        "ontology_propose_concept": dict(VENDOR),
        "ontology_validate_proposal": {"uid": seed["proposal"]},
        "ontology_merge_approved": {"uid": seed["proposal"]},
        "ontology_list_proposals": {"status": "pending"},
        "ontology_scaffold_domain": {"template": "saas", "domain": "acme"},
        "rule_create": {**TAXABLE, "name": "taxable-2"},
        "rule_import": {"document": json.dumps({"rules": [{**TAXABLE, "name": "taxable-3"}]}), "format": "json"},
        "rule_list": {"type": "inference"},
        "rule_toggle": {"rule_id": seed["rule"], "enabled": True},
        "rule_delete": {"rule_id": seed["doomed"]},
        "rule_export": {"format": "yaml"},
        "constraint_check": {},
        "policy_eval": {"context": {"customer": "acme"}},
        "infer_forward": {"persist": False},
        "infer_backward": dict(triple),
        "infer_abductive": dict(triple),
        "knowledge_explain": {"question": "is acme taxable"},
        "typedb_status": {},
        "typedb_sync_schema": {"if_changed": True},
        "typedb_query": {"query": "match $x isa agent;"},
        "typedb_sync_agent_data": {"batch": 100},
    }


@st.composite
def tool_arguments(draw: st.DrawFn, name: str, base: dict[str, Any]) -> dict[str, Any]:
    """The tool's valid baseline with 0-3 mutations: a field set to a nasty value, a field dropped, an extra one."""
    args = {"agent_id": "a", **base}
    fields = sorted(tools.get(name).input.model_fields)
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["set", "set", "set", "drop", "extra"]))
        if op == "set":
            args[draw(st.sampled_from(fields))] = draw(VALUES)
        elif op == "drop" and args:
            del args[draw(st.sampled_from(sorted(args)))]
        else:
            args[draw(st.sampled_from(EXTRA))] = draw(VALUES)
    return args


# ------------------------------------------------------------------------------------------ every tool


def test_every_tool_has_a_baseline(seeded: tuple[Path, dict[str, Any]]) -> None:
    assert set(baselines(seeded[1])) == set(tools.REGISTRY)
    # 38 + rule_import (18) + memory_extract, memory_list (21) + fact_import (22) + rule_delete, rule_export (18)
    # + bdi_add, bdi_list, bdi_update, graph_link, graph_relations, graph_path, conversation_ingest,
    # conversation_compact, memory_admit, ontology_reject_proposal, ontology_diff, ontology_check, ontology_to_typeql,
    # reason_owl_rl, memory_materialize, memory_export, memory_import (18)
    assert len(tools.REGISTRY) == 61


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(tools.REGISTRY))
def test_tool_inputs(name: str, mode: str, seeded: tuple[Path, dict[str, Any]], request: pytest.FixtureRequest) -> None:
    """Every tool: mutated arguments through tools.call succeed or are refused cleanly with nothing changed."""
    root, seed = seeded
    base = baselines(seed)[name]

    @fuzz_settings(mode, request)
    @given(tool_arguments(name, base))
    def run(args: dict[str, Any]) -> None:
        attempt(f"tool:{name}", root, lambda: tools.call(name, workspace=root, **args))

    run()


# ------------------------------------------------------------------------------------------ agent ids

AGENT_IDS = st.one_of(
    st.sampled_from(
        [
            *LOOKALIKES,
            *PATHS,
            "a" * 64,
            "a" * 65,
            "A",
            "a b",
            "a\x00",
            "\x00",
            "a\n",
            "-a",
            "_a",
            "a.b",
            "a/b",
            "a\\b",
            "con",
            "nul",
            "a:b",
            "",
        ]
    ),
    st.text(alphabet=st.sampled_from("az09-_./\\:\x00 \n\u0430\uff41"), max_size=70),
    st.text(max_size=80),
)


@pytest.mark.parametrize("mode", MODES)
def test_agent_ids(mode: str, seeded: tuple[Path, dict[str, Any]], request: pytest.FixtureRequest) -> None:
    """Registering an agent and acting as one: only ids matching AGENT_ID_RE pass; nothing escapes agents/."""
    root, _ = seeded
    outside = sorted(p.name for p in root.parent.iterdir())

    @fuzz_settings(mode, request, scale=1.5)
    @given(AGENT_IDS)
    def run(agent_id: str) -> None:
        with kg.open_workspace(root) as ws:
            added = attempt("agent_id:add", root, lambda: ws.agents.add(agent_id))
        if added == "accepted":
            assert AGENT_ID_RE.match(agent_id)
            assert (root / "agents" / agent_id).resolve().parent == (root / "agents").resolve()
        call = attempt(
            "agent_id:memory_store_item",
            root,
            lambda: tools.call("memory_store_item", workspace=root, agent_id=agent_id, content="x"),
        )
        if call == "accepted":
            assert AGENT_ID_RE.match(agent_id)
        attempt(
            "agent_id:memory_recall",
            root,
            lambda: tools.call("memory_recall", workspace=root, agent_id=agent_id, query="x"),
        )
        attempt("agent_id:bound", root, lambda: tools.call("memory_status", workspace=root, agent=agent_id))

    run()
    assert sorted(p.name for p in root.parent.iterdir()) == outside


# ------------------------------------------------------------------------------------------ rule conditions

TERMS = st.one_of(
    st.sampled_from(["?x", "?y", "?", "??", "?x y", "acme", "hasRevenue", "$1,000", "15%", "true"]),
    st.sampled_from(STRINGS),
    st.text(max_size=12),
)
OPERATORS = st.one_of(st.sampled_from(["eq", "ne", "gt", "lt", "gte", "lte", "contains", "EQ", "=", ">", ""]), VALUES)
CONDITION = st.one_of(
    st.fixed_dictionaries({"subject": TERMS, "predicate": TERMS, "object": TERMS}, optional={"operator": OPERATORS}),
    st.fixed_dictionaries({"subject": TERMS, "predicate": TERMS}, optional={"colour": VALUES}),
    VALUES,
)
RULE_FIELDS = st.fixed_dictionaries(
    {
        "name": st.one_of(st.just("r"), TERMS),
        "conditions": st.one_of(st.lists(CONDITION, max_size=4), st.lists(CONDITION, min_size=63, max_size=66), VALUES),
    },
    optional={
        "type": st.sampled_from(["inference", "constraint", "policy", "other", None, 1]),
        "conclusion": st.one_of(CONDITION, st.none()),
        "confidence_factor": st.sampled_from(NUMBERS),
        "scope": st.sampled_from(["global", "agent:a", "agent:b", "team:x", "", None, "project:p"]),
        "uid": st.one_of(st.none(), st.sampled_from(STRINGS)),
        "created_at": st.just("2024-01-01"),
        "domain": TERMS,
    },
)


@pytest.mark.parametrize("mode", MODES)
def test_rule_conditions(mode: str, seeded: tuple[Path, dict[str, Any]], request: pytest.FixtureRequest) -> None:
    """RuleService.create and the rule_create tool (which also parses condition strings) on fuzzed rules."""
    root, _ = seeded

    @fuzz_settings(mode, request, scale=2)
    @given(
        RULE_FIELDS,
        st.lists(
            st.one_of(
                st.text(max_size=40),
                st.sampled_from(
                    ["?x hasRevenue > 100", "?x p ?y", "?x  p", "a b c d e", "?x p >= $5", "?x p contains"]
                ),
            ),
            min_size=1,
            max_size=3,
        ),
    )
    def run(fields: dict[str, Any], texts: list[str]) -> None:
        with kg.open_workspace(root) as ws:
            rules = RuleService(ws.ports, ws.scopes, ws.clock)
            attempt("rules:create", root, lambda: rules.create("a", **fields))
        attempt(
            "rules:rule_create(text conditions)",
            root,
            lambda: tools.call(
                "rule_create", workspace=root, agent_id="a", name="t", type="constraint", conditions=texts
            ),
        )

    run()


# ------------------------------------------------------------------------------------------ ontology

PROPOSALS = st.fixed_dictionaries(
    {
        "domain": st.sampled_from(["sbvr-business", "mabos-core", "nope", "../x", ""]),
        "node_type": st.sampled_from(["class", "object_property", "datatype_property", "individual", "x", ""]),
        "node_id": st.one_of(
            st.sampled_from(
                ["biz:Thing2", "Thing3", "biz:", ":x", "biz:1x", "biz:Supplier", "biz:Dropship Vendor", "x:Y"]
            ),
            st.sampled_from(STRINGS),
        ),
        "label": st.one_of(st.just("A label"), st.sampled_from(STRINGS), st.just("L" * 1_000_000)),
    },
    optional={
        "parent_class": st.one_of(
            st.sampled_from(["biz:Supplier", "biz:Thing2", "biz:NoSuch", "owl:Thing"]), st.sampled_from(STRINGS)
        ),
        "range": st.sampled_from(["xsd:string", "biz:Party", "", "x" * 300]),
        "sbvr_definition": st.one_of(st.just("a thing"), st.sampled_from(STRINGS)),
        "sbvr_synonyms": st.one_of(st.lists(st.sampled_from(STRINGS), max_size=3), VALUES),
        "multi_valued": st.one_of(st.booleans(), VALUES),
        "scope": st.sampled_from(["global", "agent:a", "agent:b", "nope", None]),
    },
)


@pytest.mark.parametrize("mode", MODES)
def test_ontology_proposals(mode: str, seeded: tuple[Path, dict[str, Any]], request: pytest.FixtureRequest) -> None:
    """Propose, then validate and merge what was accepted: 1 MB labels, bad ids, unknown domains, self-parents."""
    root, _ = seeded

    @fuzz_settings(mode, request, scale=0.5)
    @given(PROPOSALS)
    def run(fields: dict[str, Any]) -> None:
        with kg.open_workspace(root) as ws:
            svc = _ontology(ws)
            holder: list[Any] = []
            if attempt("ontology:propose", root, lambda: holder.append(svc.propose("a", **fields))) == "accepted":
                uid = holder[0].uid
                attempt("ontology:validate", root, lambda: svc.validate(uid, "b"))
                attempt("ontology:merge", root, lambda: svc.merge(uid, "b"))

    run()


def test_self_parent_class_is_never_merged(seeded: tuple[Path, dict[str, Any]]) -> None:
    """Cyclic subclassing: a class proposed as its own parent fails validation and cannot be merged."""
    root, _ = seeded
    with kg.open_workspace(root) as ws:
        svc = _ontology(ws)
        proposal = svc.propose("a", **{**VENDOR, "node_id": "biz:Loop", "label": "Loop", "parent_class": "biz:Loop"})
        checks = svc.validate(proposal.uid, "b")
        assert not all(c.ok for c in checks)
        changed(root)
        assert attempt("ontology:cyclic-merge", root, lambda: svc.merge(proposal.uid, "b")) == "refused"


def _jsonld_nesting(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Lists and JSON-LD-keyed objects of ``inner`` (a named function: hypothesis reads a multi-line lambda's source
    wrongly and warns that it ignores its argument)."""
    keys = st.sampled_from(["@id", "@type", "@graph", "@context", "@list", "@value", "rdfs:subClassOf", "biz:x"])
    return st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=4))


JSONLD_JUNK = st.one_of(
    st.sampled_from(
        [
            '{"@graph": 5}',
            "[]",
            "{",
            '{"@context": 5, "@graph": []}',
            '{"@context": {"biz": 5}, "@graph": [{}]}',
            '{"@graph": [{"@id": 5}]}',
            '{"@graph": [{"@id": "biz:X", "@type": {"@id": []}}]}',
            "\x00",
            '{"@context": "http://example.invalid/ctx.jsonld", "@graph": []}',
            "\ufeff{}",
            "null",
            '{"@graph": [' + "[" * 5000 + "]" * 5000 + "]}",
        ]
    ),
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10)), _jsonld_nesting, max_leaves=12
    ).map(json.dumps),
)
CYCLE = {
    "@context": {
        "owl": "http://www.w3.org/2002/07/owl#",
        "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
        "mabos": "https://w3id.org/mabos/core#",
        "cyc": "https://example.org/cyc#",
    },
    "@id": "https://example.org/cyc#",
    "@type": "owl:Ontology",
    "mabos:domain": "cyc",
    "mabos:prefix": "cyc",
    "@graph": [
        {"@id": "cyc:A", "@type": "owl:Class", "rdfs:label": "A", "rdfs:subClassOf": {"@id": "cyc:B"}},
        {"@id": "cyc:B", "@type": "owl:Class", "rdfs:label": "B", "rdfs:subClassOf": {"@id": "cyc:A"}},
    ],
}


@pytest.mark.parametrize("mode", MODES)
def test_malformed_jsonld(mode: str, ab_root: Path, request: pytest.FixtureRequest) -> None:
    """A malformed or cyclic domain file in the ontology folder: proposals and checks refuse cleanly, change nothing."""
    profile = fuzz_settings(mode, request, scale=0.3)
    root = ab_root
    ws = kg.open_workspace(root)
    request.addfinalizer(ws.close)
    svc = _ontology(ws)  # one service: unchanged files stay parsed between examples
    pending = svc.propose("a", **VENDOR).uid  # type: ignore[arg-type]
    svc.validate(pending, "b")
    junk = root / "ontologies" / "junk.jsonld"

    @profile
    @given(st.one_of(JSONLD_JUNK, st.just(json.dumps(CYCLE))), st.booleans())
    def run(text: str, replace_core: bool) -> None:
        target = root / "ontologies" / "sbvr-business.jsonld" if replace_core else junk
        original = target.read_bytes() if target.exists() else None
        target.write_text(text, encoding="utf-8")
        changed(root)
        try:
            attempt("jsonld:propose", root, lambda: svc.propose("a", **{**VENDOR, "node_id": "biz:Fuzzed"}))
            attempt("jsonld:check", root, svc.check)
            attempt("jsonld:merge", root, lambda: svc.merge(pending, "b"))
        finally:
            if original is None:
                target.unlink()
            else:
                target.write_bytes(original)
            changed(root)

    run()


# ------------------------------------------------------------------------------------------ cognitive files

MARKER_NAMES = st.sampled_from(
    [
        "certainty",
        "priority",
        "urgency",
        "status",
        "progress",
        "level",
        "sequence",
        "deadline",
        "id",
        "scope",
        "updated",
        "created",
        "importance",
        "confidence",
        "store",
        "tags",
        "Certainty",
        "**Status:**",
        "colour",
    ]
)
MARKER_VALUES = st.one_of(
    st.sampled_from(
        [
            *map(str, NUMBERS),
            *DATES,
            "active",
            "done",
            "B-01J0000000000000000000000",
            "G-" + "Z" * 26,
            "agent:b",
            "global",
            "long_term",
            "a, b",
            "",
            "x" * 300,
        ]
    ),
    st.text(max_size=20),
)
LINES = st.one_of(
    st.builds(
        lambda h, t: f"{'#' * h} {t}", st.integers(1, 7), st.one_of(st.text(max_size=30), st.sampled_from(STRINGS))
    ),
    st.builds(lambda n, v: f"{n}: {v}", MARKER_NAMES, MARKER_VALUES),
    st.builds(lambda n, v: f"[{n}: {v}]", MARKER_NAMES, MARKER_VALUES),
    st.builds(lambda t: f"> {t}", st.text(max_size=30)),
    st.builds(lambda t: f"- {t}", st.text(max_size=30)),
    st.sampled_from(["", "<!-- comment -->", "---", "```", "\x00", "x" * (MAX_CONTENT + 10)]),
    st.text(max_size=40),
)


@pytest.mark.parametrize("mode", MODES)
def test_cognitive_files(mode: str, ab_root: Path, request: pytest.FixtureRequest) -> None:
    """Fuzzed Beliefs.md / Goals.md / Plans.md / Learnings.md ...: imported, or refused with nothing written."""
    profile = fuzz_settings(mode, request, scale=2)
    root = ab_root
    with kg.open_workspace(root) as ws:
        ws.bdi.add("goal", "a", "grow revenue", priority=8)
        ws.bdi.add("belief", "b", "private to b")
    folder = root / "agents" / "a"

    @profile
    @given(st.sampled_from(list(CognitiveKind)), st.lists(LINES, max_size=12), st.booleans())
    def run(kind: CognitiveKind, lines: list[str], raw_bytes: bool) -> None:
        path = folder / kind.filename
        if raw_bytes:
            path.write_bytes(b"# " + kind.heading.encode() + b"\n\n## \xff\xfe broken\n")
        else:
            path.write_text(f"# {kind.heading}\n\n" + "\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
        changed(root)
        with kg.open_workspace(root) as ws:
            attempt(f"cognitive:{kind.filename}", root, lambda: import_cognitive(ws, "a", kind))

    run()


# ------------------------------------------------------------------------------------------ TypeQL literals

ANYTHING = st.one_of(VALUES, st.decimals(), st.datetimes(timezones=st.just(UTC)), st.text(), st.binary(max_size=8))


@pytest.mark.parametrize("mode", MODES)
def test_typeql_literal_encoder(mode: str, request: pytest.FixtureRequest) -> None:
    """Any Python value: encode_value returns one literal or raises InputError; decoders refuse malformed text.

    tests/unit/test_typedb_literals.py covers round trips and each encoder's refusals; this adds arbitrary values
    and arbitrary literal text (surrogates, broken escapes) to the dispatcher and the decoders.
    """
    encoders: list[Callable[[object], str]] = [
        lit.encode_value,
        lit.encode_string,
        lit.encode_integer,
        lit.encode_double,
        lit.encode_decimal,
        lit.encode_boolean,
        lit.encode_datetime,
        lit.encode_label,
        lit.encode_role,
    ]
    decoders: list[Callable[[str], object]] = [lit.decode_string, lit.decode_decimal, lit.decode_datetime]

    @fuzz_settings(mode, request, scale=10)
    @given(
        ANYTHING,
        st.sampled_from(encoders),
        st.one_of(
            st.text(),
            st.sampled_from(
                [
                    '"',
                    '"\\',
                    '"\\u{110000}"',
                    '"\\u{d800}"',
                    '"\\ud800"',
                    '"\\x"',
                    "''",
                    "'\"",
                    '"a"b"',
                    "1e400",
                    "NaN",
                    "9999-12-31T23:59:60",
                    "2024-02-30T00:00:00",
                ]
            ),
        ),
        st.sampled_from(decoders),
    )
    def run(value: object, encode: Callable[[object], str], text: str, decode: Callable[[str], object]) -> None:
        counts = TALLY.setdefault("typeql:encode", Counter())
        counts["tried"] += 1
        try:
            literal = encode(value)
        except InputError as exc:
            counts["refused"] += 1
            check_refusal(exc)
        else:
            counts["accepted"] += 1
            assert isinstance(literal, str) and "\n" not in literal
        counts = TALLY.setdefault("typeql:decode", Counter())
        counts["tried"] += 1
        try:
            decode(text)
        except InputError as exc:
            counts["refused"] += 1
            check_refusal(exc)
        else:
            counts["accepted"] += 1

    run()


# ------------------------------------------------------------------------------------------ 10 MB contents

HUGE = "x" * 10_000_000


def _string_fields(name: str) -> list[str]:
    fields = tools.get(name).input.model_fields
    return sorted(f for f, info in fields.items() if "str" in str(info.annotation) and f != "agent_id")


@pytest.mark.parametrize("name", sorted(n for n in tools.REGISTRY if _string_fields(n)))
def test_ten_megabyte_strings(name: str, seeded: tuple[Path, dict[str, Any]]) -> None:
    """Every string field of every tool given 10 MB: refused (naming the field) or handled, never a crash."""
    root, seed = seeded
    base = {"agent_id": "a", **baselines(seed)[name]}
    for field in _string_fields(name):
        args = {**base, field: HUGE}
        outcome = attempt(f"10MB:{name}", root, lambda args=args: tools.call(name, workspace=root, **args))
        TALLY[f"10MB:{name}"][f"{outcome}:{field}"] += 1


def test_ten_megabyte_memory_content_and_import(env: None, tmp_path: Path) -> None:
    """10 MB through the services: memory content, a fact object, a belief, and a 10 MB Beliefs.md."""
    root = tmp_path / "ws"
    with kg.init_workspace(root) as ws:
        ws.agents.add("a")
        assert attempt("10MB:services", root, lambda: ws.memory.store_item("a", HUGE)) == "refused"
        assert attempt("10MB:services", root, lambda: ws.facts.assert_fact("a", "s", "p", HUGE)) == "refused"
        assert attempt("10MB:services", root, lambda: ws.bdi.add("belief", "a", HUGE)) == "refused"
        (root / "agents" / "a" / "Beliefs.md").write_text(f"# Beliefs\n\n## {HUGE}\n", encoding="utf-8")
        changed(root)
        assert attempt("10MB:services", root, lambda: import_cognitive(ws, "a", "beliefs")) == "refused"


# ------------------------------------------------------------------------------------------ XML entities (issue 30)

_RDF_NS = 'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/"'


@st.composite
def _hostile_rdf_xml(draw: st.DrawFn) -> tuple[str, bool]:
    """An RDF/XML document, with or without declarations (nested entities at most 3 x 10 deep, external ones,
    parameter entities, a DOCTYPE in the prolog or inside the root); the flag says whether it has one."""
    names = [f"e{i}" for i in range(draw(st.integers(0, 3)))]
    entities = []
    for i, name in enumerate(names):
        value = draw(st.sampled_from(['"x"', 'SYSTEM "file:///etc/hostname"', 'PUBLIC "-//x//y" "http://x/y"']))
        if i and draw(st.booleans()):
            value = '"' + f"&{names[i - 1]};" * draw(st.integers(1, 10)) + '"'
        entities.append(f"<!ENTITY {name} {value}>")
    if names and draw(st.booleans()):
        entities.append('<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;')
    declared = bool(entities) or draw(st.booleans())
    keyword = draw(st.sampled_from(["DOCTYPE", "doctype", " DOCTYPE"]))
    dtd = f"<!{keyword} rdf:RDF [{''.join(entities)}]>" if declared else ""
    text = draw(st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00<&"), max_size=20))
    value = f"&{names[-1]};" if names else text
    inside = draw(st.booleans())
    return (
        ('<?xml version="1.0"?>' + ("" if inside else dtd) + f"<rdf:RDF {_RDF_NS}>" + (dtd if inside else "")
         + f'<rdf:Description rdf:about="http://example.org/s"><ex:p>{value}</ex:p></rdf:Description></rdf:RDF>'),
        declared,
    )  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
def test_rdf_xml_with_declarations(
    mode: str, seeded: tuple[Path, dict[str, Any]], request: pytest.FixtureRequest
) -> None:
    """fact_import of RDF/XML: any document with a DOCTYPE or an entity declaration is refused in one line before
    pyoxigraph reads it (no expansion, no file read); one without imports or is refused for its syntax."""
    root, _ = seeded

    @fuzz_settings(mode, request, scale=0.5)
    @given(_hostile_rdf_xml())
    def run(case: tuple[str, bool]) -> None:
        content, declared = case
        document = {"name": "x.rdf", "format": "xml", "content": content}
        outcome = attempt("rdf-xml", root, lambda: tools.call("fact_import", workspace=root, agent_id="a",
                                                              documents=[document]))  # fmt: skip
        if declared:
            assert outcome == "refused"
        else:
            changed(root)  # an accepted import stored its fact

    run()
