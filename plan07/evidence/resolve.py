"""Cross-file resolution: every module's raw facts -> the recon graph (qualified nodes, typed
edges). Pure. A reference resolved by type and import is a `calls`/`references` edge; a method
call on a receiver of unknown type (`obj.m()` on an untyped parameter) is kept as a lower-
confidence may-call `by_name` edge to the in-repo methods named `m`, unless that name is
ambiguous (more than BY_NAME_MAX_FAMILIES unrelated definitions, or BY_NAME_MAX_TARGETS in all);
anything else unresolved (builtins, other packages) is dropped (docs/evidence.md "Recon").
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import cast

from plan07.caps import ENTITY_MAX_CHARS
from plan07.evidence.facts import CallRef, Chain, Def, ModuleFacts
from plan07.model import EdgeKind, NodeKind, ReconEdge, ReconNode

CLASSLIKE = {"class", "schema", "config", "test"}
CONFIG_SUFFIXES = ("Config", "Settings", "Options", "Conf")
SCHEMA_BASES = {  # external bases that make a class a schema type (resolved dotted names)
    "pydantic.BaseModel", "pydantic.main.BaseModel", "pydantic.v1.BaseModel",
    "typing.TypedDict", "typing_extensions.TypedDict", "typing.NamedTuple",
    "django.db.models.Model", "django.db.models.base.Model", "msgspec.Struct",
}
CONFIG_BASES = {"pydantic_settings.BaseSettings", "pydantic.BaseSettings"}
MAX_ALIAS_HOPS = 12
# by_name may-call edges (design.md "Consumers in untyped Python"): a method name defined by more
# unrelated class hierarchies than this (a `get`, `run`, `close` of many classes) says nothing
# about which one a call reaches, so it gets no edge; nor does one with more definitions in all.
BY_NAME_MAX_FAMILIES = 4
BY_NAME_MAX_TARGETS = 12
CALLABLE_KINDS = {"function", "method"}
_BUILTINS = frozenset(dir(builtins))


@dataclass
class ReconResult:
    """The recon graph plus what impact analysis needs and the bundle does not carry."""

    nodes: list[ReconNode]
    edges: list[ReconEdge]
    docs: dict[str, str] = field(default_factory=dict)  # entity -> first docstring line
    arity: dict[str, tuple[int, int]] = field(default_factory=dict)  # entity -> (params, defaults)
    passed: dict[tuple[str, str], int] = field(default_factory=dict)  # (caller, callee) -> min args
    warnings: list[str] = field(default_factory=list)


class _Index:
    def __init__(self, modules: Iterable[ModuleFacts]) -> None:
        self.modules: dict[str, ModuleFacts] = {}
        self.defs: dict[str, tuple[ModuleFacts, Def]] = {}
        self.kind: dict[str, str] = {}
        self.warnings: list[str] = []
        self._canon: dict[str, str | None] = {}
        self._mro: dict[str, list[str]] = {}
        self._busy: set[str] = set()
        self._by_name: dict[str, list[str]] | None = None
        self._may_call: dict[str, list[str]] = {}  # by_name's answer per name (it is pure)
        self._resolved: dict[tuple[str, str | None], dict[Chain, str | None]] = {}
        self._unknown: dict[tuple[str, str | None, Chain], bool] = {}
        modules = list(modules)
        names = {m.name for m in modules}
        for m in modules:
            if m.name in self.modules:
                self.warnings.append(f"{m.file}: module {m.name} already read from "
                                     f"{self.modules[m.name].file}; skipped")
                continue
            if len(m.name) > ENTITY_MAX_CHARS:
                self.warnings.append(f"{m.file}: module name longer than {ENTITY_MAX_CHARS} "
                                     "characters (ENTITY_MAX_CHARS); skipped")
                continue
            self.modules[m.name] = m
            self.kind[m.name] = m.kind
            for d in m.defs:
                eid = f"{m.name}.{d.qualname}"
                if m.is_package and f"{m.name}.{d.qualname.split('.')[0]}" in names:
                    # pkg/__init__.py defines `foo` beside pkg/foo.py: one id per node, the
                    # module keeps `pkg.foo`, the definition is `pkg.__init__.foo`
                    eid = f"{m.name}.__init__.{d.qualname}"
                if len(eid) > ENTITY_MAX_CHARS:
                    self.warnings.append(f"{m.file}:{d.line}: {d.qualname[:60]}...: name longer "
                                         f"than {ENTITY_MAX_CHARS} characters; skipped")
                    continue
                if eid in self.defs:  # @overload stubs, or if/else twins: one entity, merged
                    prev = self.defs[eid][1]  # into a copy: the caller's facts stay as given
                    d = replace(d, calls=prev.calls + d.calls, by_name=prev.by_name + d.by_name,
                                refs=prev.refs + d.refs,
                                annotations=prev.annotations + d.annotations,
                                attr_types={**prev.attr_types, **d.attr_types})
                self.defs[eid] = (m, d)
                self.kind[eid] = d.kind

    # -- names ------------------------------------------------------------------------------

    def canon(self, q: str, hops: int = 0) -> str | None:
        """The entity a dotted name denotes, chasing re-exports (`pkg.X` bound in pkg/__init__)
        and class members through in-repo bases; None when it is not in this repository."""
        if q in self.kind:
            return q
        if q in self._canon:
            return self._canon[q]
        result: str | None = None
        head, _, last = q.rpartition(".")
        if head and hops < MAX_ALIAS_HOPS:
            h = self.canon(head, hops + 1)
            if h is not None:
                if f"{h}.{last}" in self.kind:
                    result = f"{h}.{last}"
                elif h in self.modules and last in self.modules[h].bindings:
                    target = self.modules[h].bindings[last]
                    result = self.canon(target, hops + 1) if target != q else None
                elif self.kind[h] in CLASSLIKE:
                    result = self.member(h, last)
                elif (rt := self.return_type(h)) is not None:  # `get_console().print`
                    result = self.member(rt, last)
            else:  # `Cls().attr.m`: the attribute's declared class, when it has m
                owner, _, attr = head.rpartition(".")
                o = self.canon(owner, hops + 1) if owner else None
                t = self.attr_type(o, attr) if o and self.kind[o] in CLASSLIKE else None
                result = self.member(t, last) if t else None
        self._canon[q] = result
        return result

    def mro(self, cls: str) -> list[str]:
        """`cls` and its in-repo bases, depth-first left to right, each once."""
        if cls not in self._mro:
            self._mro[cls] = [cls]  # guards against an inheritance cycle
            out = [cls]
            for b in self.bases(cls):
                out += [x for x in self.mro(b) if x not in out]
            self._mro[cls] = out
        return self._mro[cls]

    def bases(self, cls: str) -> list[str]:
        m, d = self.defs[cls]
        outer = self.owner_class(cls)
        resolved = [self.canon(q) for c in d.bases if (q := self.qualify(m, c, outer))]
        return [b for b in resolved if b and self.kind.get(b) in CLASSLIKE and b != cls]

    def member(self, cls: str, name: str) -> str | None:
        for c in self.mro(cls):
            if f"{c}.{name}" in self.kind:
                return f"{c}.{name}"
        return None

    def attr_type(self, cls: str, attr: str) -> str | None:
        for c in self.mro(cls):
            m, d = self.defs[c]
            if attr in d.attr_types and (q := self.qualify(m, d.attr_types[attr], None)):
                t = self.canon(q)
                return t if t and self.kind[t] in CLASSLIKE else None
        return None

    def return_type(self, fn: str) -> str | None:
        """The class a function's return annotation names, when it is one in-repo class."""
        if self.kind.get(fn) not in ("function", "method"):
            return None
        m, d = self.defs[fn]
        if d.returns is None or d.returns[0] in ("self", "super") or fn in self._busy:
            return None
        if d.returns == ("Self",) or d.returns == ("typing", "Self"):
            return self.owner_class(fn)
        self._busy.add(fn)  # an annotation that names itself through a call chain: no loop
        t = self.resolve(m, d.returns, None)
        self._busy.discard(fn)
        return t if t is not None and self.kind[t] in CLASSLIKE else None

    def owner_class(self, eid: str) -> str | None:
        parent = eid.rpartition(".")[0]
        return parent if self.kind.get(parent) in CLASSLIKE else None

    def qualify(self, m: ModuleFacts, chain: Chain, cls: str | None) -> str | None:
        """A raw chain in module `m` (inside class `cls`) -> a dotted name, not yet canonical."""
        head, rest = chain[0], chain[1:]
        if head in ("self", "super"):
            if cls is None or not rest:
                return None
            classes = self.mro(cls)[1:] if head == "super" else self.mro(cls)
            found = next((f"{c}.{rest[0]}" for c in classes if f"{c}.{rest[0]}" in self.kind), None)
            if found:
                return ".".join([found, *rest[1:]])
            if head == "self" and len(rest) > 1 and (t := self.attr_type(cls, rest[0])):
                return ".".join([t, *rest[1:]])  # self.x.m() with the class of x known
            return None
        if f"{m.name}.{head}" in self.defs:
            base = f"{m.name}.{head}"
        elif head in m.bindings:
            base = m.bindings[head]
        elif rest and (held := m.var_types.get(head)) and held[0] not in m.var_types:
            t = self.resolve(m, held, None)  # `console = Console()` at module level
            if t is None or self.kind[t] not in CLASSLIKE:
                return None
            base = t
        else:
            return None  # a builtin, an untyped global, or something undefined: not guessed
        return ".".join([base, *rest])

    def resolve(self, m: ModuleFacts, chain: Chain, cls: str | None) -> str | None:
        q = self.qualify(m, chain, cls)
        return self.canon(q) if q else None

    def lookups(self, m: ModuleFacts, cls: str | None) -> dict[Chain, str | None]:
        """`resolve`'s answers in module `m`, class `cls`, remembered: for build_recon's own
        (outermost) lookups once the kinds are classified, where the same reference asked again
        gets the same answer (every lookup it makes is itself remembered); most references in a
        module repeat (sympy: 82%)."""
        key = (m.name, cls)
        known = self._resolved.get(key)
        if known is None:
            known = self._resolved[key] = {}
        return known

    def resolved(self, m: ModuleFacts, chain: Chain, cls: str | None) -> str | None:
        """`resolve`, remembered in `lookups`."""
        known = self.lookups(m, cls)
        dst = known.get(chain, _ASK)
        if dst is _ASK:
            dst = known[chain] = self.resolve(m, chain, cls)
        return dst

    def unknown_receiver(self, m: ModuleFacts, chain: Chain, cls: str | None) -> bool:
        """Whether an unresolved call `chain` is a method call on a receiver whose type is not
        known (a by-name candidate), rather than a call into another package or a builtin."""
        if len(chain) < 2 or chain[0] == "super":
            return False
        head = chain[0]
        if head == "self":  # self.m() not found in-repo is an external base's; self.x.m() is not
            return len(chain) > 2 and cls is not None
        if head in m.bindings or head in _BUILTINS:
            target = m.bindings.get(head)
            if target is None:
                return False
            # `f().m()` / `mod.f().m()` with f in-repo and no return type: unknown receiver
            return any(self.kind.get(c) in CALLABLE_KINDS
                       for c in [self.canon(".".join([target, *chain[1:i]]))
                                 for i in range(1, len(chain))] if c)
        if f"{m.name}.{head}" in self.defs:
            base = f"{m.name}.{head}"
            return any(self.kind.get(c) in CALLABLE_KINDS
                       for c in [self.canon(".".join([base, *chain[1:i]]))
                                 for i in range(1, len(chain))] if c)
        return True  # an untyped module-level variable or an undefined name

    def unknown(self, m: ModuleFacts, chain: Chain, cls: str | None) -> bool:
        """`unknown_receiver`, remembered (as `lookups`, for build_recon's own lookups)."""
        key = (m.name, cls, chain)
        hit = self._unknown.get(key)
        if hit is None:
            hit = self._unknown[key] = self.unknown_receiver(m, chain, cls)
        return hit

    def by_name(self, name: str) -> list[str]:
        """The in-repo methods named `name` a by-name call may reach; [] when ambiguous."""
        found = self._may_call.get(name)
        if found is None:
            found = self._may_call[name] = self._by_name_of(name)
        return found

    def _by_name_of(self, name: str) -> list[str]:
        if self._by_name is None:
            table: dict[str, list[str]] = {}
            for eid in self.defs:
                if self.kind[eid] == "method":
                    table.setdefault(eid.rpartition(".")[2], []).append(eid)
            self._by_name = table
        if name.startswith("__") and name.endswith("__"):
            return []  # dunders are protocol methods every class may have
        found = self._by_name.get(name, [])
        if not found or len(found) > BY_NAME_MAX_TARGETS:
            return []
        families = {self.family_root(e) for e in found}
        return sorted(found) if len(families) <= BY_NAME_MAX_FAMILIES else []

    def family_root(self, method: str) -> str:
        """The topmost in-repo class defining `method`'s name in its owner's bases: overrides of
        one method are one family."""
        owner, _, name = method.rpartition(".")
        if self.kind.get(owner) not in CLASSLIKE:
            return method
        roots = [c for c in self.mro(owner) if f"{c}.{name}" in self.kind]
        return f"{roots[-1]}.{name}"


def build_recon(modules: Iterable[ModuleFacts]) -> ReconResult:
    """Nodes and edges of the whole repository from its modules' facts (sorted, deduplicated)."""
    ix = _Index(modules)
    _classify(ix)
    out = ReconResult([], [], warnings=ix.warnings)
    edges: set[tuple[str, str, str]] = set()

    def add(src: str, dst: str | None, kind: str) -> None:
        if dst is not None and dst != src:
            edges.add((src, dst, kind))

    rows: list[tuple[str, str, str, int, str | None]] = []  # the nodes: id, kind, file, line,
    kinds = ix.kind  # signature
    for name, m in ix.modules.items():
        rows.append((name, m.kind, m.file, 1, None))
        if m.doc:
            out.docs[name] = m.doc
        for imp in m.imports:
            target = ix.canon(imp)
            if target is not None and target not in ix.modules:
                add(name, ix.canon(target.rpartition(".")[0]) if target in ix.defs else None,
                    "imports")  # the symbol's own module is imported too
            add(name, target, "imports")
        _calls(ix, out, edges, name, m, None, m.top_calls, test=False, by_name=m.top_by_name,
               refs=m.top_refs)
        for model in _migration_targets(ix, m):
            add(name, model, "writes")
    for eid, (m, d) in ix.defs.items():
        kind = kinds[eid]
        fields = kind in ("schema", "config") and d.field_signature
        rows.append((eid, kind, m.file, d.line, (d.field_signature if fields else d.signature)
                     or None))
        if d.doc:
            out.docs[eid] = d.doc
        parent = eid.rpartition(".")[0]
        owner = parent if kinds.get(parent) in CLASSLIKE else None  # ix.owner_class(eid)
        if parent == f"{m.name}.__init__":  # renamed beside a same-named module (above)
            parent = m.name
        add(parent, eid, "defines")
        classlike = kind in CLASSLIKE
        if classlike:
            for b in ix.bases(eid):
                add(eid, b, "inherits")
        if d.annotations:
            known = ix.lookups(m, owner)
            for c in d.annotations:
                t = known.get(c, _ASK)
                if t is _ASK:
                    t = known[c] = ix.resolve(m, c, owner)
                if t is not None and kinds[t] in CLASSLIKE and kinds[t] != "test":
                    add(eid, t, "uses_type")
        _calls(ix, out, edges, eid, m, eid if classlike else owner, d.calls, test=kind == "test",
               by_name=d.by_name, refs=d.refs)
        _arity(ix, out, eid, d)
    rows.sort(key=itemgetter(0))  # by id (stable, as sorting the nodes by id was)
    out.nodes = [ReconNode(id=i, kind=cast(NodeKind, k), file=f, line=ln, signature=sig)
                 for i, k, f, ln, sig in rows]
    out.edges = [ReconEdge(src=s, dst=t, kind=cast(EdgeKind, k)) for s, t, k in sorted(edges)]
    return out


def _calls(ix: _Index, out: ReconResult, edges: set[tuple[str, str, str]], src: str,
           m: ModuleFacts, cls: str | None, calls: list[CallRef], *, test: bool,
           by_name: Sequence[CallRef] = (), refs: Sequence[Chain] = ()) -> None:
    resolved: set[str] = set()
    # (method name, arguments passed) of each may-call by name; `_passes` is the arguments
    guesses = [(chain[-1], _passes(nargs, kws)) for chain, nargs, kws in by_name]
    kind, passed, known = ix.kind, out.passed, ix.lookups(m, cls)
    for chain, nargs, kws in calls:
        dst = known.get(chain, _ASK)
        if dst is _ASK:
            dst = known[chain] = ix.resolve(m, chain, cls)
        if dst is None:
            if ix.unknown(m, chain, cls):
                guesses.append((chain[-1], _passes(nargs, kws)))
            continue
        k = kind[dst]
        if k == "module" or k == "migration":
            continue
        resolved.add(dst)
        if dst != src:
            edges.add((src, dst, "calls"))
            if test and k != "test":
                edges.add((src, dst, "tests"))  # a test exercises what it calls (§3.2)
        n = 10_000 if "**" in kws else nargs + len(kws)  # `_passes`, inlined
        key = (src, dst)
        old = passed.get(key)
        if old is None or n < old:  # the fewest arguments the caller passes the callee
            passed[key] = n
    inside = src + "."
    for name, n in guesses:  # may-calls by name (lower confidence in impact), never beside a
        for dst in ix.by_name(name):  # resolved one
            if dst not in resolved and not dst.startswith(inside) and dst != src:
                edges.add((src, dst, "by_name"))
                key = (src, dst)
                old = passed.get(key)
                if old is None or n < old:
                    passed[key] = n
    for ch in refs:  # a function passed as a value: a reference (callback, registry, handler)
        dst = known.get(ch, _ASK)
        if dst is _ASK:
            dst = known[ch] = ix.resolve(m, ch, cls)
        if dst is not None and dst != src and kind[dst] in CALLABLE_KINDS:
            edges.add((src, dst, "references"))


_ASK = "?"  # not yet looked up (no entity id is "?": ids are dotted Python names)


def _passes(nargs: int, keywords: tuple[str, ...]) -> int:
    """The arguments a call passes (a `**kw` call: any number, 10,000)."""
    return 10_000 if "**" in keywords else nargs + len(keywords)


def _arity(ix: _Index, out: ReconResult, eid: str, d: Def) -> None:
    """(parameters a caller may pass, how many have defaults), for default_change impact."""
    kind = ix.kind[eid]
    if kind in ("function", "method"):
        bound = kind == "method" and d.params[:1] in (["self"], ["cls"])
        params = d.params[1:] if bound else d.params
        out.arity[eid] = (len(params), d.defaults)
    elif kind in ("schema", "config") and d.params:
        out.arity[eid] = (len(d.params), d.field_defaults)
    elif kind == "class" and (init := ix.member(eid, "__init__")):
        _, di = ix.defs[init]
        out.arity[eid] = (max(len(di.params) - 1, 0), di.defaults)


def _classify(ix: _Index) -> None:
    """Schema and config types: pydantic models, dataclasses, TypedDicts, NamedTuples, Django
    models, and classes inheriting (in-repo) from one; `config` when named like one."""
    for eid in sorted(ix.defs, key=len):
        m, d = ix.defs[eid]
        if ix.kind[eid] != "class":
            continue
        external = {q for c in d.bases if (q := ix.qualify(m, c, ix.owner_class(eid)))}
        inherited = {ix.kind.get(b) for c in ix.mro(eid)[1:] for b in [c]}
        if external & CONFIG_BASES or (
            (d.structured or external & SCHEMA_BASES or inherited & {"schema", "config"})
            and eid.endswith(CONFIG_SUFFIXES)
        ) or "config" in inherited:
            ix.kind[eid] = "config"
        elif d.structured or external & SCHEMA_BASES or "schema" in inherited:
            ix.kind[eid] = "schema"


def _migration_targets(ix: _Index, m: ModuleFacts) -> list[str]:
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
