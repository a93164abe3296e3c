"""Parse the Datalog subset of rules/*.dl into the IR (plan07.engine.ir). Pure (text in, IR out).

The subset is what Soufflé and clingo both read: `head :- body.`, facts, `!`/`not` negation,
quoted strings, integers, `=`/`!=`, `//` comments, plus Soufflé's `.decl`/`.input`. A comment
`// @rule ID` names the next rule; `// @allow LINT` silences a lint warning on it.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from plan07.engine.ir import Atom, Compare, Const, Literal, Program, Rule, Term, Var
from plan07.errors import InputError, RuleError

GRAMMAR = r"""
start: stmt*
?stmt: clause | decl | input_dir | output_dir
clause: atom [":-" body] "."
body: literal ("," literal)*
literal: atom                -> pos
       | NEG atom            -> neg
       | term CMP term       -> cmp
decl: ".decl" NAME "(" [param ("," param)*] ")"
param: NAME ":" NAME
input_dir: ".input" NAME
output_dir: ".output" NAME
atom: NAME "(" [term ("," term)*] ")"
term: VAR -> var
    | STRING -> string
    | INT -> int
NEG: "!" | /not\b/
CMP: "!=" | "="
NAME: /(?!not\b)[a-z][A-Za-z0-9_]*/
VAR: /[A-Z_][A-Za-z0-9_]*/
STRING: /"(\\.|[^"\\\n])*"/
INT: /-?[0-9]+/
COMMENT: /\/\/[^\n]*/
%import common.WS
%ignore WS
%ignore COMMENT
"""

_ANNOT = re.compile(r"^\s*//\s*@(rule|allow)\s+([A-Za-z0-9_.-]+)\s*$")


@cache
def _parser() -> object:
    from lark import Lark

    return Lark(GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=True)


def _unescape(tok: str) -> str:
    body = tok[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def _term(node: object) -> Term:
    from lark import Tree

    assert isinstance(node, Tree)
    tok = str(node.children[0])
    if node.data == "var":
        return Var(tok)
    if node.data == "string":
        return Const(_unescape(tok))
    return Const(int(tok))


def _atom(node: object) -> Atom:
    name, *args = node.children  # type: ignore[attr-defined]
    return Atom(str(name), tuple(_term(a) for a in args if a is not None))


def parse(text: str, file: str = "<string>") -> Program:
    """Parse rule text into a Program; a syntax error is a RuleError at file:line:col."""
    from lark.exceptions import UnexpectedInput

    try:
        tree = _parser().parse(text)  # type: ignore[attr-defined]
    except UnexpectedInput as exc:
        found = getattr(exc, "token", None) or getattr(exc, "char", None)
        what = f"unexpected {str(found)!r}" if found is not None else "unexpected input"
        expected = sorted(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or [])
        hint = f"; expected one of {', '.join(expected[:8])}" if expected else ""
        raise RuleError(f"syntax error: {what}{hint}", file=file, line=exc.line,
                        col=exc.column) from None
    prog = Program(file=file)
    annots = _annotations(text)
    for stmt in tree.children:
        line = stmt.meta.line
        if stmt.data == "decl":
            name, *params = stmt.children
            prog.decls[str(name)] = (len([p for p in params if p is not None]), line)
        elif stmt.data == "input_dir":
            prog.inputs.add(str(stmt.children[0]))
        elif stmt.data == "output_dir":
            prog.outputs.add(str(stmt.children[0]))
        else:
            head_node, body_node = stmt.children
            body = tuple(_literal(b) for b in body_node.children) if body_node else ()
            rule_id, allows = annots.pop_for(line)
            prog.rules.append(Rule(_atom(head_node), body, line=line, col=stmt.meta.column,
                                   rule_id=rule_id, allows=allows))
    return prog


def _literal(node: object) -> Literal:
    col = node.meta.column  # type: ignore[attr-defined]
    kids = node.children  # type: ignore[attr-defined]
    if node.data == "pos":  # type: ignore[attr-defined]
        return Literal(_atom(kids[0]), col=col)
    if node.data == "neg":  # type: ignore[attr-defined]
        return Literal(_atom(kids[1]), negated=True, col=col)
    return Literal(Compare(str(kids[1]), _term(kids[0]), _term(kids[2])), col=col)


class _Annotations:
    """`// @rule` / `// @allow` comments, handed to the first clause after them."""

    def __init__(self, items: list[tuple[int, str, str]]) -> None:
        self.items = items

    def pop_for(self, line: int) -> tuple[str | None, frozenset[str]]:
        mine = [it for it in self.items if it[0] < line]
        self.items = [it for it in self.items if it[0] >= line]
        ids = [v for _, k, v in mine if k == "rule"]
        return (ids[-1] if ids else None), frozenset(v for _, k, v in mine if k == "allow")


def _annotations(text: str) -> _Annotations:
    items = []
    for n, raw in enumerate(text.splitlines(), start=1):
        m = _ANNOT.match(raw)
        if m:
            items.append((n, m.group(1), m.group(2)))
    return _Annotations(items)


def parse_file(path: str | Path) -> Program:
    p = Path(path)
    from plan07.store.boundedio import read_text

    try:
        text = read_text(p, what="rule file")
    except InputError as exc:  # missing, a FIFO, a directory, too big, not UTF-8 (binary)
        raise RuleError(exc.problem, file=str(p), line=0) from None
    return parse(text, file=str(p))
