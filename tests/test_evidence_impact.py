"""Impact (06 default): relations read backwards along recon edges, the cause table, confidence
decaying with depth, the depth bound, default_change from call-site arity."""

from __future__ import annotations

import pytest

from plan07.errors import InputError
from plan07.evidence.impact import cause, impact
from plan07.model import Recon

NODES = {
    "m.Base": "class", "m.Base.run": "method", "m.Sub": "class", "m.Sub.run": "method",
    "m.helper": "function", "m.caller": "function", "m.far": "function", "m.farther": "function",
    "m.Cfg": "config", "m.Row": "schema", "m.use_cfg": "function", "m.use_row": "function",
    "m": "module", "other": "module", "mig.0001": "migration", "t.test_helper": "test",
}
EDGES = [
    ("m", "m.Base", "defines"), ("m.Base", "m.Base.run", "defines"),
    ("m.Sub", "m.Sub.run", "defines"), ("m.Sub", "m.Base", "inherits"),
    ("m.caller", "m.helper", "calls"), ("m.far", "m.caller", "calls"),
    ("m.farther", "m.far", "calls"), ("m.Base.run", "m.helper", "calls"),
    ("m.use_cfg", "m.Cfg", "calls"), ("m.use_row", "m.Row", "uses_type"),
    ("other", "m.helper", "imports"), ("mig.0001", "m.Row", "writes"),
    ("t.test_helper", "m.helper", "tests"), ("t.test_helper", "m.helper", "calls"),
]
RECON = Recon.model_validate({
    "nodes": [{"id": i, "kind": k} for i, k in NODES.items()],
    "edges": [{"src": s, "dst": d, "kind": k} for s, d, k in EDGES],
})


def table(seeds: list[str], depth: int, **kw: object) -> set[tuple[str, str, str, str, float]]:
    return {(e.src, e.dst, e.relation, e.cause, e.confidence)
            for e in impact(RECON, seeds, depth, **kw)}  # type: ignore[arg-type]


def test_function_seed_depth_1() -> None:
    assert table(["m.helper"], 1) == {
        ("m.helper", "m.caller", "CalledBy", "sig_change", 0.9),
        ("m.helper", "m.Base.run", "CalledBy", "sig_change", 0.9),
        ("m.helper", "other", "ImportedBy", "consumer_rebind", 0.6),
        ("m.helper", "t.test_helper", "TestedBy", "test_anchor", 0.9),  # not also CalledBy
    }


def test_depth_decays_confidence_and_bounds_the_walk() -> None:
    d3 = table(["m.helper"], 3)
    assert ("m.caller", "m.far", "CalledBy", "sig_change", 0.81) in d3
    assert ("m.far", "m.farther", "CalledBy", "sig_change", 0.729) in d3
    # Base.run changed -> its override in Sub must follow (depth 2)
    assert ("m.Base.run", "m.Sub.run", "OverriddenBy", "sig_change", 0.765) in d3
    d2 = table(["m.helper"], 2)
    assert not any(e[1] == "m.farther" for e in d2)
    assert table(["m.helper"], 0) == set()


@pytest.mark.parametrize(("seed", "expected"), [
    ("m.Base", {("m.Base", "m.Sub", "SubclassedBy", "consumer_rebind", 0.8)}),
    ("m.Cfg", {("m.Cfg", "m.use_cfg", "CalledBy", "default_change", 0.9)}),
    ("m.Row", {("m.Row", "m.use_row", "UsedBy", "schema_change", 0.7),
               ("m.Row", "mig.0001", "MigratedBy", "migration", 0.95)}),
    ("m.Base.run", {("m.Base.run", "m.Sub.run", "OverriddenBy", "sig_change", 0.85)}),
])
def test_relation_and_cause_per_seed_kind(seed: str, expected: set[tuple[object, ...]]) -> None:
    assert table([seed], 1) == expected


@pytest.mark.parametrize(("relation", "src", "dst", "relies", "why"), [
    ("TestedBy", "function", "test", False, "test_anchor"),
    ("MigratedBy", "schema", "migration", False, "migration"),
    ("CalledBy", "migration", "function", False, "migration"),
    ("CalledBy", "config", "function", False, "default_change"),
    ("UsedBy", "schema", "function", False, "schema_change"),
    ("CalledBy", "function", "function", False, "sig_change"),
    ("CalledBy", "function", "function", True, "default_change"),
    ("OverriddenBy", "method", "method", False, "sig_change"),
    ("SubclassedBy", "class", "class", False, "consumer_rebind"),
    ("ImportedBy", "function", "module", False, "consumer_rebind"),
])
def test_cause_table(relation: str, src: str, dst: str, relies: bool, why: str) -> None:
    assert cause(relation, src, dst, relies_on_default=relies) == why


def test_caller_leaving_a_default_out_is_default_change() -> None:
    arity = {"m.helper": (2, 1)}  # helper(a, b=1)
    out = table(["m.helper"], 1, arity=arity,
                passed={("m.caller", "m.helper"): 1, ("m.Base.run", "m.helper"): 2})
    assert ("m.helper", "m.caller", "CalledBy", "default_change", 0.9) in out
    assert ("m.helper", "m.Base.run", "CalledBy", "sig_change", 0.9) in out


def test_leaves_are_not_walked_through_and_seeds_not_targets() -> None:
    out = table(["m.helper", "m.caller"], 3)
    assert not any(e[1] in ("m.helper", "m.caller") for e in out)  # a seed is never a target
    assert not any(e[0] in ("other", "t.test_helper") for e in out)  # modules/tests are leaves


def test_sorted_and_negative_depth_refused() -> None:
    edges = impact(RECON, ["m.helper"], 3)
    keys = [(e.src, e.dst, e.relation) for e in edges]
    assert keys == sorted(keys)
    with pytest.raises(InputError, match="depth"):
        impact(RECON, ["m.helper"], -1)
