"""§5 phase 4: the plan-DAG scheduler (plan07.plan.schedule), table-driven over fixture graphs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plan07 import caps
from plan07.errors import InputError
from plan07.model import DerivedEdge, Evidence, Obligation, OrderResult, Violation
from plan07.plan.schedule import branch_score, natural_key, schedule, topological_order


def ob(
    i: str, verb: str = "modify", status: str = "ready", target: str | None = None
) -> Obligation:
    return Obligation(
        id=i, target_entity=target or f"pkg.m.{i}", obligation=verb, caused_by="req",
        dependencies=[], evidence="06", status=status, validation=f"tests/t.py::test_{i}",
    )


def order(*pairs: tuple[str, str], violations: tuple[Violation, ...] = ()) -> OrderResult:
    return OrderResult(
        edges=[DerivedEdge(**{"from": a, "to": b, "rule": "declared"}) for a, b in pairs],
        violations=list(violations),
    )


NONE = Evidence()


@pytest.mark.parametrize(
    ("ids", "pairs", "expected"),
    [
        (["O10", "O2", "O1"], [], ["O1", "O2", "O10"]),
        (["O1", "O2", "O3"], [("O3", "O1")], ["O2", "O3", "O1"]),
        (["O1", "O2", "O3", "O4"], [("O1", "O3"), ("O2", "O3"), ("O3", "O4")],
         ["O1", "O2", "O3", "O4"]),
        (["O1", "O2", "O3"], [("O2", "O1"), ("O3", "O1")], ["O2", "O3", "O1"]),
    ],
)
def test_topological_order_with_natural_id_ties(
    ids: list[str], pairs: list[tuple[str, str]], expected: list[str]
) -> None:
    dag = schedule([ob(i) for i in ids], order(*pairs), NONE)
    assert topological_order(dag) == expected
    steps = [cp.after for cp in dag.checkpoints[1:]]
    assert [n for after in steps for n in after] == expected


@pytest.mark.parametrize(
    ("completed", "ready", "blocked"),
    [
        (set(), ["O1"], ["O2", "O3"]),
        ({"O1"}, ["O2"], ["O3"]),
        ({"O1", "O2"}, ["O3"], []),
        ({"O1", "O2", "O3"}, [], []),
    ],
)
def test_ready_only_when_dependencies_complete(
    completed: set[str], ready: list[str], blocked: list[str]
) -> None:
    dag = schedule([ob("O1"), ob("O2"), ob("O3")], order(("O1", "O2"), ("O2", "O3")), NONE,
                   completed=completed)
    assert (dag.ready, dag.blocked, dag.alternative) == (ready, blocked, [])
    assert {n.id for n in dag.nodes if n.state == "complete"} == completed
    assert {n.id: n.dependencies for n in dag.nodes} == {"O1": [], "O2": ["O1"], "O3": ["O2"]}


def test_two_node_cycle_collapses_into_one_flagged_composite() -> None:
    dag = schedule(
        [ob("O1"), ob("O2", verb="preserve"), ob("O3")],
        order(("O1", "O2"), ("O2", "O1"), ("O2", "O3")),
        NONE,
    )
    comp = next(n for n in dag.nodes if n.cycle_collapsed)
    assert comp.id == "O1_cycle"
    assert comp.members == ["O1", "O2"]
    assert comp.obligation == "modify"
    assert "O1, O2" in comp.caused_by
    assert [n.id for n in dag.nodes] == ["O1_cycle", "O3"]
    assert dag.edges == [("O1_cycle", "O3")]
    assert (dag.ready, dag.blocked) == (["O1_cycle"], ["O3"])
    # validated as one unit: the composite completes only when all members do
    half = schedule([ob("O1"), ob("O2"), ob("O3")], order(("O1", "O2"), ("O2", "O1"), ("O2", "O3")),
                    NONE, completed={"O1"})
    assert half.ready == ["O1_cycle"]
    full = schedule([ob("O1"), ob("O2"), ob("O3")], order(("O1", "O2"), ("O2", "O1"), ("O2", "O3")),
                    NONE, completed={"O1", "O2"})
    assert full.ready == ["O3"]


def test_a_composite_id_never_takes_an_obligations_own_id() -> None:
    """An obligation named `O1_cycle` stays in the plan beside the O1+O2 composite (issue 15:
    the composite once took its id and silently removed it)."""
    dag = schedule([ob("O1"), ob("O2"), ob("O1_cycle")], order(("O1", "O2"), ("O2", "O1")), NONE)
    comp = next(n for n in dag.nodes if n.cycle_collapsed)
    assert comp.members == ["O1", "O2"]
    assert comp.id != "O1_cycle"
    assert sorted(n.id for n in dag.nodes) == sorted([comp.id, "O1_cycle"])


def test_three_cycles_and_a_chain_collapse_independently() -> None:
    ids = ["O1", "O2", "O3", "O4", "O5", "O6"]
    pairs = [("O1", "O2"), ("O2", "O3"), ("O3", "O1"), ("O3", "O4"), ("O5", "O6"), ("O6", "O5")]
    dag = schedule([ob(i) for i in ids], order(*pairs), NONE)
    assert [(n.id, n.members) for n in dag.nodes if n.cycle_collapsed] == [
        ("O1_cycle", ["O1", "O2", "O3"]), ("O5_cycle", ["O5", "O6"])
    ]
    assert topological_order(dag) == ["O1_cycle", "O4", "O5_cycle"]


def test_a_cycle_that_survives_collapse_is_refused() -> None:
    with pytest.raises(InputError, match="depends on itself"):
        schedule([ob("O1"), ob("O2")], order(("O1", "O1")), NONE)


@pytest.mark.parametrize(
    "pairs", [[("O1", "O9")], [("O9", "O1")]], ids=["unknown-dst", "unknown-src"]
)
def test_an_edge_to_an_unknown_obligation_is_refused(pairs: list[tuple[str, str]]) -> None:
    with pytest.raises(InputError, match="unknown obligation 'O9'"):
        schedule([ob("O1")], order(*pairs), NONE)


EVIDENCE = Evidence.model_validate({
    "soft_rank": {"pkg.a": {"lex": 1.0, "cochange": 0.5}, "pkg.b": {"lex": 0.2, "cochange": 0.0}},
    "impact": {"edges": [{"src": "pkg.a.f", "dst": "pkg.c", "relation": "CalledBy",
                          "cause": "sig_change", "confidence": 0.9}]},
})


@pytest.mark.parametrize(
    ("target", "score"),
    [
        ("pkg.a", round(0.4 * 1.0 + 0.3 * 0.5 + 0.3 * 0.9, 4)),   # descendant pkg.a.f has impact
        ("pkg.a.f", round(0.4 * 1.0 + 0.3 * 0.5 + 0.3 * 0.9, 4)),  # soft-rank via ancestor
        ("pkg.b.g", round(0.4 * 0.2, 4)),
        ("pkg.zzz", 0.0),
    ],
)
def test_branch_score_formula(target: str, score: float) -> None:
    assert branch_score(target, EVIDENCE) == score


def test_alternatives_are_scored_present_and_never_executed() -> None:
    obs = [ob("O1"), ob("O2", target="pkg.b.g"), ob("O3", status="alternative", target="pkg.a.f"),
           ob("O4")]
    dag = schedule(obs, order(("O1", "O2"), ("O1", "O3"), ("O3", "O4")), EVIDENCE,
                   completed={"O1"})
    assert dag.alternative == ["O3"]
    assert set(dag.branch_scores) == {"O2", "O3"}  # the group {O2, O3}: same verb, same preds
    assert all(0.0 <= s <= 1.0 for s in dag.branch_scores.values())
    assert "O3" not in topological_order(dag)
    assert all("O3" not in cp.after for cp in dag.checkpoints)
    assert dag.ready == ["O2", "O4"]  # an edge from an alternative holds nothing back


def test_a_group_of_alternatives_only_follows_its_top_ranked_branch() -> None:
    obs = [ob("O1"), ob("O2", status="alternative", target="pkg.b.g"),
           ob("O3", status="alternative", target="pkg.a.f")]
    dag = schedule(obs, order(("O1", "O2"), ("O1", "O3")), EVIDENCE)
    assert dag.branch_scores["O3"] > dag.branch_scores["O2"]
    assert dag.alternative == ["O2"]
    assert topological_order(dag) == ["O1", "O3"]


def test_an_edge_from_an_alternative_does_not_make_its_target_a_followed_branch() -> None:
    # The examples/session_timeout shape: main modify O2 and alternatives O3, O4 share O1; a
    # rule edge O3 -> O4 (widen before rebind) once gave O4 a group of its own, alternatives
    # only, so O4 was followed: scheduled, handed out, and the final check O5 waited on it.
    obs = [ob("O1"), ob("O2", target="pkg.b.g"), ob("O3", status="alternative", target="pkg.a.f"),
           ob("O4", status="alternative", target="pkg.a.f.load"), ob("O5", verb="validate")]
    dag = schedule(obs, order(("O1", "O2"), ("O1", "O3"), ("O1", "O4"), ("O3", "O4"),
                              ("O2", "O5"), ("O3", "O5"), ("O4", "O5")), EVIDENCE)
    assert dag.alternative == ["O3", "O4"]
    assert topological_order(dag) == ["O1", "O2", "O5"]
    assert set(dag.branch_scores) == {"O2", "O3", "O4"}  # one group: same verb, same main preds
    assert next(n for n in dag.nodes if n.id == "O5").dependencies == ["O2"]
    dag = schedule(obs, order(("O1", "O2"), ("O1", "O3"), ("O1", "O4"), ("O3", "O4"),
                              ("O2", "O5"), ("O3", "O5"), ("O4", "O5")), EVIDENCE,
                   completed={"O1", "O2"})
    assert dag.ready == ["O5"]  # not held back by an unfollowed alternative


def test_an_alternative_that_needs_an_unfollowed_alternative_is_not_followed() -> None:
    # {O2, O3} is a group of alternatives only: O3 (higher score) is followed. O4 validates O2's
    # branch; alone in its group it would be "top-ranked", but O2 is not followed, so nor is O4.
    obs = [ob("O1"), ob("O2", status="alternative", target="pkg.b.g"),
           ob("O3", status="alternative", target="pkg.a.f"),
           ob("O4", verb="validate", status="alternative", target="pkg.b.g")]
    dag = schedule(obs, order(("O1", "O2"), ("O1", "O3"), ("O2", "O4")), EVIDENCE)
    assert dag.alternative == ["O2", "O4"]
    assert topological_order(dag) == ["O1", "O3"]
    follows = schedule(obs, order(("O1", "O2"), ("O1", "O3"), ("O3", "O4")), EVIDENCE)
    assert topological_order(follows) == ["O1", "O3", "O4"]  # O4 needs the followed branch


def test_checkpoints_between_steps_at_most_32_evenly_merged() -> None:
    small = schedule([ob("O1"), ob("O2")], order(("O1", "O2")), NONE)
    assert [(c.id, c.step, c.after) for c in small.checkpoints] == [
        ("CP0", 0, []), ("CP1", 1, ["O1"]), ("CP2", 2, ["O2"])
    ]
    ids = [f"O{i}" for i in range(1, 65)]
    big = schedule([ob(i) for i in ids], order(*zip(ids, ids[1:], strict=False)), NONE)
    assert len(big.checkpoints) == caps.MAX_CHECKPOINTS
    assert big.checkpoints[-1].step == 64
    gaps = {b.step - a.step for a, b in zip(big.checkpoints, big.checkpoints[1:], strict=False)}
    assert gaps <= {2, 3}  # 64 steps over 31 markers: merged evenly
    assert [n for c in big.checkpoints for n in c.after] == ids


def test_a_breaking_change_and_its_consumers_rebinds_are_one_atomic_step() -> None:
    ids = ["O1", "O2", "O3", "O4"]
    flag = Violation(kind="breaking_change", nodes=["O1", "O3"], detail="parameter removed")
    dag = schedule([ob(i) for i in ids], order(("O1", "O2"), ("O2", "O3"), ("O3", "O4"),
                                               violations=(flag,)), NONE)
    # merging O1 with O3 closes the cycle O1 -> O2 -> O3 -> O1: O2 joins the same step
    comp = next(n for n in dag.nodes if n.cycle_collapsed)
    assert (comp.id, comp.members) == ("O1_atomic", ["O1", "O2", "O3"])
    assert comp.caused_by.startswith("atomic step (rules: breaking_change)")
    assert dag.edges == [("O1_atomic", "O4")]
    assert [c.after for c in dag.checkpoints] == [[], ["O1_atomic"], ["O4"]]


def test_an_atomic_group_with_no_path_between_merges_only_its_members() -> None:
    flag = Violation(kind="breaking_change", nodes=["O2", "O3"], detail="")
    dag = schedule([ob(i) for i in ("O1", "O2", "O3")], order(("O1", "O3"), violations=(flag,)),
                   NONE)
    assert [(n.id, n.members) for n in dag.nodes] == [("O1", []), ("O2_atomic", ["O2", "O3"])]
    assert dag.edges == [("O1", "O2_atomic")]
    other = schedule([ob("O1"), ob("O2")], order(("O1", "O2"), violations=(
        Violation(kind="unplanned_consumer", nodes=["O1", "O2"]),)), NONE)
    assert not any(n.cycle_collapsed for n in other.nodes)  # only ATOMIC_KINDS merge


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 12),
    raw=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=30),
    alts=st.sets(st.integers(0, 11)),
    done=st.sets(st.integers(0, 11)),
)
def test_partition_is_exact_and_exhaustive(
    n: int, raw: list[tuple[int, int]], alts: set[int], done: set[int]
) -> None:
    pairs = sorted({(f"O{a}", f"O{b}") for a, b in raw if a < b < n})  # a DAG
    obs = [ob(f"O{i}", status="alternative" if i in alts else "ready") for i in range(n)]
    completed = {f"O{i}" for i in done if i < n}
    dag = schedule(obs, order(*pairs), NONE, completed=completed)
    lists = [dag.ready, dag.blocked, dag.alternative]
    flat = [x for part in lists for x in part]
    assert len(flat) == len(set(flat))
    assert set(flat) == {nd.id for nd in dag.nodes if nd.state != "complete"}
    assert all(nd.status == "alternative" for nd in dag.nodes if nd.id in dag.alternative)
    assert set(dag.branch_scores) >= set(dag.alternative)
    order_ids = topological_order(dag)
    pos = {x: i for i, x in enumerate(order_ids)}
    assert all(pos[a] < pos[b] for a, b in dag.edges if a in pos and b in pos)


def test_natural_key() -> None:
    assert sorted(["O10", "O2", "O1", "A3"], key=natural_key) == ["A3", "O1", "O2", "O10"]


SCRIPT = """
import json
from plan07.model import DerivedEdge, Evidence, Obligation, OrderResult
from plan07.plan.schedule import schedule
ids = [f"O{i}" for i in range(1, 30)]
obs = [Obligation(id=i, target_entity=f"pkg.m{int(i[1:]) % 5}.{i}", obligation="modify",
                  caused_by="r", dependencies=[], evidence="e",
                  status="alternative" if int(i[1:]) % 7 == 0 else "ready", validation="compile")
       for i in ids]
pairs = {(ids[a], ids[b]) for a in range(29) for b in range(29)
         if (a * 7 + b * 3) % 11 == 0 and a != b}
order = OrderResult(edges=[DerivedEdge(**{"from": a, "to": b, "rule": "r"}) for a, b in pairs])
ev = Evidence.model_validate(
    {"soft_rank": {f"pkg.m{k}": {"lex": k / 5, "cochange": 0.1} for k in range(5)}})
print(json.dumps(schedule(obs, order, ev, completed={"O1"}).model_dump(mode="json")))
"""


def test_same_bytes_under_any_pythonhashseed() -> None:
    outs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        res = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                             env=env, check=True)
        outs.add(res.stdout)
    assert len(outs) == 1
    dag = json.loads(outs.pop())
    assert any(n["cycle_collapsed"] for n in dag["nodes"])  # the fixture exercises collapse
