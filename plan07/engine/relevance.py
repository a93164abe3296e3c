"""Which input facts a program can use: drop the rest before a backend sees them. Pure.

`prune(program, facts)` keeps, of each large input relation, only the tuples that can appear in
the body of some rule whose other literals can hold, and leaves every derived relation of the
model exactly as it is on all the facts (so the answer, the fixtures and both backends are
unchanged; only less is loaded and asserted).

Why that is exact. For every relation a set of possible values per argument position is
over-approximated bottom-up: an input relation's values are those of its facts; a derived
relation's are, over its rules, the values each head variable can take — the intersection, over
the positive body atoms holding that variable, of those atoms' values — iterated to a fixpoint
strongly connected component by component. A tuple of a pruned relation is kept when some rule
has a positive atom over the relation that it matches (constants, repeated variables) and, for
each variable it binds that another positive atom of the rule also holds, its value lies in that
atom's value set. A fact used by any derivation of the true model passes that test (every other
atom of that rule instance is true, so its values are in the sets), so every derivation survives
pruning and, stratum by stratum, the positive and the negated atoms of each rule read the same
relations: the derived model is the same. Relations that some rule negates are never pruned
(a dropped fact would make a negation true), nor are small ones (nothing to gain).
"""

from __future__ import annotations

from collections.abc import Iterable

from plan07.engine.ir import Atom, Const, Facts, Program, Rule, Tuple_, Var

MIN_PRUNED = 256  # an input relation with fewer tuples is passed through whole

Values = set[object] | None  # None: any value (not bounded)


def _meet(a: Values, b: Values) -> Values:
    if a is None:
        return b
    if b is None:
        return a
    return a & b if len(a) <= len(b) else b & a


def _var_positions(atom: Atom) -> dict[str, list[int]]:
    pos: dict[str, list[int]] = {}
    for i, t in enumerate(atom.args):
        if isinstance(t, Var) and not t.anonymous:
            pos.setdefault(t.name, []).append(i)
    return pos


def _select(tuples: Iterable[Tuple_], conds: list[tuple[int, set[object]]],
            repeats: list[list[int]]) -> list[Tuple_]:
    """The tuples whose value at each position `p` of `conds` lies in its set (the most
    selective first) and whose positions in each group of `repeats` hold one value."""
    conds = sorted(conds, key=lambda c: len(c[1]))
    if len(conds) == 0:
        out = tuples if isinstance(tuples, list) else list(tuples)
    elif len(conds) == 1:
        (p, s), = conds
        out = [t for t in tuples if t[p] in s]
    elif len(conds) == 2:
        (p, s), (q, r) = conds
        out = [t for t in tuples if t[p] in s and t[q] in r]
    elif len(conds) == 3:
        (p, s), (q, r), (u, w) = conds
        out = [t for t in tuples if t[p] in s and t[q] in r and t[u] in w]
    else:
        out = [t for t in tuples if all(t[i] in v for i, v in conds)]
    if repeats:
        out = [t for t in out if all(len({t[i] for i in ps}) == 1 for ps in repeats)]
    return out


def _consts(atom: Atom) -> list[tuple[int, set[object]]]:
    return [(i, {t.value}) for i, t in enumerate(atom.args) if isinstance(t, Const)]


def _repeats(atom: Atom) -> list[list[int]]:
    return [ps for ps in _var_positions(atom).values() if len(ps) > 1]


class _Analysis:
    def __init__(self, program: Program, facts: Facts) -> None:
        self.program = program
        self.facts = facts
        self.derived = program.derived()
        self.values: dict[tuple[str, int], Values] = {}  # derived relation position -> values
        self.match_cache: dict[int, list[Tuple_]] = {}  # id(atom) -> its matching input tuples
        self.proj_cache: dict[tuple[int, int], set[object]] = {}
        self.kept: dict[str, set[Tuple_]] = {}

    def select(self, rel: str, conds: list[tuple[int, set[object]]],
               repeats: list[list[int]]) -> list[Tuple_]:
        """`_select` over the facts of `rel` (nothing, at once, when a set is empty). One scan:
        building an index costs several scans' worth, and each atom is selected once."""
        if any(not s for _, s in conds):
            return []
        return _select(self.facts.get(rel, ()), conds, repeats)

    # -- value sets ------------------------------------------------------------------------

    def matches(self, atom: Atom) -> list[Tuple_]:
        key = id(atom)
        got = self.match_cache.get(key)
        if got is None:
            got = self.match_cache[key] = self.select(atom.relation, _consts(atom),
                                                      _repeats(atom))
        return got

    def input_values(self, atom: Atom, pos: int) -> set[object]:
        key = (id(atom), pos)
        got = self.proj_cache.get(key)
        if got is None:
            got = self.proj_cache[key] = {t[pos] for t in self.matches(atom)}
        return got

    def atom_values(self, atom: Atom, var: str) -> Values:
        """The values `var` can take in `atom` (unfiltered by the rest of the rule)."""
        pos = _var_positions(atom)[var][0]
        if atom.relation in self.derived:
            return self.values.get((atom.relation, pos), set())
        return self.input_values(atom, pos)

    # -- one rule ---------------------------------------------------------------------------

    def rule_pass(self, rule: Rule, pruned: set[str]) -> dict[str, Values]:
        """The values of the rule's variables, with each atom of a pruned relation semi-joined
        against the other positive atoms; the tuples of pruned relations that pass are
        recorded. First against the atoms that are cheap to bound by (derived relations and
        relations passed whole), then against the other pruned atoms' survivors (sound: each
        survivor set holds every tuple a true instance of the rule can use)."""
        atoms = rule.positives()
        holders: dict[str, list[Atom]] = {}
        for a in atoms:
            for v in _var_positions(a):
                holders.setdefault(v, []).append(a)
        big = [a for a in atoms if a.relation in pruned]
        first: dict[int, list[Tuple_]] = {}
        for a in big:
            conds = _consts(a)
            for v, ps in _var_positions(a).items():
                allowed: Values = None
                for o in holders[v]:
                    if o is not a and o.relation not in pruned:
                        allowed = _meet(allowed, self.atom_values(o, v))
                if allowed is not None:
                    conds.append((ps[0], allowed))
            first[id(a)] = self.select(a.relation, conds, _repeats(a))
        var_vals: dict[str, Values] = {}
        for a in big:
            conds = []
            for v, ps in _var_positions(a).items():
                allowed = None
                for o in holders[v]:
                    if o is not a and o.relation in pruned:
                        q = _var_positions(o)[v][0]
                        allowed = _meet(allowed, {t[q] for t in first[id(o)]})
                if allowed is not None:
                    conds.append((ps[0], allowed))
            passing = _select(first[id(a)], conds, []) if conds else first[id(a)]
            self.kept.setdefault(a.relation, set()).update(passing)
            for v, ps in _var_positions(a).items():
                var_vals[v] = _meet(var_vals.get(v), {t[ps[0]] for t in passing})
        for a in atoms:
            if a.relation not in pruned and a.relation not in self.derived:
                for v, ps in _var_positions(a).items():
                    var_vals[v] = _meet(var_vals.get(v), self.input_values(a, ps[0]))
        for a in atoms:
            if a.relation in self.derived:
                for v in _var_positions(a):
                    var_vals[v] = _meet(var_vals.get(v), self.atom_values(a, v))
        for c in rule.compares():  # X = "c" bounds X (only when nothing else does)
            if c.op == "=":
                for x, y in ((c.left, c.right), (c.right, c.left)):
                    if isinstance(x, Var) and isinstance(y, Const) and x.name not in var_vals:
                        var_vals[x.name] = {y.value}
        return var_vals

    def head_values(self, rule: Rule, var_vals: dict[str, Values]) -> bool:
        """Add the rule's head values; True when some value set grew."""
        grew = False
        for i, t in enumerate(rule.head.args):
            key = (rule.head.relation, i)
            cur = self.values.get(key, set())
            if cur is None:
                continue
            if isinstance(t, Const):
                new: Values = {t.value}
            elif isinstance(t, Var) and not t.anonymous:
                new = var_vals.get(t.name)
            else:
                new = None
            if new is None:
                self.values[key] = None
                grew = True
            elif not new <= cur:
                self.values[key] = cur | new
                grew = True
        return grew


def _plan(program: Program) -> tuple[list[list[Rule]], set[str]]:
    from plan07.engine.strata import stratify

    negated = {a.relation for r in program.rules for a in r.negatives()}
    return stratify(program), negated


def prune(program: Program, facts: Facts, *, min_size: int = MIN_PRUNED,
          relations: Iterable[str] | None = None) -> Facts:
    """`facts` with the tuples no rule can use dropped from each large (`min_size` tuples or
    more), never-negated input relation, of `relations` only when given (a new dict; the sets
    of relations left whole are the caller's own)."""
    strata, negated = _plan(program)
    derived = program.derived()
    read = {a.relation for r in program.rules for a in r.positives()}
    pruned = {rel for rel, ts in facts.items() if len(ts) >= min_size and rel in read
              and rel not in derived and rel not in negated}
    if relations is not None:
        pruned &= set(relations)
    if not pruned:
        return facts
    an = _Analysis(program, facts)
    for r in program.rules:  # the program's own facts (constants of the ladder)
        if r.is_fact:
            an.head_values(r, {})
    total: dict[str, set[Tuple_]] = {rel: set() for rel in pruned}
    for stratum in strata:  # dependencies first; iterate a component to its fixpoint
        heads = {r.head.relation for r in stratum}
        recursive = any(a.relation in heads for r in stratum for a in r.positives())
        while True:
            an.kept = {}
            grew = False
            for r in stratum:
                grew |= an.head_values(r, an.rule_pass(r, pruned))
            if not (grew and recursive):  # this pass read the final value sets
                break
        for rel, ts in an.kept.items():
            total[rel] |= ts
    out = dict(facts)
    out.update(total)
    return out
