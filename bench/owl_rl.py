"""OWL 2 RL closure of LUBM: our engine, owlrl (the reference) and ``reasonable`` (Rust) on the same data.

    python bench/owl_rl.py --data ../shared/data/lubm1                 # all three on LUBM(1) (owlrl: minutes)
    python bench/owl_rl.py --data ../shared/data/lubm1 --skip-owlrl    # ours and reasonable only
    python bench/owl_rl.py --data ../shared/data/lubm1 --generate 5    # ours on a seeded LUBM(5), peak RSS

The LUBM(1) files are parsed once with rdflib into one graph; every engine gets that graph in the same
process (same blank nodes), and each time covers what the engine does with it: ours interns the terms and
computes the closure, owlrl expands a copy of the graph, ``reasonable`` loads it (``from_graph``) and reasons.
Our closure is compared with owlrl's triple for triple (owlrl runs with its defaults: no axiomatic or
datatype axiom triples; its inconsistency report triples are taken out): ``missing_vs_owlrl`` and
``extra_vs_owlrl`` must be 0. ``--generate N`` builds LUBM(N) with :mod:`lubm_generator` (seeded) over the
data folder's ``univ-bench.owl``. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import owlrl
from lubm_generator import generate
from rdflib import RDF, Graph, URIRef
from rdflib.term import Node

from kg.limits import refuse_xml_dtd
from reasoning.owl2rl import closure

ERROR_MESSAGE = URIRef("http://www.daml.org/2002/03/agents/agent-ont#ErrorMessage")
Triple = tuple[Node, Node, Node]


def default_data() -> Path:
    return Path(os.environ.get("MABOS_BENCH_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))


def load(folder: Path) -> Graph:
    graph = Graph()
    for path in sorted(folder.glob("*.owl")):
        refuse_xml_dtd(path.read_bytes(), "--data", str(path))  # rdflib's RDF/XML parser expands entities
        graph.parse(path, format="xml")
    return graph


def run_ours(triples: Any) -> tuple[dict[str, Any], set[Triple]]:
    start = time.perf_counter()
    result = closure(triples)
    seconds = time.perf_counter() - start
    expanded = result.triples()
    return {"ours_seconds": round(seconds, 3), "ours_triples": len(expanded), "ours_stored": result.stored,
            "ours_inconsistencies": len(result.inconsistencies)}, expanded  # fmt: skip


def run_owlrl(graph: Graph) -> tuple[dict[str, Any], set[Triple]]:
    copy = Graph()
    for triple in graph:
        copy.add(triple)
    start = time.perf_counter()
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(copy)
    seconds = time.perf_counter() - start
    reports = {s for s, _, _ in copy.triples((None, RDF.type, ERROR_MESSAGE))}
    triples = {t for t in copy if t[0] not in reports}
    return {"owlrl_seconds": round(seconds, 3), "owlrl_triples": len(triples)}, triples


def run_reasonable(graph: Graph) -> dict[str, Any]:
    try:
        import reasonable  # noqa: PLC0415 - an optional peer, installed with the dev extra
    except ImportError:
        return {"reasonable_seconds": None, "reasonable_note": "reasonable is not installed"}
    start = time.perf_counter()
    reasoner = reasonable.PyReasoner()
    reasoner.from_graph(graph)
    out = reasoner.reason()
    return {"reasonable_seconds": round(time.perf_counter() - start, 3), "reasonable_triples": len(out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=default_data() / "lubm1", help="folder of LUBM .owl files")
    parser.add_argument("--skip-owlrl", action="store_true", help="do not run owlrl (minutes on LUBM(1))")
    parser.add_argument("--skip-reasonable", action="store_true")
    parser.add_argument("--generate", type=int, default=0, metavar="N", help="run ours on a generated LUBM(N)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not (args.data / "univ-bench.owl").is_file():
        parser.error(f"--data: {args.data} has no univ-bench.owl (see ../shared/data/README.md)")
    result: dict[str, Any] = {"benchmark": "owl_rl", "python": platform.python_version()}
    if args.generate:
        tbox = Graph()
        refuse_xml_dtd((args.data / "univ-bench.owl").read_bytes(), "--data", "univ-bench.owl")
        tbox.parse(args.data / "univ-bench.owl", format="xml")
        triples = [*tbox, *generate(args.generate, seed=args.seed)]
        result |= {"data": f"lubm{args.generate} (generated, seed {args.seed})", "input_triples": len(triples)}
        ours, _ = run_ours(triples)
        result |= ours
    else:
        start = time.perf_counter()
        graph = load(args.data)
        result |= {"data": str(args.data.name), "input_triples": len(graph),
                   "parse_seconds": round(time.perf_counter() - start, 3)}  # fmt: skip
        ours, ours_triples = run_ours(graph)
        result |= ours
        if not args.skip_reasonable:
            result |= run_reasonable(graph)
            if result.get("reasonable_seconds"):
                result["reasonable_over_ours"] = round(result["reasonable_seconds"] / result["ours_seconds"], 2)
        if not args.skip_owlrl:
            owl, ref = run_owlrl(graph)
            result |= owl
            result |= {"missing_vs_owlrl": len(ref - ours_triples), "extra_vs_owlrl": len(ours_triples - ref),
                       "owlrl_over_ours": round(owl["owlrl_seconds"] / result["ours_seconds"], 1)}  # fmt: skip
    result["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
