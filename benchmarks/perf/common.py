"""Shared helpers of the performance-near-the-floor benchmarks (benchmarks/perf/*.py).

Every script measures plan07 and its floor side by side in one run: the runs are interleaved
(floor, plan07, floor, plan07, ...) so a noisy neighbour slows both alike, the clock is CPU time
(this process's `process_time`, or the children's user+sys for a subprocess), and the figure is
the median of several runs. Each script ends with one `RESULT {json}` line per measured row
(`benchmarks/perf/run_all.py` collects them into benchmarks/results/perf/report.md).

Real repositories are local checkouts given on the command line (`--click PATH --sphinx PATH
--sympy PATH`); nothing is fetched or installed here. Their evidence is built once with
plan07's own recon and cached under `--cache DIR` (keyed by the checkout's HEAD, the request
and the evidence code), so a rerun measures the stage it is about, not recon.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
REQUESTS = HERE / "requests"
REPOS = ("click", "sphinx", "sympy")
DEFAULT_CACHE = Path("/tmp/plan07-perf-cache")


def repo_args(ap: argparse.ArgumentParser) -> None:
    for name in REPOS:
        ap.add_argument(f"--{name}", type=Path, default=None,
                        help=f"a checkout of the {name} repository (git work tree)")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                    help="where built evidence is cached between runs")


def repos(args: argparse.Namespace) -> list[tuple[str, Path]]:
    out = []
    for name in REPOS:
        p = getattr(args, name)
        if p is not None:
            if not (p / ".git").exists():
                raise SystemExit(f"error: --{name} {p}: not a git checkout")
            out.append((name, p.resolve()))
    return out


def head(repo: Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def request_text(name: str) -> str:
    return (REQUESTS / f"{name}.md").read_text("utf-8")


def _code_digest() -> str:
    h = hashlib.sha256()
    for p in sorted((ROOT / "plan07" / "evidence").glob("*.py")):
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def evidence_path(name: str, repo: Path, cache: Path) -> Path:
    """Where the evidence bundle of `repo` for its benchmark request is cached (a pickle of the
    Evidence object: a bundle with a recon defect, e.g. a duplicate node id, still loads)."""
    key = hashlib.sha256(f"{head(repo)}\0{request_text(name)}\0{_code_digest()}".encode())
    return cache / f"{name}-{key.hexdigest()[:16]}.evidence.pickle"


def evidence(name: str, repo: Path, cache: Path) -> Any:
    """The evidence of `repo` for its benchmark request, built by plan07's recon once."""
    import pickle

    path = evidence_path(name, repo, cache)
    if path.is_file():
        return pickle.loads(path.read_bytes())
    from plan07.evidence import build_evidence

    cache.mkdir(parents=True, exist_ok=True)
    ev = build_evidence(repo, request=request_text(name))
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(ev))
    tmp.replace(path)
    return ev


def cpu(fn: Callable[[], Any]) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def side_by_side(fns: dict[str, Callable[[], Any]], runs: int) -> dict[str, float]:
    """Median CPU seconds of each function, the runs interleaved (one warm-up round first)."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(runs):
        for k, fn in fns.items():
            times[k].append(cpu(fn))
    return {k: statistics.median(v) for k, v in times.items()}


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_child(argv: list[str], env: dict[str, str] | None = None) -> float:
    """CPU seconds (user + sys) of one child process run to completion."""
    c = child_cpu()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    return child_cpu() - c


def children_side_by_side(argvs: dict[str, list[str]], runs: int,
                          env: dict[str, str] | None = None) -> dict[str, float]:
    """Median child CPU seconds of each command, the runs interleaved (one warm-up round)."""
    for argv in argvs.values():
        run_child(argv, env)
    times: dict[str, list[float]] = {k: [] for k in argvs}
    for _ in range(runs):
        for k, argv in argvs.items():
            times[k].append(run_child(argv, env))
    return {k: statistics.median(v) for k, v in times.items()}


def result(row: str, measure: str, ratio: float, goal: float | None, **extra: Any) -> None:
    """Print the row's ratio to its floor and whether it meets the goal (ratio <= goal)."""
    met = None if goal is None else ratio <= goal
    verdict = "" if goal is None else (" meets" if met else " MISSES") + f" goal <= {goal}"
    print(f"{row}: {measure} = {ratio:.2f}x{verdict}")
    rec = {"row": row, "measure": measure, "ratio": round(ratio, 3), "goal": goal, "met": met,
           **extra}
    print("RESULT " + json.dumps(rec, sort_keys=True))
    sys.stdout.flush()


def load_avg() -> str:
    import os

    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
