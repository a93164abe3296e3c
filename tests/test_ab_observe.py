"""What the A/B harness observes after a step: undoing an edit where it was written
(plan07.ab.edits)."""

from __future__ import annotations

from pathlib import Path

from plan07.ab.edits import Edit, apply_edit, revert


def test_an_edit_is_undone_where_it_was_written(tmp_path: Path) -> None:
    # a cut-off write ("    x = 1\n") that also occurs earlier in the file: undoing the first
    # occurrence would corrupt the file
    text = "def f():\n    x = 1\n\n\ndef g():\n    return 2\n"
    (tmp_path / "m.py").write_text(text, "utf-8")
    applied = apply_edit(tmp_path, Edit("m.py", "    return 2\n", "    x = 1\n"))
    revert(tmp_path, applied)
    assert (tmp_path / "m.py").read_text("utf-8") == text

