"""build_recon remembers its lookups per module (per class only for `self`/`super` chains): the
same chain asked from different classes, functions and the module level of one module still gets
each its own answer, in whatever order they are asked; and the graph it builds is sorted as the
(src, dst, kind) triples are, each edge once."""

from __future__ import annotations

import itertools

import pytest

from plan07.evidence.parse import parse_module
from plan07.evidence.resolve import build_recon

MOD_A = '''
from b import Helper


def helper(): ...


class A:
    def go(self): ...
    def run(self):
        self.go()
        super().go()
        helper()
        Helper().make()
        self.thing.spin()


class B:
    def go(self): ...
    def run(self):
        self.go()
        helper()
        self.thing.spin()


class C(A):
    def go(self):
        super().go()
        self.go()


def loose(self):
    self.go()
    self.thing.spin()
    helper()


helper()
Helper().make()
self.thing.spin()  # no class here: not a by-name guess
'''
MOD_B = '''
class Helper:
    def make(self): ...


class Top:
    def spin(self): ...
'''

EXPECTED = {
    ("a.A.run", "a.A.go", "calls"), ("a.A.run", "a.helper", "calls"),
    ("a.A.run", "b.Helper", "calls"), ("a.A.run", "b.Helper.make", "calls"),
    ("a.A.run", "b.Top.spin", "by_name"),
    ("a.B.run", "a.B.go", "calls"), ("a.B.run", "a.helper", "calls"),
    ("a.B.run", "b.Top.spin", "by_name"),
    ("a.C.go", "a.A.go", "calls"),  # super() in C is A's; self.go is C.go itself: no edge
    ("a.loose", "a.helper", "calls"),  # a function's `self` is an untyped parameter:
    ("a.loose", "a.A.go", "by_name"), ("a.loose", "a.B.go", "by_name"),  # by-name guesses
    ("a.loose", "a.C.go", "by_name"), ("a.loose", "b.Top.spin", "by_name"),
    ("a", "a.helper", "calls"), ("a", "b.Helper", "calls"), ("a", "b.Helper.make", "calls"),
    ("a", "b", "imports"), ("a", "b.Helper", "imports"), ("a", "a.A", "defines"),
    ("a", "a.B", "defines"), ("a", "a.C", "defines"), ("a", "a.helper", "defines"),
    ("a", "a.loose", "defines"), ("a.A", "a.A.go", "defines"), ("a.A", "a.A.run", "defines"),
    ("a.B", "a.B.go", "defines"), ("a.B", "a.B.run", "defines"), ("a.C", "a.C.go", "defines"),
    ("a.C", "a.A", "inherits"), ("b", "b.Helper", "defines"), ("b", "b.Top", "defines"),
    ("b.Helper", "b.Helper.make", "defines"), ("b.Top", "b.Top.spin", "defines"),
}


def _graph(order: tuple[str, ...]) -> list[tuple[str, str, str]]:
    a = parse_module(MOD_A, "a.py")
    by_name = {d.qualname: d for d in a.defs}
    a.defs = [by_name[q] for q in order] + [d for d in a.defs if d.qualname not in order]
    r = build_recon([a, parse_module(MOD_B, "b.py")])
    return [(e.src, e.dst, e.kind) for e in r.edges]


@pytest.mark.parametrize("order", list(itertools.permutations(["A.run", "B.run", "C.go", "loose"])))
def test_each_class_gets_its_own_answer_in_any_order(order: tuple[str, ...]) -> None:
    got = _graph(order)
    assert set(got) == EXPECTED
    assert got == sorted(set(got))  # sorted as triples, each once


def test_the_models_are_validated_as_their_init_validates_them() -> None:
    from pydantic import ValidationError

    from plan07.model import ReconEdge, ReconNode

    r = build_recon([parse_module(MOD_A, "a.py"), parse_module(MOD_B, "b.py")])
    assert all(type(n) is ReconNode for n in r.nodes)
    assert all(type(e) is ReconEdge for e in r.edges)
    assert [ReconNode(**n.model_dump()) for n in r.nodes] == r.nodes  # as __init__ makes them,
    assert all(n.model_fields_set == set(ReconNode.model_fields) for n in r.nodes)  # every field
    assert all(e.model_fields_set == {"src", "dst", "kind"} for e in r.edges)  # given
    bad = parse_module(MOD_B, "b.py")
    bad.defs[0].kind = "gadget"  # not a node kind: refused, as the constructor refuses it
    with pytest.raises(ValidationError):
        build_recon([bad])


REDEFINED = '''
from elsewhere import make    # imported, then defined here: the name is the module's own
from elsewhere import reader


def make():
    return object()


def open():                   # a builtin's name, redefined
    return object()


class Job:
    def start(self): ...
    def read(self): ...


def makes():
    make().start()


def opens():
    open().read()


def others():
    reader().read()           # another package's function: its result is not ours
    len(()).read()            # a builtin's result: not ours either
'''


def test_a_name_is_read_as_resolution_reads_it_when_guessing_its_receiver() -> None:
    """unknown_receiver reads a name as qualify does (the module's own definition before its
    import): `make()` here is the module's function, whose result may be any in-repo class."""
    g = build_recon([parse_module(REDEFINED, "a.py")])
    out: dict[str, set[tuple[str, str]]] = {}
    for e in g.edges:
        out.setdefault(e.src, set()).add((e.dst, e.kind))
    assert out["a.makes"] == {("a.make", "calls"), ("a.Job.start", "by_name")}
    assert out["a.opens"] == {("a.open", "calls"), ("a.Job.read", "by_name")}
    assert "a.others" not in out  # no in-repo callee, no guess
