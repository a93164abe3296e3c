"""Row "recon": plan07's recon of a checkout against `ast.parse` of the same files; and
`build_recon` is pure (it leaves its input as it was: the same result however often it runs).

    .venv/bin/python benchmarks/perf/recon.py --click PATH --sphinx PATH --sympy PATH [--runs 3]

For each checkout (CPU time, median of `--runs` interleaved runs, one process, no workers):
  floor  = read every file recon reads (plan07.evidence.files.python_files) and `ast.parse` it,
           the cycle collector paused as recon pauses it,
  plan07 = `plan07.evidence.recon.recon(repo, workers=1)`: read, parse, walk each module into
           its facts, resolve across files into the recon graph.
Also printed: files, lines, nodes, edges, and the parse / walk / resolve split of one run.
Purity: the parsed modules' facts are pickled, `build_recon` runs three times on them, and the
results and the facts' pickles must be equal.
"""

from __future__ import annotations

import argparse
import ast
import gc
import pickle
import sys
import time
import tokenize
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

import common  # noqa: E402


def read_all(repo: Path, files: list[str]) -> list[str]:
    out = []
    for rel in files:
        try:
            with tokenize.open(repo / rel) as fh:
                out.append(fh.read())
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
    return out


def floor(repo: Path, files: list[str]) -> None:
    gc.disable()
    try:
        for src in read_all(repo, files):
            with contextlib.suppress(SyntaxError, ValueError):
                ast.parse(src)
    finally:
        gc.enable()


def purity(repo: Path) -> tuple[bool, list[int]]:
    from plan07.evidence.recon import read_modules
    from plan07.evidence.resolve import build_recon

    modules, _ = read_modules(repo, workers=1)
    before = pickle.dumps(modules)
    runs = [build_recon(modules) for _ in range(3)]
    same = all(r.nodes == runs[0].nodes and r.edges == runs[0].edges
               and r.passed == runs[0].passed for r in runs)
    return same and pickle.dumps(modules) == before, [len(r.passed) for r in runs]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.repo_args(ap)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    from plan07.evidence.files import python_files
    from plan07.evidence.recon import read_modules, recon
    from plan07.evidence.resolve import build_recon

    print(common.load_avg())
    for name, repo in common.repos(args):
        files = python_files(repo)
        lines = sum(s.count("\n") for s in read_all(repo, files))
        t = common.side_by_side({
            "floor": lambda r=repo, f=files: floor(r, f),
            "plan07": lambda r=repo: recon(r, workers=1),
        }, args.runs)
        res = recon(repo, workers=1)
        c0 = time.process_time()
        modules, _ = read_modules(repo, workers=1)
        c1 = time.process_time()
        build_recon(modules)
        c2 = time.process_time()
        pure, calls = purity(repo)
        print(f"{name}: {len(files)} files, {lines} lines, {len(res.nodes)} nodes, "
              f"{len(res.edges)} edges; CPU s (median of {args.runs}): floor {t['floor']:.2f}, "
              f"plan07 {t['plan07']:.2f} (read+parse+walk {c1 - c0:.2f}, resolve {c2 - c1:.2f})"
              f"; build_recon x3 leaves its input as it was: {pure} (calls stored {calls})")
        common.result(f"recon ({name})", "recon / read + ast.parse", t["plan07"] / t["floor"],
                      1.5, files=len(files), lines=lines, floor_s=round(t["floor"], 3),
                      plan07_s=round(t["plan07"], 3), resolve_s=round(c2 - c1, 3),
                      build_recon_pure=pure)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
