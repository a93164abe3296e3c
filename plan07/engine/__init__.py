"""The rule engine: parse a .dl file once into the IR, check it stratifies, evaluate it on a
backend (pyDatalog, the default; clingo, the fast path). Pure apart from reading the rule file.

`evaluate(program, facts, engine)` returns the full materialized model: relation -> tuples.
"""

from __future__ import annotations

import os
from pathlib import Path

from plan07.engine import cache
from plan07.engine.ir import Facts, Program
from plan07.errors import InputError, RuleError
from plan07.store.boundedio import read_bytes

ENGINES = ("pydatalog", "clingo")
# rules/ordering.dl at the top of the source tree (editable installs, the repo's own tests); a
# regular install ships the same file as package data `plan07.rules` (pyproject package-dir).
_SOURCE_RULES = Path(__file__).resolve().parents[2] / "rules" / "ordering.dl"
DEFAULT_RULES = (
    _SOURCE_RULES
    if _SOURCE_RULES.is_file()
    else Path(__file__).resolve().parents[1] / "rules" / "ordering.dl"
)

_cache: dict[tuple[str, int, int], Program] = {}


def rules_path(path: Path | None = None) -> Path:
    """The rule file: an explicit path, else $PLAN07_RULES, else rules/ordering.dl."""
    if path is not None:
        return Path(path)
    env = os.environ.get("PLAN07_RULES")
    return Path(env) if env else DEFAULT_RULES


def constants(relation: str, path: Path | None = None) -> tuple[str, ...]:
    """The values of a unary constant relation of the rule file (`breaking_cause("sig_change").`):
    plan07's Python reads the rules' constants from the program instead of restating them."""
    return load_program(path).constants(relation)


def violation_kinds(path: Path | None = None) -> list[str] | None:
    """The kinds the rule file's `violation(A, B, "kind")` heads name (docs/rules.md
    "Violations"), sorted; None when a head leaves the kind a variable (then any kind may hold)."""
    from plan07.engine.ir import Const

    kinds: set[str] = set()
    for r in load_program(path).rules:
        if r.head.relation == "violation" and r.head.args:
            kind = r.head.args[-1]
            if not isinstance(kind, Const):
                return None
            kinds.add(str(kind.value))
    return sorted(kinds)


def load_program(path: Path | None = None) -> Program:
    """Parse and stratify-check a rule file: once per process (by path, mtime and size), and
    across processes once per content (the parsed program pickled in the user cache,
    plan07.engine.cache; a corrupt or foreign entry is a miss)."""
    p = rules_path(path)
    try:
        st = p.stat()
        mem_key = (str(p.resolve()), st.st_mtime_ns, st.st_size)
    except OSError:
        mem_key = (str(p), -1, -1)
    prog = _cache.get(mem_key)
    if prog is not None:
        return prog
    try:
        data = read_bytes(p, what="rule file")
    except InputError as exc:  # missing, a FIFO, a directory, too big
        raise RuleError(exc.problem, file=str(p), line=0) from None
    k = cache.key(p, data)
    prog = cache.get(k)  # only a file that parsed has an entry: it was UTF-8
    if prog is None:
        from plan07.engine.parser import parse
        from plan07.engine.strata import stratify

        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:  # binary
            raise RuleError(f"rule file is not UTF-8 text (byte {exc.start}: {exc.reason})",
                            file=str(p), line=0) from None
        prog = parse(text, file=str(p))
        stratify(prog)  # unstratifiable negation is a RuleError, before any backend runs
        cache.put(k, prog)
    _cache[mem_key] = prog
    return prog


_slices: dict[tuple[int, tuple[str, ...]], tuple[Program, Program]] = {}


def sliced(program: Program, wanted: tuple[str, ...]) -> Program:
    """`program.slice(wanted)`, once per program object and process (a re-walk reads only
    `precedes` and `violation`: the plan lint's rules are neither loaded nor run for it)."""
    key = (id(program), wanted)
    hit = _slices.get(key)
    if hit is None or hit[0] is not program:
        if len(_slices) > 16:
            _slices.clear()
        hit = _slices[key] = (program, program.slice(wanted))
    return hit[1]


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}",
                         field="--engine")
    return engine


def evaluate(program: Program, facts: Facts, engine: str = "pydatalog") -> Facts:
    """The full model of `program` over `facts` on `engine`; every relation of the program is a
    key (empty set when nothing holds). The backend sees only the facts some rule can use
    (`relevance.prune`, which leaves the model as it is); the input relations of the model are
    the facts as given."""
    from plan07.engine.relevance import prune

    check_engine(engine)
    used = prune(program, facts)
    if engine == "clingo":
        from plan07.engine import clingo_backend

        model = clingo_backend.evaluate(program, used)
    else:
        from plan07.engine import pydatalog_backend

        model = pydatalog_backend.evaluate(program, used)
    for rel, ts in used.items():
        if ts is not facts[rel] and rel in model:
            model[rel] = set(facts[rel])
    return model
