"""The §3.4 execution driver: the single actionable obligation, and its bounds. Pure.

`pick` selects exactly one ready node (lowest natural id); `view` builds the §3.4 DriverView from
that node alone (plus the plan's goal and the criteria the node serves); `model_context` is the
only text a model is handed (invariant 6, §8: never the schedule). `admit_edit` /
`admit_test_call` / `admit_gate_calls` enforce the bounds (5 edited files, 10 test calls, the
validation gate's own checks included).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence

from plan07 import caps
from plan07.errors import PlanStateError
from plan07.model import DriverView, PermittedActions, PlanDAG, PlanNode, Requirement
from plan07.vocab import natural_key


def pick(dag: PlanDAG, *, skip: Collection[str] = ()) -> PlanNode | None:
    """§3.4 step 1: exactly one ready node not yet complete, lowest id first; None when none.
    `skip`: nodes never to hand out (failed ones whose replans are spent)."""
    ready = {n.id: n for n in dag.nodes
             if n.id in dag.ready and n.state != "complete" and n.id not in skip}
    if not ready:
        return None
    return ready[min(ready, key=natural_key)]


def view(node: PlanNode, requirement: Requirement | None = None, *,
         digest: str | None = None, note: str | None = None,
         saved: Sequence[str] = ()) -> DriverView:
    """§3.4 step 2: the model-facing context from that node only (preconditions are its deps,
    all complete, or it would not be ready), with what the agent needs to act on it: the
    goal, the node's own caused_by and evidence, the criteria it serves, what its check runs.
    `digest`: on a local retry (plan07.plan.retry), the previous attempt's failure in one line;
    `note`: what the check's pass proves and does not (plan07.plan.criteria.check_note);
    `saved`: the refs its earlier edits (a merged step's: its members') were saved in when
    they were set aside, each brought back by one `git stash apply`."""
    if node.status != "ready":
        raise PlanStateError(
            f"obligation {node.id!r} is {node.status}, not ready; only a ready node is handed out",
            reason="not_ready", node=node.id,
        )
    return DriverView(
        node_id=node.id,
        obligation=node.obligation,
        target_entity=node.target_entity,
        preconditions={d: "complete" for d in node.dependencies},
        permitted_actions=PermittedActions(),
        required_validation=node.validation,
        failure_digest=digest or None,
        goal=requirement.goal if requirement else "",
        caused_by=node.caused_by,
        evidence=node.evidence,
        criteria=served(node, requirement) if requirement else [],
        check=check_text(node.validation),
        check_note=note,
        saved_edit=" && ".join(f"git stash apply --index {r}" for r in saved) or None,
    )


_CRITERION_REF = re.compile(r"\bcriterion (\d{1,2})\b")


def served(node: PlanNode, requirement: Requirement) -> list[str]:
    """The acceptance criteria this node serves: those its caused_by cites ("criterion 2: …"),
    and those that name its validation (a test id criterion is the test itself)."""
    crit = requirement.acceptance_criteria
    picked = [int(m.group(1)) for m in _CRITERION_REF.finditer(node.caused_by)]
    picked += [i for i, c in enumerate(crit, 1) if node.validation and node.validation in c]
    return [crit[i - 1] for i in dict.fromkeys(picked) if 1 <= i <= len(crit)]


def check_text(validation: str) -> str:
    """What the gate will run for `validation` (the check grammar of plan07.gate.grammar), in words
    an agent can act on; nothing runs here."""
    from plan07.vocab import classify

    v = validation.strip()
    kind = classify(v)
    if kind == "pytest_node":
        return (f"pytest {v}: this test must pass (a test this node defines must first be "
                "collected and fail on an assertion), and no test that passed at the baseline "
                "may fail")
    if kind == "pytest_path":
        return f"pytest {v.removeprefix('pytest:')}: its tests must pass against the baseline"
    if kind == "import":
        return f"import {v.removeprefix('import:')} in the repository's interpreter"
    if kind == "compile":
        return "byte-compile every Python file of the repository (it must still compile)"
    if kind == "regression":
        return ("the regression run: the tests of every module the plan changed since CP0; no "
                "test that passed at CP0 may fail (the plan terminates only after it passed)")
    return f"nothing plan07 can run ({v!r} is no check it knows): confirm it by hand"


def as_text(v: DriverView) -> str:
    """What `plan07 next --json` prints for the view."""
    from plan07.term import json_text

    return json_text(json.dumps(v.data(), indent=2, ensure_ascii=False)) + "\n"


def model_context(v: DriverView) -> str:
    """The serialized view a model reads: the DriverView and nothing else."""
    return json.dumps(v.data(), indent=2, sort_keys=True)


def admit_edit(node_id: str, edited: Sequence[str], path: str) -> list[str]:
    """The distinct files `node_id` has edited, with `path` added; the 6th file is refused."""
    if path in edited:
        return list(edited)
    if len(edited) >= caps.MAX_EDIT_FILES:
        raise PlanStateError(
            f"obligation {node_id!r} may edit at most {caps.MAX_EDIT_FILES} files "
            f"(cap MAX_EDIT_FILES); {path!r} would be file {len(edited) + 1} — complete the "
            "obligation or split it", reason="edit_cap", node=node_id,
        )
    return [*edited, path]


def admit_test_call(node_id: str, calls: int) -> int:
    """The test-call count of `node_id` after one more; the 11th is refused."""
    if calls >= caps.MAX_TEST_CALLS:
        raise PlanStateError(
            f"obligation {node_id!r} may run at most {caps.MAX_TEST_CALLS} test calls "
            "(cap MAX_TEST_CALLS, the validation gate's included) and has used them all; it "
            "cannot be validated within its bounds — replace it (`plan07 feedback`) or "
            "`plan07 rollback`", reason="test_call_cap", node=node_id,
        )
    return calls + 1


def admit_gate_calls(node_id: str, calls: int, checks: int) -> int:
    """The test-call count of `node_id` after the validation gate runs `checks` checks (§3.5;
    each counts against max_test_calls, §3.4); refused, before anything runs, past the cap."""
    if calls + checks > caps.MAX_TEST_CALLS:
        raise PlanStateError(
            f"obligation {node_id!r} has used {calls} of its {caps.MAX_TEST_CALLS} test calls "
            f"(cap MAX_TEST_CALLS) and its validation would need {checks} more; it cannot be "
            "validated within its bounds — replace it (`plan07 feedback`) or `plan07 rollback`",
            reason="test_call_cap", node=node_id,
        )
    return calls + checks


def require_active(active: str | None, node_id: str) -> None:
    """An edit or test call is only accepted for the obligation that was handed out."""
    if active != node_id:
        now = f"the active obligation is {active!r}" if active else "none is active"
        raise PlanStateError(
            f"obligation {node_id!r} was not handed out ({now}); run `plan07 next` first",
            reason="not_active", node=node_id,
        )
