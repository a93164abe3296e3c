"""Benchmark (issue 15): SIGKILL plan07 at EVERY write-syscall boundary of `plan`, `complete`,
`rollback` and `feedback`, and check after each kill that nothing was lost (tests/_faultsweep.py:
status loads, resume works, no ref without its record or record without its ref, no audit row
lost, every complete node has its `passed` row and every reached checkpoint its `checkpoint`
row, no temp file left, and the plan then runs to its end with next/complete).

    .venv/bin/python benchmarks/crash_sweep.py [--commands plan,complete] [--out DIR]
    .venv/bin/python benchmarks/crash_sweep.py --probes [--kills 100] [--states 1000]

Needs strace (`apt-get install strace`). Writes DIR/report.md and DIR/points.jsonl (default
benchmarks/results/crash-sweep). The test suite (tests/test_crash.py) runs a subset of these
points; this script runs all of them (minutes: each point replays the command and a recovery).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _faultsweep import COMMANDS, count, points, prepare, run_point, strace, strace_works  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commands", default=",".join(COMMANDS))
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "crash-sweep")
    ap.add_argument("--limit", type=int, default=0, help="at most this many points per command")
    ap.add_argument("--probes", action="store_true", help="run the robustness probes instead "
                    "(benchmarks/robust_probes.py): kills with a running check, malformed state, "
                    "oversized inputs, hostile output, temps and ENOSPC; writes DIR/probes.md")
    ap.add_argument("--kills", type=int, default=100, help="--probes: kills during a check")
    ap.add_argument("--states", type=int, default=1000, help="--probes: malformed states")
    args = ap.parse_args(argv)
    if args.probes:
        from robust_probes import run

        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        print(run(args.out, kills=args.kills, states=args.states))
        return 0
    if not strace_works():
        print("strace is not installed or may not trace here; apt-get install strace",
              file=sys.stderr)
        return 2
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    args.out.mkdir(parents=True, exist_ok=True)
    rows, started = [], time.time()
    with tempfile.TemporaryDirectory(prefix="plan07-crash-") as tmp, \
            (args.out / "points.jsonl").open("w") as log:
        for command in args.commands.split(","):
            root = Path(tmp) / command
            sc = prepare(root, command)
            calls = count(sc, root / "trace.log")
            todo = points(calls)
            if args.limit:
                todo = todo[: args.limit]
            t0 = time.time()
            outcomes = []
            for name, n in todo:
                o = run_point(sc, name, n)
                outcomes.append(o)
                log.write(json.dumps({"command": command, "syscall": name, "n": n,
                                      "killed": o.killed, "problems": o.problems}) + "\n")
                log.flush()
                mark = "ok" if o.ok else "LOST: " + "; ".join(o.problems)
                print(f"{command:9} {name:>10}#{n:<3} {mark}", flush=True)
            rows.append((command, dict(calls), len(todo), sum(o.killed for o in outcomes),
                         [o for o in outcomes if not o.ok], time.time() - t0))
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False).stdout.strip()
    strace_v = subprocess.run([strace() or "strace", "-V"], capture_output=True, text=True,
                              check=False).stdout.splitlines()[0]
    lines = ["# Kill sweep: SIGKILL at every write-syscall boundary", "",
             f"plan07 {git}, {platform.python_version()}, {strace_v}, "
             f"load average {os.getloadavg()[0]:.1f}, {time.time() - started:.0f} s in all.",
             "", "Command: `.venv/bin/python benchmarks/crash_sweep.py`. Scenario per command "
             "(tests/_faultsweep.py `prepare`): a 3-step plan on a small git repo; `plan` over a "
             "state dir whose older plan reached CP1; `complete O1` with an edit in flight; "
             "`rollback --to CP1` after CP2 with an edit in flight; `feedback` falsifying a "
             "pending obligation. A point is (syscall, N): the Nth call never happens.", "",
             "| command | write syscalls (unkilled run) | points | killed | lost | seconds |",
             "|---|---|---:|---:|---:|---:|"]
    for command, calls, n, killed, bad, secs in rows:
        calls_s = ", ".join(f"{k} {v}" for k, v in sorted(calls.items()))
        lines.append(f"| {command} | {calls_s} | {n} | {killed} | {len(bad)} | {secs:.0f} |")
    total_bad = sum(len(r[4]) for r in rows)
    lines += ["", f"**{sum(r[2] for r in rows)} kill points, {total_bad} lost anything.**", ""]
    for command, _, _, _, bad, _ in rows:
        for o in bad:
            lines.append(f"- {command} {o.syscall}#{o.n}: {'; '.join(o.problems)}")
    (args.out / "report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if total_bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
