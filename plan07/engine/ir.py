"""The one internal representation of a Datalog program: terms, atoms, literals, rules. Pure.

Both backends, lint and explain read this IR; nothing downstream re-parses the text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

Value = str | int
Tuple_ = tuple[Value, ...]
Facts = dict[str, set[Tuple_]]  # relation -> tuples; also the materialized model


@dataclass(frozen=True)
class Var:
    name: str  # "_" is anonymous: every occurrence is a fresh variable

    @property
    def anonymous(self) -> bool:
        return self.name == "_"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Const:
    value: Value

    def __str__(self) -> str:
        if isinstance(self.value, int):
            return str(self.value)
        return '"' + self.value.replace("\\", "\\\\").replace('"', '\\"') + '"'


Term = Var | Const


@dataclass(frozen=True)
class Atom:
    relation: str
    args: tuple[Term, ...]

    @property
    def arity(self) -> int:
        return len(self.args)

    def vars(self) -> list[Var]:
        return [a for a in self.args if isinstance(a, Var) and not a.anonymous]

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True)
class Compare:
    op: str  # "=" or "!="
    left: Term
    right: Term

    def vars(self) -> list[Var]:
        return [t for t in (self.left, self.right) if isinstance(t, Var) and not t.anonymous]

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True)
class Literal:
    """A body element: a positive atom, a negated atom, or a comparison."""

    item: Atom | Compare
    negated: bool = False
    col: int = 0

    @property
    def atom(self) -> Atom | None:
        return self.item if isinstance(self.item, Atom) else None

    def __str__(self) -> str:
        return ("!" if self.negated else "") + str(self.item)


@dataclass(frozen=True)
class Rule:
    """`head :- body.` (a fact has an empty body). `rule_id` from `// @rule ID`."""

    head: Atom
    body: tuple[Literal, ...]
    line: int
    col: int = 1
    rule_id: str | None = None
    allows: frozenset[str] = frozenset()

    @property
    def is_fact(self) -> bool:
        return not self.body

    def positives(self) -> list[Atom]:
        return [lit.item for lit in self.body if isinstance(lit.item, Atom) and not lit.negated]

    def negatives(self) -> list[Atom]:
        return [lit.item for lit in self.body if isinstance(lit.item, Atom) and lit.negated]

    def compares(self) -> list[Compare]:
        return [lit.item for lit in self.body if isinstance(lit.item, Compare)]

    def __str__(self) -> str:
        if self.is_fact:
            return f"{self.head}."
        return f"{self.head} :- {', '.join(str(b) for b in self.body)}."


@dataclass
class Program:
    """A parsed rule file. `decls` holds `.decl` arities (line too), `inputs` the `.input` names,
    `outputs` the `.output` names (the relations plan07 reads back)."""

    file: str
    rules: list[Rule] = field(default_factory=list)
    decls: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (arity, line)
    inputs: set[str] = field(default_factory=set)
    outputs: set[str] = field(default_factory=set)

    def by_id(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.rule_id == rule_id), None)

    def derived(self) -> set[str]:
        return {r.head.relation for r in self.rules}

    def arities(self) -> dict[str, int]:
        """Every relation's arity (first seen: decl, then heads, then bodies)."""
        out = {name: ar for name, (ar, _) in self.decls.items()}
        for r in self.rules:
            out.setdefault(r.head.relation, r.head.arity)
            for lit in r.body:
                if isinstance(lit.item, Atom):
                    out.setdefault(lit.item.relation, lit.item.arity)
        return out

    def relations(self) -> set[str]:
        return set(self.arities())

    def slice(self, wanted: Iterable[str]) -> Program:
        """The program that derives `wanted` and nothing else: the rules (and stated facts) of
        every relation `wanted` reads, transitively; the same tuples of `wanted` on any facts,
        fewer rules to load and run."""
        heads: dict[str, list[Rule]] = {}
        for r in self.rules:
            heads.setdefault(r.head.relation, []).append(r)
        need: set[str] = set()
        todo = list(wanted)
        while todo:
            rel = todo.pop()
            if rel not in need:
                need.add(rel)
                todo += [a.relation for r in heads.get(rel, ())
                         for a in (*r.positives(), *r.negatives())]
        return Program(self.file, [r for r in self.rules if r.head.relation in need],
                       {k: v for k, v in self.decls.items() if k in need},
                       self.inputs & need, self.outputs & need)

    def constants(self, relation: str) -> tuple[str, ...]:
        """The values of a unary relation the program states as facts (`breaking_cause("x").`),
        in the file's order."""
        out: list[str] = []
        for r in self.rules:
            if r.is_fact and r.head.relation == relation and r.head.arity == 1:
                (term,) = r.head.args
                if isinstance(term, Const) and isinstance(term.value, str) \
                        and term.value not in out:
                    out.append(term.value)
        return tuple(out)
