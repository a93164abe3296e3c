"""Benchmark the ordering engine: 64 obligations over recon neighbourhoods of 1k, 10k and 100k
edges, both backends, side by side in one process. Prints a table of wall time (median of
--repeat runs) and peak Python memory (tracemalloc; clingo's native heap is not counted, see
the RSS column for the process high-water mark).

    .venv/bin/python benchmarks/engine.py [--sizes 1000,10000,100000] [--repeat 3]

Targets (issue 3): 64 obligations + 10k evidence edges < 1 s pyDatalog, < 100 ms clingo.
`derive` = plan07.order.derive.derive_order end to end (neighbourhood, facts, evaluation);
`eval` = the backend alone on prepared facts.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import time
import tracemalloc

from plan07.engine import ENGINES, evaluate, load_program
from plan07.model import Evidence, ImpactEdge, Obligation, Recon, ReconEdge, ReconNode
from plan07.order.derive import derive_order
from plan07.order.inputs import prepare_facts

KINDS = ["calls", "uses_type", "imports", "reads", "inherits"]
CAUSES = ["sig_change", "consumer_rebind", "schema_change", "default_change", "test_anchor"]


def make_case(n_edges: int, seed: int = 7) -> tuple[list[Obligation], Evidence]:
    """64 obligations whose targets are hubs; every recon edge lies within 2 hops of a hub,
    so the whole bundle is the neighbourhood that gets loaded."""
    rnd = random.Random(seed)
    hubs = [f"pkg.m{i}.C{i}" for i in range(64)]
    n_leaves = max(64, n_edges // 4)
    leaves = [f"pkg.leaf{i}.f" for i in range(n_leaves)]
    nodes = [ReconNode(id=h, kind="class") for h in hubs]
    nodes += [ReconNode(id=x, kind="function") for x in leaves]
    nodes += [ReconNode(id=f"tests.test_m{i}.test_{i}", kind="test", file=f"tests/test_m{i}.py")
              for i in range(0, 64, 2)]
    edges = [ReconEdge(src=leaf, dst=hubs[i % 64], kind=rnd.choice(KINDS))
             for i, leaf in enumerate(leaves)]
    seen = {(e.src, e.dst, e.kind) for e in edges}
    while len(edges) < n_edges:
        e = (rnd.choice(leaves), rnd.choice(leaves), rnd.choice(KINDS))
        if e[0] != e[1] and e not in seen:
            seen.add(e)
            edges.append(ReconEdge(src=e[0], dst=e[1], kind=e[2]))
    impact = [ImpactEdge(src=hubs[i], dst=hubs[(i + 1) % 64], relation="CalledBy",
                         cause=CAUSES[i % len(CAUSES)], confidence=0.8) for i in range(64)]
    impact += [ImpactEdge(src=rnd.choice(hubs), dst=rnd.choice(leaves), relation="CalledBy",
                          cause=rnd.choice(CAUSES), confidence=0.5)
               for _ in range(n_edges // 50)]
    obligations = []
    for i in range(64):
        verb, validation, caused = "modify", f"tests/test_m{i}.py::test_{i}", "impact06"
        target = hubs[i]
        if i % 8 == 3:
            verb, validation, target = "validate", "compile", "pkg"
        elif i % 8 == 5:
            verb, caused = "preserve", "preserve the old default behaviour"
        elif i % 8 == 6:
            verb, caused = "validate", "custom value is honoured"
            target = f"tests/test_m{i - 1}.py::test_{i - 1}"
            validation = target
        elif i % 8 == 7:
            target = f"tests/test_m{i - 2}.py::test_{i - 2}"
        deps = [f"O{i - 1}"] if i % 4 == 1 else []
        obligations.append(Obligation(id=f"O{i}", target_entity=target, obligation=verb,
                                      caused_by=caused, dependencies=deps, evidence="bench",
                                      status="ready", validation=validation))
    return obligations, Evidence(recon=Recon(nodes=nodes, edges=edges),
                                 impact={"edges": impact})


def measure(fn, repeat: int) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    """Median wall and CPU time over `repeat` plain runs, then one more run under tracemalloc
    for the peak (tracemalloc slows Python several-fold, so it never overlaps the timed runs).
    CPU time is what the work costs when other processes share the cores."""
    walls, cpus = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return statistics.median(walls), statistics.median(cpus), peak / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    prog = load_program()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'edges':>7} {'facts':>7} {'engine':>9} {'eval s':>7} {'cpu':>6} {'derive s':>8} "
          f"{'cpu':>6} {'peak MiB':>8} {'RSS MiB':>7} {'edges out':>9} {'violations':>10}")
    for n in [int(s) for s in args.sizes.split(",")]:
        obs, ev = make_case(n)
        facts = prepare_facts(obs, ev).facts
        n_facts = sum(len(v) for v in facts.values())
        results = {}
        for engine in ENGINES:
            t_eval, c_eval, _ = measure(lambda e=engine, f=facts: evaluate(prog, f, e),
                                        args.repeat)
            t_derive, c_derive, peak = measure(
                lambda e=engine, o=obs, v=ev: derive_order(o, v, engine=e), args.repeat)
            res = derive_order(obs, ev, engine=engine)
            results[engine] = res
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"{n:>7} {n_facts:>7} {engine:>9} {t_eval:>7.3f} {c_eval:>6.3f} "
                  f"{t_derive:>8.3f} {c_derive:>6.3f} {peak:>8.1f} {rss:>7.0f} "
                  f"{len(res.edges):>9} {len(res.violations):>10}")
        same = results["pydatalog"] == results["clingo"]
        print(f"{'':>7} backends agree: {same}")


if __name__ == "__main__":
    main()
