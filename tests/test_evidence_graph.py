"""neighbourhood(): the k-hop subgraph over recon + impact edges, both directions, deterministic."""

from __future__ import annotations

import pytest

from plan07.errors import InputError
from plan07.evidence import neighbourhood
from plan07.model import Evidence

# A chain a -> b -> c -> d -> e (calls), a side branch x inherits b, and an impact edge e -> f.
BUNDLE = {
    "recon": {
        "nodes": [{"id": n, "kind": "function"} for n in ["e", "d", "c", "b", "a", "x"]],
        "edges": [
            {"src": "d", "dst": "e", "kind": "calls"},
            {"src": "a", "dst": "b", "kind": "calls"},
            {"src": "b", "dst": "c", "kind": "calls"},
            {"src": "c", "dst": "d", "kind": "calls"},
            {"src": "x", "dst": "b", "kind": "inherits"},
        ],
    },
    "impact": {"edges": [
        {"src": "e", "dst": "f", "relation": "CalledBy", "cause": "sig_change", "confidence": 0.9},
    ]},
    "localization": [{"entity": "c", "score": 0.9}, {"entity": "a", "score": 0.5}],
    "context": [{"entity": "f", "summary": "far"}, {"entity": "b", "summary": "near"}],
    "soft_rank": {"a": {"lex": 0.1}, "e": {"cochange": 0.3}},
}


def ev() -> Evidence:
    return Evidence.model_validate(BUNDLE)


def ids(e: Evidence) -> list[str]:
    return [n.id for n in e.recon.nodes]


@pytest.mark.parametrize(
    ("seeds", "hops", "nodes", "edges", "impact"),
    [
        (["c"], 0, ["c"], [], []),
        (["c"], 1, ["b", "c", "d"], [("b", "c"), ("c", "d")], []),
        (["c"], 2, ["a", "b", "c", "d", "e", "x"],
         [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("x", "b")], []),
        # the impact edge is walked too, and backwards: f reaches e, d
        (["f"], 2, ["d", "e"], [("d", "e")], [("e", "f")]),
        (["a", "e"], 1, ["a", "b", "d", "e"], [("a", "b"), ("d", "e")], [("e", "f")]),
        (["nowhere"], 3, [], [], []),
    ],
)
def test_khop_table(
    seeds: list[str], hops: int, nodes: list[str], edges: list[tuple[str, str]],
    impact: list[tuple[str, str]],
) -> None:
    out = neighbourhood(ev(), seeds, hops)
    assert ids(out) == nodes
    assert [(e.src, e.dst) for e in out.recon.edges] == sorted(edges)
    assert [(i.src, i.dst) for i in out.impact.edges] == impact


def test_default_is_two_hops_and_filters_every_part() -> None:
    out = neighbourhood(ev(), ["d"])
    assert ids(out) == ["b", "c", "d", "e"]
    assert [x.entity for x in out.localization] == ["c"]  # ranked order kept, a filtered out
    assert [c.entity for c in out.context] == ["f", "b"]  # f is 2 hops away via impact e -> f
    assert set(out.soft_rank) == {"e"}


def test_order_does_not_depend_on_input_order() -> None:
    data = dict(BUNDLE)
    data["recon"] = {
        "nodes": list(reversed(BUNDLE["recon"]["nodes"])),  # type: ignore[index]
        "edges": list(reversed(BUNDLE["recon"]["edges"])),  # type: ignore[index]
    }
    a = neighbourhood(ev(), ["c"], 2).model_dump()
    b = neighbourhood(Evidence.model_validate(data), ["c"], 2).model_dump()
    assert a == b


def test_input_is_not_mutated_and_result_is_valid() -> None:
    e = ev()
    before = e.model_dump()
    out = neighbourhood(e, ["b"], 1)
    assert e.model_dump() == before
    Evidence.model_validate(out.model_dump())


def test_negative_hops_is_an_input_error() -> None:
    with pytest.raises(InputError, match="hops"):
        neighbourhood(ev(), ["a"], -1)
