"""Run every performance-near-the-floor benchmark and write benchmarks/results/perf/.

    .venv/bin/python benchmarks/perf/run_all.py --click PATH --sphinx PATH --sympy PATH
        [--out benchmarks/results/perf] [--quick]

Each script's full output goes to OUT/<script>.txt; its `RESULT` lines become the table of
OUT/results.md (row, measure, ratio to the floor, goal, met). `--quick` runs fewer repetitions.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("click", "sphinx", "sympy"):
        ap.add_argument(f"--{name}", type=Path, required=True)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/plan07-perf-cache"))
    ap.add_argument("--out", type=Path, default=HERE.parents[0] / "results" / "perf")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=None,
                    help="comma-separated scripts to run; the others' last outputs are kept")
    args = ap.parse_args(argv)
    repos = ["--click", str(args.click), "--sphinx", str(args.sphinx), "--sympy", str(args.sympy),
             "--cache", str(args.cache)]
    runs = ["--runs", "3" if args.quick else "5"]
    jobs = [
        ("ordering", ["--sympy", str(args.sympy), "--cache", str(args.cache), *runs]),
        ("facts", [*repos, "--runs", "1" if args.quick else "3"]),
        ("rules_parse", ["--runs", "9" if args.quick else "15"]),
        ("recon", [*repos, "--runs", "1" if args.quick else "3"]),
        ("recon_bound", [*repos, "--runs", "1" if args.quick else "3"]),
        ("cold_start", ["--sympy", str(args.sympy), "--cache", str(args.cache),
                        "--runs", "9" if args.quick else "15"]),
        # plan_stages runs the CP0 baseline, which needs the repo's dependencies: sympy's and
        # click's import with plan07's own; sphinx's (docutils) do not
        ("plan_stages", ["--click", str(args.click), "--sympy", str(args.sympy),
                         "--cache", str(args.cache)]),
        ("neighbourhood", [*repos, *runs]),
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    only = set(args.only.split(",")) if args.only else None
    for script, extra in jobs:
        if only is not None and script not in only:
            old = args.out / f"{script}.txt"
            text = old.read_text() if old.exists() else ""
            results += [json.loads(line[7:]) for line in text.splitlines()
                        if line.startswith("RESULT ")]
            continue
        t = time.time()
        proc = subprocess.run([sys.executable, str(HERE / f"{script}.py"), *extra],
                              capture_output=True, text=True, check=False)
        (args.out / f"{script}.txt").write_text(proc.stdout + proc.stderr)
        print(f"{script}: exit {proc.returncode} in {time.time() - t:.0f} s", flush=True)
        results += [json.loads(line[7:]) for line in proc.stdout.splitlines()
                    if line.startswith("RESULT ")]
    lines = ["| row | measure | ratio to the floor | goal | met |", "|---|---|---|---|---|"]
    for r in results:
        goal = "" if r["goal"] is None else f"<= {r['goal']}"
        met = {True: "yes", False: "**no**", None: ""}[r["met"]]
        lines.append(f"| {r['row']} | {r['measure']} | {r['ratio']:.2f} | {goal} | {met} |")
    (args.out / "results.md").write_text("\n".join(lines) + "\n")
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
