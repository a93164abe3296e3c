"""What precision and recall of modify-target files the localization's ranking allows at all: for
each rule "follow the files whose best entity scores at least R x the top one, at most K of them"
the mean precision and recall against the gold patch's files. Not a test: prints a table.

    .venv/bin/python benchmarks/target_frontier.py INSTANCES.jsonl [--checkouts DIR] [--out FILE]

The builtin decomposer follows the top-ranked entities at >= 0.85 x the top score, at most 2
(plan07.caps BUILTIN_PRIMARY_SCORE_RATIO, BUILTIN_MAX_PRIMARY), plus what the request writes as
code; this script asks what any such cut of the same ranking could reach. A cut that reaches
recall 0.8 at precision 0.5 does not exist when the gold file is not near the top of the
ranking: a better cut cannot fix a ranking, only a better ranking can. Test files are left out
(as `real_issues.py` scores targets). plan07 is given the problem statement and the checkout at
its base commit (`build_evidence`, as `plan` builds it); the gold patch only scores.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_issues_data import load_instances, patch_files  # noqa: E402

from plan07.evidence import build_evidence  # noqa: E402
from plan07.evidence.layout import read_layout  # noqa: E402
from plan07.sandbox import environ  # noqa: E402

RATIOS = (1.0, 0.95, 0.9, 0.85, 0.8, 0.7, 0.5, 0.0)
CAPS = (1, 2, 3, 5)


def ranked_files(row: dict[str, Any]) -> list[tuple[str, float]]:
    """The localization's library files, best first, each at its best entity's score."""
    repo = Path(str(row["checkout"]))
    with environ(dict(row.get("env") or {})):
        ev = build_evidence(repo, request=str(row["problem_statement"]))
    layout = read_layout(repo)
    file_of = {n.id: n.file for n in ev.recon.nodes if n.file}
    best: dict[str, float] = {}
    for x in ev.localization:
        f = file_of.get(x.entity)
        if f and not layout.is_test(f) and "/tests/" not in f"/{f}":
            best[f] = max(best.get(f, 0.0), x.score)
    return sorted(best.items(), key=lambda t: (-t[1], t[0]))


def cut(files: list[tuple[str, float]], ratio: float, cap: int) -> list[str]:
    if not files:
        return []
    top = files[0][1]
    return [f for f, s in files if s >= ratio * top][:cap]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("instances", type=Path)
    ap.add_argument("--checkouts", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    rows = [(ranked_files(r), set(patch_files(str(r["patch"]))))
            for r in load_instances(args.instances, args.checkouts)]
    n = len(rows)
    ranks = [next((i + 1 for i, (f, _) in enumerate(files) if f in gold), None)
             for files, gold in rows]
    name = f"{args.instances.parent.name}/{args.instances.name}"
    lines = [f"# Target frontier: {name}, {n} instances", "",
             "The gold file's rank among the localization's library files: "
             + ", ".join(f"first {k}: {sum(1 for r in ranks if r is not None and r <= k)}/{n}"
                         for k in (1, 2, 3, 5, 10)), "",
             "Mean precision / recall of the files followed, for each cut "
             "(at least R x the top score, at most K files):", "",
             "| R \\ K | " + " | ".join(str(k) for k in CAPS) + " |",
             "|---|" + "---|" * len(CAPS)]
    for ratio in RATIOS:
        cells = []
        for cap in CAPS:
            p = r = 0.0
            for files, gold in rows:
                picked = cut(files, ratio, cap)
                hit = len(set(picked) & gold)
                p += hit / len(picked) if picked else 0.0
                r += hit / len(gold) if gold else 0.0
            cells.append(f"{p / n:.2f} / {r / n:.2f}")
        lines.append(f"| {ratio} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
