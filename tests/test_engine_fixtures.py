"""Every per-rule fixture under tests/rules/, on both backends, through the same runner as
`plan07 rules test` (strict matching: a missing or an unexpected tuple fails)."""

from __future__ import annotations

import pytest

from plan07.engine import ENGINES
from plan07.order.fixtures import discover, run_case

CASES = discover()


def test_fixtures_were_found() -> None:
    assert len(CASES) >= 100


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_fixture(case, engine: str) -> None:  # type: ignore[no-untyped-def]
    result = run_case(case, engine)
    assert result.ok, result.describe()


def test_every_rule_has_a_positive_and_a_negative_case() -> None:
    from plan07.engine import load_program

    by_rule: dict[str, set[str]] = {}
    for c in CASES:
        by_rule.setdefault(c.rule, set()).add(c.name)
    for r in load_program().rules:
        if r.rule_id:
            names = by_rule.get(r.rule_id, set())
            assert any(n.startswith("pos") for n in names), r.rule_id
            assert any(n.startswith("neg") for n in names), r.rule_id


def test_a_wrong_expectation_fails(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from plan07.order.fixtures import Case

    src = next(c for c in CASES if c.id == "widen_before_rebind/pos")
    dst = tmp_path / "widen_before_rebind" / "pos"
    shutil.copytree(src.path, dst)
    csv = dst / "expected" / "precedes.csv"
    csv.write_text(csv.read_text() + "O9,O8,declared\n")
    case = Case("widen_before_rebind", "pos", dst)
    result = run_case(case, "pydatalog")
    assert not result.ok
    assert result.missing == {"precedes": [("O9", "O8", "declared")]}
    csv.write_text("")  # strict: a derived tuple nobody expected fails too
    assert run_case(case, "clingo").unexpected["precedes"] == [
        ("O1", "O2", "widen_before_rebind")]
    run_case(case, "clingo", accept=True)  # --accept rewrites the expectation deliberately
    assert csv.read_text() == "O1,O2,widen_before_rebind\n"
