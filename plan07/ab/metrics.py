"""The §7 metrics, defined once for every strategy, their aggregation over seeded runs, the §7.4
decision and the §7.5 ablation verdicts. Pure.

Per task (plan07.ab.run.RunResult): retry tokens (see plan07.ab.run), temporal-consistency
states, resolved, tokens, cost. Per run and strategy: retry tokens per task (mean over tasks),
temporal-consistency rate (valid states / executed states, pooled over the run's tasks), resolve
rate (resolved / tasks), tokens per task, cost per task ($, from the price table). Over R runs:
mean and sample std of those per-run values (std 0 when R = 1). Intervals (plan07.ab.stats): a
paired bootstrap over tasks for every ratio and every ablation Δ; an ablation Δ is noise when its
paired interval covers 0 or it is within §7.5's 5 % (continuous metrics).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plan07.ab.stats import METRICS, cost_of  # one home: the bootstrap reads them too

# (input $/1M tokens, output $/1M tokens). An assumption the user can override (--price):
# DeepSeek's published chat prices, the spec's weak model family.
DEFAULT_PRICE = (0.27, 1.10)
ABLATION_ORDER = ("revision", "externalized_plan", "typed_artifacts", "ordering", "gate")


@dataclass(frozen=True)
class Stat:
    mean: float
    std: float
    runs: tuple[float, ...] = ()  # the per-run values the mean and std are over

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "std": self.std, "runs": list(self.runs)}


def per_run(rows: Sequence[dict[str, Any]], price: tuple[float, float]) -> dict[str, float]:
    """One run of one strategy over its tasks -> the five metrics."""
    n = len(rows)
    states = [ok for r in rows for ok in r["steps"]]
    return {
        "retry_tokens": sum(r["retry_tokens"] for r in rows) / n,
        "consistency": sum(states) / len(states) if states else 1.0,
        "resolve_rate": sum(r["resolved"] for r in rows) / n,
        "tokens": sum(r["tokens"] for r in rows) / n,
        "cost": sum(cost_of(r, price) for r in rows) / n,
    }


def over_runs(values: Sequence[dict[str, float]]) -> dict[str, Stat]:
    out = {}
    for m in METRICS:
        xs = [v[m] for v in values]
        out[m] = Stat(statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0,
                      tuple(xs))
    return out


def aggregate(rows: Sequence[dict[str, Any]], price: tuple[float, float]
              ) -> dict[str, dict[str, Stat]]:
    """rows (each with "strategy", "run") -> strategy -> metric -> mean ± std over runs."""
    by: dict[str, dict[int, list[dict[str, Any]]]] = {}
    for r in rows:
        by.setdefault(r["strategy"], {}).setdefault(r["run"], []).append(r)
    return {s: over_runs([per_run(v, price) for _, v in sorted(runs.items())])
            for s, runs in sorted(by.items())}


RATIOS = {"retry_vs_monolithic": ("retry_tokens", "current"),
          "retry_vs_static": ("retry_tokens", "static"),
          "consistency_vs_monolithic": ("consistency", "current"),
          "consistency_vs_static": ("consistency", "static"),
          "resolve_vs_monolithic": ("resolve_rate", "current"),
          "tokens_vs_monolithic": ("tokens", "current"),
          "cost_vs_monolithic": ("cost", "current")}


def decision(agg: dict[str, dict[str, Stat]], candidate: str = "plan07",
             current: str = "monolithic", static: str = "static", *,
             rows: Sequence[dict[str, Any]] | None = None,
             price: tuple[float, float] = DEFAULT_PRICE, seed: int = 0) -> dict[str, Any]:
    """§7.4 exactly as written (on the means); `current` is the edit-without-planning path
    (monolithic). With `rows`, every ratio also gets its paired-bootstrap 95 % interval."""
    c, cur, st = agg[candidate], agg[current], agg[static]

    def clause(name: str, ok: bool, left: float, right: str) -> dict[str, Any]:
        return {"clause": name, "pass": bool(ok), "value": left, "against": right}

    clauses = [
        clause("retry tokens strictly below monolithic", c["retry_tokens"].mean
               < cur["retry_tokens"].mean, c["retry_tokens"].mean,
               f"{cur['retry_tokens'].mean:.1f}"),
        clause("retry tokens strictly below static decomposition", c["retry_tokens"].mean
               < st["retry_tokens"].mean, c["retry_tokens"].mean,
               f"{st['retry_tokens'].mean:.1f}"),
        clause("temporal consistency strictly improves (vs both)",
               c["consistency"].mean > max(cur["consistency"].mean, st["consistency"].mean),
               c["consistency"].mean,
               f"{cur['consistency'].mean:.3f} / {st['consistency'].mean:.3f}"),
        clause("resolve >= current", c["resolve_rate"].mean >= cur["resolve_rate"].mean,
               c["resolve_rate"].mean, f"{cur['resolve_rate'].mean:.3f}"),
        clause("cost <= 1.5 x current", c["cost"].mean <= 1.5 * cur["cost"].mean,
               c["cost"].mean, f"1.5 x {cur['cost'].mean:.6f}"),
        clause("tokens <= 1.5 x current", c["tokens"].mean <= 1.5 * cur["tokens"].mean,
               c["tokens"].mean, f"1.5 x {cur['tokens'].mean:.1f}"),
    ]
    out: dict[str, Any] = {"wins": all(x["pass"] for x in clauses), "clauses": clauses,
                           "ratios": ratios(agg, candidate, current, static)}
    if rows is not None:
        from plan07.ab import stats

        names = {"current": current, "static": static}
        pairs = {k: (candidate, names[who], m) for k, (m, who) in RATIOS.items()}
        out["intervals"] = {k: list(v) for k, v in stats.ratio_intervals(
            stats.cells(rows, price), pairs, seed=seed).items()}
    return out


def ratios(agg: dict[str, dict[str, Stat]], candidate: str, current: str, static: str
           ) -> dict[str, float | None]:
    def div(a: float, b: float) -> float | None:
        return a / b if b else None

    c = agg[candidate]
    names = {"current": current, "static": static}
    return {k: div(c[m].mean, agg[names[who]][m].mean) for k, (m, who) in RATIOS.items()}


def rel_delta(variant: float, full: float) -> float:
    """(variant - full) / |full|; 0 when both are 0, +-inf when only full is 0."""
    if full == 0:
        return 0.0 if variant == 0 else (float("inf") if variant > 0 else float("-inf"))
    return (variant - full) / abs(full)


# which way each metric gets worse (+1: up is worse)
WORSE = {"retry_tokens": 1, "consistency": -1, "resolve_rate": -1, "tokens": 1, "cost": 1}


def _moves(d: float, threshold: float, ci: Sequence[float] | None) -> bool:
    """Δ `d` is a move: beyond the §7.5 threshold and, when its interval is known, the paired
    interval excludes 0 (a Δ the units' own spread could give by chance is noise)."""
    if abs(d) <= threshold:
        return False
    lo, hi = ci if ci else (d, d)
    return math.isnan(lo) or not lo <= 0 <= hi


def ablation(agg: dict[str, dict[str, Stat]], full: str = "plan07", *,
             rows: Sequence[dict[str, Any]] | None = None,
             price: tuple[float, float] = DEFAULT_PRICE, seed: int = 0) -> list[dict[str, Any]]:
    """§7.5: each mechanism removed in isolation vs the full plan07 on the same tasks and runs.
    Δ = (variant - full) / |full| of the metric's mean over the units. A metric *moves* iff
    |Δ| exceeds the §7.5 threshold (5 % where continuous, 0 for resolve) and, given `rows`, the
    paired-bootstrap 95 % interval of Δ excludes 0. keep iff a removal makes some metric worse;
    remove iff it makes none worse and some better (the mechanism is a demonstrated harm);
    delete iff no metric moves."""
    from plan07.ab import stats

    c = stats.cells(rows, price) if rows is not None else None
    out = []
    for mech in ABLATION_ORDER:
        name = f"{full}-no_{mech}"
        if name not in agg:
            continue
        deltas = {m: rel_delta(agg[name][m].mean, agg[full][m].mean) for m in METRICS}
        cis = ({m: list(stats.delta_interval(c, name, full, m, seed=seed)) for m in METRICS}
               if c is not None and name in c and full in c else {})
        moved = [m for m in METRICS if _moves(deltas[m], stats.THRESHOLD[m], cis.get(m))]
        worse = [m for m in moved if deltas[m] * WORSE[m] > 0]
        better = [m for m in moved if m not in worse]
        verdict = ("keep (removing it worsens " + ", ".join(worse) + ")" if worse else
                   "remove (removing it improves " + ", ".join(better) + ": a demonstrated "
                   "harm)" if better else "delete (no metric moves beyond noise)")
        out.append({"mechanism": mech, "variant": name, "deltas": deltas,
                    "thresholds": dict(stats.THRESHOLD), "intervals": cis, "verdict": verdict,
                    "worse": worse, "better": better, "keep": bool(worse)})
    return out


def per_run_ablation(rows: Sequence[dict[str, Any]], full: str = "plan07", *,
                     price: tuple[float, float] = DEFAULT_PRICE, seed: int = 0
                     ) -> dict[str, list[dict[str, Any]]]:
    """The §7.5 ablation of each seeded run alone (rows: the ablation units, `strategy`
    without the ablation prefix): mechanism -> its `ablation` entry per run, in run order (the
    same rule; the interval over that run's tasks only)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for run in sorted({r["run"] for r in rows}):
        mine = [r for r in rows if r["run"] == run]
        for v in ablation(aggregate(mine, price), full, rows=mine, price=price, seed=seed):
            out.setdefault(v["mechanism"], []).append(v)
    return out


def per_run_verdicts(rows: Sequence[dict[str, Any]], full: str = "plan07", *,
                     price: tuple[float, float] = DEFAULT_PRICE, seed: int = 0
                     ) -> dict[str, list[str]]:
    """mechanism -> the verdict word (keep / delete / remove) of each seeded run alone
    (`per_run_ablation`). A verdict is stable across seeds iff every run alone gives the
    verdict of all runs together (`ablation` on every row)."""
    return {m: [v["verdict"].split(" ", 1)[0] for v in vs]
            for m, vs in per_run_ablation(rows, full, price=price, seed=seed).items()}
