"""The shared vocabulary (plan07.vocab), table-driven, and the data a PlanStateError carries."""

from __future__ import annotations

import pytest

from plan07 import vocab
from plan07.errors import PlanStateError
from plan07.plan import driver


@pytest.mark.parametrize(("validation", "kind"), [
    ("compile", "compile"),
    (" compile ", "compile"),
    ("import:pkg.mod", "import"),
    ("import:pkg..mod", "unverifiable"),
    ("pytest:tests/", "pytest_path"),
    ("tests/test_a.py::test_b", "pytest_node"),
    ("tests/test_a.py::TestA::test_b[1-2]", "pytest_node"),
    ("tests/test_a.py::test_b; rm -rf /", "unverifiable"),
    ("pytest tests/", "unverifiable"),
    ("tests/test_a.py", "unverifiable"),
])
def test_check_grammar(validation: str, kind: str) -> None:
    assert vocab.classify(validation) == kind


def test_node_ids_in_prose() -> None:
    text = "see tests/test_a.py::test_b and src/x/test_c.py::TestC::test_d[p1], not a/b.py::"
    assert vocab.NODE_ID_IN_TEXT.findall(text) == ["tests/test_a.py::test_b",
                                                   "src/x/test_c.py::TestC::test_d[p1]"]


@pytest.mark.parametrize(("validation", "test", "runs"), [
    ("tests/test_a.py::TestA", "tests/test_a.py::TestA::test_b", True),
    ("tests/test_a.py::test_b", "tests/test_a.py::test_b[1]", True),
    ("tests/test_a.py::test_b", "tests/test_a.py::test_bc", False),
    ("pytest:tests", "tests/test_a.py::test_b", True),
    ("pytest:tests/test_a.py", "tests/test_a.py::test_b", True),
    ("pytest:test", "tests/test_a.py::test_b", False),
    ("pytest:.", "anything.py::t", True),
    ("compile", "tests/test_a.py::test_b", False),
])
def test_what_a_validation_runs(validation: str, test: str, runs: bool) -> None:
    assert vocab.runs(validation, test) is runs


def test_entity_coverage() -> None:
    assert vocab.covers("pkg.A", "pkg.A")
    assert vocab.covers("pkg.A", "pkg.A.load")
    assert not vocab.covers("pkg.A", "pkg.AB")
    assert not vocab.covers("pkg.A.load", "pkg.A")
    assert vocab.related("pkg.A.load", "pkg.A")
    assert not vocab.related("pkg.A", "pkg.B")


def test_id_order_and_duplicates() -> None:
    assert vocab.sort_ids(["O10", "O2", "O1.r3.1", "O1", "O2"]) == ["O1", "O1.r3.1", "O2", "O10"]
    assert vocab.duplicates(["O2", "O1", "O2", "O1", "O3"]) == ["O1", "O2"]
    assert vocab.first_repeat(["a", "b", "a", "b"]) == 2
    assert vocab.first_repeat(["a", "b"]) is None


@pytest.mark.parametrize(("entity", "file", "want"), [
    ("pkg.tests.test_x.test_a", "src/pkg/tests/test_x.py", "src/pkg/tests/test_x.py::test_a"),
    ("tests.test_x.TestA.test_b", None, "tests/test_x.py::TestA::test_b"),
    ("tests/test_x.py::test_a", None, "tests/test_x.py::test_a"),
    ("pkg.core", None, "pkg.core"),
])
def test_pytest_id_keeps_the_source_root(entity: str, file: str | None, want: str) -> None:
    assert vocab.pytest_id(entity, file) == want


def test_file_module_leaves_the_source_root_out() -> None:
    assert vocab.file_module("pkg.m.f", "src/pkg/m.py") == "pkg.m"
    assert vocab.file_module("pkg", "src/pkg/__init__.py") == "pkg"
    assert vocab.file_module("other.f", "src/pkg/m.py") is None
    assert vocab.dotted_test("tests/a/test_b.py::test_c[1]") == "tests.a.test_b.test_c"


def test_a_plan_state_error_names_its_reason_and_node() -> None:
    with pytest.raises(PlanStateError) as e:
        driver.require_active("O1", "O2")
    assert (e.value.reason, e.value.node) == ("not_active", "O2")
    with pytest.raises(PlanStateError) as e:
        driver.admit_test_call("O3", 10)
    assert (e.value.reason, e.value.node) == ("test_call_cap", "O3")
    assert PlanStateError("x").reason == "plan_state"
