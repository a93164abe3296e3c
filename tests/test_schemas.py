"""The shipped JSON Schemas match their models; disk artifacts are validated with jsonschema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plan07.cli import main
from plan07.errors import InputError
from plan07.store.schema import SCHEMAS, generate, load, render, shipped


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_shipped_schema_matches_model(name: str) -> None:
    # Regenerate with `python -m plan07.store.schema --write` after changing a model deliberately.
    assert render(shipped(name)) == render(generate(name)), f"{name}.schema.json drifted"


def test_schema_cli_prints_shipped(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "requirement"]) == 0
    assert json.loads(capsys.readouterr().out) == shipped("requirement")


def test_schema_cli_unknown_name_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert err.count("\n") == 1
    assert "nope" in err


def test_load_names_the_json_path(tmp_path: Path) -> None:
    p = tmp_path / "e.json"
    p.write_text(json.dumps({"impact": {"edges": [
        {"src": "a", "dst": "b", "relation": "r", "cause": "sig_change", "confidence": 2}
    ]}}))
    with pytest.raises(InputError, match=r"impact\.edges\[0\]\.confidence"):
        load("evidence", p)


def test_load_rejects_non_json_and_missing(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text("{nope")
    with pytest.raises(InputError, match="not valid JSON"):
        load("evidence", p)
    with pytest.raises(InputError, match="not found"):
        load("evidence", tmp_path / "missing.json")
