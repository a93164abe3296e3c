"""Cross-file resolution: every module's raw facts -> the recon graph (qualified nodes, typed
edges). Pure. A reference resolved by type and import is a `calls`/`references` edge; a method
call on a receiver of unknown type (`obj.m()` on an untyped parameter) is kept as a lower-
confidence may-call `by_name` edge to the in-repo methods named `m`, unless that name is
ambiguous (more than BY_NAME_MAX_FAMILIES unrelated definitions, or BY_NAME_MAX_TARGETS in all);
anything else unresolved (builtins, other packages) is dropped (docs/evidence.md "Recon").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from typing import Any, TypeVar, get_args

from pydantic import BaseModel

from plan07.caps import ENTITY_MAX_CHARS, FIELD_MAX_CHARS
from plan07.evidence.facts import CallRef, Chain, ModuleFacts
from plan07.evidence.index import ASK, CALLABLE_KINDS, CLASSLIKE, Answers, Index
from plan07.model import ReconEdge, ReconNode
from plan07.model.evidence import NodeKind

CONFIG_SUFFIXES = ("Config", "Settings", "Options", "Conf")
SCHEMA_BASES = {  # external bases that make a class a schema type (resolved dotted names)
    "pydantic.BaseModel", "pydantic.main.BaseModel", "pydantic.v1.BaseModel",
    "typing.TypedDict", "typing_extensions.TypedDict", "typing.NamedTuple",
    "django.db.models.Model", "django.db.models.base.Model", "msgspec.Struct",
}
M = TypeVar("M", bound=BaseModel)
# A node as build_recon lists it: (id, kind, file, line, signature), the values not yet checked
# (typed Any: `_fits` checks them, and the compiled module must not refuse them before it does)
Row = tuple[Any, Any, Any, Any, Any]
CONFIG_BASES = {"pydantic_settings.BaseSettings", "pydantic.BaseSettings"}


@dataclass
class ReconResult:
    """The recon graph plus what impact analysis needs and the bundle does not carry."""

    nodes: list[ReconNode]
    edges: list[ReconEdge]
    docs: dict[str, str] = field(default_factory=dict)  # entity -> first docstring line
    arity: dict[str, tuple[int, int]] = field(default_factory=dict)  # entity -> (params, defaults)
    passed: dict[tuple[str, str], int] = field(default_factory=dict)  # (caller, callee) -> min args
    warnings: list[str] = field(default_factory=list)


def build_recon(modules: Iterable[ModuleFacts]) -> ReconResult:
    """Nodes and edges of the whole repository from its modules' facts (sorted, deduplicated)."""
    ix = Index(modules)
    _classify(ix)
    out = ReconResult([], [], warnings=ix.warnings)
    # the edges by source: {src: {(dst, kind)}}, sorted by source, then within each source
    edges: dict[str, set[tuple[str, str]]] = {}
    rows: list[tuple[str, str, str, int, str | None]] = []  # the nodes: id, kind, file, line,
    kinds, defs, docs, arity = ix.kind, ix.defs, out.docs, out.arity  # signature
    for name, m in ix.modules.items():
        rows.append((name, m.kind, m.file, 1, None))
        if m.doc:
            docs[name] = m.doc
        group = edges[name] = set()
        for imp in m.imports:
            target = ix.canon(imp)
            if target is None or target == name:
                continue
            if target not in ix.modules and target in defs:  # the symbol's own module too
                owner = ix.canon(target.rpartition(".")[0])
                if owner is not None and owner != name:
                    group.add((owner, "imports"))
            group.add((target, "imports"))
        answers, guessed = ix.tables(m)
        if m.top_calls or m.top_by_name or m.top_refs:
            _calls(ix, out, group, name, m, None, m.top_calls, m.top_by_name, m.top_refs, False,
                   answers, guessed, ix.class_answers(m, None))
        if m.migration_models:
            for model in _migration_targets(ix, m):
                if model != name:
                    group.add((model, "writes"))
    last = renamed = None
    file = ""
    scope: str | None = ASK  # the class whose answer table `own` is ("?": none yet)
    own: Answers = {}
    for eid, (m, d) in defs.items():
        if m is not last:  # the defs come module by module
            last, renamed, file, scope = m, f"{m.name}.__init__", m.file, ASK
            answers, guessed = ix.tables(m)
        kind = kinds[eid]
        fields = (kind == "schema" or kind == "config") and d.field_signature
        rows.append((eid, kind, file, d.line, (d.field_signature if fields else d.signature)
                     or None))
        if d.doc:
            docs[eid] = d.doc
        parent = eid.rpartition(".")[0]
        owner = parent if kinds.get(parent) in CLASSLIKE else None  # ix.owner_class(eid)
        if parent == renamed:  # renamed beside a same-named module (above)
            parent = m.name
        up = edges.get(parent)
        if up is None:
            up = edges[parent] = set()
        up.add((eid, "defines"))  # (a parent is never its child)
        mine = edges.get(eid)
        if mine is None:
            mine = edges[eid] = set()
        classlike = kind in CLASSLIKE
        if classlike:
            for b in ix.bases(eid):  # (never eid itself)
                mine.add((b, "inherits"))
        if d.annotations:
            for c in d.annotations:
                t = answers.get(c, ASK)
                if t is ASK:
                    t = ix.ask(m, c, owner, answers)
                if t is not None and t != eid and kinds[t] in CLASSLIKE and kinds[t] != "test":
                    mine.add((t, "uses_type"))
        if d.calls or d.by_name or d.refs:
            cls = eid if classlike else owner
            if cls != scope:  # the methods of a class come one after another
                scope, own = cls, ix.class_answers(m, cls)
            _calls(ix, out, mine, eid, m, cls, d.calls, d.by_name, d.refs, kind == "test",
                   answers, guessed, own)
        # (parameters a caller may pass, how many have defaults), for default_change impact
        if kind == "function" or kind == "method":
            params = d.params
            bound = kind == "method" and params and (params[0] == "self" or params[0] == "cls")
            arity[eid] = (len(params) - 1 if bound else len(params), d.defaults)
        elif kind == "class":
            if init := ix.member(eid, "__init__"):
                di = defs[init][1]
                arity[eid] = (max(len(di.params) - 1, 0), di.defaults)
        elif (kind == "schema" or kind == "config") and d.params:
            arity[eid] = (len(d.params), d.field_defaults)
    rows.sort(key=itemgetter(0))  # by id (stable, as sorting the nodes by id was)
    out.nodes, out.edges = _models(rows, edges)
    return out


def _models(rows: Sequence[Row],
            edges: dict[str, set[tuple[str, str]]]) -> tuple[list[ReconNode], list[ReconEdge]]:
    """The nodes (from `rows`, in order) and the edges (by source, then target and kind) as
    models. When every node holds values the models accept (checked here in bulk, `_fits`),
    each model is made as validation would make it, without running the validator per object,
    and all of one class share one fields-set (pydantic only ever adds a field name to it, and
    every field is in it): on sphinx (33k models) 0.035 s and 9 MB against 0.107 s and 20 MB.
    The edges need no check of their own: build_recon adds an edge only with a kind written
    there (each one of EdgeKind) and ends that are node ids (each a key of the index's kinds,
    as the nodes are). Otherwise the validator runs and raises what it finds."""
    ids = {r[0] for r in rows}
    node_values = [{"id": i, "kind": k, "file": f, "line": ln, "signature": sig}
                   for i, k, f, ln, sig in rows]
    edge_values = [{"src": s, "dst": t, "kind": k} for s in sorted(edges) for g in [edges[s]]
                   for t, k in (sorted(g) if len(g) > 1 else g)]  # (one edge or none: sorted)
    if not (rows and _fits(rows, ids, edges)):
        node = ReconNode.__pydantic_validator__.validate_python
        edge = ReconEdge.__pydantic_validator__.validate_python
        return [node(v) for v in node_values], [edge(v) for v in edge_values]
    return _made(ReconNode, node_values), _made(ReconEdge, edge_values)


def _made(cls: type[M], values: Sequence[Mapping[str, object]]) -> list[M]:
    """One `cls` per dict of field values, each made as validation makes it (its `__dict__`,
    one shared fields-set, no extra, no private). Each step is a `map` over all of them, run in
    C: a Python loop per object cost a fifth more on sphinx."""
    n = len(values)
    out: list[M] = list(map(object.__new__, repeat(cls, n)))
    put_set, put_extra, put_private = _SLOTS
    deque(map(object.__setattr__, out, repeat("__dict__", n), values), 0)
    deque(map(put_set, out, repeat(set(cls.model_fields), n)), 0)
    deque(map(put_extra, out, repeat(None, n)), 0)
    deque(map(put_private, out, repeat(None, n)), 0)
    return out


def _fits(rows: Sequence[Row], ids: set[str],
          edges: dict[str, set[tuple[str, str]]]) -> bool:
    """Whether every node holds what ReconNode accepts (bundle.py): a known kind, an id of
    1..ENTITY_MAX_CHARS characters, a signature of at most FIELD_MAX_CHARS, a file and a line
    of their types; and every edge's source is a node. (Column by column, in C: a loop per row
    here cost a fifth of making the models.)"""
    _, kinds, files, lines, sigs = zip(*rows, strict=True)
    return (set(kinds) <= NODE_KINDS and set(map(type, files)) == {str}
            and set(map(type, lines)) == {int} and edges.keys() <= ids
            and min(map(len, ids)) >= 1 and max(map(len, ids)) <= ENTITY_MAX_CHARS
            and max(map(len, filter(None, sigs)), default=0) <= FIELD_MAX_CHARS)


# the slots every pydantic model has besides __dict__ (pydantic.BaseModel.__slots__), setters
_SLOTS = tuple(vars(BaseModel)[n].__set__ for n in (
    "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"))
NODE_KINDS = frozenset(get_args(NodeKind))


SKIP_CALLEES = frozenset({"module", "migration"})  # a call resolved to one of these: no edge


def _calls(ix: Index, out: ReconResult, mine: set[tuple[str, str]], src: str, m: ModuleFacts,
           cls: str | None, calls: list[CallRef], by_name: Sequence[CallRef],
           refs: Sequence[Chain], test: bool, answers: Answers,
           guessed: dict[Chain, bool], own: Answers) -> None:
    """`src`'s calls, by-name calls and references, as edges into `mine` (src's own);
    `answers`, `guessed`: `ix.tables(m)`; `own`: `ix.class_answers(m, cls)`."""
    resolved: set[str] = set()
    # (method name, arguments passed) of each may-call by name: a `**kw` call passes any number
    guesses = [(chain[-1], 10_000 if "**" in kws else nargs + len(kws))
               for chain, nargs, kws in by_name] if by_name else []
    kind, passed = ix.kind, out.passed
    for chain, nargs, kws in calls:
        dst = answers.get(chain, ASK)
        if dst is ASK:
            dst = ix.ask(m, chain, cls, answers, own)
        if dst is None:
            g = guessed.get(chain)
            if g is None:
                if chain[0] == "self":  # (unknown_receiver's own answer for self, inlined)
                    g = len(chain) > 2 and cls is not None
                else:
                    g = ix.unknown(m, chain, cls, guessed)
            if g:
                guesses.append((chain[-1], 10_000 if "**" in kws else nargs + len(kws)))
            continue
        k = kind[dst]
        if k in SKIP_CALLEES:
            continue
        resolved.add(dst)
        if dst != src:
            mine.add((dst, "calls"))
            if test and k != "test":
                mine.add((dst, "tests"))  # a test exercises what it calls (§3.2)
        n = 10_000 if "**" in kws else nargs + len(kws)  # the arguments passed
        key = (src, dst)
        old = passed.get(key)
        if old is None or n < old:  # the fewest arguments the caller passes the callee
            passed[key] = n
    if guesses:
        inside = src + "."
        may_call = ix.may_call
        for name, n in guesses:  # may-calls by name (lower confidence in impact), never beside
            targets = may_call.get(name)  # a resolved one
            if targets is None:
                targets = ix.by_name(name)
            for dst in targets:
                if dst not in resolved and dst != src and not dst.startswith(inside):
                    mine.add((dst, "by_name"))
                    key = (src, dst)
                    old = passed.get(key)
                    if old is None or n < old:
                        passed[key] = n
    for ch in refs:  # a function passed as a value: a reference (callback, registry, handler)
        dst = answers.get(ch, ASK)
        if dst is ASK:
            dst = ix.ask(m, ch, cls, answers, own)
        if dst is not None and dst != src and kind[dst] in CALLABLE_KINDS:
            mine.add((dst, "references"))


def _classify(ix: Index) -> None:
    """Schema and config types: pydantic models, dataclasses, TypedDicts, NamedTuples, Django
    models, and classes inheriting (in-repo) from one; `config` when named like one."""
    kinds = ix.kind  # (only this loop's own step changes a class's kind)
    for eid in sorted([e for e in ix.defs if kinds[e] == "class"], key=len):
        m, d = ix.defs[eid]
        external = {q for c in d.bases if (q := ix.qualify(m, c, ix.owner_class(eid)))}
        inherited = {ix.kind.get(b) for c in ix.mro(eid)[1:] for b in [c]}
        if external & CONFIG_BASES or (
            (d.structured or external & SCHEMA_BASES or inherited & {"schema", "config"})
            and eid.endswith(CONFIG_SUFFIXES)
        ) or "config" in inherited:
            ix.kind[eid] = "config"
        elif d.structured or external & SCHEMA_BASES or "schema" in inherited:
            ix.kind[eid] = "schema"


def _migration_targets(ix: Index, m: ModuleFacts) -> list[str]:
    """The Django model classes a migration names, found in its app (unique matches only)."""
    if not m.migration_models:
        return []
    parts = m.name.split(".")
    app = ".".join(parts[: parts.index("migrations")]) if "migrations" in parts else ""
    found: list[str] = []
    for model in m.migration_models:
        hits = [e for e in ix.defs if e.startswith(f"{app}.") and ix.kind[e] in CLASSLIKE
                and e.rpartition(".")[2].lower() == model.lower() and ".migrations." not in e]
        if len(hits) > 1:
            hits = [h for h in hits if h.startswith(f"{app}.models.")]
        if len(hits) == 1:
            found.append(hits[0])
    return found
