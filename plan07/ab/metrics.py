"""The §7 metrics, defined once for every strategy, their aggregation over seeded runs, the §7.4
decision and the §7.5 ablation verdicts. Pure.

Per task (plan07.ab.run.RunResult): retry tokens (see plan07.ab.run), temporal-consistency
states, resolved, tokens, cost. Per run and strategy: retry tokens per task (mean over tasks),
temporal-consistency rate (valid states / executed states, pooled over the run's tasks), resolve
rate (resolved / tasks), tokens per task, cost per task ($, from the price table). Over R runs:
mean and sample std of those per-run values (std 0 when R = 1).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

METRICS = ("retry_tokens", "consistency", "resolve_rate", "tokens", "cost")
# (input $/1M tokens, output $/1M tokens). An assumption the user can override (--price):
# DeepSeek's published chat prices, the spec's weak model family.
DEFAULT_PRICE = (0.27, 1.10)
ABLATION_ORDER = ("revision", "externalized_plan", "typed_artifacts", "ordering", "gate")
NOISE = 0.05  # §7.5: |Δ| <= 5 % is noise


@dataclass(frozen=True)
class Stat:
    mean: float
    std: float

    def to_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "std": self.std}


def cost_of(r: dict[str, Any], price: tuple[float, float]) -> float:
    pin, pout = price
    prompt = r["prompt_tokens"] + r["plan_prompt_tokens"]
    completion = r["completion_tokens"] + r["plan_completion_tokens"]
    return float(prompt * pin + completion * pout) / 1e6


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
        out[m] = Stat(statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0)
    return out


def aggregate(rows: Sequence[dict[str, Any]], price: tuple[float, float]
              ) -> dict[str, dict[str, Stat]]:
    """rows (each with "strategy", "run") -> strategy -> metric -> mean ± std over runs."""
    by: dict[str, dict[int, list[dict[str, Any]]]] = {}
    for r in rows:
        by.setdefault(r["strategy"], {}).setdefault(r["run"], []).append(r)
    return {s: over_runs([per_run(v, price) for _, v in sorted(runs.items())])
            for s, runs in sorted(by.items())}


def decision(agg: dict[str, dict[str, Stat]], candidate: str = "plan07",
             current: str = "monolithic", static: str = "static") -> dict[str, Any]:
    """§7.4 exactly as written; `current` is the edit-without-planning path (monolithic)."""
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
    return {"wins": all(x["pass"] for x in clauses), "clauses": clauses,
            "ratios": ratios(agg, candidate, current, static)}


def ratios(agg: dict[str, dict[str, Stat]], candidate: str, current: str, static: str
           ) -> dict[str, float | None]:
    def div(a: float, b: float) -> float | None:
        return a / b if b else None

    c = agg[candidate]
    return {
        "retry_vs_monolithic": div(c["retry_tokens"].mean, agg[current]["retry_tokens"].mean),
        "retry_vs_static": div(c["retry_tokens"].mean, agg[static]["retry_tokens"].mean),
        "tokens_vs_monolithic": div(c["tokens"].mean, agg[current]["tokens"].mean),
        "cost_vs_monolithic": div(c["cost"].mean, agg[current]["cost"].mean),
    }


def rel_delta(variant: float, full: float) -> float:
    """(variant - full) / |full|; 0 when both are 0, +-inf when only full is 0."""
    if full == 0:
        return 0.0 if variant == 0 else (float("inf") if variant > 0 else float("-inf"))
    return (variant - full) / abs(full)


def ablation(agg: dict[str, dict[str, Stat]], full: str = "plan07") -> list[dict[str, Any]]:
    """§7.5: each mechanism removed in isolation vs the full plan07 on the same tasks and runs.
    delete iff no honest metric moves beyond noise (|Δ| <= 5 %); a removal that lowers retry
    tokens and does not lower temporal consistency shows the mechanism is a harm (remove)."""
    out = []
    for mech in ABLATION_ORDER:
        name = f"{full}-no_{mech}"
        if name not in agg:
            continue
        deltas = {m: rel_delta(agg[name][m].mean, agg[full][m].mean) for m in METRICS}
        moved = [m for m, d in deltas.items() if abs(d) > NOISE]
        harm = (deltas["retry_tokens"] < -NOISE and deltas["consistency"] >= 0
                and deltas["resolve_rate"] >= 0)
        verdict = "delete (no metric moves beyond 5 %)" if not moved else \
            "remove (its removal improves the honest metrics: a demonstrated harm)" if harm \
            else "keep (" + ", ".join(moved) + " move)"
        out.append({"mechanism": mech, "variant": name, "deltas": deltas, "verdict": verdict,
                    "keep": bool(moved) and not harm})
    return out
