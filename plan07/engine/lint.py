"""`plan07 rules lint`: static checks of a rule file. Pure over the parsed IR (plus a look at
which fixture folders exist). Errors make the file unusable; warnings are advice.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from plan07.engine.ir import Atom, Program, Rule, Var
from plan07.engine.strata import negative_cycle
from plan07.errors import RuleError


@dataclass(frozen=True)
class Finding:
    severity: str  # "error" | "warning"
    kind: str
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.severity}: {self.kind}: {self.message}"


def _rule_name(r: Rule) -> str:
    return f"rule {r.rule_id}" if r.rule_id else f"rule for {r.head.relation}"


def _unsafe(r: Rule) -> list[str]:
    bound = {v.name for a in r.positives() for v in a.vars()}
    # `X = "c"` or `X = Y` with Y bound binds X too (both backends accept it)
    changed = True
    while changed:
        changed = False
        for c in r.compares():
            if c.op != "=":
                continue
            for a, b in ((c.left, c.right), (c.right, c.left)):
                if isinstance(a, Var) and a.name not in bound and not a.anonymous and (
                        not isinstance(b, Var) or b.name in bound):
                    bound.add(a.name)
                    changed = True
    need: list[str] = [v.name for v in r.head.vars()]
    for c in r.compares():
        need += [v.name for v in c.vars()]
    for n in r.negatives():
        need += [v.name for v in n.vars()]
    bad = sorted({v for v in need if v not in bound})
    if any(isinstance(a, Var) and a.anonymous for a in r.head.args):
        bad.append("_ (in the head)")
    return bad


def _singletons(r: Rule) -> list[str]:
    counts: Counter[str] = Counter(v.name for v in r.head.vars())
    for lit in r.body:
        counts.update(v.name for v in lit.item.vars())
    return sorted(v for v, n in counts.items() if n == 1 and not v.startswith("_"))


def _components(atoms: list[Atom]) -> int:
    """Connected components of the positive body atoms, joined by shared variables (ground
    atoms are filters, not components)."""
    groups: list[set[str]] = []
    for a in atoms:
        vs = {v.name for v in a.vars()}
        if not vs:
            continue
        merged = [g for g in groups if g & vs]
        for g in merged:
            groups.remove(g)
            vs |= g
        groups.append(vs)
    return len(groups)


def lint(program: Program, *, fixtures: Path | None = None) -> list[Finding]:
    """Every finding, sorted by line. `fixtures`: the tests/rules folder (rule-without-fixture)."""
    out: list[Finding] = []
    f = program.file

    def add(sev: str, kind: str, line: int, msg: str) -> None:
        out.append(Finding(sev, kind, f, line, msg))

    arity: dict[str, tuple[int, int]] = dict(program.decls)
    for r in program.rules:
        for a in [r.head, *[lit.item for lit in r.body if isinstance(lit.item, Atom)]]:
            first = arity.setdefault(a.relation, (a.arity, r.line))
            if first[0] != a.arity:
                add("error", "arity_mismatch", r.line,
                    f"relation {a.relation} used with arity {a.arity} (expected {first[0]}, "
                    f"as at line {first[1]})")
    defined = program.derived() | program.inputs
    for name, (_, line) in program.decls.items():
        if name not in defined:
            add("warning", "undeclared_input", line,
                f".decl {name} has neither rules nor `.input {name}`")
    first_use: dict[str, int] = {}
    for r in program.rules:
        for a in [r.head, *[lit.item for lit in r.body if isinstance(lit.item, Atom)]]:
            first_use.setdefault(a.relation, r.line)
    for name, line in sorted(first_use.items(), key=lambda kv: kv[1]):
        if name not in program.decls:
            add("warning", "undeclared_relation", line,
                f"relation {name} has no `.decl {name}(...)`; declare every relation (Soufflé "
                "and other Datalog tools need it)")
    ids = Counter(r.rule_id for r in program.rules if r.rule_id)
    for r in program.rules:
        for a in [lit.item for lit in r.body if isinstance(lit.item, Atom)]:
            if a.relation not in defined:
                add("error", "undefined_relation", r.line,
                    f"{_rule_name(r)} uses {a.relation}/{a.arity}, which no rule or fact "
                    f"defines and no `.input {a.relation}` declares")
        if r.is_fact:
            if r.head.vars() or any(isinstance(t, Var) for t in r.head.args):
                add("error", "unsafe_variable", r.line, f"fact {r.head} has a variable")
            continue
        for v in _unsafe(r):
            add("error", "unsafe_variable", r.line,
                f"{_rule_name(r)}: variable {v} is not bound by a positive body atom")
        for v in _singletons(r):
            add("warning", "singleton_variable", r.line,
                f"{_rule_name(r)}: variable {v} is used once; write `_` if that is meant")
        if _components(r.positives()) > 1 and "cross_product" not in r.allows:
            add("warning", "cross_product", r.line,
                f"{_rule_name(r)}: body atoms share no variable (a cross product; pyDatalog "
                "is ~200x slower on it); join them, or add `// @allow cross_product`")
        if not r.rule_id:
            add("warning", "missing_rule_id", r.line,
                f"rule for {r.head.relation} has no `// @rule ID` comment above it")
        elif ids[r.rule_id] > 1:
            add("error", "duplicate_rule_id", r.line, f"rule id {r.rule_id} is used twice")
        elif fixtures is not None and "missing_fixture" not in r.allows and not any(
                (fixtures / r.rule_id).glob("*/expected")):
            add("warning", "missing_fixture", r.line,
                f"rule {r.rule_id} has no fixture: add tests/rules/{r.rule_id}/<case>/")
    bad = negative_cycle(program)
    if bad:
        cycle, rule = bad
        add("error", "unstratifiable", rule.line,
            f"negation inside recursion: {' -> '.join(cycle)} (through "
            f"!{rule.negatives()[0].relation}); the program has no stratified meaning")
    return sorted(out, key=lambda x: (x.line, x.severity, x.kind, x.message))


def lint_file(path: Path, *, fixtures: Path | None = None) -> list[Finding]:
    """Parse and lint; a parse error is one error finding at its file:line:col."""
    from plan07.engine.parser import parse_file

    try:
        program = parse_file(path)
    except RuleError as exc:
        return [Finding("error", "parse_error", exc.file, exc.line, str(exc).split(": ", 1)[-1])]
    return lint(program, fixtures=fixtures)
