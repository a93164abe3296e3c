"""Property: any text -> a Requirement valid against the shipped JSON Schema and within every
cap, or an InputError. Never any other exception, never an artifact past a cap."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan07 import caps
from plan07.errors import InputError
from plan07.request.canonicalize import canonicalize
from plan07.store.schema import validate

# Fragments that steer generated text into every branch: headings, lists, code, tracebacks,
# test ids, commands, modals, constraint phrases, boilerplate, HTML, links, long words.
FRAGMENTS = st.sampled_from([
    "# ", "## Acceptance criteria\n", "### Expected behavior\n", "## Constraints\n",
    "## Environment\n", "**Describe the bug**\n", "- ", "* [ ] ", "1. ", "\n", "\n\n", "    ",
    "```python\n", "```\n", "~~~\n", "Traceback (most recent call last):\n", '  File "a.py"\n',
    "ValueError: boom\n", ">>> ", "$ ", "> ", "| a | b |\n", "`", "`tests/test_a.py::test_b`",
    "tests/x.py::T::t[1]", "`pytest -q`", "`make test`", " should ", " must ", " must not ",
    " passes", " without breaking ", " keep it compatible", " no new dependency", "Please ",
    "please", "Thanks!", "Hi team,", "Cheers,\nBob", "as always", "Could you ", "Add ",
    "Make ", "Fix ", "Allow ", " raises KeyError", " crashes", " is wrong", " doesn't ",
    "<!-- x -->", "<details>", "<slug>", "[link](http://x.test)", "![img](a.png)", "---\n",
    "===\n", ".", ", ", "; ", "?", ":", " — ", "e.g. ", "x" * 210, "word " * 60, "Ä", "\t",
    "\r\n", "\x00", "\u200b", "🙂", ":tada:", "**", "__",
])
TEXT = st.one_of(
    st.text(max_size=400),
    st.lists(st.one_of(FRAGMENTS, st.text(max_size=20)), max_size=60).map("".join),
)


def _check(text: str, task: str | None) -> None:
    try:
        req = canonicalize(text, task)
    except InputError:
        return
    data = json.loads(json.dumps(req.model_dump(mode="json")))  # JSON-serializable
    validate("requirement", data)  # the shipped JSON Schema
    assert len(req.goal) <= caps.GOAL_MAX_CHARS
    assert req.goal.strip()
    assert 1 <= len(req.acceptance_criteria) <= caps.MAX_ACCEPTANCE_CRITERIA
    assert len(req.constraints) <= caps.MAX_CONSTRAINTS
    for p in [*req.acceptance_criteria, *req.constraints]:
        assert p.strip()
        assert len(p) <= caps.PREDICATE_MAX_CHARS
        assert "\n" not in p
    assert canonicalize(text, task) == req  # deterministic


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_any_text_gives_a_valid_artifact_or_an_input_error(text: str) -> None:
    _check(text, None)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT, TEXT)
def test_any_request_and_task_text(text: str, task: str) -> None:
    _check(text, task)
