"""Ontology proposal validation against the full base ontology set (target: under 1 s per proposal).

    HF_HUB_OFFLINE=1 python bench/ontology.py
    HF_HUB_OFFLINE=1 python bench/ontology.py --proposals 40 --ontologies path/to/ontologies

Copies ``ontologies/`` (base files and templates) into a fresh workspace in a temporary directory, proposes
``--proposals`` concepts and properties (classes under business classes, object properties between them,
datatype properties with XSD ranges, and a few that fail: near-duplicate labels, reserved words, unknown
parents), and times ``OntologyService.validate`` on each: all nine checks, recording the status in the
store and the proposals file. The first validation parses the files (cached by content hash afterwards):
it is reported apart as ``first_validate_seconds`` and included in the percentiles. Then one merge and a
whole-ontology ``check()`` are timed.

Prints one JSON line per proposal to stderr and, last, one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kg
from kg.ontology.files import shapes_dir
from kg.ontology.proposals import OntologyService

ROOT = Path(__file__).resolve().parents[1]
BIZ = "https://w3id.org/mabos/business#"


def proposals(classes: list[str], count: int) -> list[dict[str, Any]]:
    """A deterministic mix of proposals over the business classes (most valid, some not)."""
    made: list[dict[str, Any]] = []
    for i in range(count):
        parent, other = classes[i % len(classes)], classes[(i * 7 + 3) % len(classes)]
        kind = i % 5
        if kind in (0, 1):
            made.append({"node_type": "class", "node_id": f"BenchConcept{i}", "label": f"Bench concept {i}",
                         "parent_class": parent})  # fmt: skip
        elif kind == 2:
            made.append({"node_type": "object_property", "node_id": f"benchRelates{i}", "label": f"bench relates {i}",
                         "domain_class": parent, "range": other})  # fmt: skip
        elif kind == 3:
            made.append({"node_type": "datatype_property", "node_id": f"benchScore{i}", "label": f"bench score {i}",
                         "domain_class": parent, "range": "xsd:decimal", "multi_valued": i % 2 == 0})  # fmt: skip
        else:  # failing ones: a reserved word, an unknown parent, a near-duplicate of an existing label
            bad = [{"node_id": "Entity", "label": f"Entity kind {i}", "parent_class": parent},
                   {"node_id": f"Orphan{i}", "label": f"Orphan {i}", "parent_class": "biz:NoSuchClass"},
                   {"node_id": f"Near{i}", "label": classes[i % len(classes)].rsplit("#", 1)[-1] + "s",
                    "parent_class": parent}][i // 5 % 3]  # fmt: skip
            made.append({"node_type": "class", **bad})
    for p in made:
        p["sbvr_definition"] = f"A benchmark term: {p['label']}."
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--proposals", type=int, default=20)
    parser.add_argument("--ontologies", type=Path, default=ROOT / "ontologies")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = kg.init_workspace(Path(tmp) / "ws")
        onto = ws.path / "ontologies"
        shutil.rmtree(onto, ignore_errors=True)
        shutil.copytree(args.ontologies, onto)
        ws.agents.add("proposer")
        ws.agents.add("knowledge")
        svc = OntologyService(ws.ports, ws.scopes, ws.clock, onto, shapes_dir())
        active = svc.active()
        classes = sorted(str(iri) for iri, kind in active.kinds.items() if kind == "class" and str(iri).startswith(BIZ))
        svc = OntologyService(ws.ports, ws.scopes, ws.clock, onto, shapes_dir())  # cold: nothing parsed yet
        times, valid = [], []
        for fields in proposals(classes, args.proposals):
            p = svc.propose("proposer", domain="sbvr-business", **fields)
            start = time.perf_counter()
            checks = svc.validate(p.uid, "knowledge")
            times.append(time.perf_counter() - start)
            failed = [c.check for c in checks if not c.ok]
            if not failed:
                valid.append(p.uid)
            print(json.dumps({"node": p.node_id, "seconds": round(times[-1], 4), "failed": failed}), file=sys.stderr)
        start = time.perf_counter()
        svc.merge(valid[0], "knowledge")
        merge_seconds = time.perf_counter() - start
        start = time.perf_counter()
        results = svc.check()
        check_seconds = time.perf_counter() - start
        summary = {
            "proposals": len(times),
            "valid": len(valid),
            "first_validate_seconds": round(times[0], 4),
            "validate_seconds_p50": round(statistics.median(times), 4),
            "validate_seconds_p95": round(sorted(times)[max(0, round(0.95 * len(times)) - 1)], 4),
            "validate_seconds_max": round(max(times), 4),
            "merge_seconds": round(merge_seconds, 4),
            "check_seconds": round(check_seconds, 4),
            "check_ok": all(r.ok for r in results),
            "ontology_files": len(active.files),
            "ontology_triples": len(active.graph),
            "ontology_nodes": len(active.kinds),
            "python": platform.python_version(),
        }
        ws.close()
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
