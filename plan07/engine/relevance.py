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


def _bound_by_compares(rule: Rule, var_vals: dict[str, Values]) -> None:
    """`X = "c"` in the rule's body bounds X to {"c"}."""
    for c in rule.compares():
        if c.op == "=":
            for x, y in ((c.left, c.right), (c.right, c.left)):
                if isinstance(x, Var) and isinstance(y, Const):
                    var_vals[x.name] = _meet(var_vals.get(x.name), {y.value})


def _widen(have: Values, t: object, var_vals: dict[str, Values]) -> tuple[Values, bool]:
    """`have` (one position's value set; None: any) with the values term `t` takes under
    `var_vals` added, and whether it grew."""
    if have is None:
        return None, False
    want: Values
    if isinstance(t, Const):
        want = {t.value}
    elif isinstance(t, Var) and not t.anonymous:
        want = var_vals.get(t.name)
    else:
        want = None
    if want is None:
        return None, True
    if want <= have:
        return have, False
    return have | want, True


def _repeats(atom: Atom) -> list[list[int]]:
    return [ps for ps in _var_positions(atom).values() if len(ps) > 1]


class _Analysis:
    def __init__(self, program: Program, facts: Facts) -> None:
        self.program = program
        self.facts = facts
        self.derived = program.derived()
        self.arity = program.arities()
        self.values: dict[tuple[str, int], Values] = {}  # derived relation position -> values
        self.match_cache: dict[int, list[Tuple_]] = {}  # id(atom) -> its matching input tuples
        self.columns: dict[tuple[object, ...], set[object]] = {}  # an atom's shape, position
        self.kept: dict[str, set[Tuple_]] = {}

    def select(self, rel: str, conds: list[tuple[int, set[object]]],
               repeats: list[list[int]]) -> list[Tuple_]:
        """`_select` over the facts of `rel` (nothing, at once, when a set is empty). One scan:
        building an index costs several scans' worth, and each atom is selected once."""
        if any(not s for _, s in conds):
            return []
        return _select(self.facts.get(rel, ()), conds, repeats)

    def negated_use(self, atom: Atom, var_vals: dict[str, Values]) -> None:
        """Keep the tuples of `atom`'s relation a negation of it can read: those matching its
        constants whose variables lie in `var_vals`."""
        conds = _consts(atom) + [(ps[0], s) for v, ps in _var_positions(atom).items()
                                 if (s := var_vals.get(v)) is not None]
        self.kept.setdefault(atom.relation, set()).update(
            self.select(atom.relation, conds, _repeats(atom)))

    # -- value sets ------------------------------------------------------------------------

    def matches(self, atom: Atom) -> list[Tuple_]:
        key = id(atom)
        got = self.match_cache.get(key)
        if got is None:
            got = self.match_cache[key] = self.select(atom.relation, _consts(atom),
                                                      _repeats(atom))
        return got

    # -- one rule ---------------------------------------------------------------------------

    def column(self, atom: Atom, pos: int) -> set[object]:
        """The values at `pos` of the input tuples `atom` matches (its constants, repeats)."""
        shape = tuple(t.value if isinstance(t, Const) else None for t in atom.args)
        key = (atom.relation, shape, tuple(map(tuple, _repeats(atom))), pos)
        got = self.columns.get(key)
        if got is None:
            got = self.columns[key] = {t[pos] for t in self.matches(atom)}
        return got

    def rough_pass(self, rule: Rule) -> dict[str, Values] | None:
        """Like `rule_pass` with no demand, cheaper and looser: each variable bounded by its
        atoms' whole value sets (derived relations' and input columns), no semi-join."""
        var_vals: dict[str, Values] = {}
        for a in rule.positives():
            for v, ps in _var_positions(a).items():
                for p in ps:
                    var_vals[v] = _meet(var_vals.get(v), self.values.get((a.relation, p), set())
                                        if a.relation in self.derived else self.column(a, p))
        _bound_by_compares(rule, var_vals)
        if any(s is not None and not s for s in var_vals.values()):
            return None
        return var_vals

    def rule_pass(self, rule: Rule, pruned: set[str], head: list[Values] | None = None,
                  table: dict[tuple[str, int], Values] | None = None
                  ) -> dict[str, Values] | None:
        """The values the rule's variables can take in a true instance (None: the rule cannot
        fire), and, recorded in `kept`, the tuples of pruned relations such an instance can use.
        A semi-join to a fixpoint: each variable starts bounded by the derived atoms holding it
        (their value sets), by `X = "c"` and by `head` (what is demanded of the head, position by
        position); then every positive input atom is filtered by the bounds of its variables and
        its surviving tuples bound them in turn, until nothing shrinks. Atoms of relations
        passed whole (negated ones among them: `part_of(X, E)`) bound their variables the same
        way, so a join through them narrows the pruned atoms on their other side. Sound: every
        atom of a true instance holds its values, so each filter keeps them."""
        bounds = self.values if table is None else table
        var_vals: dict[str, Values] = {}
        if head is not None:
            for t, want in zip(rule.head.args, head, strict=True):
                if want is None:
                    continue
                if isinstance(t, Const):
                    if t.value not in want:
                        return None
                elif isinstance(t, Var) and not t.anonymous:
                    var_vals[t.name] = _meet(var_vals.get(t.name), want)
        atoms = rule.positives()
        inputs: list[Atom] = []
        for a in atoms:
            if a.relation in self.derived:
                for v, ps in _var_positions(a).items():
                    for p in ps:
                        var_vals[v] = _meet(var_vals.get(v),
                                            bounds.get((a.relation, p), set()))
            else:
                inputs.append(a)
        _bound_by_compares(rule, var_vals)
        if any(s is not None and not s for s in var_vals.values()):
            return None
        rows = {id(a): self.matches(a) for a in inputs}
        spots = {id(a): _var_positions(a) for a in inputs}
        seen = {id(a): -1 for a in inputs}  # the row count each atom last bounded by
        shrunk = True
        while shrunk:
            shrunk = False
            todo = list(inputs)
            while todo:  # the atom with the most bounded variables first (then the smallest)
                a = min(todo, key=lambda b: (-sum(var_vals.get(v) is not None
                                                  for v in spots[id(b)]), len(rows[id(b)])))
                todo.remove(a)
                conds = [(ps[0], s) for v, ps in spots[id(a)].items()
                         if (s := var_vals.get(v)) is not None]
                got = _select(rows[id(a)], conds, []) if conds else rows[id(a)]
                if not got:
                    return None
                rows[id(a)] = got
                if len(got) == seen[id(a)]:  # the same rows bound their variables already
                    continue
                seen[id(a)] = len(got)
                for v, ps in spots[id(a)].items():
                    old = var_vals.get(v)
                    proj: set[object] = {t[ps[0]] for t in got}  # within `old` (filtered)
                    if old is None or len(proj) < len(old):
                        var_vals[v] = proj
                        shrunk = True
        for a in inputs:
            if a.relation in pruned:
                self.kept.setdefault(a.relation, set()).update(rows[id(a)])
        return var_vals

    def head_values(self, rule: Rule, var_vals: dict[str, Values],
                    table: dict[tuple[str, int], Values] | None = None) -> bool:
        """Add the rule's head values (to `table`, else `values`); True when a set grew."""
        out = self.values if table is None else table
        grew = False
        for i, t in enumerate(rule.head.args):
            key = (rule.head.relation, i)
            wider, more = _widen(out.get(key, set()), t, var_vals)
            if more:
                out[key] = wider
                grew = True
        return grew


def _plan(program: Program) -> tuple[list[list[Rule]], set[str]]:
    from plan07.engine.strata import stratify

    negated = {a.relation for r in program.rules for a in r.negatives()}
    return stratify(program), negated


def prune(program: Program, facts: Facts, *, min_size: int = MIN_PRUNED,
          relations: Iterable[str] | None = None,
          outputs: Iterable[str] | None = None) -> Facts:
    """`facts` with the tuples no rule can use dropped from each large (`min_size` tuples or
    more), never-negated input relation, of `relations` only when given (a new dict; the sets
    of relations left whole are the caller's own). With `outputs`, only what a derivation of
    their tuples can use is kept, negated relations included: those relations are exactly as
    on all the facts, the other derived relations may differ."""
    strata, negated = _plan(program)
    derived = program.derived()
    read = {a.relation for r in program.rules for a in r.positives()}
    # for the outputs alone a negated relation is pruned too (kept wherever a negation reads it)
    pruned = {rel for rel, ts in facts.items() if len(ts) >= min_size and rel not in derived
              and (rel in read and rel not in negated or outputs is not None and rel in negated)}
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
            for r in stratum:  # for the outputs, rough bounds (the demand pass semi-joins)
                got = an.rough_pass(r) if outputs is not None else an.rule_pass(r, pruned)
                grew |= got is not None and an.head_values(r, got)
            if not (grew and recursive):  # this pass read the final value sets
                break
        for rel, ts in an.kept.items():
            total[rel] |= ts
    if outputs is not None:  # demand from the rough bounds, bounds under it, demand again
        demand, _ = _demanded(an, strata, pruned, set(outputs), an.values)
        tight: dict[tuple[str, int], Values] = {}
        for r in program.rules:
            if r.is_fact:
                an.head_values(r, {}, tight)
        for stratum in strata:
            while True:
                grew = False
                for r in stratum:
                    want = demand.get(r.head.relation)
                    if want is not None and not r.is_fact:
                        got = an.rule_pass(r, set(), head=want, table=tight)
                        grew |= got is not None and an.head_values(r, got, tight)
                if not grew:
                    break
        _, total = _demanded(an, strata, pruned, set(outputs), tight)
    out = dict(facts)
    out.update(total)
    return out


def _demanded(an: _Analysis, strata: list[list[Rule]], pruned: set[str], outputs: set[str],
              table: dict[tuple[str, int], Values]
              ) -> tuple[dict[str, list[Values]], dict[str, set[Tuple_]]]:
    """The tuples of the pruned relations that a derivation of an output tuple can use: top-down
    from the outputs (every value demanded), a rule's positive atoms are demanded the values its
    variables can take when its head holds a demanded tuple (`rule_pass` under that demand),
    strata users first, a component iterated until its demand stops growing. Each tuple of a
    derivation of an output lies in its relation's demand, so every such derivation keeps its
    facts. A negated atom of a rule with a demanded head is demanded (and a negated input
    relation kept) wherever the rule's variables can take values at all, whatever its head:
    then no negation reads a relation where it holds less than on all the facts, so no relation
    holds a tuple it would not (a wrong tuple outside the demand could otherwise join into a
    demanded one). Relations that no output depends on are left out. `table` bounds the
    derived atoms under demand (what a demanded tuple's derivation can read); the negations'
    bounds are always the analysis' own. Returns the demand and the kept tuples."""
    demand: dict[str, list[Values]] = {}
    for rel in outputs:
        demand[rel] = [None] * an.arity.get(rel, 0)

    def ask(atom: Atom, var_vals: dict[str, Values]) -> bool:
        if atom.relation not in an.derived:
            return False
        cur = demand.setdefault(atom.relation, [set() for _ in atom.args])
        grew = False
        for i, t in enumerate(atom.args):
            cur[i], more = _widen(cur[i], t, var_vals)
            grew |= more
        return grew

    free: dict[int, dict[str, Values] | None] = {}  # id(rule) -> its values, no head demand
    kept: dict[str, set[Tuple_]] = {rel: set() for rel in pruned}
    for stratum in reversed(strata):
        heads = {r.head.relation for r in stratum}
        while True:
            an.kept = {}
            grew = False
            for r in stratum:
                want = demand.get(r.head.relation)
                if want is None or r.is_fact:
                    continue
                got = an.rule_pass(r, pruned, head=want, table=table)
                if got is None:
                    continue
                for a in r.positives():
                    grew |= ask(a, got) and a.relation in heads
                if r.negatives():
                    if id(r) not in free:
                        free[id(r)] = an.rough_pass(r)
                    bu = free[id(r)]
                    if bu is None:
                        continue
                    for a in r.negatives():
                        grew |= ask(a, bu) and a.relation in heads
                        if a.relation in pruned:
                            an.negated_use(a, bu)
            if not grew:  # this pass read the stratum's final demand
                break
        for rel, ts in an.kept.items():
            kept[rel] |= ts
    return demand, kept
