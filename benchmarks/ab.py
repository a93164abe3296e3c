"""The §7 A/B benchmark on generated tasks: plan07 vs monolithic vs static decomposition, 3
seeded runs (means, paired-bootstrap 95 % intervals), with the §7.5 ablation on the first 12
distinct tasks under the prompt-sensitive executor. Tokens: cl100k BPE (the `tiktoken` extra),
the estimate beside. Writes benchmarks/results/ab/{report.md,results.json,retry_consistency.png}.
Run from the repo root:

    .venv/bin/python benchmarks/ab.py [--tasks 40] [--runs 3] [--seed 0] [--ablation-tasks 12]

The real-commit run is benchmarks/ab_commits.py.

Any other `plan07 ab` flag is passed through. Same seed -> same numbers.

    .venv/bin/python benchmarks/ab.py --measure-checker

prints the cost of one temporal-consistency check through the fork-server worker against a
fresh `python -m pytest` per check, on generated repos (why the harness uses the worker).
"""

from __future__ import annotations

import sys

from plan07.cli import main

# Sizes capped at 8 obligations and the clingo backend so the run fits ~an hour on two shared
# cores (plan07's own per-node gate spawns interpreters); raise --max-size to 30 on a bigger
# machine.
DEFAULTS = {"--tasks": "40", "--runs": "3", "--seed": "0", "--ablation-tasks": "12",
            "--out": "benchmarks/results/ab", "--workers": "2", "--max-size": "8",
            "--engine": "clingo", "--tokenizer": "cl100k",
            "--ablation-executor": "scripted:prompt"}


def args(argv: list[str]) -> list[str]:
    out = ["ab", *argv]
    for flag, value in DEFAULTS.items():
        if flag not in argv:
            out += [flag, value]
    return out


def measure_checker(repeat: int = 10) -> None:
    import os
    import subprocess
    import tempfile
    import time
    from pathlib import Path

    from plan07.ab.checker import Checker
    from plan07.ab.generator import generate_task
    from plan07.ab.tasks import write_repo

    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1")
    print("obligations  worker_ms  fresh_pytest_ms  ratio")
    with Checker() as checker, tempfile.TemporaryDirectory() as d:
        for size in (3, 8, 30):
            repo = write_repo(generate_task(0, 1, size=size), Path(d) / f"r{size}")
            checker.check(repo)
            t0 = time.perf_counter()
            for _ in range(repeat):
                checker.check(repo)
            worker = (time.perf_counter() - t0) / repeat
            t0 = time.perf_counter()
            for _ in range(repeat):
                subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                               cwd=repo, env=env, capture_output=True, check=False)
            fresh = (time.perf_counter() - t0) / repeat
            print(f"{size:11d}  {worker * 1e3:9.0f}  {fresh * 1e3:15.0f}  {fresh / worker:5.1f}x")


if __name__ == "__main__":
    if sys.argv[1:] == ["--measure-checker"]:
        measure_checker()
        raise SystemExit(0)
    raise SystemExit(main(args(sys.argv[1:])))
