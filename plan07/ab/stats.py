"""Intervals for the §7 numbers: a paired bootstrap over tasks (95 % percentile intervals) for
every ratio of the decision and every Δ of the ablation, and the §7.5 thresholds. Pure (seeded;
the same rows give the same intervals).

Paired: one resample draws task indexes with replacement and every strategy is scored on the
same draw, in every run (run r keeps its own fault seed), so a ratio's interval reflects which
tasks were drawn, not a strategy-private luck. A metric is recomputed on the draw exactly as
plan07.ab.metrics.per_run defines it (consistency pooled over states, the rest per task),
then averaged over runs. An ablation Δ is paired the same way: the variant and the full plan07
ran each (task, run) on the same seeded fault plan and slip draws, so the interval measures
how Δ varies over the units, not how the full plan07 varies from one seed to the next (which
every variant shares).
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Sequence
from typing import Any

METRICS = ("retry_tokens", "consistency", "resolve_rate", "tokens", "cost")


def cost_of(r: dict[str, Any], price: tuple[float, float]) -> float:
    pin, pout = price
    prompt = r["prompt_tokens"] + r["plan_prompt_tokens"]
    completion = r["completion_tokens"] + r["plan_completion_tokens"]
    return float(prompt * pin + completion * pout) / 1e6


RESAMPLES = 2000
LEVEL = 0.95
# §7.5: "Δ = 0, or |Δ| <= 5 % where continuous" is no change. Resolve is a count of tasks (any
# Δ counts); the other four metrics are continuous. Beyond that threshold, the noise is
# measured: a Δ whose paired-bootstrap interval covers 0 is noise (plan07.ab.metrics).
THRESHOLD = {"retry_tokens": 0.05, "consistency": 0.05, "resolve_rate": 0.0, "tokens": 0.05,
             "cost": 0.05}

Cell = tuple[float, int, int, float, float, float]  # retry, ok states, states, resolved, tok, $


def cells(rows: Sequence[dict[str, Any]], price: tuple[float, float]
          ) -> dict[str, dict[int, dict[int, Cell]]]:
    """strategy -> run -> task index -> the per-task numbers every metric is made of."""
    out: dict[str, dict[int, dict[int, Cell]]] = {}
    for r in rows:
        steps = r["steps"]
        out.setdefault(r["strategy"], {}).setdefault(r["run"], {})[r["task_index"]] = (
            float(r["retry_tokens"]), sum(bool(s) for s in steps), len(steps),
            float(bool(r["resolved"])), float(r["tokens"]), cost_of(r, price))
    return out


def _metric(cs: Sequence[Cell], m: str) -> float:
    if m == "consistency":
        n = sum(c[2] for c in cs)
        return sum(c[1] for c in cs) / n if n else 1.0
    k = {"retry_tokens": 0, "resolve_rate": 3, "tokens": 4, "cost": 5}[m]
    return sum(c[k] for c in cs) / len(cs)


def metric_on(table: dict[int, dict[int, Cell]], draw: Sequence[int], m: str) -> float:
    """Mean over runs of metric `m` on the tasks `draw` (indexes, repeats allowed)."""
    vals = [_metric([run[i] for i in draw if i in run], m) for run in table.values()
            if any(i in run for i in draw)]
    return statistics.fmean(vals) if vals else math.nan


def _tasks(tables: Sequence[dict[int, dict[int, Cell]]]) -> list[int]:
    """Task indexes every table has in every run (a paired draw needs all of them)."""
    common: set[int] | None = None
    for t in tables:
        for run in t.values():
            common = set(run) if common is None else common & set(run)
    return sorted(common or ())


def interval(stat: Callable[[Sequence[int]], float], tasks: Sequence[int], *,
             resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, float]:
    """The 95 % percentile interval of `stat` over task-index resamples."""
    if not tasks:
        return (math.nan, math.nan)
    rng = random.Random(f"ab-bootstrap:{seed}")
    vals = sorted(v for v in (stat(rng.choices(tasks, k=len(tasks))) for _ in range(resamples))
                  if not math.isnan(v))
    if not vals:
        return (math.nan, math.nan)
    lo = vals[int((1 - LEVEL) / 2 * (len(vals) - 1))]
    hi = vals[int((1 + LEVEL) / 2 * (len(vals) - 1))]
    return (lo, hi)


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def ratio_intervals(c: dict[str, dict[int, dict[int, Cell]]],
                    pairs: dict[str, tuple[str, str, str]], *, seed: int = 0,
                    resamples: int = RESAMPLES
                    ) -> dict[str, tuple[float, float]]:
    """name -> (lo, hi) of metric(num) / metric(den), for name -> (num, den, metric)."""
    out = {}
    for name, (num, den, m) in pairs.items():
        if num not in c or den not in c:
            continue
        tasks = _tasks([c[num], c[den]])
        def stat(d: Sequence[int], num: str = num, den: str = den, m: str = m) -> float:
            return _ratio(metric_on(c[num], d, m), metric_on(c[den], d, m))

        out[name] = interval(stat, tasks, seed=seed, resamples=resamples)
    return out


def delta_interval(c: dict[str, dict[int, dict[int, Cell]]], variant: str, full: str, m: str,
                   *, seed: int = 0, resamples: int = RESAMPLES) -> tuple[float, float]:
    """(lo, hi) of the relative Δ = (variant - full) / |full| on paired task draws."""
    def rel(d: Sequence[int]) -> float:
        f = metric_on(c[full], d, m)
        v = metric_on(c[variant], d, m)
        return 0.0 if f == v else (v - f) / abs(f) if f else math.nan

    return interval(rel, _tasks([c[variant], c[full]]), seed=seed, resamples=resamples)


__all__ = ["METRICS", "cells", "delta_interval", "interval", "metric_on", "ratio_intervals"]
