"""What the A/B harness observes after a step: which earlier-passing tests a state breaks
(plan07.ab.checker.CheckResult.broken) and undoing an edit where it was written
(plan07.ab.edits)."""

from __future__ import annotations

from pathlib import Path

from plan07.ab.checker import CheckResult, Consistency
from plan07.ab.edits import Edit, apply_edit, revert

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

