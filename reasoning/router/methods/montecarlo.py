"""Monte Carlo simulation: a formula over uncertain inputs, sampled with a seeded numpy generator.

Inputs::

    {"variables": {"demand": {"dist": "normal", "mean": 1000, "sd": 200},
                   "price": {"dist": "uniform", "low": 8, "high": 12},
                   "cost": {"dist": "triangular", "low": 5000, "mode": 6000, "high": 9000}},
     "formula": "demand * price - cost", "samples": 10000, "threshold": 0}

Distributions: normal (mean, sd), lognormal (mean, sd of the log), uniform (low, high), triangular
(low, mode, high), bernoulli (p), poisson (lam), constant (value). The formula may use numbers, the
variables, ``+ - * / ** %``, comparisons (true = 1), and ``min max abs sqrt exp log`` - it is parsed,
never ``eval``-ed. The value reports the mean with its 95% confidence interval (mean ± 1.96·s/√n), the
standard deviation, percentiles, and with ``threshold`` P(outcome > threshold) with its 95% Wilson interval.
"""

from __future__ import annotations

import ast
import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from kg.models import Model
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed, fail, validate
from reasoning.router.methods.docs import MethodDoc

METHOD = "monte-carlo"
MAX_SAMPLES = 1_000_000
MAX_DRAWS = 5_000_000
#: Syntax-tree levels one formula may nest; the largest Poisson mean (numpy refuses larger ones).
MAX_DEPTH, MAX_LAM = 100, 1e15
#: Characters of one formula.
MAX_FORMULA = 2000
Z95 = 1.959963984540054

_Number = Annotated[float, Field(allow_inf_nan=False)]


class Distribution(Model):
    """One uncertain input."""

    dist: Literal["normal", "lognormal", "uniform", "triangular", "bernoulli", "poisson", "constant"]
    mean: _Number = 0.0
    sd: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 1.0
    low: _Number = 0.0
    high: _Number = 1.0
    mode: _Number | None = None
    p: Annotated[float, Field(ge=0, le=1)] = 0.5
    lam: Annotated[float, Field(ge=0, le=MAX_LAM, allow_inf_nan=False)] = 1.0
    value: _Number = 0.0


class MonteCarloInput(Model):
    """Inputs of ``monte-carlo``."""

    variables: dict[Annotated[str, Field(pattern=r"^[A-Za-z_]\w{0,63}$")], Distribution] = Field(max_length=100)
    formula: Annotated[str, Field(min_length=1, max_length=MAX_FORMULA)]
    samples: int = Field(10_000, ge=100, le=MAX_SAMPLES)
    threshold: _Number | None = None


_FUNCS = {"min": np.minimum, "max": np.maximum, "abs": np.abs, "sqrt": np.sqrt, "exp": np.exp, "log": np.log}
_BIN = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide, ast.Pow: np.power,
        ast.Mod: np.mod}  # fmt: skip
_CMP = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater, ast.GtE: np.greater_equal, ast.Eq: np.equal,
        ast.NotEq: np.not_equal}  # fmt: skip


def depth(tree: ast.AST) -> int:
    """How deeply the syntax tree nests (counted without recursion)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((c, level + 1) for c in ast.iter_child_nodes(node) if not isinstance(c, ast.expr_context))
    return deepest


def evaluate(formula: str, env: dict[str, np.ndarray], method: str = METHOD) -> np.ndarray:
    """The formula evaluated element-wise over ``env`` (parsed with :mod:`ast`, only the allowed nodes).

    Raises:
        InputError: a syntax error, an unknown name or a construct that is not allowed.
    """
    try:
        tree = ast.parse(formula, mode="eval")
    except SyntaxError as exc:
        raise fail(method, "formula", f"is not a valid expression ({exc.msg})") from None
    except (RecursionError, MemoryError):
        raise fail(method, "formula", f"is nested too deeply (at most {MAX_DEPTH} levels)") from None
    if depth(tree) > MAX_DEPTH:
        raise fail(method, "formula", f"is nested too deeply (at most {MAX_DEPTH} levels)")

    def walk(node: ast.AST) -> Any:  # noqa: PLR0911 - one return per allowed kind of node
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise fail(method, "formula", f"unknown name {node.id!r} (not a variable)")
            return env[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            return _BIN[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = walk(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP:
            return _CMP[type(node.ops[0])](walk(node.left), walk(node.comparators[0])).astype(float)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS
                and not node.keywords and node.args):  # fmt: skip
            args = [walk(a) for a in node.args]
            if node.func.id in ("min", "max"):
                out = args[0]
                for arg in args[1:]:
                    out = _FUNCS[node.func.id](out, arg)
                return out
            return _FUNCS[node.func.id](*args)
        raise fail(method, "formula", f"{type(node).__name__} is not allowed (numbers, variables, + - * / ** %, "
                                      "comparisons, min max abs sqrt exp log)")  # fmt: skip

    with np.errstate(all="ignore"):
        return np.broadcast_to(np.asarray(walk(tree), dtype=float), (len(next(iter(env.values()))),)).copy()


def _sample(spec: Distribution, rng: np.random.Generator, n: int, name: str) -> np.ndarray:  # noqa: PLR0911
    d = spec.dist
    if d == "normal":
        return rng.normal(spec.mean, abs(spec.sd), n)  # abs: -0.0 passes ge=0, numpy refuses it
    if d == "lognormal":
        return rng.lognormal(spec.mean, abs(spec.sd), n)
    if d in ("uniform", "triangular") and spec.low > spec.high:
        raise fail(METHOD, f"variables.{name}.low", "must not exceed high")
    if d == "uniform":
        return rng.uniform(spec.low, spec.high, n)
    if d == "triangular":
        mode = (spec.low + spec.high) / 2 if spec.mode is None else spec.mode
        if not spec.low <= mode <= spec.high or spec.low == spec.high:
            raise fail(METHOD, f"variables.{name}.mode", "needs low <= mode <= high and low < high")
        return rng.triangular(spec.low, mode, spec.high, n)
    if d == "bernoulli":
        return (rng.random(n) < spec.p).astype(float)
    if d == "poisson":
        return rng.poisson(abs(spec.lam), n).astype(float)
    return np.full(n, spec.value)


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion."""
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))  # rounding never excludes p


def monte_carlo(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``monte-carlo``."""
    if "formula" not in inputs:
        raise MissingInputs(METHOD, "give inputs.monte-carlo.variables and formula")
    data = validate(MonteCarloInput, inputs, METHOD)
    if not data.variables:
        raise fail(METHOD, "variables", "needs at least one variable")
    n = data.samples
    if n * max(1, len(data.variables)) > MAX_DRAWS:
        raise fail(METHOD, "samples", f"samples x variables must be at most {MAX_DRAWS:,} (memory), "
                                      f"got {n * len(data.variables):,}")  # fmt: skip
    rng = ctx.rng()
    env = {name: _sample(spec, rng, n, name) for name, spec in sorted(data.variables.items())}
    out = evaluate(data.formula, env)
    finite = out[np.isfinite(out)]
    if finite.size == 0:
        raise fail(METHOD, "formula", "gives no finite value (division by zero or log of a negative?)")
    mean, sd = float(finite.mean()), float(finite.std(ddof=1)) if finite.size > 1 else 0.0
    half = Z95 * sd / math.sqrt(finite.size)
    pct = {f"p{q}": float(np.percentile(finite, q)) for q in (5, 25, 50, 75, 95)}
    value: dict[str, Any] = {"mean": mean, "sd": sd, "ci95": [mean - half, mean + half], "percentiles": pct,
                             "samples": n, "finite_samples": int(finite.size), "seed": ctx.seed}  # fmt: skip
    conclusion = f"mean {mean:.6g} (95% CI {mean - half:.6g} to {mean + half:.6g}) over {n} samples"
    # sampling precision: 1 - the 95% half-width in units of the outcome's spread (1 - 1.96/sqrt(n)); the scale of
    # the mean plays no part (a mean near 0 can be estimated precisely), and 100 samples never give more than 0.8
    confidence = (1.0 - min(1.0, half / sd) if sd > 0 else 1.0) * finite.size / n
    if data.threshold is not None:
        hits = int((finite > data.threshold).sum())
        low, high = wilson(hits, int(finite.size))
        value["p_above_threshold"] = hits / finite.size
        value["p_above_threshold_ci95"] = [low, high]
        conclusion += f"; P(outcome > {data.threshold:g}) = {hits / finite.size:.4f}"
    notes = [] if finite.size == n else [f"{n - finite.size} samples gave no finite value and were dropped"]
    return computed(METHOD, conclusion, confidence, value,
                    trace=[f"sampled {len(env)} variable(s) {n} times with seed {ctx.seed}",
                           f"evaluated {data.formula}", "summarised mean, sd, percentiles and 95% intervals"],
                    notes=notes)  # fmt: skip


DOCS = {
    METHOD: MethodDoc(
        confidence=("Sampling precision: 1 - (95% half-width of the mean / the outcome's standard deviation) = "
                    "1 - 1.96/√n, times the share of samples that gave a finite value (0.80 at 100 samples, 0.98 at "
                    "10,000). The scale of the mean plays no part; 1.0 only for an outcome with no spread."),
        bound=(f"At most {MAX_SAMPLES:,} samples and {MAX_DRAWS:,} draws (samples x variables); formulas of at "
               f"most {MAX_FORMULA:,} characters nesting at most {MAX_DEPTH} levels; Poisson means at most "
               f"{MAX_LAM:g}; past a bound a one-line error names the field."),
        inputs=MonteCarloInput,
        example={"variables": {"demand": {"dist": "normal", "mean": 1000, "sd": 200},
                               "price": {"dist": "uniform", "low": 8, "high": 12}},
                 "formula": "demand * price - 6000", "samples": 10000, "threshold": 0},
    ),
}  # fmt: skip

__all__ = ["DOCS", "MonteCarloInput", "evaluate", "monte_carlo", "wilson"]
