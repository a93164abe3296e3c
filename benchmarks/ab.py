"""The full §7 A/B benchmark: plan07 vs monolithic vs static decomposition on >= 100 generated
tasks, with the §7.5 ablation on the first tasks. Writes benchmarks/results/ab/{report.md,
results.json,retry_consistency.png}. Run from the repo root:

    .venv/bin/python benchmarks/ab.py [--tasks 100] [--runs 1] [--seed 0] [--ablation-tasks 4]

Any other `plan07 ab` flag is passed through. Same seed -> same numbers.
"""

from __future__ import annotations

import sys

from plan07.cli import main

# Sizes capped at 8 obligations and the clingo backend so the full run fits ~40 minutes on
# two cores (plan07's own per-node gate spawns two interpreters); raise --max-size to 30 on a
# bigger machine.
DEFAULTS = {"--tasks": "100", "--runs": "1", "--seed": "0", "--ablation-tasks": "4",
            "--out": "benchmarks/results/ab", "--workers": "2", "--max-size": "8",
            "--engine": "clingo"}


def args(argv: list[str]) -> list[str]:
    out = ["ab", *argv]
    for flag, value in DEFAULTS.items():
        if flag not in argv:
            out += [flag, value]
    return out


if __name__ == "__main__":
    raise SystemExit(main(args(sys.argv[1:])))
