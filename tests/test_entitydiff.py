"""The entity-level differ (plan07.gate.entitydiff), table-driven: what each edit of a definition
is (compatible, breaking, behaviour), and which call sites still bind after a signature change."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plan07.gate.callsites import CallShape, call_sites, still_binds
from plan07.gate.entitydiff import _assigned, definitions, diff_module

CASES = [
    # (old, new, [(qualname, kind, a word of `what`)])
    ("def f(a): return a", "def f(a, b=1): return a", [("f", "compatible", "adds optional")]),
    ("def f(a): return a", "def f(a, *, b=1): return a", [("f", "compatible", "adds optional")]),
    ("def f(a): return a", "def f(a, *args, **kw): return a",
     [("f", "compatible", "adds optional")]),
    ("def f(a): return a", "def f(a, b): return a", [("f", "breaking", "adds required")]),
    ("def f(a, b=1): return a", "def f(a, b): return a", [("f", "breaking", "makes b required")]),
    ("def f(a, b): return a", "def f(a): return a", [("f", "breaking", "removes parameter b")]),
    # an optional parameter removed: its callers can stop passing it first (narrowing)
    ("def f(a, b=1): return a", "def f(a): return a",
     [("f", "narrowing", "removes parameter b")]),
    ("def f(a, b=1): return a", "def f(a, c=1): return a", [("f", "breaking", "removes")]),
    ("def f(a, b): return a", "def f(b, a): return a", [("f", "breaking", "moves")]),
    ("def f(a, b): return a", "def f(a, *, b): return a", [("f", "narrowing", "keyword-only")]),
    ("def f(a, b): return a", "def f(a, b, /): return a", [("f", "narrowing", "positional-only")]),
    ("def f(a, *args): return a", "def f(a): return a", [("f", "narrowing", "drops *args")]),
    ("def f(a, *, b): return a", "def f(a, **kw): return a",  # b swallowed by **kw
     [("f", "compatible", "adds optional")]),
    ("def f(a=1): return a", "def f(a=2): return a", [("f", "behaviour", "default")]),
    ("def f(a): return a", "def f(a): return a + 1", [("f", "behaviour", "body")]),
    ("def f(a):\n    '''doc'''\n    return a", "def f(a):\n    '''new doc'''\n    return a", []),
    ("def f(a): return a", "", [("f", "narrowing", "removes function")]),
    # definitions moved, or the module edited around them: the same source is no change
    ("def f(a): return a\ndef g(): pass", "X = 1\ndef g(): pass\n\n\ndef f(a): return a", []),
    ("class C:\n    def m(self, a): return a",
     "class C:\n    @staticmethod\n    def m(self, a): return a",  # same body, new decorator:
     [("C.m", "breaking", "adds required parameter self")]),  # `self` is now passed by hand
    ("", "def g(): return 1", [("g", "compatible", "adds function")]),
    ("def f(a): return a * 2", "def g(a): return a * 2", [("f", "breaking", "renames")]),
    ("def f(): pass", "def g(y=1): pass", [("f", "narrowing", "removes"),
                                           ("g", "compatible", "adds")]),
    ("class C:\n    def m(self, a): return a", "class C:\n    def m(self, a, b): return a",
     [("C.m", "breaking", "adds required")]),
    ("class C:\n    @staticmethod\n    def m(a): return a",
     "class C:\n    @staticmethod\n    def m(a, b=0): return a", [("C.m", "compatible", "adds")]),
    ("class C:\n    def __init__(self, a): self.a = a",
     "class C:\n    def __init__(self, a, b): self.a = a",
     [("C.__init__", "breaking", "adds required")]),
    ("import dataclasses\n@dataclasses.dataclass\nclass P:\n    a: int",
     "import dataclasses\n@dataclasses.dataclass\nclass P:\n    a: int\n    b: int = 0",
     [("P", "compatible", "adds optional")]),
    ("from dataclasses import dataclass\n@dataclass\nclass P:\n    a: int",
     "from dataclasses import dataclass\n@dataclass\nclass P:\n    b: int\n    a: int",
     [("P", "breaking", "adds required")]),
    ("class C:\n    def m(self): return 1", "class C:\n    @property\n    def m(self): return 1",
     [("C.m", "breaking", "property")]),
    ("def f(a): return a", "def f(a:\n", []),  # does not parse: nothing is read off it
    # a class's field shape: what its methods set on the instance, what its body assigns
    ("class C:\n    def __init__(self):\n        self.a = 1\n        self.b = 2",
     "class C:\n    def __init__(self):\n        self.a = 1",
     [("C.__init__", "behaviour", "body"), ("C", "narrowing", "no longer sets .b")]),
    ("class C:\n    def __init__(me):\n        me.a = G()\n        me.a.name = 'n'",
     "class C:\n    def __init__(me):\n        me.a = G()",
     [("C.__init__", "behaviour", "body"), ("C", "narrowing", "no longer sets .a.name")]),
    ("class C:\n    def __init__(self):\n        self.a = 1",  # set elsewhere: still set
     "class C:\n    def __init__(self):\n        self.setup()\n"
     "    def setup(self):\n        self.a, self.b = 1, 2",
     [("C.__init__", "behaviour", "body"), ("C.setup", "compatible", "adds method")]),
    ("class C:\n    a = 1\n    def m(self): return 1", "class C:\n    def m(self): return 1",
     [("C", "behaviour", "body"), ("C", "narrowing", "no longer sets .a")]),
    ("class C:\n    def __init__(self):\n        self.a = 1",  # an annotation sets nothing
     "class C:\n    a: int\n    def __init__(self):\n        pass",
     [("C.__init__", "behaviour", "body"), ("C", "narrowing", "no longer sets .a")]),
]


@pytest.mark.parametrize(("old", "new", "want"), CASES)
def test_each_edit_is_classified(old: str, new: str, want: list[tuple[str, str, str]]) -> None:
    got = diff_module(old or None, new or None)
    assert [(c.qualname, c.kind) for c in got] == [(q, k) for q, k, _ in want]
    for c, (_, _, word) in zip(got, want, strict=True):
        assert word in c.what


def _params(src: str) -> tuple[object, ...]:
    params = definitions(src)["f"].params
    assert params is not None
    return params


@pytest.mark.parametrize(("old", "new", "call", "binds"), [
    ("def f(a, b=0): pass", "def f(a, c, b=0): pass", CallShape(1, (), False), False),
    ("def f(a, b=0): pass", "def f(a, c, b=0): pass", CallShape(2, (), False), False),  # moved
    ("def f(a, b=0): pass", "def f(a, b=0, *, c=1): pass", CallShape(2, (), False), True),
    ("def f(a, b=0): pass", "def f(a): pass", CallShape(1, (), False), True),
    ("def f(a, b=0): pass", "def f(a): pass", CallShape(1, ("b",), False), False),
    ("def f(a, b=0): pass", "def f(a, *, b=0): pass", CallShape(1, ("b",), False), True),
    ("def f(a, b=0): pass", "def f(a, *, b=0): pass", CallShape(2, (), False), False),
    ("def f(a): pass", "def f(a, b=1): pass", CallShape(0, (), True), False),  # unpacks: unknown
])
def test_a_call_site_still_binds_or_not(old: str, new: str, call: CallShape,
                                        binds: bool) -> None:
    assert still_binds(_params(old), _params(new), call) is binds  # type: ignore[arg-type]


def test_call_sites_are_read_inside_the_caller_only() -> None:
    src = ("from m import total\n\nclass Cart:\n    def checkout(self):\n"
           "        return total(self.items, rate=1) + total(*xs)\n\n"
           "def other():\n    return total(1, 2, 3)\n")
    assert call_sites(src, "Cart.checkout", "total") == [
        CallShape(1, ("rate",), False), CallShape(0, (), True)]
    assert call_sites(src, "other", "total") == [CallShape(3, (), False)]
    assert call_sites(src, "missing", "total") is None
    assert call_sites("def (:", "x", "total") is None


def test_a_caller_defined_more_than_once_has_the_calls_of_each_definition() -> None:
    """`typing.overload` stubs, then the implementation (flask's cli.locate_app): the calls of
    the real body count, and a decorator's calls belong to the function it decorates."""
    src = ("@overload\ndef load(x: int) -> int: ...\n\n"
           "@register(total(1))\ndef load(x):\n    return total(x, 2)\n")
    assert call_sites(src, "load", "total") == [CallShape(1, (), False),
                                                CallShape(2, (), False)]


# the pattern the line scan replaced, kept as the oracle: what stands before a line's first `=`
_PATTERN = re.compile(r"^[ \t]*([^=\n#]+?)[ \t]*=(?!=)", re.M)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=" \t=#!<>:,.()[]ab\r\f", max_size=12), max_size=8))
def test_the_assignment_scan_reads_what_the_pattern_read(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert _assigned(text) == {" ".join(m.split()) for m in _PATTERN.findall(text)}


def test_the_assignment_scan_reads_targets_not_comparisons_of_equality() -> None:
    text = ("class C:\n    x: int = 1\n    def f(self):\n        self.cli.name = n  # =\n"
            "        if a == b:\n            pass\n        # c = 2\n        a, b = f(x=1)\n")
    assert _assigned(text) == {"x: int", "self.cli.name", "a, b"}
