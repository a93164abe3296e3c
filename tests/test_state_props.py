"""plan.json out of shape, under every verb that reads state (docs/safety.md "Hostile input"): a
value replaced by a hostile one (the wrong type, NaN, a huge number, `..`, an unknown id, control
characters) or a key taken out, written with a stamp that matches it (the stamp saves the schema
pass, never the checks) or without one. Whatever the verb, it exits 0 or 1, or 2 with one
`error:` line and plan.json's bytes unchanged; never a traceback (tests/_probes.py judges)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _probes import HOSTILE, VERBS, StateWorld, mutate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> StateWorld:
    return StateWorld(tmp_path_factory.mktemp("state-props"))


@pytest.mark.slow
@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(data=st.data())
def test_no_verb_ends_in_a_traceback_on_a_malformed_plan(world: StateWorld,
                                                           data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(world.paths), label="path")
    value = data.draw(st.sampled_from(HOSTILE), label="value")
    stamped = data.draw(st.booleans(), label="stamped")
    verb = data.draw(st.sampled_from(VERBS), label="verb")
    verdict = world.run(verb, mutate(world.plan, path, value), stamped=stamped)
    assert verdict.problems == []


# the shapes an earlier probe found ending in a traceback, each under every verb
KNOWN: list[tuple[tuple[Any, ...], Any]] = [
    (("epoch",), "5"), (("epoch",), float("nan")), (("nodes",), None),
    (("nodes", 0, "state"), "weird"), (("checkpoint_seq",), -3), (("audit",), "x"),
    (("evidence_file",), "../x.json"), (("evidence_file",), ".."), (("active",), "O999"),
    (("nodes", 1, "id"), "O1"), (("repo",), "relative"), (("gate", "baseline_file"), "../x"),
    (("audit_overflow",), {"file": "../x", "rows": 1}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("path", "value"), KNOWN, ids=[".".join(map(str, p)) + f"={v!r}"
                                                         for p, v in KNOWN])
@pytest.mark.parametrize("stamped", [True, False], ids=["stamped", "unstamped"])
def test_a_known_malformed_field_is_one_error_line_naming_it(
        world: StateWorld, path: tuple[Any, ...], value: Any, stamped: bool) -> None:
    for verb in (["next"], ["status"], ["complete", "O2"]):
        verdict = world.run(verb, mutate(world.plan, path, value), stamped=stamped)
        assert verdict.problems == []
        assert verdict.rc == 2, (verb, verdict)
        assert "plan.json" in verdict.stderr
        assert str(path[0]) in verdict.stderr


def test_a_stamp_proves_nothing_about_the_content(world: StateWorld, tmp_path: Path) -> None:
    # a string epoch passes the lax model; the stamped path is as strict as the schema
    verdict = world.run(["status"], mutate(world.plan, ("epoch",), "5"), stamped=True)
    assert verdict.rc == 2
    assert "epoch" in verdict.stderr
