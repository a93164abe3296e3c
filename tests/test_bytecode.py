"""The checks' bytecode cache (plan07.gate.bytecode): what `sweep` deletes, and a check that keeps
its bytecode in it never runs the code of a file's earlier content (a same-size edit within the
second: the case Python's own mtime-and-size test cannot see)."""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys
import time
from pathlib import Path

import pytest

from plan07.gate import bytecode
from plan07.gate.checks import GateContext, check_node
from plan07.gate.interpreter import Interpreter
from plan07.model import PlanNode

MAGIC = importlib.util.MAGIC_NUMBER
CODE = marshal.dumps(compile("x = 1\n", "m.py", "exec"))


def _pyc(path: Path, flags: int, source_mtime: int = 0, *, written: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tail = source_mtime.to_bytes(4, "little") + (4).to_bytes(4, "little") if flags == 0 \
        else b"h" * 8
    path.write_bytes(MAGIC + flags.to_bytes(4, "little") + tail + CODE)
    if written is not None:
        os.utime(path, (written, written))
    return path


def test_sweep_deletes_what_could_be_stale(tmp_path: Path) -> None:
    cache = tmp_path / "pycache"
    now = int(time.time())
    racy = _pyc(cache / "a" / "racy.cpython-311.pyc", 0, now, written=now + 0.5)
    future = _pyc(cache / "a" / "future.cpython-311.pyc", 0, now + 60, written=now)
    safe = _pyc(cache / "a" / "safe.cpython-311.pyc", 0, now - 5, written=now)
    checked = _pyc(cache / "b" / "checked.cpython-311-pytest-9.pyc", 0b11, written=now)
    unchecked = _pyc(cache / "b" / "unchecked.cpython-311.pyc", 0b01, written=now)
    short = cache / "b" / "short.cpython-311.pyc"
    short.write_bytes(MAGIC)
    other = cache / "b" / "notes.txt"
    other.write_text("kept")
    assert bytecode.sweep(cache) > 0
    assert sorted(p.name for p in cache.rglob("*") if p.is_file()) == [
        ".swept", "checked.cpython-311-pytest-9.pyc", "notes.txt", "safe.cpython-311.pyc"]
    assert not racy.exists()
    assert not future.exists()
    assert not unchecked.exists()
    assert safe.exists()
    assert checked.exists()


def test_sweep_since_deletes_what_was_written_after(tmp_path: Path) -> None:
    cache = tmp_path / "pycache"
    now = int(time.time())
    old = _pyc(cache / "old.cpython-311.pyc", 0, now - 100, written=now - 50)
    stamp = bytecode.sweep(cache)
    new = _pyc(cache / "new.cpython-311.pyc", 0, now - 100)  # safe by its header
    new_hash = _pyc(cache / "new2.cpython-311.pyc", 0b11)
    bytecode.sweep(cache, since_ns=stamp)
    assert old.exists()
    assert not new.exists()
    assert not new_hash.exists()


def test_no_cache_yet_and_no_cache(tmp_path: Path) -> None:
    assert bytecode.sweep(tmp_path / "none") == 0
    assert not (tmp_path / "none").exists()
    assert bytecode.check_env({"A": "1"}, None) == {"A": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    assert bytecode.check_env({"A": "1", "PYTHONDONTWRITEBYTECODE": "1"}, tmp_path) == {
        "A": "1", "PYTHONPYCACHEPREFIX": str(tmp_path)}


def test_a_same_size_edit_within_the_second_is_seen(tmp_path: Path) -> None:
    """Write, check (its bytecode kept), edit to the same size, check again: every time, the
    second check runs the edit. A check of an import alone is quick, so most rounds fit in one
    second: the case Python cannot tell from its cached .pyc (tests/test_gate_runner.py's import
    test failed about 1 run in 3 before checks wrote no bytecode at all)."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    mod = repo / "pkg" / "mod.py"
    cache = tmp_path / "state" / bytecode.CACHE_DIR
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # as plan07.sandbox.check_env sets it
    ctx = GateContext(repo, Interpreter(sys.executable, "plan07"), env=env, pycache=cache)
    node = PlanNode(id="O1", target_entity="pkg.mod", obligation="modify", caused_by="t",
                    dependencies=[], evidence="", status="ready", validation="import:pkg.mod")
    for _ in range(6):
        mod.write_text("X = 1\nassert X == 1\n")
        before = mod.stat().st_mtime
        assert check_node(node, ctx).passed
        assert list(cache.rglob("mod.cpython-*.pyc")), "the check kept no bytecode"
        mod.write_text("X = 0\nassert X == 1\n")  # the same size
        v = check_node(node, ctx)
        assert not v.passed, f"ran the old code (edit {mod.stat().st_mtime - before:.3f}s later)"
        assert "AssertionError" in v.output_tail
    assert not list(repo.rglob("__pycache__")), "the check wrote bytecode into the repo"


def test_the_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAN07_CACHE_DIR", "off")
    assert bytecode.cache_dir() is None
    monkeypatch.setenv("PLAN07_CACHE_DIR", str(tmp_path / "c"))
    d = bytecode.cache_dir()
    assert d == tmp_path / "c" / "pycache"
    assert d.is_dir()
    assert d.stat().st_mode & 0o777 == 0o700
    d.chmod(0o777)  # writable by others: not used
    assert bytecode.cache_dir() is None
    monkeypatch.delenv("PLAN07_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert bytecode.cache_dir() == tmp_path / "x" / "plan07" / "pycache"


def test_a_sweep_keeps_to_the_repos_part(tmp_path: Path) -> None:
    cache = tmp_path / "pycache"
    repo = tmp_path / "repo"
    now = int(time.time())
    mine = _pyc(bytecode.mirrored(cache, repo)[0] / "pkg" / "m.cpython-311.pyc", 0, now,
                written=now + 0.5)
    other = _pyc(bytecode.mirrored(cache, tmp_path / "other")[0] / "m.cpython-311.pyc", 0, now,
                 written=now + 0.5)
    assert bytecode.sweep(cache, repo) > 0
    assert not mine.exists()
    assert other.exists()
