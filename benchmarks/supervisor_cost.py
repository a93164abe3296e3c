"""Benchmark: what a check's supervisor costs (docs/safety.md "A check ends with its processes").

The same test command, interleaved, run by plan07's runner under its supervisor
(plan07.gate.runner.run_argv) and as plan07's direct child (plan07.gate.supervised.run_direct, the
fallback where no supervisor runs); wall time and CPU of the children (RUSAGE_CHILDREN) per
run, medians and their ratio.

    .venv/bin/python benchmarks/supervisor_cost.py --repo /path/to/repo \\
        --python /path/to/venv/bin/python --test tests/test_x.py --runs 9 [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path


def one(fn: object) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    fn()  # type: ignore[operator]
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    from plan07.gate import supervised
    from plan07.gate.runner import drain_fd, run_argv
    from plan07.sandbox import check_env

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    env = {**check_env(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": os.environ.get(
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "")}
    env = {k: v for k, v in env.items() if v}
    lines = ["# A check's supervisor: its cost", "",
             f"{args.runs} runs each, interleaved; Python {sys.version.split()[0]}, load "
             f"average {os.getloadavg()[0]:.1f}. Command: `.venv/bin/python "
             "benchmarks/supervisor_cost.py --repo REPO --python PY --test TEST`.", "",
             "| check | run | wall median (s) | CPU median (s) |", "|---|---|---:|---:|"]
    notes = []
    for label, argv_ in ((f"`pytest {args.test}` ({args.repo.name})",
                          [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           args.test]),
                         ("`python -c pass` (the fixed cost)", [args.python, "-c", "pass"])):
        rows: dict[str, list[tuple[float, float]]] = {"supervised": [], "direct": []}
        for i in range(args.runs):
            for how in (["supervised", "direct"] if i % 2 == 0 else ["direct", "supervised"]):
                if how == "supervised":
                    rows[how].append(one(lambda a=argv_: run_argv(a, args.repo, 600, env)))
                else:
                    rows[how].append(one(lambda a=argv_: supervised.run_direct(
                        a, args.repo, 600, env, drain_fd, supervised.Capture())))
        med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
               for k, v in rows.items()}
        lines += [f"| {label} | {k} | {w:.3f} | {c:.3f} |" for k, (w, c) in med.items()]
        sup, direct = med["supervised"], med["direct"]
        notes.append(f"{label}: supervised / direct wall {sup[0] / direct[0]:.3f}, CPU "
                     f"{sup[1] / direct[1]:.3f} (+"
                     f"{(sup[0] - direct[0]) * 1000:.0f} ms wall, "
                     f"{(sup[1] - direct[1]) * 1000:+.0f} ms CPU)")
    lines += ["", *[f"- {n}" for n in notes], ""]
    text = "\n".join(lines)
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
