"""How much the repository's history should weigh in localization: the gold file's rank among
the localization's files on SWE-bench rows, for each history weight and number of commits read.
Not a test: prints a line per instance and a table.

    .venv/bin/python benchmarks/history_weight.py INSTANCES.jsonl [--checkouts DIR] [--out FILE]

Each instance's evidence is built once (`build_evidence`, as `plan` builds it) with the blend
of plan07.evidence.filerank wrapped: inside, the blend runs again for each weight (0: without
history) and each number of best commits, on the same recon, names-first scores and sources.
plan07 is given the problem statement and the checkout at its base commit; the gold patch
only scores the ranking (`real_issues_data.patch_files`). The history read is the checkout's
own, behind HEAD: the fix is not in it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_issues_data import load_instances, patch_files  # noqa: E402

import plan07.evidence.build as build  # noqa: E402
import plan07.evidence.filerank as filerank  # noqa: E402
from plan07.caps import LOCALIZATION_TOP_K  # noqa: E402
from plan07.evidence.history import history_scores, past_commits  # noqa: E402
from plan07.evidence.localize import issue_prose  # noqa: E402

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
TOPS = (5, 10, 20)
Variant = tuple[int, float]


def ranks(row: dict[str, Any]) -> dict[Variant, int | None]:
    """The gold file's rank among the localized files (None: not among them), per variant."""
    repo = Path(str(row["checkout"]))
    problem = str(row["problem_statement"])
    gold = set(patch_files(str(row["patch"])))
    out: dict[Variant, int | None] = {}
    original = filerank.blend
    memo: dict[str, dict[str, float]] = {}
    file_scores = filerank.file_scores

    def same_bm25(request: str, sources: Mapping[str, str]) -> dict[str, float]:
        if request not in memo:  # one recon, one request: the BM25 of files is the same
            memo[request] = file_scores(request, sources)
        return memo[request]

    def sweep(named: Any, nodes: Any, request: str, sources: Mapping[str, str], eligible: Any,
              ran: Any = None, history: Any = None) -> dict[str, float]:
        file_of = {n.id: n.file for n in nodes}
        commits = past_commits(repo)
        prose = issue_prose(problem)[0]
        for top in TOPS:
            past = history_scores(prose, commits, sources, top=top)
            for w in WEIGHTS:
                if w == 0.0 and top != TOPS[0]:
                    out[(top, w)] = out[(TOPS[0], w)]
                    continue
                filerank.HISTORY_WEIGHT = w
                scores = original(named, nodes, request, sources, eligible, ran, history=past)
                ranked = sorted(scores, key=lambda e: (-scores[e], e))[:LOCALIZATION_TOP_K]
                files = list(dict.fromkeys(f for e in ranked if (f := file_of.get(e))))
                out[(top, w)] = min((files.index(g) + 1 for g in gold if g in files), default=None)
        filerank.HISTORY_WEIGHT = weight
        return original(named, nodes, request, sources, eligible, ran, history=history)

    weight = filerank.HISTORY_WEIGHT
    build.blend, filerank.file_scores = sweep, same_bm25  # type: ignore[assignment]
    try:
        build.build_evidence(repo, request=problem)
    finally:
        build.blend, filerank.file_scores = original, file_scores  # type: ignore[assignment]
    return out


def table(results: dict[str, dict[Variant, int | None]]) -> list[str]:
    n = len(results)
    lines = [f"{n} instances: the gold file's rank among the localization's files",
             "", "| commits read | weight | first | in the first two | among them | MRR |",
             "|---|---|---|---|---|---|"]
    for top in TOPS:
        for w in WEIGHTS:
            rs = [r[(top, w)] for r in results.values()]
            first = sum(1 for r in rs if r == 1)
            two = sum(1 for r in rs if r is not None and r <= 2)
            some = sum(1 for r in rs if r is not None)
            mrr = sum(1 / r for r in rs if r) / max(n, 1)
            lines.append(f"| {top} | {w} | {first} | {two} | {some} | {mrr:.3f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("instances", type=Path)
    ap.add_argument("--checkouts", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None, help="write the table here (markdown)")
    args = ap.parse_args(argv)
    results: dict[str, dict[Variant, int | None]] = {}
    for row in load_instances(args.instances, args.checkouts):
        iid = str(row["instance_id"])
        results[iid] = ranks(row)
        print(f"{iid:32} without {results[iid][(10, 0.0)]} with {results[iid][(10, 0.5)]}",
              flush=True)
    lines = table(results)
    print("\n".join(lines))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        command = " ".join(["benchmarks/history_weight.py", *(argv or sys.argv[1:])])
        args.out.write_text(f"Command: `.venv/bin/python {command}`\n\n" + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
