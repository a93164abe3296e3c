"""Row "`plan` with evidence", its one stage that grew per edge: is the stored 2-hop
neighbourhood linear in the evidence?

    .venv/bin/python benchmarks/perf/neighbourhood.py --click P --sphinx P --sympy P [--runs 5]

For each checkout, in one process, the evidence of its benchmark request (plan07's own, built
once and cached) and the targets of its builtin decomposition; CPU time per 10k evidence edges
(recon + impact), median of `--runs`:
  neighbourhood = `plan07.evidence.neighbourhood(evidence, targets, hops=2)`, as `plan` keeps it,
  scan          = a plain filter loop over the same edges (both ends in the reached set): what
                  any linear pass over a bundle of this size costs per edge (a larger bundle
                  costs more per edge even here: caches).
Printed: each repository's figures and, from the smallest to the largest, the growth of the
per-edge cost of each (flat, about 1: linear; an n log n stage would grow by log n's ratio).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402


def _cpu(fn: Callable[[], object], runs: int) -> float:
    ts = []
    for _ in range(runs):
        t = time.process_time()
        fn()
        ts.append(time.process_time() - t)
    return statistics.median(ts)


def measure(name: str, repo: Path, cache: Path, runs: int) -> tuple[int, float, float]:
    """(evidence edges, neighbourhood CPU s, plain scan CPU s) for one checkout."""
    from plan07.decompose import make_client
    from plan07.decompose.call import decompose
    from plan07.evidence import neighbourhood
    from plan07.evidence.graph import reach
    from plan07.request.canonicalize import canonicalize

    ev = common.evidence(name, repo, cache)
    dec = decompose(canonicalize(common.request_text(name)), ev, make_client("builtin"))
    seeds = [o.target_entity for o in dec.obligations]
    keep = reach(ev, seeds, 2)

    def scan() -> int:
        return (sum(1 for e in ev.recon.edges if e.src in keep and e.dst in keep)
                + sum(1 for i in ev.impact.edges if i.src in keep and i.dst in keep))

    n_edges = len(ev.recon.edges) + len(ev.impact.edges)
    kept = neighbourhood(ev, seeds, hops=2)
    nb = _cpu(lambda: neighbourhood(ev, seeds, hops=2), runs)
    sc = _cpu(scan, runs)
    print(f"{name}: {n_edges} edges, {len(kept.recon.edges)} kept; CPU ms per 10k edges "
          f"(median of {runs}): neighbourhood {nb / n_edges * 1e7:.2f}, plain scan "
          f"{sc / n_edges * 1e7:.2f}")
    return n_edges, nb, sc


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.repo_args(ap)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    print(common.load_avg())
    rows = []
    for name, repo in common.repos(args):
        n, nb, sc = measure(name, repo, args.cache, args.runs)
        rows.append((name, n, nb / n, sc / n))
    if len(rows) > 1:
        (a, ea, na, sa), (b, eb, nbb, sb) = rows[0], rows[-1]
        print(f"{b} / {a} ({eb / ea:.0f}x the edges): per-edge cost of the neighbourhood "
              f"{nbb / na:.2f}x, of the plain scan {sb / sa:.2f}x")
        common.result("neighbourhood", f"per-edge cost {b} / {a}, over the plain scan's growth",
                      (nbb / na) / (sb / sa), None, neighbourhood_growth=round(nbb / na, 3),
                      scan_growth=round(sb / sa, 3))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
