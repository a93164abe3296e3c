"""Consumers in untyped Python (design.md): a method call on a receiver of unknown type is a
`by_name` may-call edge to the in-repo methods of that name (ambiguous names skipped), a function
passed as a value is a `references` edge, a decorator is a call; impact reads both with their own
relation and confidence."""

from __future__ import annotations

from pathlib import Path

from plan07.evidence.impact import impact
from plan07.evidence.index import BY_NAME_MAX_FAMILIES
from plan07.evidence.recon import recon
from plan07.model import Recon

FILES = {
    "pkg/__init__.py": "",
    "pkg/store.py": '''
import os


class Store:
    def get(self, key, default=None):
        return default

    def __len__(self):
        return 0


class Cache(Store):
    def get(self, key, default=None):  # an override: same family as Store.get
        return default


class Index:
    def lookup(self, key):
        return key
''',
    "pkg/cli.py": '''
import os
import threading

from pkg.store import Store


def deco(fn):
    return fn


@deco
def on_done(result):
    return result


def show(store, key):
    store.get(key)                 # untyped parameter: by name -> Store.get, Cache.get
    os.path.join("a", "b")         # another package: no guess
    len(store)                     # a builtin / dunder: no guess
    store.lookup(key)              # by name -> Index.lookup
    store.many()                   # ambiguous name: no edge
    return store


def typed(store: Store, key):
    return store.get(key)          # resolved by type: calls, and no by_name beside it


def spawn():
    threading.Thread(target=on_done, args=(1,)).start()   # a callback passed by keyword
    return [on_done]


HANDLERS = {"done": on_done}
''',
}


def _families(n: int) -> str:
    return "".join(f"\n\nclass F{i}:\n    def many(self):\n        return {i}\n"
                   for i in range(n))


def _build(tmp_path: Path) -> set[tuple[str, str, str]]:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text.lstrip())
    (tmp_path / "pkg" / "many.py").write_text(_families(BY_NAME_MAX_FAMILIES + 1))
    return {(e.src, e.dst, e.kind) for e in recon(tmp_path).edges}


def test_untyped_receivers_are_by_name_may_calls(tmp_path: Path) -> None:
    edges = _build(tmp_path)
    by_name = {(s, d) for s, d, k in edges if k == "by_name"}
    assert by_name == {("pkg.cli.show", "pkg.store.Store.get"),
                       ("pkg.cli.show", "pkg.store.Cache.get"),
                       ("pkg.cli.show", "pkg.store.Index.lookup")}
    assert ("pkg.cli.typed", "pkg.store.Store.get", "calls") in edges
    assert not any(d.startswith("pkg.many.") for s, d, k in edges if s == "pkg.cli.show")


def test_functions_passed_as_values_are_references_and_decorators_calls(tmp_path: Path) -> None:
    edges = _build(tmp_path)
    refs = {(s, d) for s, d, k in edges if k == "references"}
    assert refs == {("pkg.cli.spawn", "pkg.cli.on_done"), ("pkg.cli", "pkg.cli.on_done")}
    assert ("pkg.cli.on_done", "pkg.cli.deco", "calls") in edges


def test_impact_reads_by_name_and_references_with_lower_confidence(tmp_path: Path) -> None:
    r = recon(tmp_path) if _build(tmp_path) else None
    assert r is not None
    rec = Recon(nodes=r.nodes, edges=r.edges)
    got = {(i.dst, i.relation, i.cause, i.confidence)
           for i in impact(rec, ["pkg.store.Index.lookup", "pkg.cli.on_done"], depth=1,
                           arity=r.arity, passed=r.passed)}
    assert ("pkg.cli.show", "CalledByName", "sig_change", 0.5) in got
    assert ("pkg.cli.spawn", "ReferencedBy", "sig_change", 0.8) in got
    assert ("pkg.cli", "ReferencedBy", "sig_change", 0.8) in got
    # Store.get has a default the by-name caller leaves out: it relies on the default
    rely = {(i.dst, i.cause) for i in impact(rec, ["pkg.store.Store.get"], depth=1,
                                             arity=r.arity, passed=r.passed)}
    assert ("pkg.cli.show", "default_change") in rely
