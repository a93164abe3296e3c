"""Neighbourhood extraction: the k-hop subgraph of an evidence bundle around seed entities. Pure.

The engine plans a change in a large repository from the facts near its targets, not from the whole
graph: recon edges and impact edges are walked in both directions, `hops` steps out from the seeds,
and every part of the bundle is cut down to the entities reached (design.md "Evidence bundle").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from plan07.errors import InputError
from plan07.model import Evidence, Impact, Recon


def _adjacency(evidence: Evidence) -> dict[str, set[str]]:
    adj: dict[str, set[str]] = defaultdict(set)
    for e in evidence.recon.edges:
        adj[e.src].add(e.dst)
        adj[e.dst].add(e.src)
    for i in evidence.impact.edges:
        adj[i.src].add(i.dst)
        adj[i.dst].add(i.src)
    return adj


def reach(evidence: Evidence, seeds: Iterable[str], hops: int = 2) -> set[str]:
    """The entities within `hops` undirected steps of any seed (seeds themselves included)."""
    if hops < 0:
        raise InputError(f"hops must be >= 0, got {hops}", field="hops")
    adj = _adjacency(evidence)
    seen = set(seeds)
    frontier = set(seen)  # a set: the order of a hop's walk does not change what it reaches
    for _ in range(hops):
        nxt: set[str] = set()
        for n in frontier:
            nxt |= adj.get(n, set())
        nxt -= seen
        if not nxt:
            break
        seen |= nxt
        frontier = nxt
    return seen


def restrict(evidence: Evidence, keep: set[str]) -> Evidence:
    """The bundle induced on `keep`: nodes in it, edges with both ends in it, scores for it.

    Recon nodes and both edge lists are sorted (so the result does not depend on input order);
    localization keeps its ranked order; context and soft_rank keep theirs, filtered.
    """
    nodes = sorted((n for n in evidence.recon.nodes if n.id in keep), key=lambda n: n.id)
    edges = sorted(
        (e for e in evidence.recon.edges if e.src in keep and e.dst in keep),
        key=lambda e: (e.src, e.dst, e.kind),
    )
    impact = sorted(
        (i for i in evidence.impact.edges if i.src in keep and i.dst in keep),
        key=lambda i: (i.src, i.dst, i.relation, i.cause, -i.confidence),
    )
    return Evidence(
        recon=Recon(nodes=nodes, edges=edges),
        impact=Impact(edges=impact),
        localization=[x for x in evidence.localization if x.entity in keep],
        context=[c for c in evidence.context if c.entity in keep],
        soft_rank={k: v for k, v in sorted(evidence.soft_rank.items()) if k in keep},
    )


def neighbourhood(evidence: Evidence, seeds: Iterable[str], hops: int = 2) -> Evidence:
    """The k-hop subgraph around `seeds` over recon and impact edges, both directions.

    A seed the bundle does not mention is kept as a lone entity (it reaches nothing); `hops=0`
    keeps the seeds and the edges among them. Deterministic: same input, same output order.
    """
    return restrict(evidence, reach(evidence, seeds, hops))
