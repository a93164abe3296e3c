"""The clingo backend (the fast path): IR -> ASP text -> ground + solve -> the model. Pure
(clingo is imported lazily, inside the call). A stratified program has exactly one model."""

from __future__ import annotations

import re

from plan07.engine.ir import Compare, Const, Facts, Literal, Program, Term, Tuple_


def _const(v: object) -> str:
    if isinstance(v, int):
        return str(v)
    s = str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{s}"'


def _term(t: Term) -> str:
    return _const(t.value) if isinstance(t, Const) else t.name


def _literal(lit: Literal) -> str:
    if isinstance(lit.item, Compare):
        return f"{_term(lit.item.left)} {lit.item.op} {_term(lit.item.right)}"
    a = lit.item
    text = f"{a.relation}({', '.join(_term(t) for t in a.args)})"
    return ("not " if lit.negated else "") + text


def translate(program: Program) -> str:
    out = []
    for r in program.rules:
        head = f"{r.head.relation}({', '.join(_term(t) for t in r.head.args)})"
        out.append(head + ("." if r.is_fact else f" :- {', '.join(_literal(b) for b in r.body)}."))
    return "\n".join(out)


def _facts_text(facts: Facts, arities: dict[str, int]) -> str:
    memo: dict[object, str] = {}

    def const(v: object) -> str:
        text = memo.get(v)
        if text is None:
            text = memo[v] = _const(v)
        return text

    return "\n".join(f"{rel}({','.join(map(const, t))})."
                     for rel, ts in facts.items() if rel in arities for t in ts)


_ARG = re.compile(r'"((?:\\.|[^"\\])*)"|(-?[0-9]+)|([^,()"]+)')
_UNESCAPE = re.compile(r"\\(.)")


def _parse(atom: str) -> tuple[str, Tuple_]:
    """`rel("a","b",3)` (clingo's text of a symbol) -> ("rel", ("a", "b", 3)). One C call per
    atom (str) instead of one per argument: cffi attribute access dominated otherwise."""
    name, _, rest = atom.partition("(")
    out: list[str | int] = []
    for s, n, other in _ARG.findall(rest[:-1]):
        if n:
            out.append(int(n))
        elif other:
            out.append(other)
        else:
            out.append(_UNESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), s))
    return name, tuple(out)


def evaluate(program: Program, facts: Facts) -> Facts:
    """The full model: the input facts of the program's relations, plus every derived tuple
    (clingo shows only the derived relations; the inputs are known already). Without the clingo
    extra: one InputError naming the `pip install` to run."""
    from plan07 import extras

    clingo = extras.require("clingo", "--engine clingo")

    arities = program.arities()
    derived = program.derived()
    shows = "\n".join(f"#show {rel}/{arities[rel]}." for rel in sorted(derived))
    ctl = clingo.Control(["--warn=none"], logger=lambda _code, _msg: None)
    ctl.add("base", [], "\n".join([translate(program), _facts_text(facts, arities), shows]))
    ctl.ground([("base", [])])
    model: Facts = {rel: set(facts.get(rel, ())) for rel in arities}
    texts: list[str] = []
    ctl.solve(on_model=lambda m: texts.extend(str(s) for s in m.symbols(shown=True)))
    for text in texts:
        rel, t = _parse(text)
        if rel in derived and len(t) == arities[rel]:
            model[rel].add(t)
    return model
