"""Row "facts loaded for ordering": what plan07 loads for the rules against the edges touching a
planned entity, on real repositories; and the answer is the same as from all the evidence and as
from the 2-hop neighbourhood plan07 loaded before.

    .venv/bin/python benchmarks/perf/facts.py --click PATH --sphinx PATH --sympy PATH [--runs 3]

For each repository: its benchmark request (benchmarks/perf/requests/NAME.md) is decomposed by
the builtin decomposer over plan07's own recon of the checkout; then
  floor     = the recon edges with an end that some obligation targets (what "touching a planned
              entity" means: the least any selection must look at),
  plan07    = the edges `prepare_facts` loads (plan07.engine.relevance: what the rules can use),
  2-hop     = the edges of the 2-hop neighbourhood of the targets (the selection before),
  all       = every edge of the bundle.
The answer (precedes, violations, roles) must be equal for plan07, 2-hop and all, on pyDatalog
and clingo. Printed ratio: plan07 edges / floor edges (goal <= 1: no more than the floor), and
the CPU time of `derive_order` with plan07's selection against the 2-hop one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402


def two_hop(obligations, evidence):  # type: ignore[no-untyped-def]
    """The selection plan07 made before: every fact inside the 2-hop neighbourhood."""
    from plan07.evidence import reach
    from plan07.order.inputs import all_facts

    keep = reach(evidence, sorted({o.target_entity for o in obligations}), 2)
    fs = all_facts(obligations, evidence)
    facts = dict(fs.facts)
    facts["entity"] = {t for t in facts.get("entity", ()) if t[0] in keep}
    for rel in ("edge", "impact"):
        facts[rel] = {t for t in facts.get(rel, ()) if t[0] in keep and t[1] in keep}
    return facts


def answer(model):  # type: ignore[no-untyped-def]
    return {r: model.get(r, set()) for r in ("precedes", "violation", "role")}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.repo_args(ap)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    from plan07.decompose import make_client
    from plan07.decompose.call import decompose
    from plan07.engine import evaluate, load_program
    from plan07.order.inputs import all_facts, prepare_facts
    from plan07.request.canonicalize import canonicalize

    prog = load_program()
    print(common.load_avg())
    for name, repo in common.repos(args):
        ev = common.evidence(name, repo, args.cache)
        obs = decompose(canonicalize(common.request_text(name)), ev,
                        make_client("builtin")).obligations
        targets = {o.target_entity for o in obs}
        floor = sum(1 for e in ev.recon.edges if e.src in targets or e.dst in targets)
        mine = prepare_facts(obs, ev).facts
        old = two_hop(obs, ev)
        full = all_facts(obs, ev).facts
        same = True
        for engine in ("clingo", "pydatalog"):
            want = answer(evaluate(prog, full, engine))
            same &= answer(evaluate(prog, mine, engine)) == want
            same &= answer(evaluate(prog, old, engine)) == want
        t = common.side_by_side({
            "2-hop": lambda o=obs, e=ev: evaluate(prog, two_hop(o, e), "pydatalog"),
            "plan07": lambda o=obs, e=ev: evaluate(prog, prepare_facts(o, e).facts,
                                                    "pydatalog"),
        }, args.runs)
        n_mine, n_old = len(mine.get("edge", ())), len(old.get("edge", ()))
        print(f"{name}: {len(obs)} obligations; edges: all {len(ev.recon.edges)}, 2-hop "
              f"{n_old}, plan07 {n_mine}, floor (touching a planned entity) {floor}; "
              f"entity facts plan07 {len(mine.get('entity', ()))} of {len(ev.recon.nodes)}, "
              f"impact {len(mine.get('impact', ()))} of {len(ev.impact.edges)}; same answer "
              f"(plan07 = 2-hop = all, both engines): {same}")
        print(f"  facts + pyDatalog CPU ms (median of {args.runs}): 2-hop "
              f"{t['2-hop'] * 1e3:.0f}, plan07 {t['plan07'] * 1e3:.0f}")
        if not same:
            raise SystemExit(f"error: {name}: the selections give different answers")
        common.result(f"facts loaded ({name})", "plan07 edges / edges touching a planned entity",
                      n_mine / max(floor, 1), 1.0, plan07_edges=n_mine, floor_edges=floor,
                      two_hop_edges=n_old, all_edges=len(ev.recon.edges), same_answer=same,
                      time_vs_two_hop=round(t["plan07"] / t["2-hop"], 3))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
