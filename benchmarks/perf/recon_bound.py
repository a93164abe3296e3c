"""What any Python walk of the parsed trees costs, beside recon's floor (read + `ast.parse`): the
bound under recon's "first time" row.

    .venv/bin/python benchmarks/perf/recon_bound.py --click P --sphinx P --sympy P [--runs 3]

recon reads facts out of every function body, so it visits the trees `ast.parse` builds in
Python. This script times, side by side in one process (CPU time, median of `--runs`
interleaved runs, the collector paused as recon pauses it), on the files recon reads:
  floor  = read every file and `ast.parse` it (benchmarks/perf/recon.py's floor),
  all    = the same, then visit every node once (a stack walk over each node's `_fields`: the
           least a generic Python walk does),
  inner  = the same, never pushing a leaf (syntax.SKIP: names, constants, aliases; and the
           shared Load/Store contexts), as recon's body walk skips them,
  recon  = plan07's read + parse + walk into facts (read_modules, one process), no resolve.
The ratios to the floor say how much of recon's 1.5x budget a bare visit already spends.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import gc
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
from recon import floor, read_all  # noqa: E402


def _parse(src: str) -> ast.AST | None:
    with contextlib.suppress(SyntaxError, ValueError):
        return ast.parse(src)
    return None


def visit(repo: Path, files: list[str], skip: frozenset[type]) -> int:
    """Read and parse each file as the floor does, and visit its nodes (those of a class in
    `skip` are never pushed); the number of nodes visited."""
    node = ast.AST
    seen = 0
    gc.disable()
    try:
        for s in read_all(repo, files):
            tree = _parse(s)
            if tree is None:
                continue
            todo: list[ast.AST] = [tree]
            push, pop = todo.append, todo.pop
            while todo:
                n = pop()
                seen += 1
                for f in n._fields:
                    v = getattr(n, f, None)
                    if v.__class__ is list:
                        for x in v:
                            if isinstance(x, node) and x.__class__ not in skip:
                                push(x)
                    elif isinstance(v, node) and v.__class__ not in skip:
                        push(v)
        return seen
    finally:
        gc.enable()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.repo_args(ap)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    from plan07.evidence.files import python_files
    from plan07.evidence.recon import read_modules
    from plan07.evidence.syntax import SKIP

    leaves = SKIP | {c for c in vars(ast).values()
                     if isinstance(c, type) and issubclass(c, ast.expr_context)}
    os.environ["PLAN07_CACHE_DIR"] = "off"  # recon parses every file (no facts cache)
    print(common.load_avg())
    for name, repo in common.repos(args):
        files = python_files(repo)
        n_all, n_inner = visit(repo, files, frozenset()), visit(repo, files, leaves)
        t = common.side_by_side({
            "floor": lambda r=repo, f=files: floor(r, f),
            "all": lambda r=repo, f=files: visit(r, f, frozenset()),
            "inner": lambda r=repo, f=files, k=leaves: visit(r, f, k),
            "recon": lambda r=repo: read_modules(r, workers=1),
        }, args.runs)
        base = t["floor"]
        print(f"{name}: {len(files)} files, {n_all} nodes ({n_inner} not leaves); CPU s "
              f"(median of {args.runs}): floor {base:.2f}, visit all {t['all']:.2f}, "
              f"visit inner {t['inner']:.2f}, recon read+parse+walk {t['recon']:.2f}")
        for key, what in (("all", "read + parse + visit every node"),
                          ("inner", "read + parse + visit every node but the leaves"),
                          ("recon", "recon read + parse + walk (no resolve)")):
            common.result(f"recon bound, {key} ({name})", f"{what} / read + ast.parse",
                          t[key] / base, None, nodes=n_all if key == "all" else n_inner,
                          floor_s=round(base, 3), measured_s=round(t[key], 3))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
