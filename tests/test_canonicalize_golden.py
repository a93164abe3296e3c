"""Golden requests: tests/golden/canonicalize/<case>.md (+ optional <case>.task.md) -> <case>.json.

The .json is exactly what `plan07 canonicalize <case>.md --json` prints. Rewrite them deliberately
with `.venv/bin/pytest tests/test_canonicalize_golden.py --update-goldens`, then review
the diff: a golden changes only when canonicalization is meant to change.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from plan07.cli import main

GOLDEN = Path(__file__).parent / "golden" / "canonicalize"
CASES = sorted(p for p in GOLDEN.glob("*.md") if not p.name.endswith(".task.md"))


def _argv(case: Path) -> list[str]:
    argv = ["canonicalize", str(case), "--json"]
    task = case.with_suffix(".task.md")
    return argv + (["--task-file", str(task)] if task.exists() else [])


def test_there_are_at_least_ten_golden_requests() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_golden(case: Path, capsys: pytest.CaptureFixture[str], update_goldens: bool) -> None:
    assert main(_argv(case)) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    expected = case.with_suffix(".json")
    if update_goldens:
        expected.write_text(out, "utf-8")
    assert expected.exists(), f"no golden for {case.name}; run pytest with --update-goldens"
    assert out == expected.read_text("utf-8"), f"{case.name}: output differs from its golden"
    assert main(_argv(case)) == 0
    assert capsys.readouterr().out == out, "same input, same bytes out"


def _code_lines(text: str) -> list[str]:
    """Lines of fenced blocks and tracebacks in the request (long enough to be telling)."""
    lines: list[str] = []
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S):
        lines += block.splitlines()
    for tb in re.findall(r"^Traceback \(most recent call last\):\n(.*?)(?:\n\n|\Z)", text,
                         re.M | re.S):
        lines += tb.splitlines()
    return [ln.strip() for ln in lines if len(ln.strip()) >= 16]


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_no_code_or_traceback_becomes_an_artifact_string(case: Path) -> None:
    text = case.read_text("utf-8")
    task = case.with_suffix(".task.md")
    if task.exists():
        text += "\n\n" + task.read_text("utf-8")
    artifact = json.loads(case.with_suffix(".json").read_text("utf-8"))
    strings = [artifact["goal"], *artifact["acceptance_criteria"], *artifact["constraints"]]
    for line in _code_lines(text):
        for s in strings:
            assert line not in s, f"{case.name}: code/traceback line {line!r} leaked into {s!r}"
    if len(text.strip().splitlines()) > 1:  # a one-line request is its own headline
        prefix = " ".join(text.split())[:500]
        assert artifact["goal"] != prefix, "goal is the headline, not a prefix"
