"""The ``info-theory`` method: entropy, divergence, mutual information and the most informative question.

Inputs ``inputs.info-theory`` (:class:`InfoInput`), any of:

- ``distribution`` {outcome: p} -> ``value.entropy_bits`` H(p) = -Σ p log2 p;
- with ``reference`` {outcome: q} as well -> ``value.kl_divergence_bits`` D(p || q) = Σ p log2 (p / q) and
  ``value.cross_entropy_bits`` H(p, q) = H(p) + D(p || q) (Cover & Thomas, Elements of Information Theory, 2006,
  §2.3); infinite (null, with a note) when q gives 0 to an outcome p does not;
- ``joint`` {"x,y": p} (or ``joint_counts`` {"x,y": n}, normalised) -> H(X), H(Y), H(X, Y), H(X|Y), H(Y|X) and
  ``value.mutual_information_bits`` I(X; Y) = H(X) + H(Y) - H(X, Y);
- ``distribution`` with ``questions`` {name: {answer: [outcomes]}} -> the expected information gain of each;
- ``examples`` [{attribute: value}] with ``target`` -> the information gain of each attribute (ID3).

From the agent's graph: ``{"subject", "predicate"}`` -> the distribution over the objects of those facts
(weighted by confidence); ``{"target": predicate}`` without examples -> one example per subject with that
predicate (its facts as attributes). Entropies use ``scipy.stats.entropy``.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Annotated, Any

from pydantic import Field

from kg.models import Model, Unit
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed, fail, validate
from reasoning.router.methods.decisions import margin_confidence
from reasoning.router.methods.docs import MethodDoc

METHOD = "info-theory"
TOLERANCE = 1e-6
#: Outcomes of one distribution or joint table; examples x attributes of one ID3 table; questions.
MAX_OUTCOMES, MAX_CELLS, MAX_QUESTIONS = 100_000, 2_000_000, 1_000
_Key = Annotated[str, Field(max_length=512)]


class InfoInput(Model):
    """``info-theory`` inputs (see the module docstring)."""

    distribution: dict[_Key, Unit] | None = Field(None, max_length=MAX_OUTCOMES)
    reference: dict[_Key, Unit] | None = Field(None, max_length=MAX_OUTCOMES)
    joint: dict[_Key, Unit] | None = Field(None, max_length=MAX_OUTCOMES)
    joint_counts: dict[_Key, Annotated[float, Field(ge=0, le=1e15)]] | None = Field(None, max_length=MAX_OUTCOMES)
    questions: dict[_Key, dict[_Key, list[_Key]]] | None = Field(None, max_length=MAX_QUESTIONS)
    examples: list[dict[_Key, Any]] | None = Field(None, max_length=MAX_CELLS)
    target: str | None = None
    subject: str | None = None
    predicate: str | None = None


def _from_graph(ctx: MethodContext, data: InfoInput) -> tuple[InfoInput, list[str]]:
    """Without explicit inputs: a distribution over the objects of (subject, predicate) facts, weighted by
    confidence; or, for a target predicate, examples (one per subject having it: its predicate -> object)."""
    if data.distribution is None and data.subject and data.predicate:
        facts = ctx.facts(subject=data.subject, predicate=data.predicate)
        total = math.fsum(f.confidence for f in facts)
        if total > 0:
            weights: dict[str, float] = defaultdict(float)
            for fact in facts:
                weights[fact.object] += fact.confidence / total
            return data.model_copy(update={"distribution": dict(weights)}), [f.uid for f in facts]
    if data.examples is None and data.target:
        rows: dict[str, dict[str, Any]] = defaultdict(dict)
        used = []
        for fact in ctx.facts():
            rows[fact.subject][fact.predicate] = fact.object
            used.append(fact.uid)
        examples = [row for row in rows.values() if data.target in row]
        if any(len(row) > 1 for row in examples):  # something to ask besides the target
            return data.model_copy(update={"examples": examples}), used
    return data, []


def _check_sum(values: dict[str, float], path: str) -> None:
    total = math.fsum(values.values())
    if not values or abs(total - 1.0) > TOLERANCE:
        raise fail(METHOD, path, f"probabilities must sum to 1 (± 1e-6), got {total:.6g}")


def _bits(probabilities: list[float]) -> float:
    from scipy.stats import entropy  # noqa: PLC0415 - scipy.stats takes ~1 s to import: only when used

    return float(entropy(probabilities, base=2)) if any(probabilities) else 0.0


def _mutual(joint: dict[str, float]) -> dict[str, float]:
    px: dict[str, float] = defaultdict(float)
    py: dict[str, float] = defaultdict(float)
    for key, p in joint.items():
        parts = key.split(",")
        if len(parts) != 2:
            raise fail(METHOD, f"joint.{key}", "keys must read 'x,y'")
        px[parts[0].strip()] += p
        py[parts[1].strip()] += p
    hx, hy, hxy = _bits(list(px.values())), _bits(list(py.values())), _bits(list(joint.values()))
    return {"entropy_x_bits": hx, "entropy_y_bits": hy, "joint_entropy_bits": hxy,
            "conditional_x_given_y_bits": hxy - hy, "conditional_y_given_x_bits": hxy - hx,
            "mutual_information_bits": max(0.0, hx + hy - hxy)}  # fmt: skip


def _gains(examples: list[dict[str, Any]], target: str) -> dict[str, float]:
    labels = [str(e.get(target)) for e in examples]
    base = _bits([c / len(labels) for c in Counter(labels).values()])
    attributes = sorted({k for e in examples for k in e} - {target})
    gains = {}
    for attribute in attributes:
        split: dict[str, list[str]] = defaultdict(list)
        for example, label in zip(examples, labels, strict=True):
            split[str(example.get(attribute))].append(label)
        rest = sum(len(v) / len(labels) * _bits([c / len(v) for c in Counter(v).values()]) for v in split.values())
        gains[attribute] = base - rest
    return gains


def _divergence(p: dict[str, float], q: dict[str, float], h: float) -> tuple[dict[str, Any], list[str]]:
    """KL divergence D(p || q) and cross-entropy H(p, q) in bits (None when infinite) with the notes."""
    from scipy.stats import entropy  # noqa: PLC0415 - scipy.stats takes ~1 s to import: only when used

    outcomes = sorted(set(p) | set(q))
    if any(p.get(o, 0.0) > 0 and q.get(o, 0.0) == 0 for o in outcomes):
        return {"kl_divergence_bits": None, "cross_entropy_bits": None}, [
            "D(p || q) and H(p, q) are infinite: the reference gives probability 0 to an outcome the distribution "
            "does not"
        ]
    kl = float(entropy([p.get(o, 0.0) for o in outcomes], [q.get(o, 0.0) for o in outcomes], base=2))
    return {"kl_divergence_bits": kl, "cross_entropy_bits": h + kl}, []


def _gains_of_questions(data: InfoInput, h: float) -> dict[str, float]:
    assert data.distribution is not None and data.questions is not None  # noqa: S101 - the caller checked
    gains = {}
    for name, answers in data.questions.items():
        covered = [o for outcomes in answers.values() for o in outcomes]
        if sorted(covered) != sorted(data.distribution):
            raise fail(METHOD, f"questions.{name}", "answers must partition the outcomes exactly")
        mass = [math.fsum(data.distribution[o] for o in outcomes) for outcomes in answers.values()]
        after = math.fsum(m * _bits([data.distribution[o] / m for o in outcomes])
                          for m, outcomes in zip(mass, answers.values(), strict=True) if m > 0)  # fmt: skip
        gains[name] = h - after
    return gains


def _examples(data: InfoInput, value: dict[str, Any], trace: list[str], parts: list[str]) -> float:
    """The information gain of each attribute of ``examples`` for ``target``; the confidence in the best one."""
    assert data.examples is not None  # noqa: S101 - the caller checked
    if not data.target or not data.examples:
        raise fail(METHOD, "target", "examples need a target attribute (and at least one example)")
    width = max(len(e) for e in data.examples)
    if width * len(data.examples) > MAX_CELLS:
        raise fail(
            METHOD, "examples", f"{len(data.examples):,} examples x {width} attributes exceed {MAX_CELLS:,} cells"
        )
    gains = _gains(data.examples, data.target)
    if not gains:
        raise fail(METHOD, "examples", "have no attribute besides the target")
    best = max(gains, key=lambda k: gains[k])
    value["information_gain_bits"], value["best_question"] = gains, best
    labels = Counter(str(e.get(data.target)) for e in data.examples)
    trace.append(f"H({data.target}) minus the expected entropy after splitting on each attribute")
    parts.append(f"ask {best} first (information gain {gains[best]:.3f} bits)")
    return margin_confidence(list(gains.values()), _bits([c / len(data.examples) for c in labels.values()]))


def info_theory(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``info-theory``."""
    data, used = _from_graph(ctx, validate(InfoInput, inputs, METHOD))
    value: dict[str, Any] = {}
    trace: list[str] = []
    notes: list[str] = []
    parts: list[str] = []
    confidence = 1.0  # exact functions of the given distributions
    if data.examples is not None:
        confidence = _examples(data, value, trace, parts)
    if data.distribution is not None:
        _check_sum(data.distribution, "distribution")
        h = _bits(list(data.distribution.values()))
        value["entropy_bits"] = h
        trace.append(f"H = -Σ p log2 p over {len(data.distribution)} outcomes = {h:.4f} bits")
        if data.questions:
            gains = _gains_of_questions(data, h)
            best = max(gains, key=lambda k: gains[k])
            value["information_gain_bits"], value["best_question"] = gains, best
            confidence = margin_confidence(list(gains.values()), h)
            parts.append(f"ask {best} (expected information gain {gains[best]:.4f} of {h:.4f} bits)")
        elif not parts:
            parts.append(f"entropy {h:.4f} bits")
        if data.reference is not None:
            _check_sum(data.reference, "reference")
            divergence, notes = _divergence(data.distribution, data.reference, h)
            value.update(divergence)
            trace.append("D(p || q) = Σ p log2 (p / q); H(p, q) = H(p) + D(p || q)")
            kl = divergence["kl_divergence_bits"]
            parts.append("KL divergence infinite" if kl is None else f"KL divergence {kl:.4f} bits, cross-entropy "
                         f"{divergence['cross_entropy_bits']:.4f} bits")  # fmt: skip
    elif data.reference is not None:
        raise fail(METHOD, "distribution", "a reference distribution needs the distribution p to compare with it")
    joint = data.joint
    if data.joint_counts is not None:
        total = math.fsum(data.joint_counts.values())
        if total <= 0:
            raise fail(METHOD, "joint_counts", "hold no observations")
        joint = {k: v / total for k, v in data.joint_counts.items()}
    if joint is not None:
        _check_sum(joint, "joint")
        value.update(_mutual(joint))
        trace.append("I(X;Y) = H(X) + H(Y) - H(X,Y)")
        parts.append(f"mutual information {value['mutual_information_bits']:.4f} bits")
    if not value:
        raise MissingInputs(METHOD, "give inputs.info-theory.distribution, joint, or examples with target")
    return computed(METHOD, "; ".join(parts), confidence, value, trace=trace, used=used, notes=notes)


DOCS = {
    METHOD: MethodDoc(
        confidence=("1.0 for entropies, divergences and mutual information: exact functions of the given "
                    "distributions. For the best question: 1/k when k questions tie, else 0.5 + 0.5 x min(1, "
                    "margin / entropy), the best gain's lead over the runner-up relative to the entropy to resolve."),
        bound=(f"Distributions and joint tables of at most {MAX_OUTCOMES:,} outcomes; at most {MAX_QUESTIONS:,} "
               f"questions; examples x attributes at most {MAX_CELLS:,} cells (else a one-line error)."),
        inputs=InfoInput,
        example={"distribution": {"sun": 0.5, "rain": 0.25, "snow": 0.25},
                 "reference": {"sun": 0.4, "rain": 0.4, "snow": 0.2},
                 "joint": {"rain,umbrella": 0.3, "rain,none": 0.1, "dry,umbrella": 0.1, "dry,none": 0.5}},
        graph=("{subject, predicate}: the distribution over the objects of those facts, weighted by confidence; "
               "{target: predicate}: one example per subject with that predicate (its facts as attributes)."),
    ),
}  # fmt: skip

__all__ = ["DOCS", "MAX_CELLS", "MAX_OUTCOMES", "MAX_QUESTIONS", "InfoInput", "info_theory"]
