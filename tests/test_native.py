"""plan07/evidence/native.py: recon's compiled modules are used only when they were built from
the sources beside them (an edited checkout runs its sources), all of them or none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import plan07.evidence.parse
from plan07.evidence import native


def _tree(tmp_path: Path, *, compiled: tuple[str, ...], record: dict[str, str] | None) -> Path:
    for name in native.COMPILED:
        (tmp_path / f"{name}.py").write_text(f"# {name}\n", "utf-8")
    for name in compiled:
        (tmp_path / f"{name}{EXTENSION_SUFFIXES[0]}").write_bytes(b"\x7fELF")
    if record is not None:
        (tmp_path / native.BUILT).write_text(json.dumps(record), "utf-8")
    return tmp_path


def _digests(tmp_path: Path) -> dict[str, str]:
    return {n: native.source_digest(tmp_path / f"{n}.py") for n in native.COMPILED}


def test_nothing_compiled_is_none(tmp_path: Path) -> None:
    assert native.built_from_sources(_tree(tmp_path, compiled=(), record=None)) is None


def test_compiled_from_these_sources(tmp_path: Path) -> None:
    here = _tree(tmp_path, compiled=native.COMPILED, record=None)
    (here / native.BUILT).write_text(json.dumps(_digests(here)), "utf-8")
    assert native.built_from_sources(here) is True


def test_an_edited_source_is_not_run_compiled(tmp_path: Path) -> None:
    here = _tree(tmp_path, compiled=native.COMPILED, record=None)
    (here / native.BUILT).write_text(json.dumps(_digests(here)), "utf-8")
    (here / "body.py").write_text("# body, edited since the build\n", "utf-8")
    assert native.built_from_sources(here) is False


def test_some_compiled_or_no_record_is_not_run_compiled(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    here = _tree(tmp_path / "a", compiled=native.COMPILED[:2], record=None)
    (here / native.BUILT).write_text(json.dumps(_digests(here)), "utf-8")
    assert native.built_from_sources(here) is False  # the first two compiled, the rest not
    (tmp_path / "b").mkdir()
    bare = _tree(tmp_path / "b", compiled=native.COMPILED, record=None)
    assert native.built_from_sources(bare) is False  # compiled, no record of what from
    (bare / native.BUILT).write_text("{not json", "utf-8")
    assert native.built_from_sources(bare) is False


def test_this_process_runs_compiled_exactly_when_the_build_matches() -> None:
    """Whichever way this checkout was installed (compiled or not, edited since or not), and
    PLAN07_PURE set or not."""
    plan07.evidence.parse.parse_module("x = 1\n", "m.py")
    matches = native.built_from_sources() is True
    assert native.compiled() == (matches and not os.environ.get("PLAN07_PURE"))
    if not native.compiled():
        assert plan07.evidence.parse.__file__.endswith("parse.py")


def test_plan07_pure_runs_the_sources() -> None:
    code = ("import plan07.evidence.parse as p; from plan07.evidence import native; "
            "print(p.__file__, native.compiled())")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PLAN07_PURE": "1"},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[0].endswith("parse.py"), out
    assert out[1] == "False", out
