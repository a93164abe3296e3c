"""The runtime backstop (plan07.plan.backstop): a failure in the tests of planned dependents that
consume the failed node's target merges them into one atomic step; any other failure does not."""

from __future__ import annotations

from plan07.model import Evidence, PlanNode, Recon, ReconEdge, ReconNode
from plan07.plan.backstop import failing_tests, merge_group

EV = Evidence(recon=Recon(
    nodes=[ReconNode(id="pkg.store.Store.get", kind="method", file="pkg/store.py"),
           ReconNode(id="pkg.cli.show", kind="function", file="pkg/cli.py"),
           ReconNode(id="pkg.other.f", kind="function", file="pkg/other.py"),
           ReconNode(id="tests.test_cli.test_show", kind="test", file="tests/test_cli.py"),
           ReconNode(id="tests.test_other.test_f", kind="test", file="tests/test_other.py")],
    edges=[ReconEdge(src="pkg.cli.show", dst="pkg.store.Store.get", kind="by_name"),
           ReconEdge(src="tests.test_cli.test_show", dst="pkg.cli.show", kind="tests"),
           ReconEdge(src="tests.test_other.test_f", dst="pkg.other.f", kind="tests")]))


def node(i: str, target: str, deps: list[str], state: str = "pending") -> PlanNode:
    return PlanNode(id=i, target_entity=target, obligation="modify", caused_by="c",
                    dependencies=deps, evidence="e", status="blocked" if deps else "ready",
                    validation="compile", state=state)


NODES = [node("O1", "pkg.store.Store.get", [], "failed"), node("O2", "pkg.cli.show", ["O1"]),
         node("O3", "pkg.other.f", ["O1"])]


def test_failing_tests_reads_the_short_summary() -> None:
    out = ("..F\nFAILED tests/test_cli.py::test_show[a-1] - TypeError: x\n"
           "ERROR tests/test_bad.py\nFAILED tests/test_cli.py::test_show[b-2]\n")
    assert failing_tests(out) == ["tests/test_cli.py::test_show", "tests/test_bad.py"]


def test_a_failure_in_a_consuming_dependents_tests_merges_them() -> None:
    got = merge_group(NODES, {}, "O1", "FAILED tests/test_cli.py::test_show - TypeError", EV)
    assert [(v.kind, v.nodes) for v in got] == [("breaking_change", ["O1", "O2"])]
    assert "runtime" in got[0].detail


def test_a_failure_that_is_not_a_consumers_is_local() -> None:
    # O3 is a dependent whose test fails, but it does not consume Store.get
    assert merge_group(NODES, {}, "O1", "FAILED tests/test_other.py::test_f - x", EV) == []
    # one failing test nobody downstream owns: not (only) the consumers' failure
    assert merge_group(NODES, {}, "O1", "FAILED tests/test_cli.py::test_show\n"
                                        "FAILED tests/test_x.py::test_y", EV) == []
    assert merge_group(NODES, {}, "O1", "SyntaxError: invalid syntax", EV) == []
    done = [NODES[0], node("O2", "pkg.cli.show", ["O1"], "complete")]
    assert merge_group(done, {}, "O1", "FAILED tests/test_cli.py::test_show", EV) == []
