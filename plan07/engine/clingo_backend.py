"""The clingo backend (the fast path): IR -> ASP text -> ground + solve -> the model. Pure
(clingo is imported lazily, inside the call). A stratified program has exactly one model."""

from __future__ import annotations

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
    return "\n".join(
        f"{rel}({','.join(_const(v) for v in t)})."
        for rel, ts in facts.items() if rel in arities for t in ts
    )


def evaluate(program: Program, facts: Facts) -> Facts:
    import clingo

    arities = program.arities()
    ctl = clingo.Control(["--warn=none"], logger=lambda _code, _msg: None)
    ctl.add("base", [], translate(program) + "\n" + _facts_text(facts, arities))
    ctl.ground([("base", [])])
    model: Facts = {rel: set() for rel in arities}

    def on_model(m: object) -> None:
        for sym in m.symbols(atoms=True):  # type: ignore[attr-defined]
            if sym.name in model and len(sym.arguments) == arities[sym.name]:
                model[sym.name].add(_tuple(sym.arguments))

    ctl.solve(on_model=on_model)
    return model


def _tuple(args: list[object]) -> Tuple_:
    import clingo

    out: list[str | int] = []
    for a in args:
        if a.type == clingo.SymbolType.Number:  # type: ignore[attr-defined]
            out.append(a.number)  # type: ignore[attr-defined]
        elif a.type == clingo.SymbolType.String:  # type: ignore[attr-defined]
            out.append(a.string)  # type: ignore[attr-defined]
        else:
            out.append(str(a))
    return tuple(out)
