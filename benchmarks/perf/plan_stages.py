"""Row "`plan` with evidence": each stage of planning a real repository, and the checkpoint
records it leaves.

    .venv/bin/python benchmarks/perf/plan_stages.py --click PATH --sphinx PATH --sympy PATH

For each checkout: `Planner.create` of its benchmark request (builtin decomposer, plan07's own
evidence of the checkout) in a fresh child process, each stage's CPU time taken by wrapping the
library functions the pipeline calls (canonicalize, decompose, derive_order, neighbourhood,
state.fit / state.write, records.record), the peak RSS, the sizes written. Printed per
repository, and per 10k evidence edges (a linear stage has a flat per-edge cost across the three
repositories). Also the per-edge cost of a plain scan of the same edges (one pass reading each
edge's ends and kind, median of 5): a larger bundle costs more per edge even in a plain loop
(caches), so each stage's growth from the smallest to the largest repository is printed beside
the scan's, and as a ratio to it (about 1 or below: the stage is as linear as a loop).

Ratios:
  state writes   = state.fit + state.write / the floor of writing the same plan with its
                   evidence once (one JSON dump of the evidence, one of the plan, written);
                   information, no goal: the issue asks that state writes be proportional
                   to the plan, which the two checkpoint rows measure; this one write at
                   create holds the evidence, so it is proportional to the evidence, and
                   costs its redaction (secrets never reach disk) and its content hash;
  checkpoint     = the CP0 record's bytes / plan.json's bytes (the plan state);
  records read   = CPU of recording checkpoint 9 / recording checkpoint 1 (git snapshot off,
                   plan.json's mark advanced as `complete` does; median of 5 rounds: does a
                   later checkpoint re-read the earlier records?).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

STAGES = [  # (module, function): whichever exist in this version of plan07
    ("plan07.request.canonicalize", "canonicalize"),
    ("plan07.decompose.call", "decompose"),
    ("plan07.order.derive", "derive_order"),
    ("plan07.evidence", "neighbourhood"),
    ("plan07.store.state", "fit"),
    ("plan07.store.state", "write"),
    ("plan07.store.checkpoint", "record"),  # before the records module
    ("plan07.store.records", "record"),
]


def _wrap(times: dict[str, float]) -> None:
    import importlib

    for mod_name, fn_name in STAGES:
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        fn = getattr(mod, fn_name, None)
        if fn is None:
            continue

        def timed(*a: Any, __fn: Any = fn, __k: str = fn_name, **kw: Any) -> Any:
            t = time.process_time()
            try:
                return __fn(*a, **kw)
            finally:
                times[__k] = times.get(__k, 0.0) + time.process_time() - t

        setattr(mod, fn_name, timed)


def one(name: str, repo: Path, cache: Path, work: Path) -> dict[str, Any]:
    """Plan `repo` in this process; the stage times, sizes and the state-write floor."""
    ev = common.evidence(name, repo, cache)
    times: dict[str, float] = {}
    _wrap(times)
    from plan07.api import Planner
    from plan07.store import records, state

    state_dir = work / f"state-{name}"
    subprocess.run(["git", "-C", str(repo), "for-each-ref", "--format=%(refname)",
                    "refs/plan07/perf-stages/"], check=False, capture_output=True)
    subprocess.run(["git", "-C", str(repo), "update-ref", "-d", "refs/plan07/perf-stages/CP0"],
                   check=False, capture_output=True)
    t = time.process_time()
    Planner.create(common.request_text(name), repo=repo, evidence=ev, state_dir=state_dir,
                   plan_id="perf-stages")
    total = time.process_time() - t
    stages = dict(times)  # the plan's own stages (the records timed below are not part of it)
    subprocess.run(["git", "-C", str(repo), "update-ref", "-d", "refs/plan07/perf-stages/CP0"],
                   check=False, capture_output=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    plan_bytes = (state_dir / "plan.json").stat().st_size
    art = state.load(state_dir)
    ev_file = state_dir / (art.evidence_file or state.EVIDENCE_FILE)  # named by its content
    cp0_bytes = (records.records_dir(state_dir, "perf-stages") / "CP0.1.json").stat().st_size
    # the floor of the state write: the plan's evidence dumped once, the plan once, written
    kept = state.evidence_of(state_dir, art)
    c = time.process_time()
    (work / "floor-evidence.json").write_text(kept.model_dump_json(exclude_defaults=True))
    (work / "floor-plan.json").write_text(art.model_dump_json())
    floor = time.process_time() - c
    # later checkpoints, recorded as `complete` records them (the git snapshot off, plan.json's
    # mark advanced to each record's seq): does the 9th cost what the 1st does? Five rounds,
    # each from the CP0 record alone, the median per position.
    cp0 = records.records_dir(state_dir, art.plan_id) / "CP0.1.json"
    rounds: list[list[float]] = []
    for _ in range(5):
        for f in cp0.parent.iterdir():
            if f != cp0:
                f.unlink()
        bare = art.model_copy(update={"repo": None})
        rec = []
        for i in range(1, 10):
            cp = art.checkpoints[0].model_copy(update={"id": f"CP{100 + i}"})
            c = time.process_time()
            _, bare.checkpoint_seq = records.record(state_dir, bare, cp, check_owner=False)
            rec.append(time.process_time() - c)
        rounds.append(rec)
    rec = [statistics.median(r[i] for r in rounds) for i in range(9)]
    # a plain scan of the same edges, for the per-edge growth a loop shows on a larger bundle
    scans = []
    for _ in range(5):
        c = time.process_time()
        seen = sum(1 for e in ev.recon.edges if e.src and e.dst and e.kind)
        seen += sum(1 for i in ev.impact.edges if i.src and i.dst and i.cause)
        scans.append(time.process_time() - c)
    return {"name": name, "edges": len(ev.recon.edges), "nodes": len(ev.recon.nodes),
            "scan_s": statistics.median(scans),
            "obligations": len(art.nodes), "total_s": total, "stages": stages, "rss_mib": rss,
            "plan_bytes": plan_bytes, "evidence_bytes": ev_file.stat().st_size
            if ev_file.exists() else 0, "cp0_bytes": cp0_bytes,
            "state_write_s": times.get("fit", 0) + times.get("write", 0),
            "state_floor_s": floor, "record_first_s": rec[0], "record_ninth_s": rec[-1]}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.repo_args(ap)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        with tempfile.TemporaryDirectory(prefix="plan07-stages-") as tmp:
            out = one(args.one, getattr(args, args.one).resolve(), args.cache, Path(tmp))
        print("ONE " + json.dumps(out))
        return 0
    print(common.load_avg())
    rows = []
    for name, repo in common.repos(args):
        proc = subprocess.run([sys.executable, __file__, "--one", name, f"--{name}", str(repo),
                               "--cache", str(args.cache)], capture_output=True, text=True,
                              check=True)
        line = next(x for x in proc.stdout.splitlines() if x.startswith("ONE "))
        rows.append(json.loads(line[4:]))
    for r in rows:
        st = r["stages"]
        parts = ", ".join(f"{k} {v:.2f}" for k, v in st.items())
        per = ", ".join(f"{k} {v / r['edges'] * 1e4:.3f}" for k, v in st.items())
        print(f"{r['name']}: {r['obligations']} obligations, {r['edges']} edges; plan CPU "
              f"{r['total_s']:.2f} s, peak RSS {r['rss_mib']:.0f} MiB; stages (s): {parts}")
        print(f"  per 10k edges (s): {per}")
        print(f"  plan.json {r['plan_bytes']} B, evidence {r['evidence_bytes']} B, CP0 record"
              f" {r['cp0_bytes']} B; checkpoint record CPU: 1st {r['record_first_s'] * 1e3:.1f}"
              f" ms, 9th {r['record_ninth_s'] * 1e3:.1f} ms")
        extra = {"edges": r["edges"], "plan_s": round(r["total_s"], 2),
                 "rss_mib": round(r["rss_mib"]),
                 "stages_s": {k: round(v, 3) for k, v in st.items()}}
        common.result(f"plan with evidence ({r['name']})",
                      "state.fit + write / one dump of the plan and its evidence",
                      r["state_write_s"] / max(r["state_floor_s"], 1e-6), None, **extra)
        common.result(f"checkpoint records ({r['name']})", "CP0 record bytes / plan.json bytes",
                      r["cp0_bytes"] / r["plan_bytes"], 1.5, cp0_bytes=r["cp0_bytes"],
                      plan_bytes=r["plan_bytes"], evidence_bytes=r["evidence_bytes"])
        common.result(f"checkpoint records ({r['name']})",
                      "recording checkpoint 9 / recording checkpoint 1",
                      r["record_ninth_s"] / max(r["record_first_s"], 1e-6), 1.5)
    if len(rows) > 1:
        small, big = rows[0], rows[-1]
        scan = (big["scan_s"] / big["edges"]) / (small["scan_s"] / small["edges"])
        print(f"  a plain scan of the edges: per-edge cost {big['name']} / {small['name']} = "
              f"{scan:.2f}")
        for k in big["stages"]:
            a = small["stages"].get(k, 0) / small["edges"]
            b = big["stages"][k] / big["edges"]
            growth = b / a if a else float("nan")
            print(f"  {k}: per-edge cost {big['name']} / {small['name']} = {growth:.2f}"
                  f" ({growth / scan:.2f}x the plain scan's)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
