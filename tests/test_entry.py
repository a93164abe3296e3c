"""The console script's fast path for `plan07 next --json` (plan07.entry): byte for byte what the
full CLI prints, and the full CLI whenever the fast path cannot be sure."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from plan07 import caps, entry, state
from plan07.api import Planner
from plan07.cli import main as cli_main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "session_timeout"


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("entry")
    repo = work / "session_timeout"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", "edits.json"))
    d = work / "state"
    Planner.create((repo / "request.md").read_text(), repo=repo, state_dir=d,
                   plan_id="entry-test", now="2026-01-01T00:00:00Z")
    return d


def _full(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        rc = cli_main(argv)
    return rc, out.getvalue()


def _copy(planned: Path, tmp_path: Path) -> Path:
    d = tmp_path / "state"
    shutil.copytree(planned, d)
    return d


def test_the_names_it_copies_agree_with_the_library() -> None:
    assert (entry.STATE_ENV, entry.DEFAULT_STATE) == (state.STATE_ENV, state.DEFAULT_STATE)
    assert (entry.PLAN_FILE, entry.VIEW_FILE, entry.LOCK_FILE) == (
        state.PLAN_FILE, state.VIEW_FILE, state.LOCK_FILE)
    assert entry.ARTIFACT_MAX_BYTES == caps.ARTIFACT_MAX_BYTES


def test_byte_for_byte_the_full_cli_along_a_plan(planned: Path, tmp_path: Path) -> None:
    d = _copy(planned, tmp_path)
    assert entry.next_view(["next", "--json", "--state", str(d)]) is None  # nothing handed out
    rc, first = _full(["next", "--json", "--state", str(d)])  # hands O1 out: a write
    assert rc == 0
    seen = 0
    for _ in range(3):
        for argv in (["next", "--json", "--state", str(d)], ["next", f"--state={d}", "--json"]):
            fast = entry.next_view(argv)
            assert fast is not None
            assert fast == _full(argv)[1]
            seen += 1
        # move the plan on: mark the handed-out node complete the way the gate does
        node_id = json.loads(first)["node_id"]
        with state.transaction(d) as tx:
            for n in tx.art.nodes:
                if n.id == node_id:
                    n.state = "complete"
        assert entry.next_view(["next", "--json", "--state", str(d)]) is None
        rc, first = _full(["next", "--json", "--state", str(d)])  # hands the next one out
        if json.loads(first).get("node_id") is None:
            break
    assert seen >= 2


def test_env_state_dir(planned: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = _copy(planned, tmp_path)
    _full(["next", "--json", "--state", str(d)])
    monkeypatch.setenv("PLAN07_STATE", str(d))
    assert entry.next_view(["next", "--json"]) == _full(["next", "--json"])[1]


@pytest.mark.parametrize("extra", [["--verbose"], ["--json"], ["--state", "other"], ["-h"]])
def test_anything_else_is_the_full_cli(planned: Path, tmp_path: Path,
                                       extra: list[str]) -> None:
    d = _copy(planned, tmp_path)
    _full(["next", "--json", "--state", str(d)])
    assert entry.next_view(["next", "--json", "--state", str(d)]) is not None
    assert entry.next_view(["next", "--state", str(d)]) is None  # no --json
    assert entry.next_view(["next", "--json", "--state", str(d), *extra]) is None
    for argv in (["status", "--json", "--state", str(d)], [], ["next", "--json", "--state"],
                 ["next", "--state=", "--json"], ["--json", "next"]):
        assert entry.next_view(argv) is None


def test_a_hand_edited_plan_goes_through_the_full_checks(planned: Path, tmp_path: Path) -> None:
    d = _copy(planned, tmp_path)
    _full(["next", "--json", "--state", str(d)])
    text = (d / "plan.json").read_text()
    (d / "plan.json").write_text(text.replace('"engine"', ' "engine"', 1))  # valid, unstamped
    assert entry.next_view(["next", "--json", "--state", str(d)]) is None
    (d / "plan.json").write_text("{not json")
    assert entry.next_view(["next", "--json", "--state", str(d)]) is None
    proc = subprocess.run([sys.executable, "-c", "from plan07.entry import run; run()", "next",
                           "--json", "--state", str(d)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert "corrupt plan" in proc.stderr


def test_a_fifo_never_blocks_it(planned: Path, tmp_path: Path) -> None:
    d = _copy(planned, tmp_path)
    _full(["next", "--json", "--state", str(d)])
    for name in ("plan.json", "next.json", "plan.lock"):
        e = tmp_path / name
        shutil.copytree(d, e)
        (e / name).unlink()
        os.mkfifo(e / name)
        assert entry.next_view(["next", "--json", "--state", str(e)]) is None


def test_no_plan_is_the_full_cli_error(tmp_path: Path) -> None:
    assert entry.next_view(["next", "--json", "--state", str(tmp_path / "none")]) is None
    proc = subprocess.run([sys.executable, "-c", "from plan07.entry import run; run()", "next",
                           "--json", "--state", str(tmp_path / "none")], capture_output=True,
                          text=True)
    assert proc.returncode == 2
    assert "no plan here" in proc.stderr


def test_the_console_script_is_the_entry() -> None:
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert 'plan07 = "plan07.entry:run"' in text
