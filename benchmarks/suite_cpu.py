"""Benchmark (issue 16, "a faster suite"): what each test costs in CPU, not wall time (a shared
machine's wall times are mostly its load and a test's sleeps). A pytest plugin and its report:

    SUITE_CPU_OUT=/tmp/cpu PYTHONPATH=$PWD/benchmarks .venv/bin/pytest -p suite_cpu -n 2 -q
    .venv/bin/python benchmarks/suite_cpu.py /tmp/cpu [--top 40]

(An absolute PYTHONPATH: the suite's checks run in other directories, and with a relative one
the warm checks never start, so the figures would not be the suite's.)

Per test and per phase (setup, call, teardown): the CPU of the worker itself (RUSAGE_SELF) and
of the processes it started and waited for (RUSAGE_CHILDREN: checks, CLI runs, git; a process
a module-scoped fixture keeps alive is counted when it is reaped, in the teardown of the last
test that used it), and the wall time. One JSON line per test, a file per xdist worker.
Reported: the CPU by test file and the costliest tests.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

PHASES = ("setup", "call", "teardown")


def _cpu() -> tuple[float, float]:
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


# --- the plugin (loaded with -p suite_cpu) --------------------------------------------------

_phases: dict[str, dict[str, list[float]]] = {}
_out: Any = None


def _phase(name: str) -> Any:
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def hook(item: Any) -> Any:
        (s0, c0), t0 = _cpu(), time.monotonic()
        yield
        (s1, c1), t1 = _cpu(), time.monotonic()
        _phases.setdefault(item.nodeid, {})[name] = [s1 - s0, c1 - c0, t1 - t0]
    return hook


pytest_runtest_setup = _phase("setup")
pytest_runtest_call = _phase("call")
pytest_runtest_teardown = _phase("teardown")


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    global _out
    phases = _phases.pop(nodeid, None)
    if not phases:  # xdist's controller: the test ran in a worker, which wrote its line
        return
    if _out is None:
        d = Path(os.environ.get("SUITE_CPU_OUT", "suite-cpu"))
        d.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _out = (d / f"{worker}-{os.getpid()}.jsonl").open("a", encoding="utf-8")
    _out.write(json.dumps({"id": nodeid, **phases}) + "\n")
    _out.flush()


# --- the report -----------------------------------------------------------------------------

def report(out: Path, top: int) -> str:
    rows = [json.loads(line) for f in sorted(out.glob("*.jsonl"))
            for line in f.read_text("utf-8").splitlines() if line]
    rows = [r for r in rows if any(p in r for p in PHASES)]  # older runs: the controller's too

    def cpu(r: dict[str, Any], i: int | None = None) -> float:
        return sum(sum(r[p][:2]) if i is None else r[p][i] for p in PHASES if p in r)

    files: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for r in rows:
        f = files[r["id"].split("::")[0]]
        f[0] += 1
        f[1] += cpu(r)
        f[2] += cpu(r, 1)
        f[3] += cpu(r, 2)
    total = sum(cpu(r) for r in rows)
    lines = [f"{len(rows)} tests, {total:.0f} s CPU ({sum(cpu(r, 1) for r in rows):.0f} s of it "
             "in child processes)", "", "| file | tests | CPU s | of it children | wall s |",
             "|---|---:|---:|---:|---:|"]
    lines += [f"| {k} | {v[0]:.0f} | {v[1]:.1f} | {v[2]:.1f} | {v[3]:.0f} |"
              for k, v in sorted(files.items(), key=lambda kv: -kv[1][1])[:top]]
    lines += ["", "| test | CPU s | of it children | wall s |", "|---|---:|---:|---:|"]
    lines += [f"| {r['id']} | {cpu(r):.1f} | {cpu(r, 1):.1f} | {cpu(r, 2):.0f} |"
              for r in sorted(rows, key=lambda r: -cpu(r))[:top]]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the SUITE_CPU_OUT folder of a run")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args(argv)
    if not any(args.out.glob("*.jsonl")):
        print(f"error: no *.jsonl in {args.out}; run the suite with -p suite_cpu first",
              file=sys.stderr)
        return 2
    print(report(args.out, args.top), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
