"""What a node's edit changed (§3.6 made observable, before the node's check runs): the Python
files that differ from the last reached checkpoint, each read before and after at the entity level
(plan07.gate.entitydiff), as `ObservedChange`s the rules load as facts. I/O: git blobs of the
checkpoint and of the content about to be checked (a tree id: what the check will run on), read
by plan07.gate.blobs.

Outside a git work tree there is no checkpoint to compare with: nothing is observed, and the
plan orders by what the decomposer said and by definition-before-use alone.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from plan07 import caps
from plan07.gate.blobs import MAX_FILES, changed_texts, files_naming, read_blobs
from plan07.gate.callsites import call_sites, overrides, still_binds
from plan07.gate.entitydiff import Change, diff_module, unset_fields
from plan07.gate.params import VARARGS, VARKW, Param, signature_breaks
from plan07.gate.stringrefs import (
    KeyUse,
    distinctive,
    key_uses,
    keywords_in_strings,
    quoted_keys,
)
from plan07.model import BREAKING_KINDS, Evidence, ObservedChange, ReconNode

# recon edge kinds by which code calls (or passes, inherits, uses) a definition
CALL_KINDS = ("calls", "by_name", "references", "inherits", "uses_type")


def _module_of(path: str, modules: dict[str, str]) -> str:
    """The dotted module of `path`: the recon graph's name for it, else recon's rule (a new
    file), which lives with recon (plan07.evidence.parse.module_name)."""
    if path in modules:
        return modules[path]
    from plan07.evidence.parse import module_name

    return module_name(path)[0]


def observe(repo: Path, base: str | None, tree: str | None,
            evidence: Evidence) -> list[ObservedChange]:
    """The changes the edit since checkpoint `base` (a git ref) made, read off content `tree`
    (a git tree id); [] outside git, or when nothing is known to compare with."""
    if not base or not tree or tree.startswith("stat:"):
        return []
    texts = changed_texts(repo, base, tree)
    if not texts:
        return []
    nodes = {n.id: n for n in evidence.recon.nodes}
    modules = {n.file: n.id for n in evidence.recon.nodes if n.kind == "module" and n.file}
    changes = _moves_are_breaking([(p, f"{_module_of(p, modules)}.{c.qualname}", c)
                                   for p, (before, after) in texts.items()
                                   for c in diff_module(before, after)])
    # the subclasses overriding a method whose signature broke, in a form the new calls do not
    # fit: one grep for every such method, each file parsed once
    queries = {e: c.new for _, e, c in changes if c.kind in BREAKING_KINDS and c.old is not None
               and c.new is not None and _method_of_class(e, nodes)}
    overridden = _broken_overrides(repo, tree, queries, nodes, modules)
    # the parameters a breaking change took away, by name: a call written inside a string (a
    # template's `urlize(extra_uri_schemes=...)`) binds by that name where no recon edge shows it
    gone = {e: {p.name for p in c.old if p.kind not in (VARARGS, VARKW) and distinctive(p.name)}
            - {p.name for p in c.new} for _, e, c in changes
            if c.kind in BREAKING_KINDS and c.old is not None and c.new is not None}
    written = _keywords_written(repo, tree, set().union(*gone.values()), set(texts), nodes,
                                modules)
    # the recon callers of every changed signature: one pass over the edges, one blob read
    callers = _callers(evidence, [e for _, e, c in changes if c.kind in BREAKING_KINDS
                                  and c.old is not None and c.new is not None])
    caller_texts = read_blobs(repo, tree, sorted({
        f for xs in callers.values() for x in xs if (f := nodes[x].file if x in nodes else None)}))
    out: list[ObservedChange] = []
    for p, entity, c in changes:
        kind, what, broken = c.kind, c.what.replace(c.qualname, entity, 1), []
        node = nodes.get(entity)
        if kind in BREAKING_KINDS and node is not None and node.kind == "test":
            kind, what = "behaviour", f"{what} (a test: no code calls it)"
        elif kind in BREAKING_KINDS and c.fields:
            broken = _subclasses_left_unset(repo, tree, entity, c.fields, evidence, nodes)
            if not broken:
                kind, what = "behaviour", f"{what} (every subclass in the repository sets it " \
                                          "itself)"
        elif kind in BREAKING_KINDS and c.old is not None and c.new is not None:
            broken = _broken_callers(entity, c.old, c.new, callers.get(entity, []), caller_texts,
                                     nodes)
            broken += [x for x in overridden.get(entity, []) if x not in broken]
            broken += [x for n in sorted(gone.get(entity, ())) for x in written.get(n, [])
                       if x not in broken and not _part(x, entity)]
            if not broken:
                kind, what = "compatible", f"{what} (every call in the repository binds)"
        fields = c.fields if kind in BREAKING_KINDS else ()
        out.append(_change(entity, kind, what, p, broken, fields))
    return out + _key_changes(repo, tree, texts, nodes, modules)


def _moves_are_breaking(changes: list[tuple[str, str, Change]]) -> list[tuple[str, str, Change]]:
    """A definition removed while the same edit adds one of its name elsewhere moved there: its
    callers need the new place (breaking), they cannot rewrite first."""
    added = {e.rpartition(".")[2] for _, e, c in changes if c.what.startswith("adds ")}
    return [(p, e, replace(c, kind="breaking", what=f"{c.what} (moved: the edit adds "
                           f"{e.rpartition('.')[2]} elsewhere)"))
            if c.kind == "narrowing" and c.old is None and c.what.startswith("removes ")
            and e.rpartition(".")[2] in added else (p, e, c) for p, e, c in changes]


def _change(entity: str, kind: str, what: str, file: str, consumers: list[str],
            fields: tuple[str, ...] = (), keys: tuple[str, ...] = ()) -> ObservedChange:
    return ObservedChange(entity=entity[: caps.ENTITY_MAX_CHARS], kind=kind,
                          what=what[: caps.FIELD_MAX_CHARS], file=file[: caps.FIELD_MAX_CHARS],
                          consumers=consumers[: caps.MAX_OBLIGATIONS],
                          fields=list(fields[: caps.MAX_OBLIGATIONS]),
                          keys=[k[: caps.ENTITY_MAX_CHARS] for k in keys])


def _holder(mod: str, path: str, nodes: dict[str, ReconNode]) -> str:
    """The closest recon node holding definition `path` of module `mod` ("" : its top level)."""
    where = f"{mod}.{path}" if path else mod
    return next((x for x in [where, *_module_chain(where)] if x in nodes), mod)


def _keywords_written(repo: Path, tree: str, names: set[str], edited: set[str],
                      nodes: dict[str, ReconNode], modules: dict[str, str]) -> dict[str, list[str]]:
    """For each of `names` (parameters a breaking change took away), the recon nodes outside the
    `edited` files that write it as a keyword inside a string (stringrefs.keywords_in_strings),
    read from `tree`: one `git grep -w`, each file parsed once."""
    files = [f for f in files_naming(repo, tree, sorted(names), word=True) if f not in edited]
    out: dict[str, list[str]] = {}
    for f, text in read_blobs(repo, tree, files[:MAX_FILES]).items():
        for owner, name in keywords_in_strings(text or "", names):
            x = _holder(_module_of(f, modules), owner, nodes)
            if x not in out.setdefault(name, []):
                out[name].append(x)
    return out


def _quoted(text: str, key: str) -> bool:
    return f'"{key}"' in text or f"'{key}'" in text


def _key_changes(repo: Path, tree: str, texts: dict[str, tuple[str | None, str | None]],
                 nodes: dict[str, ReconNode], modules: dict[str, str]) -> list[ObservedChange]:
    """String keys an edit renamed or removed (stringrefs.key_uses) that code outside the edited
    files still holds, read from `tree`, as breaking changes:

    - a key the edit stopped defining (a mapping's literal key, a subscript assigned) that other
      code still uses: those uses are its consumers;
    - a key the edit stopped reading while it reads a new key that nothing outside the edit
      holds (a renamed setting whose new name only a pending edit can define): the places that
      define the old key are its consumers (they land with it).

    One `git grep` for every such key, each file parsed once."""
    # a key another edited file holds after the edit moved there, it did not go
    after = set().union(*(quoted_keys(now) for _, now in texts.values() if now is not None))
    edits: dict[str, tuple[list[KeyUse], list[KeyUse], set[str], set[str]]] = {}
    for p, (before, now) in texts.items():
        if before is None or now is None or not quoted_keys(before) - quoted_keys(now):
            continue  # no key-like string left the file: nothing to parse for
        old, new = key_uses(before), key_uses(now)
        if old is not None and new is not None:
            ok, nk = {u.key for u in old}, {u.key for u in new}
            if ok - nk:
                edits[p] = (old, new, ok - nk, nk - ok)
    keys = sorted({k for _, _, gone, came in edits.values() for k in gone | came})
    if not keys:
        return []
    files = [f for f in files_naming(repo, tree, [f"{q}{k}{q}" for k in keys for q in "\"'"])
             if f not in texts]
    held = {f: t for f, t in read_blobs(repo, tree, files[:MAX_FILES]).items() if t is not None}
    uses = {f: key_uses(t) or [] for f, t in held.items()}
    out: list[ObservedChange] = []
    for p, (old, new, gone, came) in sorted(edits.items()):
        mod = _module_of(p, modules)
        relied = sorted(a for a in came if any(u.key == a and not u.defines for u in new)
                        and not any(u.key == a and u.defines for u in new)
                        and not any(_quoted(t, a) for t in held.values()))
        for k in sorted(gone - after):
            defined = any(u.defines for u in old if u.key == k)
            if not defined and not relied:
                continue
            consumers = sorted({_holder(_module_of(f, modules), u.owner, nodes)
                                for f, us in uses.items() for u in us
                                if u.key == k and (defined or u.defines)})
            if not consumers:
                continue
            owner = next(u.owner for u in old if u.key == k)
            entity = f"{mod}.{owner}" if owner else mod
            what = (f"{entity} no longer defines key {k!r}, which other code still uses"
                    if defined else f"{entity} reads key {relied[0]!r}, which nothing outside "
                    f"the edit holds, where it read {k!r}")
            # a key dropped, none defined in its place: its users can stop using it first
            kind = "narrowing" if defined and not came else "breaking"
            out.append(_change(entity, kind, what, p, consumers, keys=(k,)))
    return out


def _part(x: str, e: str) -> bool:
    """`x` is `e`, inside `e`, or the class whose constructor `e` is."""
    return x == e or x.startswith(e + ".") or (
        e.rpartition(".")[2] in ("__init__", "__new__") and x == e.rpartition(".")[0])


def _callers(evidence: Evidence, entities: list[str]) -> dict[str, list[str]]:
    """For each of `entities`, the recon nodes calling (passing, inheriting, using) it or
    something inside it (`_part`), not itself, sorted."""
    if not entities:
        return {}
    wanted = set(entities)
    out: dict[str, set[str]] = {}
    for e in evidence.recon.edges:
        if e.kind not in CALL_KINDS:
            continue
        # the entities `e.dst` is part of: itself, each dotted prefix, the constructor's class
        parts = e.dst.split(".")
        hits = {".".join(parts[:i]) for i in range(len(parts), 0, -1)} & wanted
        hits |= {x for x in (f"{e.dst}.__init__", f"{e.dst}.__new__") if x in wanted}
        for x in hits:
            if not _part(e.src, x):
                out.setdefault(x, set()).add(e.src)
    return {x: sorted(v) for x, v in out.items()}


def _broken_callers(entity: str, old: tuple[Param, ...], new: tuple[Param, ...],
                    callers: list[str], texts: dict[str, str | None],
                    nodes: dict[str, ReconNode]) -> list[str]:
    """Of `callers` (recon consumers of `entity`, their files' `texts` read from the tree to
    check), those whose calls of it no longer bind after its signature went from `old` to
    `new`; a consumer with no call site to read (it passes or imports the definition, or
    unpacks its arguments) counts as broken. `nodes`: recon's, by id."""
    last = entity.rpartition(".")[2]
    names = {entity.rsplit(".", 2)[-2], "__init__"} if last == "__init__" else {last}
    broken = []
    for x in callers:
        n = nodes.get(x)
        text = texts.get(n.file) if n is not None and n.file else None
        mod = next((m for m in _module_chain(x) if nodes.get(m) and nodes[m].kind == "module"),
                   None)
        shapes = None if text is None or mod is None else [
            s for name in names for s in call_sites(text, x[len(mod) + 1:], name) or []]
        if not shapes or not all(still_binds(old, new, s) for s in shapes):
            broken.append(x)
    return broken


def _method_of_class(entity: str, nodes: dict[str, ReconNode]) -> bool:
    """`entity` is a method (not a dunder) of a class recon knows."""
    cls_path, _, method = entity.rpartition(".")
    return bool(method) and not method.startswith("__") and cls_path in nodes \
        and nodes[cls_path].kind == "class"


def _broken_overrides(repo: Path, tree: str, queries: dict[str, tuple[Param, ...]],
                      nodes: dict[str, ReconNode],
                      modules: dict[str, str]) -> dict[str, list[str]]:
    """For each method of `queries` (its new call-visible parameters), the definitions holding a
    subclass that overrides it in a form the new calls do not bind to (CodePlan's inheritance
    dependency: the base now calls the override as it calls itself). Read from `tree`: the .py
    files naming any of the methods (one `git grep -w`, at most MAX_FILES), each parsed once;
    each named by its closest enclosing recon node (a test function making the subclass, else
    the class, else its module). A constructor is no such case: a subclass's `__init__` is its
    own interface. `nodes`: recon's by id; `modules`: its module ids by file."""
    methods = sorted({e.rpartition(".")[2] for e in queries})
    files = files_naming(repo, tree, methods, word=True)
    out: dict[str, list[str]] = {}
    for f, text in read_blobs(repo, tree, files[:MAX_FILES]).items():
        if text is None:
            continue
        mod = _module_of(f, modules)
        for entity, new in queries.items():
            cls_path, _, method = entity.rpartition(".")
            if method not in text:
                continue
            for path, params in overrides(text, cls_path.rpartition(".")[2], method):
                where = f"{mod}.{path}"
                if where == cls_path or not signature_breaks(new, params):
                    continue  # the class itself, or an override the new calls still bind to
                owner = _holder(mod, path, nodes)
                if owner not in out.setdefault(entity, []):
                    out[entity].append(owner)
    return out


def _subclasses_left_unset(repo: Path, tree: str, entity: str, fields: tuple[str, ...],
                           evidence: Evidence, nodes: dict[str, ReconNode]) -> list[str]:
    """The subclasses of class `entity` (recon `inherits` edges, followed down) whose instances
    lack some of `fields` now that `entity` no longer sets them: neither they nor a class
    between them and `entity` set it, read from `tree`. A subclass whose source cannot be read
    counts as lacking them. `nodes`: recon's, by id."""
    children: dict[str, list[str]] = {}
    for e in evidence.recon.edges:
        if e.kind == "inherits":
            children.setdefault(e.dst, []).append(e.src)
    seen, todo = {entity}, [entity]
    while todo:
        todo = [c for x in todo for c in sorted(children.get(x, [])) if c not in seen]
        seen.update(todo)
    files = sorted({f for x in seen if (f := nodes[x].file if x in nodes else None)})
    texts = read_blobs(repo, tree, files[:MAX_FILES])
    out: list[str] = []
    level = [(entity, fields)]
    while level:
        below = []
        for parent, unset in level:
            for x in sorted(children.get(parent, [])):
                n = nodes.get(x)
                text = texts.get(n.file) if n is not None and n.file else None
                mod = next((m for m in _module_chain(x) if nodes.get(m)
                            and nodes[m].kind == "module"), None)
                left = None if text is None or mod is None else unset_fields(
                    text, x[len(mod) + 1:], unset)
                left = list(unset) if left is None else left
                if left and x not in out:
                    out.append(x)
                    below.append((x, tuple(left)))
        level = below
    return out


def _module_chain(entity: str) -> list[str]:
    """`a.b.c` -> [`a.b`, `a`]: the dotted prefixes that may name its module, longest first."""
    parts = entity.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]
