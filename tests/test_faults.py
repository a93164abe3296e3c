"""Faults are errors, not tracebacks, and caps come before work (docs/safety.md "Faults",
"Hostile input"): a full disk under the state dir, a broken interpreter, JSON of the wrong type,
out-of-range numbers, oversized inputs and walks, temp files of a killed write. Each is one
`error:` line, exit 2, nothing recorded; the full disk is made by strace (skipped without it)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from _faultsweep import count, prepare, strace, strace_works
from _smallplan import CLI, cli_env, cli_here, git, make_repo, plan_here, write_replay

from plan07 import caps
from plan07.store import state as st

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")


def one_error(res: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert res.stderr.startswith("error: "), res.stderr
    assert res.stderr.count("\n") == 1, res.stderr
    for needle in needles:
        assert needle in res.stderr


@pytest.mark.skipif(not strace_works(), reason="strace is not installed (or may not ptrace "
                    "here); the full disk is made with it: apt-get install strace")
@pytest.mark.slow
def test_a_full_disk_is_one_error_line_and_leaves_the_plan_as_it_was(tmp_path: Path) -> None:
    sc = prepare(tmp_path, "complete")
    writes = count(sc, tmp_path / "trace.log")["write"]
    exe = strace()
    assert exe is not None
    for n in sorted({1, writes // 2, writes}):
        sc.fresh()
        before = (sc.state / "plan.json").read_bytes()
        res = subprocess.run([exe, "-qq", "-o", "/dev/null", "-e", "trace=write", "-e",
                              f"inject=write:error=ENOSPC:when={n}+", "--", *CLI, *sc.args],
                             capture_output=True, text=True, env=cli_env(), check=False)
        assert "Traceback" not in res.stderr
        if res.returncode == 2:  # the write that failed was before the commit point
            one_error(res, "No space left on device", "nothing was committed")
            assert (sc.state / "plan.json").read_bytes() == before
        assert list(sc.state.rglob(".*.tmp")) == []
        assert cli_here("status", "--state", str(sc.state)).returncode in (0, 1)


def test_a_broken_interpreter_is_refused_at_plan(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    res = plan_here(tmp_path, tmp_path / "state", repo, "--python", "/bin/false",
                    process=False)
    one_error(res, "--python", "/bin/false", "not a working Python 3 interpreter")
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize("text", ['{"obligations": 5}', "true", "NaN", '{"obligations": {}}',
                                  '[{"id": NaN}]', '{"obligations": [Infinity]}'])
def test_obligations_of_the_wrong_type_are_one_error_line(tmp_path: Path, text: str) -> None:
    (tmp_path / "o.json").write_text(text)
    one_error(cli_here("order", "--obligations", str(tmp_path / "o.json")), "o.json")


@pytest.mark.parametrize(("args", "needle"), [
    (["complete", "O1", "--timeout", "1e-320"], "--timeout"),
    (["complete", "O1", "--timeout", "0.5"], "--timeout"),
    (["explain", "O1", "O2", "--depth", "1000000000"], "--depth"),
])
def test_numbers_out_of_range_are_usage_errors(tmp_path: Path, args: list[str],
                                               needle: str) -> None:
    repo = make_repo(tmp_path)
    write_replay(tmp_path)
    state = tmp_path / "state"
    assert plan_here(tmp_path, state, repo, process=False).returncode == 0
    assert cli_here("next", "--state", str(state)).returncode == 0
    before = (state / "plan.json").read_bytes()
    one_error(cli_here(*args, "--state", str(state)), needle)
    assert (state / "plan.json").read_bytes() == before


def test_an_oversized_request_on_stdin_is_refused_before_it_is_read_whole(
        tmp_path: Path) -> None:
    big = b"# x\n" + b"y" * caps.REQUEST_MAX_BYTES
    res = subprocess.run([*CLI, "canonicalize", "-"], input=big, capture_output=True,
                         env=cli_env(), check=False)
    assert res.returncode == 2
    assert b"REQUEST_MAX_BYTES" in res.stderr


def test_a_walk_past_its_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from plan07.errors import InputError
    from plan07.evidence.files import python_files

    for i in range(30):
        (tmp_path / f"m{i}.py").write_text("")
    monkeypatch.setattr(caps, "WALK_MAX_ENTRIES", 20)
    with pytest.raises(InputError, match="WALK_MAX_ENTRIES 20"):
        python_files(tmp_path)
    monkeypatch.setattr(caps, "WALK_MAX_ENTRIES", 100)
    monkeypatch.setattr(caps, "RECON_MAX_FILES", 10)
    with pytest.raises(InputError, match="RECON_MAX_FILES 10"):
        python_files(tmp_path)


def test_a_big_file_is_never_hashed_into_a_snapshot(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from plan07.store.checkpoint import tree_of

    repo = make_repo(tmp_path)
    (repo / "big.bin").write_bytes(b"\1" * 4096)
    (repo / "small.txt").write_text("kept")
    monkeypatch.setattr(caps, "FINGERPRINT_FILE_MAX_BYTES", 1024)
    tree = tree_of(repo)
    assert tree is not None
    listed = git(repo, "ls-tree", "-r", "--name-only", tree).split()
    assert "small.txt" in listed
    assert "big.bin" not in listed
    big_blob = git(repo, "hash-object", "big.bin").strip()  # computed, not written
    objects = repo / ".git" / "objects" / big_blob[:2] / big_blob[2:]
    assert not objects.exists()


def test_temp_files_of_a_dead_writer_go_at_the_next_command(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write_replay(tmp_path)
    state = tmp_path / "state"
    assert plan_here(tmp_path, state, repo, process=False).returncode == 0
    gone = state / f".{st.STAMP_FILE}.{_dead_pid()}.tmp"
    live = state / f".{st.PLAN_FILE}.{os.getpid()}.tmp"  # a writer still running: kept
    gone.write_text("x")
    live.write_text("x")
    assert cli_here("status", "--state", str(state)).returncode in (0, 1)
    assert not gone.exists()
    assert live.exists()


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid
