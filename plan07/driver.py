"""The §3.4 execution driver: the single actionable obligation, and its bounds. Pure.

`pick` selects exactly one ready node (lowest natural id); `view` builds the §3.4 DriverView from
that node alone; `model_context` is the only text a model is handed (invariant 6, §8: never the
schedule). `admit_edit` / `admit_test_call` / `admit_gate_calls` enforce the bounds (5 edited
files, 10 test calls, the validation gate's own checks included).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

from plan07 import caps
from plan07.errors import PlanStateError
from plan07.model import DriverView, PermittedActions, PlanDAG, PlanNode
from plan07.vocab import natural_key


def pick(dag: PlanDAG, *, skip: Collection[str] = ()) -> PlanNode | None:
    """§3.4 step 1: exactly one ready node not yet complete, lowest id first; None when none.
    `skip`: nodes never to hand out (failed ones whose replans are spent)."""
    ready = {n.id: n for n in dag.nodes
             if n.id in dag.ready and n.state != "complete" and n.id not in skip}
    if not ready:
        return None
    return ready[min(ready, key=natural_key)]


def view(node: PlanNode, *, digest: str | None = None) -> DriverView:
    """§3.4 step 2: the model-facing context from that node only (preconditions are its deps,
    all complete, or it would not be ready). `digest`: on a local retry (plan07.retry), the
    previous attempt's failure in one line."""
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
    )


def model_context(v: DriverView) -> str:
    """The serialized view a model reads: the DriverView and nothing else (the failure digest
    only on a retry)."""
    return json.dumps(v.model_dump(mode="json", exclude_none=True), indent=2, sort_keys=True)


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
