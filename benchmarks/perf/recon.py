"""Row "recon": plan07's recon of a checkout against `ast.parse` of the same files, cold (no
facts cache) and warm (every file's facts cached); and `build_recon` is pure (it leaves its
input as it was: the same result however often it runs).

    .venv/bin/python benchmarks/perf/recon.py --click PATH --sphinx PATH --sympy PATH [--runs 3]

For each checkout (CPU time, median of `--runs` interleaved runs, one process, no workers):
  floor  = read every file recon reads (plan07.evidence.files.python_files) and `ast.parse` it,
           the cycle collector paused as recon pauses it,
  cold   = `plan07.evidence.recon.recon(repo, workers=1)` with `PLAN07_CACHE_DIR=off`: read,
           parse, walk each module into its facts, resolve across files into the recon graph,
  warm   = the same with a facts cache (a temporary `PLAN07_CACHE_DIR`) that already holds every
           file (a second plan of the same checkout, or of another commit for the files it
           shares): read, hash, unpickle the facts, resolve. The graphs must be equal.
Also printed: files, lines, nodes, edges, and the split of the cold run into read+parse+walk,
resolve, and freeing the facts and the graph (recon frees its facts before it returns; the timed
call frees the graph it got), each the median of `--runs` runs made as recon makes them (one
collector pause over all of it); "the rest" is the cold median minus the three (noise, ~0).
Purity: the parsed modules' facts are pickled, `build_recon` runs three times on them, and the
results and the facts' pickles must be equal.
"""

from __future__ import annotations

import argparse
import ast
import gc
import os
import pickle
import statistics
import sys
import tempfile
import time
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


@contextlib.contextmanager
def cache_at(where: str) -> Iterator[None]:
    before = os.environ.get("PLAN07_CACHE_DIR")
    os.environ["PLAN07_CACHE_DIR"] = where
    try:
        yield
    finally:
        if before is None:
            del os.environ["PLAN07_CACHE_DIR"]
        else:
            os.environ["PLAN07_CACHE_DIR"] = before


def cached(repo: Path, where: str) -> object:
    from plan07.evidence.recon import recon

    with cache_at(where):
        return recon(repo, workers=1)


def split(repo: Path) -> tuple[float, float, float]:
    """(read+parse+walk, resolve, free the facts and the graph) of one cold recon, CPU s, run as
    recon() runs them and as the cold timing frees its result."""
    from plan07 import collector
    from plan07.evidence.recon import read_modules
    from plan07.evidence.resolve import build_recon

    pt = time.process_time
    with collector.paused(promote=True):
        c0 = pt()
        modules, _ = read_modules(repo, workers=1)
        c1 = pt()
        result = build_recon(modules)
        c2 = pt()
        del modules, result
        c3 = pt()
    return c1 - c0, c2 - c1, c3 - c2


def graph(r: Any) -> tuple[object, ...]:
    return r.nodes, r.edges, r.docs, r.arity, r.passed


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.repo_args(ap)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    from plan07.evidence import native
    from plan07.evidence.files import python_files
    from plan07.evidence.recon import recon

    print(common.load_avg())
    print("recon's modules:", "compiled (mypyc)" if native.compiled() else "pure Python")
    for name, repo in common.repos(args):
        files = python_files(repo)
        lines = sum(s.count("\n") for s in read_all(repo, files))
        with tempfile.TemporaryDirectory() as warm_dir:
            with cache_at(warm_dir):
                warm_graph = graph(recon(repo, workers=1))  # fills the cache
            with cache_at("off"):
                cold_graph = graph(recon(repo, workers=1))
            t = common.side_by_side({
                "floor": lambda r=repo, f=files: floor(r, f),
                "cold": lambda r=repo: cached(r, "off"),
                "warm": lambda r=repo, d=warm_dir: cached(r, d),
            }, args.runs)
        with cache_at("off"):
            res = recon(repo, workers=1)
            parts = [split(repo) for _ in range(args.runs)]
            walk, resolve, free = (statistics.median(p[i] for p in parts) for i in range(3))
            pure, calls = purity(repo)
        same = warm_graph == cold_graph
        print(f"{name}: {len(files)} files, {lines} lines, {len(res.nodes)} nodes, "
              f"{len(res.edges)} edges; CPU s (median of {args.runs}): floor {t['floor']:.2f}, "
              f"cold {t['cold']:.2f} (read+parse+walk {walk:.2f}, resolve {resolve:.2f}, "
              f"free {free:.2f}, the rest {t['cold'] - walk - resolve - free:.2f}), "
              f"warm {t['warm']:.2f}, warm graph == cold graph: {same}; build_recon x3 leaves "
              f"its input as it was: {pure} (calls stored {calls})")
        common.result(f"recon ({name})", "recon, no facts cache / read + ast.parse",
                      t["cold"] / t["floor"], 1.5, files=len(files), lines=lines,
                      floor_s=round(t["floor"], 3), plan07_s=round(t["cold"], 3),
                      resolve_s=round(resolve, 3), build_recon_pure=pure,
                      compiled=native.compiled())
        common.result(f"recon, warm ({name})", "recon, facts cached / read + ast.parse",
                      t["warm"] / t["floor"], 1.5, plan07_s=round(t["warm"], 3),
                      same_graph=same)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
