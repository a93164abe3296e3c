"""plan07: the planning stage of a coding agent. This is the public API, imported lazily so
`plan07 next` starts fast (nothing heavy is loaded until a name is used).

    from plan07 import Planner, route
    if route(task) == "plan07":
        planner = Planner.create(request, repo=Path("."))
        while (view := planner.next()) is not None:
            ...  # edit the repository for view.node_id, then
            planner.complete(view.node_id)

The Planner (plan07.api) drives one persisted plan; `PlanReader` (plan07.reader) reads one. Each
stage also runs alone (what `plan07 canonicalize`, `decompose`, `order`, `explain`, `recon`,
`schema` and `rules` call): the names below, whose homes are in `_WHERE`. The models are
`plan07.model`'s, the errors `plan07.errors`'.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plan07.api import Planner
    from plan07.decompose import Completion, LLMClient, make_client
    from plan07.decompose.call import decompose as decompose_requirement
    from plan07.decompose.scripted import ScriptedClient
    from plan07.engine import ENGINES, check_engine, load_program, rules_path, violation_kinds
    from plan07.engine.lint import lint_file
    from plan07.engine.provenance import explain_facts
    from plan07.engine.provenance import render as render_proof
    from plan07.errors import (
        InputError,
        LLMUnavailable,
        ModelOutputError,
        Plan07Error,
        PlanStateError,
        RuleError,
    )
    from plan07.evidence import build_evidence, load_evidence, neighbourhood, write_db
    from plan07.evidence.build import evidence_report
    from plan07.evidence.repro import describe as describe_reproduction
    from plan07.flag import enabled, route
    from plan07.gate.reproduce import reproduce
    from plan07.order.derive import derive_order, explain, explain_violation
    from plan07.order.fixtures import discover as discover_fixtures
    from plan07.order.fixtures import load_facts
    from plan07.order.fixtures import run_all as run_fixtures
    from plan07.order.load import load_obligations
    from plan07.plan.driver import model_context
    from plan07.plan.driver import view as driver_view
    from plan07.plan.replan import affected_subgraph
    from plan07.plan.retry import failure_digest
    from plan07.reader import PlanReader
    from plan07.request.canonicalize import canonicalize, canonicalize_with_notes
    from plan07.store.boundedio import read_text
    from plan07.store.schema import SCHEMAS
    from plan07.store.schema import load as load_artifact
    from plan07.store.schema import parse as parse_artifact
    from plan07.store.schema import render as render_schema
    from plan07.store.schema import shipped as shipped_schema
    from plan07.term import block, display, json_text, printable, scrub

# public name -> (home module, name there)
_WHERE: dict[str, tuple[str, str]] = {
    # driving and reading a plan
    "Planner": ("plan07.api", "Planner"),
    "PlanReader": ("plan07.reader", "PlanReader"),
    "route": ("plan07.flag", "route"),
    "enabled": ("plan07.flag", "enabled"),
    # the stages alone
    "canonicalize": ("plan07.request.canonicalize", "canonicalize"),
    "canonicalize_with_notes": ("plan07.request.canonicalize", "canonicalize_with_notes"),
    "decompose_requirement": ("plan07.decompose.call", "decompose"),
    "derive_order": ("plan07.order.derive", "derive_order"),
    "explain": ("plan07.order.derive", "explain"),
    "explain_violation": ("plan07.order.derive", "explain_violation"),
    "load_obligations": ("plan07.order.load", "load_obligations"),
    "load_evidence": ("plan07.evidence", "load_evidence"),
    "build_evidence": ("plan07.evidence", "build_evidence"),
    "evidence_report": ("plan07.evidence.build", "evidence_report"),
    "neighbourhood": ("plan07.evidence", "neighbourhood"),
    "write_db": ("plan07.evidence", "write_db"),
    "reproduce": ("plan07.gate.reproduce", "reproduce"),  # an issue's snippets, run
    "describe_reproduction": ("plan07.evidence.repro", "describe"),  # ... in one line
    "read_text": ("plan07.store.boundedio", "read_text"),
    # model clients (the §4 L slot)
    "make_client": ("plan07.decompose", "make_client"),
    "LLMClient": ("plan07.decompose", "LLMClient"),
    "Completion": ("plan07.decompose", "Completion"),
    "ScriptedClient": ("plan07.decompose.scripted", "ScriptedClient"),
    # what a harness needs beside the Planner (the §7 A/B's baselines)
    "model_context": ("plan07.plan.driver", "model_context"),
    "driver_view": ("plan07.plan.driver", "view"),
    "affected_subgraph": ("plan07.plan.replan", "affected_subgraph"),
    "failure_digest": ("plan07.plan.retry", "failure_digest"),
    # shipped JSON Schemas and the artifacts they validate
    "SCHEMAS": ("plan07.store.schema", "SCHEMAS"),
    "shipped_schema": ("plan07.store.schema", "shipped"),
    "render_schema": ("plan07.store.schema", "render"),
    "load_artifact": ("plan07.store.schema", "load"),
    "parse_artifact": ("plan07.store.schema", "parse"),
    # rule authoring
    "ENGINES": ("plan07.engine", "ENGINES"),
    "check_engine": ("plan07.engine", "check_engine"),
    "load_program": ("plan07.engine", "load_program"),
    "rules_path": ("plan07.engine", "rules_path"),
    "violation_kinds": ("plan07.engine", "violation_kinds"),
    "lint_file": ("plan07.engine.lint", "lint_file"),
    "explain_facts": ("plan07.engine.provenance", "explain_facts"),
    "render_proof": ("plan07.engine.provenance", "render"),
    "discover_fixtures": ("plan07.order.fixtures", "discover"),
    "run_fixtures": ("plan07.order.fixtures", "run_all"),
    "load_facts": ("plan07.order.fixtures", "load_facts"),
    # what reaches a terminal: control characters escaped (docs/safety.md)
    **{name: ("plan07.term", name) for name in (
        "block", "display", "json_text", "printable", "scrub")},
    # errors
    **{name: ("plan07.errors", name) for name in (
        "InputError", "LLMUnavailable", "ModelOutputError", "Plan07Error", "PlanStateError",
        "RuleError")},
}

__all__ = [
    "Completion",
    "ENGINES",
    "InputError",
    "LLMClient",
    "LLMUnavailable",
    "ModelOutputError",
    "Plan07Error",
    "PlanReader",
    "PlanStateError",
    "Planner",
    "RuleError",
    "SCHEMAS",
    "ScriptedClient",
    "affected_subgraph",
    "block",
    "build_evidence",
    "canonicalize",
    "canonicalize_with_notes",
    "check_engine",
    "decompose_requirement",
    "derive_order",
    "describe_reproduction",
    "discover_fixtures",
    "display",
    "driver_view",
    "enabled",
    "evidence_report",
    "explain",
    "explain_facts",
    "explain_violation",
    "failure_digest",
    "json_text",
    "lint_file",
    "load_artifact",
    "load_evidence",
    "load_facts",
    "load_obligations",
    "load_program",
    "make_client",
    "model_context",
    "neighbourhood",
    "parse_artifact",
    "printable",
    "read_text",
    "render_proof",
    "render_schema",
    "reproduce",
    "route",
    "rules_path",
    "run_fixtures",
    "scrub",
    "shipped_schema",
    "violation_kinds",
    "write_db",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        module, attr = _WHERE[name]
        return getattr(import_module(module), attr)
    raise AttributeError(f"module 'plan07' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
