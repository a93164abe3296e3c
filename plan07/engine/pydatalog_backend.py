"""The pyDatalog backend (the default): IR -> pyDatalog clauses in a fresh Logic() -> the model.
I/O-free but stateful inside pyDatalog's thread-local Logic; each call starts a fresh one.

Handles the measured pyDatalog 0.22.4 quirks (design.md "The rules"): bodies are emitted
positive atoms first, then comparisons, then negations; every relation is declared (assert and
retract a sentinel) so an empty relation does not raise; relation names are prefixed so
none shadows a Python builtin (`compile`); a negated atom with `_` goes through a
projection relation so no free variable sits inside a negation.
"""

from __future__ import annotations

from plan07.engine.ir import Atom, Compare, Const, Facts, Literal, Program, Term, Var
from plan07.engine.naive import ordered_body


def rel_name(relation: str) -> str:
    """Relations get a prefix: pyDatalog reads `compile(...)` or `len(...)` as Python builtins."""
    return f"p7_{relation}"


class _Translator:
    def __init__(self) -> None:
        self.fresh = 0
        self.extra: list[str] = []

    def var(self) -> str:
        self.fresh += 1
        return f"Anon_{self.fresh}_"

    def term(self, t: Term) -> str:
        if isinstance(t, Const):
            return repr(t.value)
        return self.var() if t.anonymous else f"V_{t.name}"

    def atom(self, a: Atom) -> str:
        return f"{rel_name(a.relation)}({', '.join(self.term(t) for t in a.args)})"

    def literal(self, lit: Literal) -> str:
        if isinstance(lit.item, Compare):
            op = "==" if lit.item.op == "=" else "!="
            return f"({self.term(lit.item.left)} {op} {self.term(lit.item.right)})"
        a = lit.item
        if lit.negated and any(isinstance(t, Var) and t.anonymous for t in a.args):
            # ~p(X, _) -> ~proj(X) with proj(X) <= p(X, Anon): nothing free under the negation
            self.fresh += 1
            name = f"negproj_{self.fresh}_"
            keep = [t for t in a.args if not (isinstance(t, Var) and t.anonymous)]
            kept_vars = [t for t in keep if isinstance(t, Var)]
            head = f"{name}({', '.join(self.term(v) for v in kept_vars)})"
            self.extra.append(f"{head} <= {self.atom(a)}")
            return "~" + head
        return ("~" if lit.negated else "") + self.atom(a)


def translate(program: Program) -> tuple[str, list[tuple[str, tuple[object, ...]]]]:
    """pyDatalog source for the rules, and the program's own facts as (relation, tuple)."""
    tr = _Translator()
    lines: list[str] = []
    facts: list[tuple[str, tuple[object, ...]]] = []
    for r in program.rules:
        if r.is_fact:
            facts.append((r.head.relation, tuple(t.value for t in r.head.args)))  # type: ignore[union-attr]
            continue
        body = " & ".join(tr.literal(lit) for lit in ordered_body(r))
        lines.append(f"{tr.atom(r.head)} <= {body}")
    return "\n".join(tr.extra + lines), facts


def evaluate(program: Program, facts: Facts) -> Facts:
    """Evaluate in a fresh pyDatalog Logic (isolated per call and per thread); the full model."""
    from pyDatalog import Logic, pyDatalog

    Logic()  # a fresh, thread-local logic: no state leaks between evaluations
    source, own = translate(program)
    arities = program.arities()
    for rel, ar in sorted(arities.items()):  # declare: a relation with no fact must not raise
        sentinel = tuple(f"__plan07_sentinel_{i}" for i in range(ar))
        pyDatalog.assert_fact(rel_name(rel), *sentinel)
        pyDatalog.retract_fact(rel_name(rel), *sentinel)
    for rel, ts in facts.items():
        if rel not in arities:
            continue
        for t in ts:
            pyDatalog.assert_fact(rel_name(rel), *t)
    for rel, t in own:
        pyDatalog.assert_fact(rel_name(rel), *t)
    if source:
        pyDatalog.load(source)
    model: Facts = {}
    for rel, ar in sorted(arities.items()):
        q = f"{rel_name(rel)}({', '.join(f'Q{i}' for i in range(ar))})"
        ans = pyDatalog.ask(q)
        model[rel] = {tuple(a) for a in ans.answers} if ans is not None else set()
    return model
