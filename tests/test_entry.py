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

from plan07 import caps, entry
from plan07.api import Planner
from plan07.cli import main as cli_main
from plan07.store import state

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


# ---------------------------------------------------------------------------------------------
# `plan07 complete`: the gate's one call per node, printed by plan07.cli.console on both paths


def _run(fn: object, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = fn(argv)  # type: ignore[operator]
    out = capsys.readouterr()
    return rc, out.out, out.err


def _timeless(text: str) -> str:
    import re

    return re.sub(r"\d+\.\d+s\b", "Ns", re.sub(r'"duration_s": [\d.]+', '"duration_s": N', text))


@pytest.mark.parametrize("flags", [[], ["--json"], ["--timeout", "30"], ["--timeout=30.5",
                                                                         "--json"]])
def test_complete_prints_what_the_full_cli_prints(planned: Path, tmp_path: Path, flags: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    base = _copy(planned, tmp_path)
    _, first = _full(["next", "--json", "--state", str(base)])
    node_id = json.loads(first)["node_id"]
    fast_dir, full_dir = tmp_path / "fast", tmp_path / "full"
    shutil.copytree(base, fast_dir)
    shutil.copytree(base, full_dir)
    argv = ["complete", node_id, *flags]
    assert entry.complete_args([*argv, "--state", str(fast_dir)]) is not None
    fast = _run(entry.main, [*argv, "--state", str(fast_dir)], capsys)
    full = _run(cli_main, [*argv, "--state", str(full_dir)], capsys)
    assert fast[0] == full[0]
    assert (_timeless(fast[1]), fast[2]) == (_timeless(full[1]), full[2])
    assert fast[1]  # a verdict was printed
    # and the plan moved on the same way
    a = json.loads((fast_dir / "plan.json").read_text())
    b = json.loads((full_dir / "plan.json").read_text())
    assert [n["state"] for n in a["nodes"]] == [n["state"] for n in b["nodes"]]


def test_a_complete_error_is_the_full_cli_error(planned: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    d = _copy(planned, tmp_path)
    for argv in (["complete", "O99", "--state", str(d)],
                 ["complete", "O1", "--state", str(tmp_path / "none")]):
        assert entry.complete_args(argv) is not None
        fast = _run(entry.main, argv, capsys)
        full = _run(cli_main, argv, capsys)
        assert fast == full
        assert fast[0] == 2
        assert fast[2].startswith("error: ")


@pytest.mark.parametrize("argv", [
    ["complete"], ["complete", "--help"], ["complete", "O1", "--help"], ["complete", "O1", "-h"],
    ["complete", "O1", "O2"], ["complete", "O1", "--json", "--json"],
    ["complete", "O1", "--state", "a", "--state", "b"], ["complete", "O1", "--state"],
    ["complete", "O1", "--state="], ["complete", "O1", "--timeout", "soon"],
    ["complete", "O1", "--timeout", "-1"], ["complete", "O1", "--json=1"],
    ["complete", "O1", "--verbose"], ["status", "O1"], ["--json", "complete", "O1"]])
def test_any_other_complete_is_the_full_cli(argv: list[str]) -> None:
    assert entry.complete_args(argv) is None


def test_complete_args() -> None:
    assert entry.complete_args(["complete", "O3"]) == ("O3", None, None, False, False)
    assert entry.complete_args(["complete", "O3", "--json", "--state=s", "--timeout", "9"]) == (
        "O3", Path("s"), 9.0, True, False)
    assert entry.complete_args(["complete", "O3", "-q"]) == ("O3", None, None, False, True)
    assert entry.complete_args(["complete", "O3", "--quiet", "--quiet"]) is None


def test_after_a_complete_the_next_call_is_the_fast_path(planned: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    """`plan07 complete` leaves the hand-out `next` would make ready (plan07.cli.console), so
    the agent's next call is answered from next.json; the same bytes as the full CLI."""
    d = _copy(planned, tmp_path)
    _, first = _full(["next", "--json", "--state", str(d)])
    node_id = json.loads(first)["node_id"]
    rc, out, _ = _run(entry.main, ["complete", node_id, "--state", str(d)], capsys)
    assert rc == 1, out  # the example's first node is checked red: nothing written, it fails
    fast = entry.next_view(["next", "--json", "--state", str(d)])
    assert fast is not None
    assert fast == _full(["next", "--json", "--state", str(d)])[1]
    assert json.loads((d / "plan.json").read_text())["active"] == json.loads(fast)["node_id"]
