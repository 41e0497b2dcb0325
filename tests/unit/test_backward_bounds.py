"""Backward chaining answers growing inputs within its documented work bound (issue 30: every method has one).

Before: :func:`reasoning.rules.prove` (``infer_backward``, ``mabos infer backward`` and the backward proofs of
``knowledge_explain``, which asked ``max_depth=5``) searched depth-first without tabling, so on a dense graph the
goals it opened grew as (edges per node) ** depth: an unprovable goal over a complete graph of 16 nodes under a
transitive rule took 14 s, 40 nodes never returned. Now one search takes at most
:data:`reasoning.rules.MAX_PROOF_STEPS` steps (reasoning/bounds.py), proofs and gaps together, and a cut search
says so (``complete`` false, a note); ``knowledge_explain`` shares one such bound among all its goals. As in the
other methods' growth tests, a generous wall deadline (:data:`SAFETY_SECONDS`, in a thread) is only a safety net
against a search that never returns, not a measure of speed. Real rules, facts and workspaces.
"""

from __future__ import annotations

import itertools
import queue
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import kg
from cli import tools
from cli.main import cli
from kg.errors import InputError
from kg.models import Rule
from kg.workspace import Workspace
from reasoning import knowledge as knowledge_module
from reasoning import service as service_module
from reasoning.bounds import MAX_PROOF_STEPS
from reasoning.rules import ProofResult, Triple, build_rule, prove
from tests.budget import sizes

#: A run that has not returned after this long never will (a safety net, not a speed check).
SAFETY_SECONDS = 120
PATH_RULES: list[dict[str, Any]] = [
    {"name": "edge-path", "conditions": [{"subject": "?x", "predicate": "edge", "object": "?y"}],
     "conclusion": {"subject": "?x", "predicate": "path", "object": "?y"}},
    {"name": "path-step", "conditions": [{"subject": "?x", "predicate": "edge", "object": "?y"},
                                         {"subject": "?y", "predicate": "path", "object": "?z"}],
     "conclusion": {"subject": "?x", "predicate": "path", "object": "?z"}},
]  # fmt: skip


def rules() -> list[Rule]:
    return [build_rule(data, agent_id="a") for data in PATH_RULES]


def complete_graph(n: int) -> list[Triple]:
    """Every ordered pair of ``n`` nodes joined by ``edge``: each node reaches every other in one step or many."""
    return [Triple(f"v{i:03d}", "edge", f"v{j:03d}") for i, j in itertools.permutations(range(n), 2)]


def within_safety(call: Callable[[], Any]) -> Any:
    """``call()``, run in a daemon thread so that a search that never returns fails the test (and cannot hold up
    the end of the run) instead of hanging it."""
    done: queue.Queue[tuple[bool, Any]] = queue.Queue()

    def run() -> None:
        try:
            done.put((True, call()))
        except BaseException as exc:  # handed to the test's thread and raised there
            done.put((False, exc))

    threading.Thread(target=run, daemon=True).start()
    try:
        ok, value = done.get(timeout=SAFETY_SECONDS)
    except queue.Empty:
        pytest.fail(f"the proof search did not return within its {SAFETY_SECONDS} s safety deadline")
    if not ok:
        raise value
    return value


GROWTH = [(5, 5), (40, 10), *(pytest.param(n, d, marks=pytest.mark.slow, id=f"{n}-{d}-slow")
                               for n, d in ((16, 5), (120, 10)))]  # fmt: skip


@pytest.mark.parametrize(("n", "depth"), GROWTH)
def test_an_unprovable_goal_on_a_complete_graph_ends_within_the_bound(n: int, depth: int) -> None:
    result: ProofResult = within_safety(lambda: prove(("v000", "path", "nowhere"), complete_graph(n), rules(),
                                                      max_depth=depth))  # fmt: skip
    assert not result.proved and result.steps <= MAX_PROOF_STEPS
    if result.complete:
        assert n == 5 and result.gaps and result.note is None  # small enough to search whole: the gaps are listed
    else:
        assert result.steps == MAX_PROOF_STEPS and result.note is not None
        assert f"{MAX_PROOF_STEPS:,} steps (max_steps)" in result.note and "not disproved" in result.note


@pytest.mark.parametrize("n", sizes((16, 40), (120,)))
def test_a_provable_goal_on_a_dense_graph_is_proved_and_complete(n: int) -> None:
    """A ground goal has one answer: the search stops at its first proof instead of looking for more."""
    result: ProofResult = within_safety(lambda: prove(("v000", "path", f"v{n - 1:03d}"), complete_graph(n), rules()))
    assert result.proved and result.complete and result.proofs[0].rule_name == "edge-path"


def test_open_goals_keep_the_answers_found_when_the_bound_cuts() -> None:
    result = prove(("v000", "path", "?z"), complete_graph(40), rules(), max_proofs=50, max_steps=2_000)
    assert result.proved and not result.complete and result.steps == 2_000
    assert result.proofs and all(p.triple[:2] == ("v000", "path") for p in result.proofs)
    assert result.note is not None and f"{len(result.proofs)} answer(s) found hold" in result.note


def test_a_bound_below_one_is_refused() -> None:
    with pytest.raises(InputError, match=r"^max_steps: must be at least 1"):
        prove(("a", "b", "c"), [], [], max_steps=0)


# ------------------------------------------------------------------------------ through the workspace


@pytest.fixture
def dense(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    """Agent ``a`` with a complete graph of 16 nodes, the two path rules and ``reaches hub`` (nothing reaches it:
    every ``?x reaches hub`` goal is unprovable and searches the graph); the workspace's bound lowered to 5,000 steps
    (the services pass ``MAX_PROOF_STEPS`` of :mod:`reasoning.service` and :mod:`reasoning.knowledge`) so the
    searches are cut fast."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    for module in (service_module, knowledge_module):
        monkeypatch.setattr(module, "MAX_PROOF_STEPS", BOUND)
    ws = kg.init_workspace(tmp_path / "ws")
    ws.agents.add("a")
    ws.facts.assert_many("a", [{"subject": t.subject, "predicate": t.predicate, "object": t.object}
                               for t in complete_graph(16)])  # fmt: skip
    hub = {"name": "hub", "conditions": [{"subject": "?x", "predicate": "edge", "object": "?y"},
                                         {"subject": "?y", "predicate": "reaches", "object": "hub"}],
           "conclusion": {"subject": "?x", "predicate": "reaches", "object": "hub"}}  # fmt: skip
    for rule in [*PATH_RULES, hub]:
        tools.call("rule_create", workspace=ws.path, agent="a", **rule)
    yield ws
    ws.close()


BOUND = 5_000


def test_infer_backward_and_the_cli_say_when_the_search_was_cut(dense: Workspace) -> None:
    outcome: Any = within_safety(lambda: tools.call("infer_backward", workspace=dense.path, agent="a", subject="v000",
                                                    predicate="path", object="nowhere", max_depth=10))  # fmt: skip
    assert (outcome.proved, outcome.complete, outcome.steps) == (False, False, BOUND)
    assert outcome.note and f"{BOUND:,} steps (max_steps)" in outcome.note
    proved: Any = tools.call("infer_backward", workspace=dense.path, agent="a", subject="v000", predicate="path",
                             object="v015")  # fmt: skip
    assert proved.proved and proved.complete and proved.note is None
    shown = CliRunner().invoke(cli, ["--workspace", str(dense.path), "infer", "backward", "--agent", "a", "v000",
                                     "path", "nowhere"])  # fmt: skip
    assert shown.exit_code == 0 and "not proved" in shown.stdout and "incomplete:" in shown.stdout


def test_knowledge_explain_shares_one_bound_among_its_goals(dense: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[int] = []
    real = prove

    def watched(*args: Any, **kwargs: Any) -> ProofResult:
        result = real(*args, **kwargs)
        taken.append(result.steps)
        return result

    monkeypatch.setattr(knowledge_module, "prove", watched)
    question = "Which of " + ", ".join(f"v{i:03d}" for i in range(12)) + " reaches the hub?"
    answer: Any = within_safety(lambda: tools.call("knowledge_explain", workspace=dense.path, agent="a",
                                                   question=question))  # fmt: skip
    assert taken and sum(taken) <= BOUND  # the goals shared one bound: the first used it up, the rest got none
    assert answer.backward_complete is False and "backward chaining stopped" in answer.note
    assert f"{BOUND:,} steps" in answer.note and answer.methods["backward"] == 0
    unproved = re.search(r"(\d+) goal\(s\) not proved within it", answer.note)
    assert unproved is not None and int(unproved.group(1)) == 12  # v000 ... v011, each ?x of 'reaches hub'
