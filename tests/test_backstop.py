"""The runtime backstop (plan07.plan.backstop): a failure in the tests of any pending planned
node's target merges it into one atomic step with the failed node, linked or not; a failure in the
tests of a consumer the plan does not hold adds that consumer; the node's own failure does
neither."""

from __future__ import annotations

import pytest

from plan07.model import Evidence, PlanNode, Recon, ReconEdge, ReconNode
from plan07.plan.backstop import breakage, failing_tests

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


def merged(nodes: list[PlanNode], output: str) -> list[tuple[str, list[str]]]:
    return [(v.kind, v.nodes) for v in breakage(nodes, {}, "O1", output, EV).violations]


def test_a_failure_in_a_consuming_dependents_tests_merges_them() -> None:
    got = breakage(NODES, {}, "O1", "FAILED tests/test_cli.py::test_show - TypeError", EV)
    assert [(v.kind, v.nodes) for v in got.violations] == [("breaking_change", ["O1", "O2"])]
    assert "runtime" in got.violations[0].detail
    assert got.consumers == []


def test_a_failure_in_any_pending_nodes_tests_merges_it_linked_or_not() -> None:
    # O3 does not consume Store.get, and no edge links it to O1: its test failed all the same
    assert merged(NODES, "FAILED tests/test_other.py::test_f - x") == [
        ("breaking_change", ["O1", "O3"])]


# the plan's closing regression run: a validate over the whole package, which rewrites none of it
REGRESSION_RUN = PlanNode(id="O9", target_entity="pkg", obligation="validate", caused_by="c",
                          dependencies=["O1"], evidence="e", status="blocked",
                          validation="regression")


@pytest.mark.parametrize("closing", [[], [REGRESSION_RUN]], ids=["alone", "with_regression_run"])
def test_a_failure_in_an_unplanned_consumers_tests_adds_it(closing: list[PlanNode]) -> None:
    alone = [NODES[0], *closing]  # the plan holds Store.get only; pkg.cli.show calls it by name
    got = breakage(alone, {}, "O1", "FAILED tests/test_cli.py::test_show - TypeError", EV)
    assert got.violations == []
    assert [(e.src, e.dst, e.cause) for e in got.consumers] == [
        ("pkg.store.Store.get", "pkg.cli.show", "sig_change")]


def test_the_nodes_own_failure_merges_nothing() -> None:
    own = Evidence(recon=Recon(nodes=[*EV.recon.nodes, ReconNode(
        id="tests.test_store.test_get", kind="test", file="tests/test_store.py")], edges=[
        *EV.recon.edges, ReconEdge(src="tests.test_store.test_get", dst="pkg.store.Store.get",
                                   kind="tests")]))
    assert not breakage(NODES, {}, "O1", "FAILED tests/test_store.py::test_get", own)
    # a failing test nothing links to anything: not (only) other work's failure
    assert not breakage(NODES, {}, "O1", "FAILED tests/test_cli.py::test_show\n"
                                         "FAILED tests/test_x.py::test_y", EV)
    assert not breakage(NODES, {}, "O1", "SyntaxError: invalid syntax", EV)
    # the owner is complete: its work is re-opened by the retry, not merged
    done = [NODES[0], node("O2", "pkg.cli.show", ["O1"], "complete")]
    assert merged(done, "FAILED tests/test_cli.py::test_show") == []
