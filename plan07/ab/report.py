"""Write the A/B report: results.json (every number, every task), report.md (tables) and a PNG
chart of retry tokens and temporal consistency per strategy with error bars. I/O (files)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

LABELS = {"retry_tokens": "retry tokens / task", "consistency": "temporal consistency",
          "resolve_rate": "resolve rate", "tokens": "tokens / task", "cost": "$ / task"}


def _fmt(m: str, s: dict[str, float], std: bool = True) -> str:
    digits = 3 if m in ("consistency", "resolve_rate") else 6 if m == "cost" else 1
    out = f"{s['mean']:.{digits}f}"
    return f"{out} ± {s['std']:.{digits}f}" if std else out


def _table(agg: dict[str, Any], std: bool = True) -> list[str]:
    cols = list(LABELS)
    out = ["| strategy | " + " | ".join(LABELS[c] for c in cols) + " |",
           "|---|" + "---|" * len(cols)]
    for s, ms in agg.items():
        out.append(f"| {s} | " + " | ".join(_fmt(c, ms[c], std) for c in cols) + " |")
    return out


def _pct(x: float) -> str:
    return "n/a" if math.isinf(x) or math.isnan(x) else f"{x * 100:+.1f} %"


def _pct_ci(v: list[float] | None) -> str:
    if not v or any(math.isnan(x) or math.isinf(x) for x in v):
        return ""
    return f"[{v[0] * 100:+.1f}, {v[1] * 100:+.1f}]"


def _ci(v: list[float] | None, digits: int = 3) -> str:
    if not v or any(math.isnan(x) for x in v):
        return "n/a"
    return f"[{v[0]:.{digits}f}, {v[1]:.{digits}f}]"


def _beside(res: dict[str, Any]) -> list[str]:
    """Retry tokens and tokens per task under the tokenizer reported beside the selected one."""
    rows = res["rows"]
    if not rows or any(r.get("alt_tokens") is None for r in rows):
        return []
    out = [f"Under {res.get('tokenizer_beside', 'the other tokenizer')} (beside): "]
    parts = []
    for s in res["aggregate"]:
        mine = [r for r in rows if r["strategy"] == s]
        parts.append(f"{s} {sum(r['alt_retry_tokens'] for r in mine) / len(mine):.1f} retry / "
                     f"{sum(r['alt_tokens'] for r in mine) / len(mine):.1f} tokens per task")
    return [out[0] + "; ".join(parts) + ".", ""]


def _unresolved_notes(res: dict[str, Any]) -> list[str]:
    bad = [r for r in res["rows"] if r.get("note")]
    if not bad:
        return []
    out = [f"{len(bad)} unit(s) refused or crashed (counted unresolved, with the tokens they "
           "spent):"]
    out += [f"- {r['strategy']} {r['task_id']} run {r['run']}: {r['note'][:160]}"
            for r in bad[:12]]
    return [*out, ""]


def _retried_notes(res: dict[str, Any]) -> list[str]:
    """Units a Ray run (`--ray`) ran more than once (a worker died) or lost: never dropped."""
    notes = res.get("retried", [])
    if not notes:
        return []
    out = [f"{len(notes)} unit(s) did not run exactly once on Ray (each row is still in the "
           "results; a lost unit counts unresolved):"]
    out += [f"- {n['strategy']} {n['task_id']} run {n['run']}: "
            + (f"{n['attempts']} attempts, " if n.get("attempts") else "") + n["outcome"][:160]
            for n in notes[:12]]
    return [*out, ""]


def _split(res: dict[str, Any]) -> list[str]:
    """Where each strategy's retry tokens went: re-executed edits vs re-planning calls."""
    out = []
    for s in res["aggregate"]:
        rows = [r for r in res["rows"] if r["strategy"] == s]
        total = sum(r["retry_tokens"] for r in rows)
        plan = sum(r.get("retry_plan_tokens", 0) for r in rows)
        if total:
            out.append(f"- {s}: {total / len(rows):.1f} retry tokens / task = "
                       f"{(total - plan) / len(rows):.1f} re-executing obligations + "
                       f"{plan / len(rows):.1f} re-planning calls; "
                       f"{sum(r['retry_calls'] for r in rows)} retry calls in all.")
    return [*out, ""] if out else []


_SHORT = {"retry_tokens": "retry", "consistency": "consistency", "resolve_rate": "resolve",
          "tokens": "tokens", "cost": "cost"}


def _word(v: dict[str, Any]) -> str:
    """`keep (retry +19 %, consistency −5 %)`: the verdict and the moves that decided it."""
    word = str(v["verdict"]).split(" ", 1)[0]
    moved = [*v.get("worse", []), *v.get("better", [])]
    return word + (" (" + ", ".join(f"{_SHORT[m]} {_pct(v['deltas'][m])}" for m in moved)
                   + ")" if moved else "")


def _per_seed(res: dict[str, Any]) -> list[str]:
    """The ablation verdicts of each seeded run alone, and whether they agree (stable)."""
    from plan07.ab.metrics import per_run_ablation

    a, c = res["ablation"], res["config"]
    if c["runs"] < 2:
        return []
    pre = "ablation/"
    rows = [dict(r, strategy=r["strategy"].removeprefix(pre)) for r in res["rows"]
            if r["task_index"] < a["tasks"] and r["strategy"].startswith(pre)]
    per = per_run_ablation(rows, price=tuple(c["price"]), seed=c["seed"])
    pooled = {v["mechanism"]: v["verdict"].split(" ", 1)[0] for v in a["verdicts"]}
    lines = ["Per seeded run alone (the same rule, the interval over that run's tasks; in "
             "brackets the metrics that moved). Stable iff every run alone gives the verdict "
             "of all runs together:", "", "| mechanism removed | " + " | ".join(
                 f"run {k}" for k in range(c["runs"])) + " | stable across seeds |",
             "|---|" + "---|" * c["runs"] + "---|"]
    for mech, vs in per.items():
        words = {v["verdict"].split(" ", 1)[0] for v in vs}
        ok = words == {pooled.get(mech)}
        lines.append(f"| {mech} | " + " | ".join(_word(v) for v in vs) + " | " +
                     ("yes" if ok else f"NO (all runs: {pooled.get(mech)})") + " |")
    return [*lines, ""]


def _n_tasks(res: dict[str, Any]) -> str:
    main = res["config"].get("main_tasks")
    n = len(res["tasks"])
    return f"{n} tasks" if main is None or main >= n else \
        f"{main} tasks ({n} for the ablation)"


def markdown(res: dict[str, Any], command: str) -> str:
    c = res["config"]
    lines = [
        "# plan07 A/B (spec §7)", "",
        f"Command: `{command}`", "",
        f"{_n_tasks(res)}, {c['runs']} run(s), seed {c['seed']}, executor "
        f"`{c['executor']}`, retry bound {c['bound']}, faults "
        + (f"p_first={c['faults']['p_first']}, p_again={c['faults']['p_again']}"
           if c["faults"]["enabled"] else "off")
        + f"; tokens: {res['tokenizer']}; price ${c['price'][0]}/${c['price'][1]} per 1M "
        "in/out tokens. "
        + ("Mean ± std over runs." if c["runs"] > 1 else "One run: means, no std."), "",
        "## Metrics", "", *_table(res["aggregate"], c["runs"] > 1), "",
        *_split(res), *_beside(res), *_unresolved_notes(res), *_retried_notes(res)]
    if "decision" in res:
        d = res["decision"]
        lines += ["## Decision (§7.4)", "",
                  f"**plan07 {'WINS' if d['wins'] else 'does NOT win'}** (every clause must pass).",
                  "", "| clause | plan07 | against | result |", "|---|---|---|---|"]
        for cl in d["clauses"]:
            lines.append(f"| {cl['clause']} | {cl['value']:.4g} | {cl['against']} | "
                         f"{'pass' if cl['pass'] else 'FAIL'} |")
        r = d["ratios"]
        ci = d.get("intervals", {})
        lines += ["", "| ratio (plan07 / baseline) | value | 95 % interval (paired bootstrap "
                  "over tasks) |", "|---|---|---|"]
        lines += [f"| {k} | {'n/a' if v is None else f'{v:.3f}'} | {_ci(ci.get(k))} |"
                  for k, v in r.items()]
        lines.append("")
    if "ablation" in res:
        a = res["ablation"]
        lines += [f"## Ablation (§7.5), on the first {a['tasks']} tasks, executor "
                  f"`{a.get('executor', c['executor'])}`", "",
                  *_table(a["aggregate"], c["runs"] > 1), "",
                  "Each cell: Δ = (variant − full) / full over the same (task, run) units and "
                  "its 95 % paired-bootstrap interval (the noise, measured from the units). A "
                  "metric moves iff its interval excludes 0 and |Δ| > the §7.5 threshold (5 % "
                  "where continuous; resolve: any Δ). keep iff removing it worsens a metric, "
                  "remove iff it worsens none and improves one, delete iff none moves.", "",
                  "| mechanism removed | Δ retry | Δ consistency | Δ resolve | Δ tokens | "
                  "Δ cost | verdict |", "|---|---|---|---|---|---|---|"]
        ms = ("retry_tokens", "consistency", "resolve_rate", "tokens", "cost")
        for v in a["verdicts"]:
            dl, cis = v["deltas"], v.get("intervals", {})
            cells = [f"{_pct(dl[m])} {_pct_ci(cis.get(m))}" for m in ms]
            lines.append(f"| {v['mechanism']} | " + " | ".join(cells) + f" | {v['verdict']} |")
        lines.append("")
        lines += _per_seed(res)
    lines += ["## Tasks", "", "| shape | tasks | obligations (min-max) |", "|---|---|---|"]
    shapes: dict[str, list[int]] = {}
    for t in res["tasks"]:
        shapes.setdefault(t["shape"].split("+")[0] + ("+…" if "+" in t["shape"] else ""),
                          []).append(t["obligations"])
    for s, ns in sorted(shapes.items()):
        lines.append(f"| {s} | {len(ns)} | {min(ns)}-{max(ns)} |")
    return "\n".join(lines) + "\n"


def chart(res: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agg = res["aggregate"]
    names = list(agg)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for ax, m in zip(axes, ("retry_tokens", "consistency"), strict=True):
        errs = [agg[s][m]["std"] for s in names] if res["config"]["runs"] > 1 else None
        ax.bar(names, [agg[s][m]["mean"] for s in names], yerr=errs, capsize=6,
               color=["#999999", "#c58b3c", "#3c7fc5"][: len(names)])
        ax.set_title(LABELS[m])
        if m == "consistency":
            ax.set_ylim(0, 1.05)
    fig.suptitle(f"plan07 A/B: {_n_tasks(res)}, {res['config']['runs']} run(s)")
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)


def write(res: dict[str, Any], out: Path, command: str) -> list[Path]:
    """Write results.json, report.md and retry_consistency.png under `out` (all or nothing:
    each is written to a temporary name first, then renamed)."""
    out.mkdir(parents=True, exist_ok=True)
    files = {out / "results.json": json.dumps(res, indent=1, sort_keys=True, default=str) + "\n",
             out / "report.md": markdown(res, command)}
    tmp_png = out / ".retry_consistency.png.tmp"
    chart(res, tmp_png)
    for p, text in files.items():
        tmp = p.with_name(f".{p.name}.tmp")
        tmp.write_text(text, "utf-8")
        tmp.replace(p)
    png = out / "retry_consistency.png"
    tmp_png.replace(png)
    return [*files, png]
