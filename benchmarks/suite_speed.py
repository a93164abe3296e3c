"""Benchmark (issue 16, "a faster suite"): the test suite of two plan07 trees, run one after the
other on the same machine with the same pytest options, compared as ratios.

    .venv/bin/python benchmarks/suite_speed.py --old OLD_TREE [--new .] [--workers 2]
        [--rounds 1] [--out benchmarks/results/suite-speed.md]

Each tree runs its own suite with its own interpreter (`TREE/.venv/bin/python -m pytest -n W
-q`), so the old tree needs a venv of its own (`python -m venv OLD/.venv`,
`OLD/.venv/bin/pip install -e 'OLD[test]'`, or the same pinned versions). With `--rounds N`
the runs alternate old, new, old, new, ... so a neighbour's load falls on both alike. Measured
per run: the wall time, the CPU time of the whole process tree (user + sys of pytest, its xdist
workers and every check they spawn: `RUSAGE_CHILDREN`), the tests passed / failed / skipped,
and the load average before and after. Reported: per-test wall and CPU of each tree, and the
old / new ratios (above 1: the new suite is faster). CPU time is the fairer figure on a shared
machine (a busy neighbour stretches wall time far more than CPU time).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _head(tree: Path) -> str:
    proc = subprocess.run(["git", "-C", str(tree), "log", "-1", "--format=%h %s"],
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip()[:90]


def run_suite(tree: Path, workers: int, timeout: float) -> dict[str, Any]:
    python = tree / ".venv" / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"error: {python} not found; give each tree a venv of its own")
    argv = [str(python), "-m", "pytest", "-n", str(workers), "-q"]
    load0 = os.getloadavg()[0]
    cpu0, t0 = _children_cpu(), time.monotonic()
    proc = subprocess.run(argv, cwd=tree, capture_output=True, text=True, check=False,
                          timeout=timeout)
    wall, cpu = time.monotonic() - t0, _children_cpu() - cpu0
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    counts = {k.rstrip("s"): int(n) for n, k in SUMMARY.findall(last)}
    return {"tree": str(tree), "head": _head(tree), "rc": proc.returncode, "wall_s": wall,
            "cpu_s": cpu, "counts": counts, "summary": last, "load_before": load0,
            "load_after": os.getloadavg()[0]}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, required=True, help="the older plan07 tree")
    ap.add_argument("--new", type=Path, default=Path(), help="the newer tree (default: .)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per suite run")
    ap.add_argument("--out", type=Path, default=None, help="write the report (markdown) here")
    args = ap.parse_args(argv)
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    for _ in range(args.rounds):
        for name in ("old", "new"):
            r = run_suite(getattr(args, name).resolve(), args.workers, args.timeout)
            runs[name].append(r)
            print(f"{name}: {r['summary']} | wall {r['wall_s']:.0f} s, CPU {r['cpu_s']:.0f} s, "
                  f"load {r['load_before']:.1f} -> {r['load_after']:.1f}", flush=True)
    per: dict[str, dict[str, float]] = {}
    for name, rs in runs.items():
        n = statistics.median(r["counts"].get("passed", 0) + r["counts"].get("failed", 0)
                              for r in rs)
        per[name] = {"tests": n, "wall_s": statistics.median(r["wall_s"] for r in rs),
                     "cpu_s": statistics.median(r["cpu_s"] for r in rs)}
        per[name]["wall_per_test_ms"] = per[name]["wall_s"] / max(n, 1) * 1e3
        per[name]["cpu_per_test_ms"] = per[name]["cpu_s"] / max(n, 1) * 1e3
    o, w = per["old"], per["new"]
    lines = [
        "# Suite speed: old tree vs new tree, same machine, same options",
        "",
        f"Command: `{' '.join(['benchmarks/suite_speed.py', *argv])}`; each suite: "
        f"`TREE/.venv/bin/python -m pytest -n {args.workers} -q`, "
        f"{args.rounds} round(s), old then new.",
        "",
        "| run | tree | result | wall s | CPU s | load before -> after |",
        "|---|---|---|---|---|---|",
    ]
    for name, rs in runs.items():
        for r in rs:
            lines.append(f"| {name} | {r['head']} | {r['summary']} | {r['wall_s']:.0f} | "
                         f"{r['cpu_s']:.0f} | {r['load_before']:.1f} -> {r['load_after']:.1f} |")
    lines += [
        "",
        "| | tests | wall s | CPU s | wall ms / test | CPU ms / test |",
        "|---|---|---|---|---|---|",
        *(f"| {k} | {v['tests']:.0f} | {v['wall_s']:.0f} | {v['cpu_s']:.0f} | "
          f"{v['wall_per_test_ms']:.0f} | {v['cpu_per_test_ms']:.0f} |" for k, v in per.items()),
        "",
        f"old / new: whole suite wall {o['wall_s'] / w['wall_s']:.2f}x, CPU "
        f"{o['cpu_s'] / w['cpu_s']:.2f}x; per test wall "
        f"{o['wall_per_test_ms'] / w['wall_per_test_ms']:.2f}x, CPU "
        f"{o['cpu_per_test_ms'] / w['cpu_per_test_ms']:.2f}x (above 1: the new suite is faster).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, "utf-8")
    bad = [r for rs in runs.values() for r in rs if r["rc"] != 0]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
