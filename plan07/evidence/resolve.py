"""Cross-file resolution: every module's raw facts -> the recon graph (qualified nodes, typed
edges). Pure. A reference resolved by type and import is a `calls`/`references` edge; a method
call on a receiver of unknown type (`obj.m()` on an untyped parameter) is kept as a lower-
confidence may-call `by_name` edge to the in-repo methods named `m`, unless that name is
ambiguous (more than BY_NAME_MAX_FAMILIES unrelated definitions, or BY_NAME_MAX_TARGETS in all);
anything else unresolved (builtins, other packages) is dropped (docs/evidence.md "Recon").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter

from plan07.evidence.facts import CallRef, Chain, Def, ModuleFacts
from plan07.evidence.index import ASK, CALLABLE_KINDS, CLASSLIKE, Answers, Index
from plan07.model import ReconEdge, ReconNode

CONFIG_SUFFIXES = ("Config", "Settings", "Options", "Conf")
SCHEMA_BASES = {  # external bases that make a class a schema type (resolved dotted names)
    "pydantic.BaseModel", "pydantic.main.BaseModel", "pydantic.v1.BaseModel",
    "typing.TypedDict", "typing_extensions.TypedDict", "typing.NamedTuple",
    "django.db.models.Model", "django.db.models.base.Model", "msgspec.Struct",
}
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
    kinds, defs = ix.kind, ix.defs  # signature
    for name, m in ix.modules.items():
        rows.append((name, m.kind, m.file, 1, None))
        if m.doc:
            out.docs[name] = m.doc
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
        _calls(ix, out, group, name, m, None, m.top_calls, m.top_by_name, m.top_refs, False,
               answers, guessed)
        for model in _migration_targets(ix, m):
            if model != name:
                group.add((model, "writes"))
    last = renamed = None
    for eid, (m, d) in defs.items():
        if m is not last:  # the defs come module by module
            last, renamed = m, f"{m.name}.__init__"
            answers, guessed = ix.tables(m)
        kind = kinds[eid]
        fields = kind in ("schema", "config") and d.field_signature
        rows.append((eid, kind, m.file, d.line, (d.field_signature if fields else d.signature)
                     or None))
        if d.doc:
            out.docs[eid] = d.doc
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
            _calls(ix, out, mine, eid, m, eid if classlike else owner, d.calls, d.by_name,
                   d.refs, kind == "test", answers, guessed)
        _arity(ix, out, eid, kind, d)
    rows.sort(key=itemgetter(0))  # by id (stable, as sorting the nodes by id was)
    # the models' own validator on plain dicts: what their __init__ runs, less its frame
    node = ReconNode.__pydantic_validator__.validate_python
    edge = ReconEdge.__pydantic_validator__.validate_python
    out.nodes = [node({"id": i, "kind": k, "file": f, "line": ln, "signature": sig})
                 for i, k, f, ln, sig in rows]
    out.edges = [edge({"src": s, "dst": t, "kind": k})
                 for s in sorted(edges) for t, k in sorted(edges[s])]
    return out


def _calls(ix: Index, out: ReconResult, mine: set[tuple[str, str]], src: str, m: ModuleFacts,
           cls: str | None, calls: list[CallRef], by_name: Sequence[CallRef],
           refs: Sequence[Chain], test: bool, answers: Answers,
           guessed: dict[Chain, bool]) -> None:
    """`src`'s calls, by-name calls and references, as edges into `mine` (src's own);
    `answers`, `guessed`: `ix.tables(m)`."""
    resolved: set[str] = set()
    # (method name, arguments passed) of each may-call by name; `_passes` is the arguments
    guesses = [(chain[-1], _passes(nargs, kws)) for chain, nargs, kws in by_name] if by_name else []
    kind, passed = ix.kind, out.passed
    for chain, nargs, kws in calls:
        dst = answers.get(chain, ASK)
        if dst is ASK:
            dst = ix.ask(m, chain, cls, answers)
        if dst is None:
            g = guessed.get(chain)
            if g is None:
                g = ix.unknown(m, chain, cls, guessed)
            if g:
                guesses.append((chain[-1], _passes(nargs, kws)))
            continue
        k = kind[dst]
        if k == "module" or k == "migration":
            continue
        resolved.add(dst)
        if dst != src:
            mine.add((dst, "calls"))
            if test and k != "test":
                mine.add((dst, "tests"))  # a test exercises what it calls (§3.2)
        n = 10_000 if "**" in kws else nargs + len(kws)  # `_passes`, inlined
        key = (src, dst)
        old = passed.get(key)
        if old is None or n < old:  # the fewest arguments the caller passes the callee
            passed[key] = n
    inside = src + "."
    for name, n in guesses:  # may-calls by name (lower confidence in impact), never beside a
        for dst in ix.by_name(name):  # resolved one
            if dst not in resolved and not dst.startswith(inside) and dst != src:
                mine.add((dst, "by_name"))
                key = (src, dst)
                old = passed.get(key)
                if old is None or n < old:
                    passed[key] = n
    for ch in refs:  # a function passed as a value: a reference (callback, registry, handler)
        dst = answers.get(ch, ASK)
        if dst is ASK:
            dst = ix.ask(m, ch, cls, answers)
        if dst is not None and dst != src and kind[dst] in CALLABLE_KINDS:
            mine.add((dst, "references"))


def _passes(nargs: int, keywords: tuple[str, ...]) -> int:
    """The arguments a call passes (a `**kw` call: any number, 10,000)."""
    return 10_000 if "**" in keywords else nargs + len(keywords)


def _arity(ix: Index, out: ReconResult, eid: str, kind: str, d: Def) -> None:
    """(parameters a caller may pass, how many have defaults), for default_change impact."""
    if kind in ("function", "method"):
        bound = kind == "method" and d.params[:1] in (["self"], ["cls"])
        params = d.params[1:] if bound else d.params
        out.arity[eid] = (len(params), d.defaults)
    elif kind in ("schema", "config") and d.params:
        out.arity[eid] = (len(d.params), d.field_defaults)
    elif kind == "class" and (init := ix.member(eid, "__init__")):
        _, di = ix.defs[init]
        out.arity[eid] = (max(len(di.params) - 1, 0), di.defaults)


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
