"""Stratification: the relation dependency graph, its SCCs, and the evaluation order. Pure.

A negation inside a recursive cycle has no stratified meaning (pyDatalog would answer silently
wrong); it is a RuleError naming the cycle.
"""

from __future__ import annotations

from plan07.engine.graphs import sccs
from plan07.engine.ir import Program, Rule
from plan07.errors import RuleError


def dependencies(program: Program) -> dict[str, set[tuple[str, bool]]]:
    """head relation -> {(body relation, negated)}."""
    deps: dict[str, set[tuple[str, bool]]] = {}
    for r in program.rules:
        d = deps.setdefault(r.head.relation, set())
        for lit in r.body:
            if lit.atom is not None:
                d.add((lit.atom.relation, lit.negated))
    return deps


def negative_cycle(program: Program) -> tuple[list[str], Rule] | None:
    """A cycle through a negation, as (relations on the cycle, the rule with the negation)."""
    deps = dependencies(program)
    succ = {h: sorted({b for b, _ in ds}) for h, ds in deps.items()}
    comp_of = {}
    for comp in sccs(sorted(deps), succ):
        for rel in comp:
            comp_of[rel] = tuple(comp)
    for r in program.rules:
        for neg in r.negatives():
            h, b = r.head.relation, neg.relation
            if b in comp_of and comp_of.get(h) == comp_of[b]:
                return _path(b, h, succ, set(comp_of[h])) + [b], r
    return None


def _path(src: str, dst: str, succ: dict[str, list[str]], within: set[str]) -> list[str]:
    """A shortest dependency path src -> ... -> dst inside one SCC (BFS, sorted: deterministic)."""
    prev: dict[str, str | None] = {src: None}
    queue = [src]
    while queue:
        v = queue.pop(0)
        if v == dst:
            break
        for w in succ.get(v, []):
            if w in within and w not in prev:
                prev[w] = v
                queue.append(w)
    path: list[str] = []
    cur: str | None = dst
    while cur is not None:
        path.append(cur)
        cur = prev.get(cur)
    return path[::-1] if path[-1] == src else [src, dst]


def stratify(program: Program) -> list[list[Rule]]:
    """Rules grouped by stratum, in evaluation order; RuleError on unstratifiable negation."""
    bad = negative_cycle(program)
    if bad:
        cycle, rule = bad
        raise RuleError(
            f"unstratifiable negation: {' -> '.join(cycle)} depends on itself through "
            f"'!{rule.negatives()[0].relation}'; break the cycle or drop the negation",
            file=program.file, line=rule.line, col=rule.col)
    deps = dependencies(program)
    succ = {h: sorted({b for b, _ in ds if b in deps}) for h, ds in deps.items()}
    order = sccs(sorted(deps), succ)
    strata: list[list[Rule]] = []
    for comp in order:
        rules = [r for r in program.rules if r.head.relation in comp and not r.is_fact]
        if rules:
            strata.append(rules)
    return strata
