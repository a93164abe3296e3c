"""build_recon makes its ReconNode/ReconEdge models without running the validator per object
(resolve._models): the models must be the ones validation makes, and anything the models would
refuse must still be refused."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path
from typing import get_args

import pydantic
import pytest
import typer

from plan07.caps import ENTITY_MAX_CHARS, FIELD_MAX_CHARS
from plan07.evidence.recon import recon
from plan07.evidence.resolve import _models
from plan07.model.evidence import EdgeKind, Recon, ReconEdge, ReconNode

CLICK = Path(typer.__file__).parent / "_click"


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[ReconNode], list[ReconEdge]]:
    if not (CLICK / "core.py").is_file():
        pytest.skip("typer no longer vendors click at typer/_click")
    root = tmp_path_factory.mktemp("real")
    shutil.copytree(CLICK, root / "click", ignore=shutil.ignore_patterns("__pycache__"))
    out = recon(root)
    return out.nodes, out.edges


def _same(made: pydantic.BaseModel, checked: pydantic.BaseModel) -> None:
    assert type(made) is type(checked)
    assert made == checked
    assert made.__dict__ == checked.__dict__
    assert list(made.__dict__) == list(checked.__dict__)  # (the order model_dump writes)
    assert made.model_fields_set == checked.model_fields_set
    assert made.__pydantic_extra__ is checked.__pydantic_extra__ is None
    assert made.__pydantic_private__ is checked.__pydantic_private__ is None
    assert made.model_dump_json() == checked.model_dump_json()


def test_every_model_is_the_validated_one(graph: tuple[list[ReconNode], list[ReconEdge]]) -> None:
    nodes, edges = graph
    assert len(nodes) > 300
    assert len(edges) > 800
    assert nodes[0].model_fields_set is nodes[-1].model_fields_set  # (made, not validated)
    for n in nodes:
        _same(n, ReconNode.model_validate(n.model_dump()))
    for e in edges:
        _same(e, ReconEdge.model_validate(e.model_dump()))
    bundle = Recon(nodes=nodes, edges=edges)  # a bundle holds them as they are, and round-trips
    assert Recon.model_validate_json(bundle.model_dump_json()) == bundle


def test_edges_join_nodes_with_known_kinds(graph: tuple[list[ReconNode], list[ReconEdge]]
                                           ) -> None:
    """What _models relies on instead of checking each edge: every edge's ends are node ids and
    its kind is one of EdgeKind (build_recon adds no other)."""
    nodes, edges = graph
    ids = {n.id for n in nodes}
    assert all(e.src in ids and e.dst in ids for e in edges)
    assert {e.kind for e in edges} <= set(get_args(EdgeKind))
    assert {e.kind for e in edges} >= {"calls", "imports", "defines", "inherits", "by_name"}


def test_shared_fields_set_stays_whole(graph: tuple[list[ReconNode], list[ReconEdge]]) -> None:
    """All nodes share one fields-set: setting, copying and pickling a node leave the others
    (and it) with every field set, as validated models have."""
    nodes, _ = graph
    a, b = nodes[0], nodes[1]
    a.line = a.line  # (pydantic adds "line" to the shared fields-set: it is already there)
    assert b.model_fields_set == set(ReconNode.model_fields)
    assert a.model_fields_set is b.model_fields_set
    c = nodes[2].model_copy(update={"line": 3})
    assert c.line == 3
    assert c.model_fields_set == set(ReconNode.model_fields)
    d = pickle.loads(pickle.dumps(nodes[3]))
    assert d == nodes[3]
    assert d.model_fields_set is not nodes[3].model_fields_set
    assert nodes[3].model_dump(exclude_unset=True) == nodes[3].model_dump()


ROW = ("pkg.mod.f", "function", "pkg/mod.py", 3, "def f(x)")


@pytest.mark.parametrize(("row", "edge"), [
    (("pkg.mod.f", "widget", "pkg/mod.py", 3, None), None),  # no such node kind
    (("", "function", "pkg/mod.py", 3, None), None),  # an empty id
    (("p." + "x" * ENTITY_MAX_CHARS, "function", "pkg/mod.py", 3, None), None),
    (("pkg.mod.f", "function", "pkg/mod.py", 3, "d" * (FIELD_MAX_CHARS + 1)), None),
    (ROW, ("p." + "x" * ENTITY_MAX_CHARS, ("pkg.mod.f", "calls"))),  # from no node, too long
])
def test_what_the_models_refuse_is_refused(row: tuple, edge: tuple[str, tuple[str, str]] | None
                                           ) -> None:
    edges = {edge[0]: {edge[1]}} if edge else {}
    with pytest.raises(pydantic.ValidationError):
        _models([row], edges)


def test_a_row_that_does_not_fit_goes_through_the_validator() -> None:
    """A line that is no int is not made as it is: the validator reads it (its lax mode takes a
    numeric string), and the model holds an int, as a validated one does."""
    nodes, _ = _models([("pkg.mod.f", "function", "pkg/mod.py", "3", None)], {})
    assert nodes[0].line == 3


def test_fitting_rows_make_models_in_order() -> None:
    rows = [("pkg.mod", "module", "pkg/mod.py", 1, None), ROW]
    nodes, edges = _models(rows, {"pkg.mod": {("pkg.mod.f", "defines")},
                                  "pkg.mod.f": {("pkg.mod", "imports"), ("pkg.mod", "calls")}})
    assert [n.id for n in nodes] == ["pkg.mod", "pkg.mod.f"]
    assert [(e.src, e.dst, e.kind) for e in edges] == [
        ("pkg.mod", "pkg.mod.f", "defines"), ("pkg.mod.f", "pkg.mod", "calls"),
        ("pkg.mod.f", "pkg.mod", "imports")]
    _same(nodes[1], ReconNode(id="pkg.mod.f", kind="function", file="pkg/mod.py", line=3,
                              signature="def f(x)"))
    assert _models([], {}) == ([], [])
