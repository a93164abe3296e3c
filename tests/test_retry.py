"""plan07.plan.retry: the model-free failure classifier (runtime-structured retry), table-driven
over real check outputs (tests/retry/*.txt were captured from pytest, compileall and python)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plan07 import caps
from plan07.plan.retry import DIGEST_MAX_CHARS, Facts, History, decide, own_files, parse

OUT = Path(__file__).parent / "retry"


def out(name: str) -> str:
    return (OUT / f"{name}.txt").read_text("utf-8")


VIEW = Facts(node_id="O3", check="tests/test_view.py::test_show",
             own_files=frozenset(own_files("pkg.view.show", ["pkg/view.py"], [])),
             own_tests=frozenset({"tests/test_view.py"}))
# the narrowing node: its check is the package's tests; the consumer shop1/w0_badge.py is owned
# by another planned node (O5), or by none when the decomposition missed it
NARROW = Facts(node_id="O7", check="pytest:tests/w0",
               own_files=frozenset(own_files("shop1.w0_core.fmt_w0.digits_default",
                                             ["shop1/w0_core.py"], [])))
NARROW_PLANNED = Facts(**{**NARROW.__dict__, "planned_files": (("shop1/w0_badge.py", "O5"),)})
PASSED = Facts(**{**VIEW.__dict__, "check": "compile", "own_tests": frozenset(),
                  "passed_checks": (("O1", "tests/test_view.py::test_show"),)})

K = caps.LOCAL_RETRIES_BEFORE_REPLAN

CASES = [
    # name, output, facts, history, kind, action, reason fragment
    ("syntax error from a cut-off edit", "build_syntax", VIEW, History(), "pytest_node",
     "local", "build error"),
    ("failure inside the node's own target file", "pytest_typeerror", VIEW, History(),
     "pytest_node", "local", "own work"),
    ("its own check's assertion", "pytest_assert",
     Facts(**{**VIEW.__dict__, "check": "tests/test_view.py::test_eq"}), History(),
     "pytest_node", "local", "own work"),
    ("an import check failing in the node's file", "import_name",
     Facts(node_id="O2", check="import:pkg.helper",
           own_files=frozenset(own_files("pkg.helper.area", ["pkg/helper.py"], []))),
     History(), "import", "local", "own work"),
    ("an entity no node covers fails", "pytest_other_file", NARROW, History(), "pytest_path",
     "plan", "no plan node covers"),
    ("a file another planned node owns fails", "pytest_other_file", NARROW_PLANNED, History(),
     "pytest_path", "plan", "O5"),
    ("tests of an already-passed node break", "pytest_typeerror", PASSED, History(),
     "compile", "plan", "validated by O1"),
    ("the same failure after K local retries", "pytest_typeerror", VIEW,
     History(retries=K, signature="pytest_node||TypeError|pkg/view.py|"
             "tests/test_view.py::test_show", repeats=K), "pytest_node", "plan",
     "same failure"),
    ("a different failure after a local retry stays local", "pytest_assert",
     Facts(**{**VIEW.__dict__, "check": "tests/test_view.py::test_eq"}),
     History(retries=1, signature="pytest_node||TypeError|pkg/view.py|x", repeats=K),
     "pytest_node", "local", "own work"),
    ("plan-implicating, but replans spent: local, no model call", "pytest_other_file", NARROW,
     History(retries=1, replans=caps.MAX_REPLANS_PER_NODE), "pytest_path", "local",
     "replans spent"),
    ("the bound is spent: stop, no model call", "pytest_other_file", NARROW,
     History(retries=2), "pytest_path", "stop", "bound is spent"),
    ("the bound is spent even for a local slip", "build_syntax", VIEW, History(retries=2),
     "pytest_node", "stop", "bound is spent"),
]


@pytest.mark.parametrize(("name", "output", "facts", "hist", "kind", "action", "why"), CASES,
                         ids=[c[0] for c in CASES])
def test_decide(name: str, output: str, facts: Facts, hist: History, kind: str, action: str,
                why: str) -> None:
    d = decide(facts, kind, out(output), hist, k=K, max_retries=2,
               max_replans=caps.MAX_REPLANS_PER_NODE, repo="/tmp/repo")
    assert (d.action, why in d.reason) == (action, True), d.reason
    assert 0 < len(d.digest) <= DIGEST_MAX_CHARS


PARSED = [
    ("pytest_typeerror", False, "TypeError", "pkg/view.py", 3,
     ("tests/test_view.py::test_show",)),
    ("pytest_assert", False, "AssertionError", "tests/test_view.py", 5,
     ("tests/test_view.py::test_eq",)),
    ("build_syntax", True, "SyntaxError", "pkg/view.py", 3, ()),
    ("import_name", False, "NameError", "pkg/helper.py", 4, ()),
]


@pytest.mark.parametrize(("output", "build", "etype", "file", "line", "failing"), PARSED)
def test_parse(output: str, build: bool, etype: str, file: str, line: int,
               failing: tuple[str, ...]) -> None:
    p = parse(out(output), repo="/tmp/repo")
    assert (p.build, p.error_type, p.where, p.failing_tests) == (build, etype, (file, line),
                                                                  failing)


def test_digest_is_one_line_naming_the_error_and_where() -> None:
    d = decide(VIEW, "pytest_node", out("pytest_typeerror"), History(), k=K, max_retries=2,
               max_replans=3)
    assert d.digest == ("tests/test_view.py::test_show failed: TypeError: fmt() got an "
                        "unexpected keyword argument 'digit' at pkg/view.py:3")
    long = decide(VIEW, "pytest_node", "E   ValueError: " + "x" * 500, History(), k=K,
                  max_retries=2, max_replans=3)
    assert len(long.digest) == DIGEST_MAX_CHARS
    assert "\n" not in long.digest
    assert long.digest.endswith("…")


def test_repeats_count_consecutive_same_signatures() -> None:
    first = decide(VIEW, "pytest_node", out("pytest_typeerror"), History(), k=2, max_retries=4,
                   max_replans=3)
    h = History(retries=1, signature=first.signature, repeats=first.repeats)
    second = decide(VIEW, "pytest_node", out("pytest_typeerror"), h, k=2, max_retries=4,
                    max_replans=3)
    assert (first.action, first.repeats, second.action, second.repeats) == ("local", 1,
                                                                            "local", 2)
    h = History(retries=2, signature=second.signature, repeats=second.repeats)
    third = decide(VIEW, "pytest_node", out("pytest_typeerror"), h, k=2, max_retries=4,
                   max_replans=3)
    assert third.action == "plan"


# The termui commit (click): O1 rewrote tests/test_termui.py (its check: compile) and passed;
# O2's check runs that file, which no longer imports (O1's misspelt name).
TERMUI = Facts(node_id="O2", check="pytest:tests/test_termui.py",
               own_files=frozenset(own_files("click._termui_impl.ProgressBar",
                                             ["src/click/_termui_impl.py"], [])),
               own_target="click._termui_impl.ProgressBar",
               own_tests=frozenset({"tests/test_termui.py"}),
               passed_checks=(("O1", "compile"),),
               planned_files=(("tests/test_termui.py", "O1"), ("tests/test_termui.py", "O3")),
               complete_targets=(("O1", "tests.test_termui.test_progressbar_hidden_manual"),))
# s0-t0003 (generated widen): O1's caller fails because O5, the callee, passed its own check
# with a misspelt keyword
CALLER = Facts(**{**VIEW.__dict__, "own_target": "pkg.view.show",
                  "passed_checks": (("O5", "tests/test_core.py::test_fmt"),),
                  "complete_targets": (("O5", "pkg.core.fmt"),)})


def test_a_name_error_in_a_file_a_complete_node_wrote_reopens_that_node() -> None:
    d = decide(TERMUI, "pytest_path", out("pytest_nameerror_other"), History(), k=K,
               max_retries=2, max_replans=3, repo="/tmp/repo")
    assert (d.action, d.reopen) == ("reopen", ("O1",)), d.reason
    assert "NameError in tests/test_termui.py" in d.reason
    assert "pytes" in d.digest
    mine = Facts(**{**TERMUI.__dict__, "own_files": TERMUI.own_files | {"tests/test_termui.py"}})
    own = decide(mine, "pytest_path", out("pytest_nameerror_other"), History(), k=K,
                 max_retries=2, max_replans=3, repo="/tmp/repo")
    assert own.action == "local"  # the node edited that file itself: its own slip
    spent = decide(TERMUI, "pytest_path", out("pytest_nameerror_other"), History(retries=2),
                   k=K, max_retries=2, max_replans=3, repo="/tmp/repo")
    assert spent.action == "stop"


def test_the_same_failure_naming_a_complete_nodes_target_reopens_it() -> None:
    first = decide(CALLER, "pytest_node", out("pytest_typeerror"), History(), k=K,
                   max_retries=2, max_replans=3, repo="/tmp/repo")
    assert (first.action, first.reopen) == ("local", ())  # first presumed the node's own slip
    h = History(retries=1, signature=first.signature, repeats=first.repeats)
    again = decide(CALLER, "pytest_node", out("pytest_typeerror"), h, k=K, max_retries=2,
                   max_replans=3, repo="/tmp/repo")
    assert (again.action, again.reopen) == ("reopen", ("O5",)), again.reason
    unnamed = Facts(**{**CALLER.__dict__, "complete_targets": (("O5", "pkg.core.area"),)})
    plan = decide(unnamed, "pytest_node", out("pytest_typeerror"), h, k=K, max_retries=2,
                  max_replans=3, repo="/tmp/repo")
    assert (plan.action, plan.reopen) == ("plan", ())  # no complete node named: re-decompose
