"""The pyDatalog backend (the default): IR -> pyDatalog clauses in a Logic() -> the model.
I/O-free but stateful inside pyDatalog's thread-local Logic: a program's clauses are loaded once
per thread and kept without facts; each call asserts its facts and retracts them all at the end.

Handles the measured pyDatalog 0.22.4 quirks (design.md "The rules"): bodies are emitted
positive atoms first, then comparisons, then negations; every relation is declared (assert and
retract a sentinel) so an empty relation does not raise; relation names are prefixed so
none shadows a Python builtin (`compile`); a negated atom with `_` goes through a
projection relation so no free variable sits inside a negation.
"""

from __future__ import annotations

import threading
from typing import Any

from plan07 import collector
from plan07.engine.ir import Atom, Compare, Const, Facts, Literal, Program, Rule, Term, Tuple_, Var
from plan07.engine.naive import ordered_body
from plan07.engine.strata import stratify

# pyDatalog turns clause and query text into Python ASTs; CPython 3.11's ast.parse is not safe
# across threads ("AST constructor recursion depth mismatch", seen under pytest -n 2 with six
# threads). Parsing is serialized; evaluation (the expensive part) is not.
_AST_LOCK = threading.Lock()


_CODE: dict[tuple[str, str], Any] = {}  # (mode, text) -> compiled pyDatalog code


def _compiled(text: str, mode: str) -> Any:
    """pyDatalog's parse (ast + its transform + compile) of clause or query text, once per
    text: a rule layer and a query are the same text on every evaluation."""
    import ast

    from pyDatalog import pyParser

    code = _CODE.get((mode, text))
    if code is None:
        if len(_CODE) > 4096:  # many rule files in one process (tests): start over
            _CODE.clear()
        with _AST_LOCK:
            tree = pyParser._transform_ast().visit(ast.parse(text, mode, mode))
            code = _CODE[(mode, text)] = compile(tree, mode, mode)
    return code


def _names(code: Any) -> dict[str, Any]:
    import builtins

    from pyDatalog import pyParser

    names: dict[str, Any] = {}
    pyParser.add_symbols(set(code.co_names) - set(dir(builtins)) - {"None"}, names)
    return names


def _load(source: str) -> None:
    """pyDatalog.load without its inspect.stack() (it looks for atomized globals of the
    caller; this module has none): the clauses go to the current thread's Logic."""
    code = _compiled(source, "exec")
    exec(code, _names(code))  # noqa: S102 - our own generated clause text


def _ask(query: str) -> Any:
    """pyDatalog.ask, its parse cached."""
    from pyDatalog import pyParser

    code = _compiled(query, "eval")
    parsed = eval(code, _names(code))  # noqa: S307 - our own generated query text
    return pyParser.Answer.make(parsed.ask())


def rel_name(relation: str) -> str:
    """Relations get a prefix: pyDatalog reads `compile(...)` or `len(...)` as Python builtins."""
    return f"p7_{relation}"


def done_name(relation: str) -> str:
    """A lower layer's relation, materialized as plain facts under its own name."""
    return f"m7_{relation}"


class _Translator:
    def __init__(self, materialized: set[str]) -> None:
        self.fresh = 0
        self.extra: list[str] = []
        self.materialized = materialized

    def var(self) -> str:
        self.fresh += 1
        return f"Anon_{self.fresh}_"

    def term(self, t: Term) -> str:
        if isinstance(t, Const):
            return repr(t.value)
        return self.var() if t.anonymous else f"V_{t.name}"

    def atom(self, a: Atom) -> str:
        name = done_name(a.relation) if a.relation in self.materialized else rel_name(a.relation)
        return f"{name}({', '.join(self.term(t) for t in a.args)})"

    def literal(self, lit: Literal) -> str:
        if isinstance(lit.item, Compare):
            op = "==" if lit.item.op == "=" else "!="
            return f"({self.term(lit.item.left)} {op} {self.term(lit.item.right)})"
        a = lit.item
        if lit.negated and any(isinstance(t, Var) and t.anonymous for t in a.args):
            # ~p(X, _) -> ~proj(X) with proj(X) <= p(X, Anon): nothing free under the negation
            self.fresh += 1
            name = f"negproj_{self.fresh}_"
            kept_vars = [t for t in a.args if isinstance(t, Var) and not t.anonymous]
            head = f"{name}({', '.join(self.term(v) for v in kept_vars)})"
            self.extra.append(f"{head} <= {self.atom(a)}")
            return "~" + head
        return ("~" if lit.negated else "") + self.atom(a)


def translate(rules: list[Rule], materialized: set[str] | None = None) -> str:
    """pyDatalog source for `rules` (no facts), bodies reordered as the quirks require;
    relations in `materialized` are read from their `m7_` fact copies."""
    tr = _Translator(materialized or set())
    lines = [f"{tr.atom(r.head)} <= {' & '.join(tr.literal(lit) for lit in ordered_body(r))}"
             for r in rules if not r.is_fact]
    return "\n".join(tr.extra + lines)


def layers(program: Program) -> list[list[Rule]]:
    """The strata grouped by depth (a stratum's depth is 1 + the deepest stratum it reads), so
    each layer is one pyDatalog load over plain facts."""
    depth: dict[str, int] = {}
    out: dict[int, list[Rule]] = {}
    for stratum in stratify(program):
        heads = {r.head.relation for r in stratum}
        below = [depth[b.relation] for r in stratum for b in (*r.positives(), *r.negatives())
                 if b.relation in depth and b.relation not in heads]
        d = 1 + max(below, default=0)
        for h in heads:
            depth[h] = d
        out.setdefault(d, []).extend(stratum)
    return [out[d] for d in sorted(out)]


def _assert_all(name: str, arity: int, tuples: set[Tuple_]) -> None:
    """Declare relation `name` (assert and retract a sentinel, so an empty relation does not
    raise) and assert its facts. Goes to pyEngine directly: pyDatalog.assert_fact builds a
    parser-level Literal per fact, ~3x slower (pyDatalog pinned <0.23 in pyproject)."""
    from pyDatalog import pyEngine

    sentinel = pyEngine.Clause(pyEngine.Literal(
        name, [pyEngine.Const(f"__plan07_sentinel_{i}") for i in range(arity)]), [])
    add = pyEngine.assert_  # pyDatalog's "assert a clause", not unittest's
    add(sentinel)
    pyEngine.retract(sentinel)
    const, lit, clause = pyEngine.Const, pyEngine.Literal, pyEngine.Clause
    for t in tuples:
        add(clause(lit(name, [const(v) for v in t]), []))


def evaluate(program: Program, facts: Facts) -> Facts:
    """Evaluate in a pyDatalog Logic of this thread, layer by layer: each layer's rules read the
    lower layers' tuples as plain facts (`m7_` copies); the full model.

    Layering matters for speed: one load of the whole program makes pyDatalog re-derive lower
    relations per bound subgoal (measured several times slower at 1k edges).

    The rules are loaded once per program and thread (`_rules_logic`: pyDatalog turns each
    layer's clause text into clauses, about half of a small evaluation) and kept without facts;
    an evaluation asserts its facts into a copy of that Logic and retracts every fact at the
    end, so the next evaluation starts from the rules alone, as a fresh Logic would
    (tests/test_engine.py compares a cached evaluation with a fresh one).

    pyDatalog's objects hold reference cycles (a clause's literal names its predicate, whose
    table holds the clause; its parser's bodies and queries name themselves), ~40k objects on
    the 64 x 10k benchmark. As they pile up the cycle collector rescans every live object of
    the process, the caller's evidence too: that was half the evaluation's time. So the
    evaluation runs `collector.isolated()`: the facts are retracted at the end (their cycles
    then free themselves) and the few cycles left are collected before the caller's objects
    come back to the collector."""
    with collector.isolated():
        return _evaluate(program, facts)


class _Rules:
    """A program's layers as pyDatalog text and the Logic holding their clauses (no facts)."""

    def __init__(self, program: Program) -> None:
        from pyDatalog import Logic

        self.arities = program.arities()
        self.derived = {r.head.relation for r in program.rules if not r.is_fact}
        self.constants = [(r.head.relation,
                           tuple(t.value for t in r.head.args))  # type: ignore[union-attr]
                          for r in program.rules if r.is_fact]
        self.layers: list[list[str]] = []
        done: set[str] = set()
        Logic()  # a fresh, thread-local logic
        try:
            for layer in layers(program):
                _load(translate(layer, done))
                heads = sorted({r.head.relation for r in layer})
                self.layers.append(heads)
                done |= {h for h in heads if h in self.derived}
            self.logic = Logic(True)
        finally:
            Logic()


_MAX_PROGRAMS = 8  # per thread: the rule file, and a few more in tests and harness loops
_local = threading.local()


def _rules_logic(program: Program) -> _Rules:
    """The rules of `program` loaded in a Logic of this thread: once per program (keyed by its
    rules and declarations, which are all a load reads) and thread."""
    key = (tuple(program.rules), tuple(sorted(program.decls.items())))
    cache: dict[Any, _Rules] = _local.__dict__.setdefault("rules", {})
    entry = cache.pop(key, None)
    if entry is None:
        entry = _Rules(program)
        while len(cache) >= _MAX_PROGRAMS:
            cache.pop(next(iter(cache)))
    cache[key] = entry  # the most recently used last
    return entry


def _forget(program: Program) -> None:
    key = (tuple(program.rules), tuple(sorted(program.decls.items())))
    _local.__dict__.get("rules", {}).pop(key, None)


def _retract_facts() -> None:
    """Every fact of this thread's Logic retracted (the rules stay), then a fresh Logic."""
    from pyDatalog import Logic, pyEngine

    logic = Logic(True)
    for pred in list(logic.Pred_registry.values()):
        fact_clauses = [c for c in pred.db.values() if not c.body]
        for c in fact_clauses:
            pyEngine.retract(c)
    Logic()


def _evaluate(program: Program, facts: Facts) -> Facts:
    from pyDatalog import Logic

    rules = _rules_logic(program)
    arities = rules.arities
    model: Facts = {rel: set(facts.get(rel, ())) for rel in arities}
    for rel, t in rules.constants:
        model[rel].add(t)
    Logic(rules.logic)  # this thread's logic: the rules' clauses, no fact yet
    clean = False
    try:
        for rel in sorted(arities):
            _assert_all(rel_name(rel), arities[rel], model[rel])
        for heads in rules.layers:
            for rel in heads:
                q = f"{rel_name(rel)}({', '.join(f'Q{i}' for i in range(arities[rel]))})"
                ans = _ask(q)
                model[rel] |= {tuple(a) for a in ans.answers} if ans is not None else set()
            for rel in heads:
                if rel in rules.derived:
                    _assert_all(done_name(rel), arities[rel], model[rel])
        _retract_facts()
        clean = True
    finally:
        if not clean:  # an error mid-way: this program's Logic may hold facts; never reuse it
            _forget(program)
            Logic()
    return model
