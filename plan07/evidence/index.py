"""The index cross-file resolution asks: every module and definition of the repository by id, and
the questions `build_recon` puts to it (what a dotted name or a raw chain denotes, a class's in-repo
bases and members, the methods a by-name call may reach), each answer remembered. Pure.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from dataclasses import replace

from plan07.caps import ENTITY_MAX_CHARS
from plan07.evidence.facts import Chain, Def, ModuleFacts

CLASSLIKE = {"class", "schema", "config", "test"}
MAX_ALIAS_HOPS = 12
# by_name may-call edges (design.md "Consumers in untyped Python"): a method name defined by more
# unrelated class hierarchies than this (a `get`, `run`, `close` of many classes) says nothing
# about which one a call reaches, so it gets no edge; nor does one with more definitions in all.
BY_NAME_MAX_FAMILIES = 4
BY_NAME_MAX_TARGETS = 12
CALLABLE_KINDS = {"function", "method"}
_BUILTINS = frozenset(dir(builtins))
SELF_HEADS = frozenset({"self", "super"})
Answers = dict[Chain, "str | None"]  # a chain -> the entity it denotes (None: not in-repo)
ASK = "?"  # not yet looked up (no entity id is "?": ids are dotted Python names)

class Index:
    def __init__(self, modules: Iterable[ModuleFacts]) -> None:
        self.modules: dict[str, ModuleFacts] = {}
        self.defs: dict[str, tuple[ModuleFacts, Def]] = {}
        self.kind: dict[str, str] = {}
        self.warnings: list[str] = []
        self._canon: dict[str, str | None] = {}
        self._mro: dict[str, list[str]] = {}
        self._busy: set[str] = set()
        self._by_name: dict[str, list[str]] | None = None
        self.may_call: dict[str, list[str]] = {}  # by_name's answer per name (it is pure)
        self._tables: dict[str, tuple[Answers, dict[Chain, bool]]] = {}
        self._class_answers: dict[tuple[str, str | None], Answers] = {}
        self._bases: dict[str, list[str]] = {}
        self._scope: dict[str, dict[str, str | None]] = {}  # per module: a name -> qualify's base
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
        result = self._canon.get(q, ASK)
        if result is not ASK:
            return result
        result = None
        head, _, last = q.rpartition(".")
        if head and hops < MAX_ALIAS_HOPS:
            h = self.canon(head, hops + 1)
            if h is not None:
                if f"{h}.{last}" in self.kind:
                    result = f"{h}.{last}"
                elif h in self.modules and last in self.modules[h].bindings:
                    target = self.modules[h].bindings[last]
                    result = self.canon(target, hops + 1) if target != q else None
                elif h in self.modules and self.modules[h].stars:
                    result = self.starred(self.modules[h], last, hops + 1)
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

    def starred(self, m: ModuleFacts, name: str, hops: int = 0) -> str | None:
        """What `name` denotes in `m` through its star imports (`from .sets import *` in sympy's
        `__init__`): the first star-imported module that defines or binds it. A name with a
        leading underscore is never star-exported."""
        if name.startswith("_"):
            return None
        for star in m.stars:
            found = self.canon(f"{star}.{name}", hops)
            if found is not None:
                return found
        return None

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
        """`cls`'s in-repo bases, remembered (asked again they give the same answer: each
        canonical name is remembered, and reclassifying a class keeps it class-like)."""
        found = self._bases.get(cls)
        if found is None:
            m, d = self.defs[cls]
            outer = self.owner_class(cls)
            resolved = [self.canon(q) for c in d.bases if (q := self.qualify(m, c, outer))]
            found = self._bases[cls] = [b for b in resolved
                                        if b and self.kind.get(b) in CLASSLIKE and b != cls]
        return found

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
        head = chain[0]
        if head == "self" or head == "super":
            if cls is None or len(chain) < 2:
                return None
            name, kind, mro = chain[1], self.kind, self.mro(cls)
            for c in mro[1:] if head == "super" else mro:
                found = f"{c}.{name}"
                if found in kind:
                    return found if len(chain) == 2 else ".".join([found, *chain[2:]])
            if head == "self" and len(chain) > 2 and (t := self.attr_type(cls, name)):
                return ".".join([t, *chain[2:]])  # self.x.m() with the class of x known
            return None
        # what a name at module level denotes: a definition of the module, else its binding
        scope = self._scope.get(m.name)
        if scope is None:
            scope = self._scope[m.name] = {}
        base = scope.get(head, ASK)
        if base is ASK:
            local = f"{m.name}.{head}"
            base = scope[head] = (local if local in self.defs else m.bindings.get(head)
                                  or (self.starred(m, head) if m.stars else None))
        if base is None:
            if len(chain) > 1 and (held := m.var_types.get(head)) and held[0] not in m.var_types:
                t = self.resolve(m, held, None)  # `console = Console()` at module level
                if t is None or self.kind[t] not in CLASSLIKE:
                    return None
                base = t
            else:
                return None  # a builtin, an untyped global, or something undefined: not guessed
        return base if len(chain) == 1 else ".".join([base, *chain[1:]])

    def resolve(self, m: ModuleFacts, chain: Chain, cls: str | None) -> str | None:
        q = self.qualify(m, chain, cls)
        return self.canon(q) if q else None

    def tables(self, m: ModuleFacts) -> tuple[Answers, dict[Chain, bool]]:
        """Where build_recon's own (outermost) lookups in module `m` are remembered: `resolve`'s
        answers (`ask`) and `unknown_receiver`'s (`unknown`), one table each per module. Sound
        once the kinds are classified: the same reference asked again gets the same answer,
        every lookup it makes being itself remembered. Most references repeat within their
        module (sympy: 82%, and 46% of its (class, reference) pairs ask what another class of
        the module asked). Chains headed `self`/`super`, the only ones whose answer depends on
        the class (`qualify` and `unknown_receiver` read `cls` for them alone), are kept apart,
        one table per class."""
        found = self._tables.get(m.name)
        if found is None:
            found = self._tables[m.name] = ({}, {})
        return found

    def class_answers(self, m: ModuleFacts, cls: str | None) -> Answers:
        """The table of `resolve`'s answers for `self`/`super` chains in class `cls` of `m`."""
        key = (m.name, cls)
        own = self._class_answers.get(key)
        if own is None:
            own = self._class_answers[key] = {}
        return own

    def ask(self, m: ModuleFacts, chain: Chain, cls: str | None, mod: Answers,
            own: Answers | None = None) -> str | None:
        """`resolve`, for a chain not yet in `mod` (`tables(m)[0]`): remembered there, or for a
        `self`/`super` chain in its class's table, `own` (`class_answers(m, cls)`, looked up
        there first)."""
        if chain[0] in SELF_HEADS:
            if own is None:
                own = self.class_answers(m, cls)
            dst = own.get(chain, ASK)
            if dst is ASK:
                dst = own[chain] = self.resolve(m, chain, cls)
            return dst
        dst = mod[chain] = self.resolve(m, chain, cls)
        return dst

    def unknown_receiver(self, m: ModuleFacts, chain: Chain, cls: str | None) -> bool:
        """Whether an unresolved call `chain` is a method call on a receiver whose type is not
        known (a by-name candidate), rather than a call into another package or a builtin."""
        if len(chain) < 2 or chain[0] == "super":
            return False
        head = chain[0]
        if head == "self":  # self.m() not found in-repo is an external base's; self.x.m() is not
            return len(chain) > 2 and cls is not None
        # what the name denotes, read as `qualify` reads it: the module's own definition, else
        # its import; a builtin (not redefined, not rebound) or any other package's name is no
        # receiver of ours
        base = f"{m.name}.{head}"
        if base not in self.defs:
            bound = m.bindings.get(head)
            if bound is None:
                return head not in _BUILTINS  # else an untyped module variable or undefined name
            base = bound
        # `f().m()` / `mod.f().m()` with f in-repo and no return type: unknown receiver
        if len(chain) == 2:  # (the one prefix: `base`)
            c = self.canon(base)
            return self.kind.get(c) in CALLABLE_KINDS if c else False
        return any(self.kind.get(c) in CALLABLE_KINDS
                   for c in [self.canon(".".join([base, *chain[1:i]]))
                             for i in range(1, len(chain))] if c)

    def unknown(self, m: ModuleFacts, chain: Chain, cls: str | None,
                guessed: dict[Chain, bool]) -> bool:
        """`unknown_receiver`, for a chain not yet in `guessed` (`tables(m)[1]`): remembered
        there, unless it is a `self` chain (its answer depends on `cls`, and costs nothing)."""
        if chain[0] == "self":
            return self.unknown_receiver(m, chain, cls)
        hit = guessed[chain] = self.unknown_receiver(m, chain, cls)
        return hit

    def by_name(self, name: str) -> list[str]:
        """The in-repo methods named `name` a by-name call may reach; [] when ambiguous."""
        found = self.may_call.get(name)
        if found is None:
            found = self.may_call[name] = self._by_name_of(name)
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
