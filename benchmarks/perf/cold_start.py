"""Row "`plan07 next --json` cold start": the console script, in a fresh process, against
importing the three libraries it cannot start without.

    .venv/bin/python benchmarks/perf/cold_start.py [--runs 15] [--sympy PATH]

floor  = `python -c "import typer, pydantic, jsonschema"` (the same interpreter),
plan07 = `plan07 next --json` on a planned copy of examples/session_timeout (the node already
         handed out, so the call reads plan.json and prints; nothing is written).
CPU time (user + sys of the child), median of `--runs` interleaved runs. With `--sympy PATH`, also
on the plan of the sympy benchmark request (its evidence in a 25 MB sidecar that `next` must
not read).

Row "right after a complete": the agent's loop is `complete`, then `next`. `plan07 complete O2`
(a failing check: the example's first node is checked red, and no test was written) is run
once; each run then starts from a fresh copy of the state it left and times `plan07 next --json`,
beside the floor and beside the same call with no view left behind (next.json removed: what
`next` cost when `complete` did not hand out: the full CLI, typer and pydantic). The hand-out
that `complete` now makes costs that process one more transaction: its CPU is printed too
(`Planner.next_step()` in a process that has everything loaded, median of the same runs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
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


def measure_after_complete(state: Path, work: Path, runs: int) -> None:
    import json
    import time

    env = {**os.environ, "PLAN07_STATE": str(state)}
    nxt = [PLAN07, "next", "--json"]
    node = json.loads(subprocess.run(nxt, check=True, capture_output=True, env=env,
                                     text=True).stdout)["node_id"]
    subprocess.run([PLAN07, "complete", node, "--json"], env=env, stdout=subprocess.DEVNULL,
                   check=False)  # exit 1: the red check fails (nothing written for the test)
    live = work / "state-live"
    env_live = {**os.environ, "PLAN07_STATE": str(live)}

    def fresh(view: bool) -> None:
        shutil.rmtree(live, ignore_errors=True)
        shutil.copytree(state, live)
        if not view:
            (live / "next.json").unlink(missing_ok=True)

    floor = [sys.executable, "-c", "import typer, pydantic, jsonschema"]
    times: dict[str, list[float]] = {"floor": [], "fast": [], "full": [], "handout": []}
    from plan07.api import Planner

    for i in range(runs + 1):  # the first round warms the caches, not counted
        got = {"floor": common.run_child(floor, env_live)}
        for kind, view in (("fast", True), ("full", False)):
            fresh(view)
            got[kind] = common.run_child(nxt, env_live)
        fresh(False)
        planner = Planner.open(live)
        t0 = time.process_time()
        planner.next_step()
        got["handout"] = time.process_time() - t0
        if i:
            for k, v in got.items():
                times[k].append(v)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"right after a complete: CPU ms (median of {runs}): floor {med['floor'] * 1e3:.0f}, "
          f"plan07 next --json {med['fast'] * 1e3:.0f} (the view complete left), "
          f"{med['full'] * 1e3:.0f} with no view left (the full CLI); the hand-out inside "
          f"complete {med['handout'] * 1e3:.1f}")
    common.result("cold start (right after a complete)", "plan07 next --json / import typer, "
                  "pydantic, jsonschema", med["fast"] / med["floor"], 1.2,
                  floor_ms=round(med["floor"] * 1e3, 1), plan07_ms=round(med["fast"] * 1e3, 1),
                  no_view_ms=round(med["full"] * 1e3, 1),
                  no_view_ratio=round(med["full"] / med["floor"], 3),
                  handout_in_complete_ms=round(med["handout"] * 1e3, 1))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--sympy", type=Path, default=None)
    ap.add_argument("--cache", type=Path, default=common.DEFAULT_CACHE)
    args = ap.parse_args(argv)
    print(common.load_avg())
    with tempfile.TemporaryDirectory(prefix="plan07-cold-") as tmp:
        measure("example plan", planned_example(Path(tmp)), args.runs)
        after = Path(tmp) / "after-complete"
        after.mkdir()
        measure_after_complete(planned_example(after), after, args.runs)
        if args.sympy:
            measure("sympy plan", planned_sympy(args.sympy.resolve(), Path(tmp), args.cache),
                    args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
