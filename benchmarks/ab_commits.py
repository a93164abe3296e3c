"""The §7 A/B on real commits: `plan07 ab --commits FILE` over local checkouts named by a JSONL
(one commit a line: id, repo_path, commit, request, tests, python, pythonpath; docs/ab.md). No
generated tasks; 3 seeded runs; cl100k tokens (the `tiktoken` extra) with the estimate beside.
Writes benchmarks/results/ab-commits/. Run from the repo root:

    .venv/bin/python benchmarks/ab_commits.py COMMITS.jsonl [any other plan07 ab flag]

The checkouts, their virtual environments and the JSONL are the caller's (this script installs
and fetches nothing); the report's command line names the file, and results.json names every
repo, commit and test path it ran.
"""

from __future__ import annotations

import sys

from plan07.cli import main

DEFAULTS = {"--tasks": "0", "--runs": "3", "--seed": "0", "--out": "benchmarks/results/ab-commits",
            "--workers": "2", "--engine": "clingo", "--tokenizer": "cl100k"}


def args(argv: list[str]) -> list[str]:
    if not argv or argv[0].startswith("-"):
        raise SystemExit("usage: benchmarks/ab_commits.py COMMITS.jsonl [plan07 ab flags]")
    out = ["ab", "--commits", argv[0], *argv[1:]]
    for flag, value in DEFAULTS.items():
        if flag not in argv:
            out += [flag, value]
    return out


if __name__ == "__main__":
    raise SystemExit(main(args(sys.argv[1:])))
