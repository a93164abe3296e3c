"""What the A/B harness observes after a step: which earlier-passing tests a state breaks
(plan07.ab.checker.CheckResult.broken), undoing an edit where it was written
(plan07.ab.edits), the impact edges fed for broken tests (plan07.ab.feedback.feedback_edges)
and the 06 impact edges an edit's observed change follows (plan07.ab.observed)."""

from __future__ import annotations

from pathlib import Path

from plan07.ab.checker import CheckResult, Consistency
from plan07.ab.edits import Edit, apply_edit, revert
from plan07.ab.feedback import feedback_edges
from plan07.ab.observed import Change, changed, reaches

A, B, C = "tests/test_a.py::test_x", "tests/test_a.py::test_y", "tests/sub/test_b.py::test_z"


def result(passed: set[str], failed: set[str] = frozenset(),  # type: ignore[assignment]
           errors: tuple[str, ...] = (), build: bool = True) -> CheckResult:
    return CheckResult(build, frozenset(passed), frozenset(failed), error_files=errors)


def test_a_failing_or_uncollectable_earlier_test_is_broken_a_removed_one_is_not() -> None:
    good = {A, B, C}
    assert result({A, C}, {B}).broken(good) == {B}
    assert result({A, B}).broken(good) == set()  # C no longer exists (removed, renamed)
    assert result({C}, errors=("tests/test_a.py",)).broken(good) == {A, B}
    assert result({A, B}, errors=("tests/sub/conftest.py",)).broken(good) == {C}
    assert result(set(), errors=("tests",)).broken(good) == good  # nothing ran at all
    tc = Consistency(result(good))
    assert [tc.observe(result({A, B})), tc.observe(result({A}, {B})),
            tc.observe(result({A, B}, build=False))] == [True, False, False]


def test_an_edit_is_undone_where_it_was_written(tmp_path: Path) -> None:
    # a cut-off write ("    x = 1\n") that also occurs earlier in the file: undoing the first
    # occurrence would corrupt the file
    text = "def f():\n    x = 1\n\n\ndef g():\n    return 2\n"
    (tmp_path / "m.py").write_text(text, "utf-8")
    applied = apply_edit(tmp_path, Edit("m.py", "    return 2\n", "    x = 1\n"))
    revert(tmp_path, applied)
    assert (tmp_path / "m.py").read_text("utf-8") == text


def test_broken_tests_are_fed_as_edges_the_plan_knows() -> None:
    known = {"tests.test_a", "tests.sub.test_b.test_z", "pkg.core.fmt"}
    edges, left = feedback_edges(["pkg.core.fmt", "pkg.core.area"], ["pkg.core.fmt"], known,
                                 {A, C, "tests/test_c.py::test_w"})
    # A's test has no recon node: its module's; test_c's module is unknown: left out, counted
    assert sorted((e.src, e.dst) for e in edges) == [
        ("pkg.core.area", "tests.sub.test_b.test_z"), ("pkg.core.area", "tests.test_a"),
        ("pkg.core.fmt", "tests.sub.test_b.test_z"), ("pkg.core.fmt", "tests.test_a")]
    assert left == 1
    # tests in a file the node itself just rewrote are the plan working, not a consumer
    edges, left = feedback_edges(["pkg.core.fmt"], [], known, {A, B}, ["tests/test_a.py"])
    assert (edges, left) == ([], 0)
    # without recon nodes every end is accepted as is (the plan checks none)
    edges, _ = feedback_edges(["pkg.core.fmt"], [], set(), {A})
    assert [(e.src, e.dst) for e in edges] == [("pkg.core.fmt", "tests.test_a.test_x")]


BEFORE = ("def fmt(v, digits=2):\n    return f'{v:.{digits}f}'\n\n\n"
          "def show(v):\n    return fmt(v)\n")


def test_an_impact_edge_is_fed_only_when_the_edit_did_what_its_cause_needs() -> None:
    body = Change("src/pkg/core.py", BEFORE, BEFORE.replace("{v:.", "{v:>."))
    sig = Change("src/pkg/core.py", BEFORE, BEFORE.replace("digits=2)", "digits=2, w=0)"))
    both = Change("src/pkg/core.py", BEFORE,
                  sig.after.replace("return fmt(v)", "return fmt(v, w=1)"))
    assert changed("pkg.core.fmt", [body], interface=False)
    assert not changed("pkg.core.fmt", [body], interface=True)
    assert changed("pkg.core.fmt", [sig], interface=True)
    assert changed("pkg.core.fmt.digits", [sig], interface=True)  # below a def: the def's
    assert not changed("pkg.view.show", [sig], interface=False)  # another module
    assert not reaches("pkg.core.fmt", "pkg.view.show", "sig_change", [body])
    assert reaches("pkg.core.fmt", "pkg.view.show", "sig_change", [sig])
    assert reaches("pkg.core.fmt", "pkg.view.show", "default_change", [body])
    assert not reaches("pkg.core.fmt", "tests.test_core.test_fmt", "test_anchor", [sig])
    assert not reaches("pkg.core.fmt", "pkg.core.show", "sig_change", [both])  # rebound too
    gone = Change("src/pkg/core.py", BEFORE, BEFORE.replace("def fmt(", "def fmt2("))
    assert reaches("pkg.core.fmt", "pkg.view.show", "consumer_rebind", [gone])
