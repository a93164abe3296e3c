"""Shared table for the decomposition tests: the §4 example reply and the hostile replies that must
each give the §4 fallback (never a second call). Used over HTTP and through replay files."""

from __future__ import annotations

import json
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden" / "decompose"
FIXTURE = GOLDEN / "session_timeout"


def record(i: int, **over: object) -> dict[str, object]:
    rec: dict[str, object] = {
        "id": f"O{i}", "target_entity": "repo.auth.SessionConfig", "obligation": "modify",
        "caused_by": "requirement: make timeout configurable", "dependencies": [],
        "evidence": "06 DAG: schema change", "status": "ready",
        "validation": "tests/test_config.py::test_timeout_field",
    }
    rec.update(over)
    return rec


# The §4 example output, verbatim shape.
GOOD = json.dumps({"obligations": [
    record(1, target_entity="repo.auth.SessionConfig.schema"),
    record(2, obligation="preserve", dependencies=["O1"], status="blocked",
           caused_by="requirement constraint: no breaking change to public Session API",
           evidence="06 DAG: default-preservation obligation",
           validation="tests/test_config.py::test_old_default"),
    record(3, target_entity="repo.auth.SessionManager", dependencies=["O1"], status="blocked",
           caused_by="consumer must read timeout from config", evidence="06 DAG edge CalledBy",
           validation="tests/test_session.py::test_custom_timeout"),
]})

# name -> (completion text, substring of the fallback reason, rescope?)
HOSTILE: dict[str, tuple[str, str, bool]] = {
    "malformed": (GOOD[:-40], "not JSON", False),
    "non_json": ("Sure! Here is the plan: first widen SessionConfig, then...", "not JSON", False),
    "prose_around_json": (f"Here you go:\n```json\n{GOOD}\n```\nHope it helps", "not JSON", False),
    "bare_array": (json.dumps([record(1)]), "top level", False),
    "extra_top_key": (json.dumps({"obligations": [record(1)], "notes": "x"}), "top level", False),
    "65_records": (json.dumps({"obligations": [record(i) for i in range(1, 66)]}),
                   "flagged for re-scoping", True),
    "wrong_verb": (json.dumps({"obligations": [record(1), record(2, obligation="delete")]}),
                   "obligations[1].obligation", False),
    "wrong_status": (json.dumps({"obligations": [record(1, status="done")]}),
                     "obligations[0].status", False),
    "duplicate_id": (json.dumps({"obligations": [record(1), record(1)]}), "duplicate", False),
    "extra_field": (json.dumps({"obligations": [record(1, priority=1)]}),
                    "obligations[0].priority", False),
    "missing_field": (json.dumps({"obligations": [
        {k: v for k, v in record(1).items() if k != "validation"}]}),
        "obligations[0].validation", False),
    "deps_not_a_list": (json.dumps({"obligations": [record(1, dependencies="O2")]}),
                        "obligations[0].dependencies", False),
    "empty": ("", "not JSON", False),
}
