"""`plan07 demo`: the whole loop, offline, on a temp copy of examples/session_timeout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plan07.cli import main

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "session_timeout"


@pytest.mark.slow
def test_demo_drives_every_obligation_with_green_checkpoints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {p: p.read_bytes() for p in EXAMPLE.rglob("*.py")}
    rc = main(["demo", "--keep", str(tmp_path), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0, out["steps"][-1]
    assert out["complete"] is True
    steps = out["steps"]
    assert all(s["passed"] for s in steps)
    cps = [s for s in steps if "checkpoint" in s]
    assert cps
    assert all(s["existing_tests_pass"] for s in cps)  # temporal consistency at each checkpoint
    assert out["explained"]["holds"] is True
    edits = [r for r in out["audit"] if r["accepted_edit"]]
    assert {r["accepted_edit"] for r in edits} >= {"sessions/config.py", "sessions/manager.py"}
    assert all(r["obligation"].startswith("O") for r in edits)  # each edit linked to its cause
    manager = (tmp_path / "session_timeout" / "sessions" / "manager.py").read_text()
    assert "self.config.timeout_minutes" in manager
    assert "anchor test" not in (tmp_path / "session_timeout" / "tests" / "test_session.py"
                                 ).read_text()  # every anchor was promoted by its validate
    assert {p: p.read_bytes() for p in EXAMPLE.rglob("*.py")} == before  # the example untouched
