"""LUBM(1) forward-chaining benchmark: our RDFS rules through ``forward_chain`` against owlrl's RDFS closure.

    python bench/lubm_forward.py --data ../shared/data/lubm1              # ours and owlrl (~2 min)
    python bench/lubm_forward.py --data ../shared/data/lubm1 --skip-owlrl
    python bench/lubm_forward.py --data ../shared/data/lubm1 --skip-owlrl --scale 10   # >= 1M facts

Loads ``univ-bench.owl`` and the ``University0_*.owl`` files with rdflib, turns the triples into
``Triple``s (IRIs as strings, blank nodes as ``_:id``, literals as their lexical form), expresses the
RDFS entailment rules that give class and property memberships as ``Rule``s (subClassOf and
subPropertyOf transitivity, type inheritance, property inheritance with a variable predicate, domain,
range) and times ``forward_chain`` on them. Then it times owlrl's RDFS closure on the same graph and
compares the ``rdf:type`` facts into univ-bench classes: both counts must be equal.

``--scale N`` (implies ``--skip-owlrl``) copies the instance data N times under renamed IRIs before
chaining, and reports the peak RSS. Prints progress lines, then one JSON object on the last line.
Target: our closure at least 10x faster than owlrl's.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rdflib
from rdflib import RDF, RDFS, BNode, Literal

from kg.limits import refuse_xml_dtd
from kg.models import Rule
from reasoning.rules import Triple, build_rule, forward_chain

UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
TYPE, SUBCLASS, SUBPROP = str(RDF.type), str(RDFS.subClassOf), str(RDFS.subPropertyOf)
DOMAIN, RANGE = str(RDFS.domain), str(RDFS.range)
VOCABULARY = ("http://www.w3.org/", UB)  # IRIs kept as they are when the instance data is copied


def rdfs_rules() -> list[Rule]:
    """The RDFS entailment rules that produce class and property memberships (rdfs2, 3, 5, 7, 9, 11)."""

    def rule(name: str, conditions: list[tuple[str, str, str]], conclusion: tuple[str, str, str]) -> Rule:
        conds = [{"subject": s, "predicate": p, "object": o} for s, p, o in conditions]
        concl = {"subject": conclusion[0], "predicate": conclusion[1], "object": conclusion[2]}
        return build_rule({"name": name, "conditions": conds, "conclusion": concl, "confidence_factor": 1.0})

    return [
        rule("rdfs11 subClassOf transitive", [("?a", SUBCLASS, "?b"), ("?b", SUBCLASS, "?c")], ("?a", SUBCLASS, "?c")),
        rule("rdfs5 subPropertyOf transitive", [("?p", SUBPROP, "?q"), ("?q", SUBPROP, "?r")], ("?p", SUBPROP, "?r")),
        rule("rdfs9 type inheritance", [("?x", TYPE, "?a"), ("?a", SUBCLASS, "?b")], ("?x", TYPE, "?b")),
        rule("rdfs7 property inheritance", [("?x", "?p", "?y"), ("?p", SUBPROP, "?q")], ("?x", "?q", "?y")),
        rule("rdfs2 domain", [("?p", DOMAIN, "?c"), ("?x", "?p", "?y")], ("?x", TYPE, "?c")),
        rule("rdfs3 range", [("?p", RANGE, "?c"), ("?x", "?p", "?y")], ("?y", TYPE, "?c")),
    ]


def load_graph(data: Path) -> rdflib.Graph:
    """The ontology and every ``University0_*.owl`` file in one graph."""
    graph = rdflib.Graph()
    for path in [data / "univ-bench.owl", *sorted(data.glob("University*.owl"))]:
        refuse_xml_dtd(path.read_bytes(), "--data", str(path))  # rdflib's RDF/XML parser expands entities
        graph.parse(path, format="xml")
    return graph


def _term(node: Any) -> str:
    return f"_:{node}" if isinstance(node, BNode) else str(node)


def to_triples(graph: rdflib.Graph) -> tuple[list[Triple], set[str]]:
    """The graph as engine triples, and the set of strings that were literals."""
    triples, literals = [], set()
    for s, p, o in graph:
        if isinstance(o, Literal):
            literals.add(str(o))
        triples.append(Triple(_term(s), str(p), _term(o)))
    return triples, literals


def scaled(triples: list[Triple], copies: int) -> Iterator[Triple]:
    """The triples, then ``copies - 1`` copies of the instance data with every instance IRI renamed."""
    yield from triples
    instance = [t for t in triples if not t.subject.startswith(VOCABULARY)]
    for n in range(1, copies):
        suffix = f"~{n}"
        for t in instance:
            obj = t.object if t.object.startswith(VOCABULARY) or not t.object.startswith("http") else t.object + suffix
            yield Triple(t.subject + suffix, t.predicate, obj)


def class_types(keys: Iterator[tuple[str, str, str]], literals: set[str]) -> int:
    """How many distinct ``x rdf:type ub:C`` facts there are (x not a literal)."""
    return len({k for k in keys if k[1] == TYPE and k[2].startswith(UB) and k[0] not in literals})


def run_ours(triples: list[Triple], literals: set[str]) -> dict[str, Any]:
    """Time ``forward_chain`` with the RDFS rules; count the univ-bench class memberships after."""
    rules = rdfs_rules()
    start = time.perf_counter()
    result = forward_chain(triples, rules, max_iterations=100, tune_process=True)  # as `mabos infer forward`
    seconds = time.perf_counter() - start
    keys = [t.key for t in triples] + [d.triple.key for d in result.derived]
    on_literals = sum(1 for d in result.derived if d.triple.subject in literals)
    return {
        "ours_seconds": round(seconds, 3),
        "ours_iterations": result.iterations,
        "ours_fixpoint": result.fixpoint,
        "ours_derived": len(result.derived),
        "ours_derived_on_literals": on_literals,  # range on a literal object: RDFS does not type literals
        "ours_type_facts": class_types(iter(keys), literals),
        "fired": {rule.name: result.fired[rule.uid] for rule in rules},
    }


def run_owlrl(graph: rdflib.Graph, literals: set[str]) -> dict[str, Any]:
    """Time owlrl's RDFS closure of the graph (in place); count the univ-bench class memberships after."""
    import owlrl  # noqa: PLC0415 - only this mode needs it

    before = len(graph)
    start = time.perf_counter()
    owlrl.DeductiveClosure(owlrl.RDFS_Semantics).expand(graph)
    seconds = time.perf_counter() - start
    keys = ((_term(s), str(p), _term(o)) for s, p, o in graph.triples((None, RDF.type, None)))
    return {
        "owlrl_seconds": round(seconds, 3),
        "owlrl_triples_before": before,
        "owlrl_triples_after": len(graph),
        "owlrl_type_facts": class_types(keys, literals),
    }


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def main() -> None:
    """Parse the options, run, print progress then the JSON summary as the last line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="folder with univ-bench.owl and University0_*.owl")
    parser.add_argument("--skip-owlrl", action="store_true", help="do not run owlrl (it takes ~75-100 s)")
    parser.add_argument("--scale", type=int, default=1, help="copies of the instance data (>1 implies --skip-owlrl)")
    args = parser.parse_args()

    start = time.perf_counter()
    graph = load_graph(args.data)
    parsed = time.perf_counter()
    triples, literals = to_triples(graph)
    out: dict[str, Any] = {
        "parse_seconds": round(parsed - start, 3),
        "convert_seconds": round(time.perf_counter() - parsed, 3),
        "input_triples": len(triples),
    }
    print(json.dumps({"loaded": out}), flush=True)
    if args.scale > 1:
        del graph
        triples = list(scaled(triples, args.scale))
        out |= {"scale": args.scale, "scaled_triples": len(triples)}
    out |= run_ours(triples, literals)
    print(json.dumps({"ours": out}), flush=True)
    if not args.skip_owlrl and args.scale == 1:
        del triples
        out |= run_owlrl(graph, literals)
        out["speedup"] = round(out["owlrl_seconds"] / out["ours_seconds"], 1)
        out["type_facts_equal"] = out["ours_type_facts"] == out["owlrl_type_facts"]
    out |= {"peak_rss_mib": peak_rss_mib(), "python": platform.python_version(), "machine": platform.machine()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
