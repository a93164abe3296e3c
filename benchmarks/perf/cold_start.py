"""Row "`plan07 next --json` cold start": the console script, in a fresh process, against
importing the three libraries it cannot start without.

    .venv/bin/python benchmarks/perf/cold_start.py [--runs 15] [--sympy PATH]

floor  = `python -c "import typer, pydantic, jsonschema"` (the same interpreter),
plan07 = `plan07 next --json` on a planned copy of examples/session_timeout (the node already
         handed out, so the call reads plan.json and prints; nothing is written).
CPU time (user + sys of the child), median of `--runs` interleaved runs. With `--sympy PATH`, also
on the plan of the sympy benchmark request (its evidence in a 25 MB sidecar that `next` must
not read).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

PLAN07 = str(Path(sys.executable).with_name("plan07"))


def planned_example(work: Path) -> Path:
    repo = work / "session_timeout"
    shutil.copytree(common.ROOT / "examples" / "session_timeout", repo,
                    ignore=shutil.ignore_patterns("__pycache__", "edits.json"))
    state = work / "state"
    subprocess.run([PLAN07, "plan", str(repo / "request.md"), "--repo", str(repo),
                    "--state", str(state), "--json"], check=True, stdout=subprocess.DEVNULL)
    return state


def planned_sympy(repo: Path, work: Path, cache: Path) -> Path:
    from plan07.api import Planner

    state = work / "state-sympy"
    Planner.create(common.request_text("sympy"), repo=repo,
                   evidence=common.evidence("sympy", repo, cache), state_dir=state)
    return state


def measure(label: str, state: Path, runs: int) -> None:
    env = {**os.environ, "PLAN07_STATE": str(state)}
    nxt = [PLAN07, "next", "--json"]
    subprocess.run(nxt, check=True, stdout=subprocess.DEVNULL, env=env)  # hands the node out
    t = common.children_side_by_side({
        "floor": [sys.executable, "-c", "import typer, pydantic, jsonschema"],
        "plan07": nxt,
    }, runs, env)
    print(f"{label}: CPU ms (median of {runs}): floor {t['floor'] * 1e3:.0f}, "
          f"plan07 next --json {t['plan07'] * 1e3:.0f}")
    common.result(f"cold start ({label})", "plan07 next --json / import typer, pydantic, "
                  "jsonschema", t["plan07"] / t["floor"], 1.2,
                  floor_ms=round(t["floor"] * 1e3, 1), plan07_ms=round(t["plan07"] * 1e3, 1))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--sympy", type=Path, default=None)
    ap.add_argument("--cache", type=Path, default=common.DEFAULT_CACHE)
    args = ap.parse_args(argv)
    print(common.load_avg())
    with tempfile.TemporaryDirectory(prefix="plan07-cold-") as tmp:
        measure("example plan", planned_example(Path(tmp)), args.runs)
        if args.sympy:
            measure("sympy plan", planned_sympy(args.sympy.resolve(), Path(tmp), args.cache),
                    args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
