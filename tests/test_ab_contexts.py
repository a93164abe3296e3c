"""The plan07 strategy's prompt (plan07.ab.contexts): the driver view rendered compactly, with
every field of the view and nothing of any other node."""

from __future__ import annotations

import json
from pathlib import Path

from plan07.ab import contexts
from plan07.model import DriverView


def _view(**kw: object) -> DriverView:
    base: dict[str, object] = dict(
        node_id="O1", obligation="modify", target_entity="pkg.core.fmt",
        preconditions={"O2": "complete", "O4": "complete"}, permitted_actions={},
        required_validation="tests/test_core.py::test_fmt", goal="Add digits to fmt",
        caused_by="requirement: fmt takes digits", evidence="06 impact CalledBy fmt <- show",
        criteria=["fmt rounds (tests/test_core.py::test_fmt)", "show keeps 2 decimals"],
        check="pytest tests/test_core.py::test_fmt: this test must pass")
    base.update(kw)
    return DriverView.model_validate(base)


def _leaves(obj: object) -> list[str]:
    if isinstance(obj, dict):
        return [x for k, v in obj.items() for x in [str(k), *_leaves(v)]]
    if isinstance(obj, list):
        return [x for v in obj for x in _leaves(v)]
    return [str(obj).lower() if isinstance(obj, bool) else str(obj)]


def test_every_field_and_value_of_the_view_is_in_the_prompt(tmp_path: Path) -> None:
    view = _view(failure_digest="tests/test_core.py::test_fmt failed: TypeError at core.py:4")
    text = contexts.plan07(view, [], tmp_path)
    data = view.model_dump(mode="json", exclude_none=True)
    for key, value in data.items():
        if value in ("", [], {}):
            continue
        if key not in ("node_id", "obligation", "target_entity"):  # the head line: O1: modify X
            assert f"{key.split('_')[0]}" in text, key
        for leaf in _leaves(value):
            if leaf not in ("true", "complete", "bounds", "read", "edit", "test"):
                assert leaf in text, (key, leaf)
    assert "permitted: read, edit, test; max_edit_files 5; max_test_calls 10" in text
    assert "preconditions: O2 complete, O4 complete" in text
    # the digest is said once, by the view (no separate "previous attempt failed" block)
    assert text.count("TypeError at core.py:4") == 1


def test_the_compact_view_is_smaller_than_indented_json(tmp_path: Path) -> None:
    view = _view()
    text = contexts.view_text(view)
    assert len(text) < 0.8 * len(json.dumps(view.model_dump(mode="json"), indent=1))
    assert "{" not in text  # no JSON punctuation left over (preconditions, bounds: one line)


def test_empty_fields_are_left_out_and_a_denied_action_is_not_listed(tmp_path: Path) -> None:
    view = _view(preconditions={}, criteria=[], caused_by="",
                 permitted_actions={"edit": False})
    text = contexts.view_text(view)
    for left_out in ("preconditions", "criteria", "caused_by"):
        assert left_out not in text
    assert text.splitlines()[1].startswith("permitted: read, test;")
