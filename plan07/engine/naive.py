"""A small reference evaluator over the IR that also records, for every derived tuple, its
minimal-height derivation (the rule and the ground body). Pure. Explain and why-not use it;
the backends (pyDatalog, clingo) are what `derive_order` runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from plan07.engine.ir import Atom, Compare, Const, Facts, Literal, Program, Rule, Term, Tuple_
from plan07.engine.strata import stratify

Binding = dict[str, object]
Key = tuple[str, Tuple_]


@dataclass(frozen=True)
class Derivation:
    """How a tuple was first (minimally) derived: rule, ground positive body, checked absences."""

    height: int
    rule: Rule | None  # None: an input fact (height 0)
    premises: tuple[Key, ...] = ()
    absences: tuple[Key, ...] = ()
    checks: tuple[str, ...] = ()  # the ground comparisons that held, e.g. '"O1" != "O2"'


class Index:
    """Tuples of each relation, looked up by the values at bound positions (sorted)."""

    def __init__(self, model: Facts) -> None:
        self.model = model
        self._cache: dict[tuple[str, tuple[int, ...]], dict[Tuple_, list[Tuple_]]] = {}

    def invalidate(self, rel: str) -> None:
        for key in [k for k in self._cache if k[0] == rel]:
            del self._cache[key]

    def lookup(self, rel: str, positions: tuple[int, ...], values: Tuple_) -> list[Tuple_]:
        key = (rel, positions)
        table = self._cache.get(key)
        if table is None:
            table = {}
            for t in sorted(self.model.get(rel, ()), key=_sort_key):
                table.setdefault(tuple(t[i] for i in positions), []).append(t)
            self._cache[key] = table
        return table.get(values, [])


def _sort_key(t: Tuple_) -> tuple[tuple[int, str], ...]:
    return tuple((0, str(v)) if isinstance(v, str) else (1, f"{v:020d}") for v in t)


def value(term: Term, b: Binding) -> object:
    if isinstance(term, Const):
        return term.value
    return b.get(term.name)


def _bound(term: Term, b: Binding) -> bool:
    return isinstance(term, Const) or (not term.anonymous and term.name in b)


def match(atom: Atom, t: Tuple_, b: Binding) -> Binding | None:
    out = dict(b)
    for arg, v in zip(atom.args, t, strict=True):
        if isinstance(arg, Const):
            if arg.value != v:
                return None
        elif not arg.anonymous:
            if arg.name in out:
                if out[arg.name] != v:
                    return None
            else:
                out[arg.name] = v
    return out


def candidates(atom: Atom, idx: Index, b: Binding) -> list[Tuple_]:
    pos = tuple(i for i, a in enumerate(atom.args) if _bound(a, b))
    if len(atom.args) == 0:
        return list(idx.model.get(atom.relation, ()))
    return idx.lookup(atom.relation, pos, tuple(value(atom.args[i], b) for i in pos))  # type: ignore[misc]


def holds(lit: Literal, idx: Index, b: Binding) -> bool:
    """A comparison or a negated atom, checked under a binding that grounds it."""
    if isinstance(lit.item, Compare):
        left, right = value(lit.item.left, b), value(lit.item.right, b)
        return (left == right) == (lit.item.op == "=")
    present = any(match(lit.item, t, b) is not None for t in candidates(lit.item, idx, b))
    return present != lit.negated


def ordered_body(rule: Rule) -> list[Literal]:
    """Positive atoms first, then comparisons, then negations (the pyDatalog order too)."""
    return ([lit for lit in rule.body if lit.atom is not None and not lit.negated]
            + [lit for lit in rule.body if isinstance(lit.item, Compare)]
            + [lit for lit in rule.body if lit.negated])


def solve(body: list[Literal], idx: Index, b: Binding) -> Iterator[tuple[Binding, list[Key]]]:
    """Every binding that satisfies `body` (in order), with the ground positive atoms used."""
    if not body:
        yield b, []
        return
    lit, rest = body[0], body[1:]
    if lit.atom is not None and not lit.negated:
        for t in candidates(lit.atom, idx, b):
            nb = match(lit.atom, t, b)
            if nb is not None:
                for fb, used in solve(rest, idx, nb):
                    yield fb, [(lit.atom.relation, t), *used]
    elif holds(lit, idx, b):
        yield from solve(rest, idx, b)


def ground(atom: Atom, b: Binding) -> Tuple_:
    return tuple(value(a, b) for a in atom.args)  # type: ignore[misc]


def ground_compare(c: Compare, b: Binding) -> str:
    def show(t: Term) -> str:
        v = value(t, b)
        return str(Const(v)) if isinstance(v, str | int) else str(t)

    return f"{show(c.left)} {c.op} {show(c.right)}"


def evaluate(program: Program, facts: Facts) -> tuple[Facts, dict[Key, Derivation]]:
    """The full model and the minimal-height derivation of every tuple in it."""
    model: Facts = {rel: set(ts) for rel, ts in facts.items()}
    best: dict[Key, Derivation] = {}
    for rel, ts in facts.items():
        for t in ts:
            best[(rel, t)] = Derivation(0, None)
    for r in program.rules:
        if r.is_fact:
            t = ground(r.head, {})
            model.setdefault(r.head.relation, set()).add(t)
            best.setdefault((r.head.relation, t), Derivation(0, r))
    idx = Index(model)
    for stratum in stratify(program):
        heads = {r.head.relation for r in stratum}
        # a stratum that does not read its own heads is final after one pass
        recursive = any(a.relation in heads for r in stratum for a in r.positives())
        changed = True
        while changed:
            changed = False
            found: list[tuple[Key, Derivation]] = []
            for r in stratum:
                for b, used in solve(ordered_body(r), idx, {}):
                    key = (r.head.relation, ground(r.head, b))
                    h = 1 + max((best[u].height for u in used), default=0)
                    absences = tuple((n.relation, ground(n, b)) for n in r.negatives())
                    checks = tuple(ground_compare(c, b) for c in r.compares())
                    found.append((key, Derivation(h, r, tuple(used), absences, checks)))
            for key, d in found:
                old = best.get(key)
                if old is None or d.height < old.height:
                    best[key] = d
                    model.setdefault(key[0], set()).add(key[1])
                    changed = True
            for rel in heads:
                idx.invalidate(rel)
            changed = changed and recursive
    return model, best
