"""What the gate's checks cover, decided from the evidence and the CP0 baseline (README "The
gate"). Pure.

- `target_tests`: each modify target's tests (plan07.evidence.testmap), what its check runs when
  its validation alone (`import:`, `compile`) proves nothing;
- `passed_at_cp0`: the nodes whose check passed on the untouched tree at CP0, so passing it proves
  nothing about a change (the driver view says so, and it settles no criterion);
- `sized_timeout`: a check's timeout from the CP0 run's duration (docs/safety.md "Timeouts").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from plan07 import caps
from plan07.evidence.testmap import TestMap
from plan07.gate.baseline import Baseline
from plan07.model import Evidence, GateInfo, Obligation


def target_tests(evidence: Evidence, nodes: Sequence[Obligation],
                 members: Mapping[str, Sequence[Obligation]] | None = None
                 ) -> dict[str, list[str]]:
    """Entity -> the tests of it (linked test ids, else importing test files) for every modify
    target of `nodes` (and of collapsed members), plus every entity recon links tests to."""
    out: dict[str, list[str]] = dict(evidence.exercised())
    tm: TestMap | None = None
    everyone = [m for n in nodes for m in (members or {}).get(n.id, [])] + list(nodes)
    for n in everyone:
        if n.obligation != "modify" or n.target_entity in out:
            continue
        tm = tm or TestMap(evidence)
        tests = tm.tests_for(n.target_entity)
        if tests:
            out[n.target_entity] = tests
    return out


def _passes_at_cp0(base: Baseline, test: str, mode: str) -> bool:
    """Would the check pass on the untouched tree? A named test (green): it passed at CP0. A
    run judged against the baseline (suite): always, once its tests ran there (no test that
    passed at CP0 fails at CP0), a test failing there already included."""
    if base.outcomes is None:
        return False
    if mode == "green" and "::" in test:
        return base.passed(test)
    root = test.split("::", 1)[0].rstrip("/")
    return any(root in (".", "") or k == root or k.startswith((root + "::", root + "/"))
               for k in base.outcomes)


def passed_at_cp0(planned: Mapping[str, tuple[str, Sequence[str]]], base: Baseline
                  ) -> list[str]:
    """The nodes (id -> (how its check judges, the tests it runs)) whose check passes on the
    untouched tree at CP0, so its pass proves nothing about a change: an `import:`/`compile`
    check with no test, a named test that passed at CP0, a suite of tests that ran then. Not a
    test-defining (red) check, nor the regression run (it judges the change against that very
    baseline)."""
    out = []
    for nid, (mode, tests) in planned.items():
        if mode in ("red", "regression"):
            continue
        if (not tests and mode in ("import", "compile")) or (
                tests and all(_passes_at_cp0(base, t, mode) for t in tests)):
            out.append(nid)
    return out


def check_timeout(timeout: object) -> None:
    """A timeout given to `complete`: None (sized), or seconds from CHECK_TIMEOUT_MIN_S to
    CHECK_TIMEOUT_MAX_S; anything else is one InputError line."""
    import math

    from plan07.errors import InputError

    if timeout is None or (isinstance(timeout, int | float) and math.isfinite(timeout)
                           and caps.CHECK_TIMEOUT_MIN_S <= timeout <= caps.CHECK_TIMEOUT_MAX_S):
        return
    raise InputError(f"timeout {timeout!r} must be a number of seconds > 0, from "
                     f"{caps.CHECK_TIMEOUT_MIN_S:g} to {caps.CHECK_TIMEOUT_MAX_S:g}",
                     field="--timeout",
                     cap=f"CHECK_TIMEOUT_MAX_S {caps.CHECK_TIMEOUT_MAX_S:g}")


def sized_timeout(gate: GateInfo | None, *, scope: int = 0, covered: int = 0) -> float:
    """A check's timeout when none is given: CHECK_TIMEOUT_FACTOR x the CP0 run's duration (a
    run of `scope` paths against the `covered` the CP0 run ran: in proportion) plus
    CHECK_TIMEOUT_FLOOR_S, at least the floor, at most CHECK_TIMEOUT_MAX_S."""
    seconds = gate.baseline_seconds if gate is not None else 0.0
    if scope and covered:
        seconds *= max(1.0, scope / covered)
    sized = caps.CHECK_TIMEOUT_FACTOR * seconds + caps.CHECK_TIMEOUT_FLOOR_S
    return round(min(caps.CHECK_TIMEOUT_MAX_S, max(caps.CHECK_TIMEOUT_FLOOR_S, sized)), 1)
