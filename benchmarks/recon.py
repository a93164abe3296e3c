"""Benchmark built-in recon and evidence loading (issue 4). Not a test: prints a table.

    .venv/bin/python benchmarks/recon.py [--project rich] [--edges 100000] [--repeat 3]

1. recon files/s and peak memory on a real >= 30k-line project: a copy of an installed package
   (default `rich`, ~100 files / 38k lines), read the way `plan07 recon` reads it.
2. load time of a 100k-edge evidence bundle, as JSON and as a SQLite recon.db (`load_evidence`).
Targets (issue 4): recon >= 200 files/s; 100k-edge load < 5 s.
"""

from __future__ import annotations

import argparse
import ast
import gc
import importlib
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from plan07.evidence import load_evidence, write_db
from plan07.evidence.build import evidence_report as build
from plan07.evidence.recon import auto_workers, recon
from plan07.model import Evidence

FILES_PER_S_TARGET = 200.0
LOAD_S_TARGET = 5.0


def copy_project(name: str, into: Path) -> Path:
    mod = importlib.import_module(name)
    src = Path(mod.__file__ or "").parent
    shutil.copytree(src, into / name.replace(".", "_"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return into


def timed(fn, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    """Median wall seconds of `repeat` runs, and the last result."""
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def cpu_timed(fn, repeat: int, best_of: int = 0) -> float:  # type: ignore[no-untyped-def]
    """Median CPU seconds of this process (or the best of `best_of` runs): what a run costs when
    it has a core to itself (wall time on a shared machine also counts other processes' turns)."""
    times = []
    for _ in range(best_of or repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times) if best_of else statistics.median(times)


def synthetic(n_edges: int) -> Evidence:
    """A recon graph shaped like a big repository: 1 node per 5 edges, calls/defines/imports."""
    n_nodes = max(n_edges // 5, 10)
    kinds = ["function", "method", "class", "module"]
    nodes = [{"id": f"pkg.m{i % 997}.f{i}", "kind": kinds[i % 4], "file": f"pkg/m{i % 997}.py",
              "line": i % 2000 + 1, "signature": f"def f{i}(a, b: int = 1) -> None"}
             for i in range(n_nodes)]
    ekinds = ["calls", "calls", "calls", "imports", "defines", "uses_type", "tests"]
    edges, seen, i = [], set(), 0
    while len(edges) < n_edges:
        s, d = i % n_nodes, (i * 7919 + 13) % n_nodes
        key = (s, d, ekinds[i % 7])
        if s != d and key not in seen:
            seen.add(key)
            edges.append({"src": nodes[s]["id"], "dst": nodes[d]["id"], "kind": key[2]})
        i += 1
    impact = [{"src": edges[j]["dst"], "dst": edges[j]["src"], "relation": "CalledBy",
               "cause": "sig_change", "confidence": 0.9} for j in range(0, n_edges, 50)]
    return Evidence.model_validate({"recon": {"nodes": nodes, "edges": edges},
                                    "impact": {"edges": impact}})


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", default="rich", help="an installed package to copy (rich)")
    ap.add_argument("--edges", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_project(args.project, Path(tmp) / "repo")
        py = list(root.rglob("*.py"))
        lines = sum(len(p.read_bytes().splitlines()) for p in py)
        secs, res = timed(lambda: recon(root, workers=1), args.repeat)
        n_files = len({n.file for n in res.nodes})  # type: ignore[attr-defined]
        fps = n_files / secs
        cpu = cpu_timed(lambda: recon(root, workers=1), args.repeat)
        best = cpu_timed(lambda: recon(root, workers=1), 1, best_of=args.repeat)
        sources = [p.read_bytes() for p in py]
        gc.disable()  # as recon parses: each tree dropped at once, no cycle collector
        floor = cpu_timed(lambda: [ast.parse(src) and None for src in sources], args.repeat)
        gc.enable()
        workers = auto_workers(n_files)
        par, _ = timed(lambda: recon(root), args.repeat)
        tracemalloc.start()
        recon(root)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        b_secs, _ = timed(lambda: build(root, request="render a styled table with a console",
                                        depth=2), args.repeat)
        rows += [
            (f"recon {args.project} ({n_files} files, {lines} lines), 1 process, wall",
             f"{secs:.2f} s",
             f"{fps:.0f} files/s, {lines / secs:,.0f} lines/s",
             f"{fps / FILES_PER_S_TARGET:.2f}x target {FILES_PER_S_TARGET:.0f} files/s"),
            ("recon, 1 process, CPU time (process_time)", f"{cpu:.2f} s",
             f"{n_files / cpu:.0f} files/s", f"{n_files / cpu / FILES_PER_S_TARGET:.2f}x target"),
            ("recon, 1 process, CPU time, best run", f"{best:.2f} s",
             f"{n_files / best:.0f} files/s", f"{n_files / best / FILES_PER_S_TARGET:.2f}x target"),
            ("  the floor: ast.parse alone, CPU time", f"{floor:.2f} s",
             f"{len(py) / floor:.0f} files/s", ""),
            (f"recon, default ({workers} parser processes), wall", f"{par:.2f} s",
             f"{n_files / par:.0f} files/s", f"{n_files / par / FILES_PER_S_TARGET:.2f}x target"),
            ("recon peak Python heap (tracemalloc)", f"{peak / 2**20:.0f} MiB", "", ""),
            (f"build_evidence {args.project} (recon+lex+impact+cochange)", f"{b_secs:.2f} s",
             f"{n_files / b_secs:.0f} files/s", ""),
            (f"  graph: {len(res.nodes)} nodes, {len(res.edges)} edges",  # type: ignore[attr-defined]
             "", "", ""),
        ]
        ev = synthetic(args.edges)
        js, db = Path(tmp) / "evidence.json", Path(tmp) / "recon.db"
        js.write_text(ev.model_dump_json(exclude_none=True))
        write_db(ev, db)
        for label, path in (("JSON bundle", js), ("SQLite recon.db", db)):
            secs, loaded = timed(lambda p=path: load_evidence(p), args.repeat)  # type: ignore[misc]
            assert loaded == ev, f"{label} did not round-trip"
            cpu = cpu_timed(lambda p=path: load_evidence(p), args.repeat)  # type: ignore[misc]
            rows.append((f"load {label} ({len(ev.recon.edges)} edges, "
                         f"{len(ev.recon.nodes)} nodes, {path.stat().st_size / 2**20:.1f} MiB)",
                         f"{secs:.2f} s", "wall",
                         f"{LOAD_S_TARGET / secs:.1f}x under target {LOAD_S_TARGET:.0f} s"))
            rows.append((f"load {label}, CPU time", f"{cpu:.2f} s", "",
                         f"{LOAD_S_TARGET / cpu:.1f}x under target"))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows.append(("process peak RSS (whole benchmark)", f"{rss:.0f} MiB", "", ""))
    rows.append((f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
                 f"on {os.cpu_count()} CPUs", "", "", ""))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'time/size':>10}  {'rate':<34} vs target")
    for r in rows:
        print(f"{r[0]:<{width}}  {r[1]:>10}  {r[2]:<34} {r[3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
