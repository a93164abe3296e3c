"""Edits as exact replacements, applied to and reverted from a working tree. I/O (files only).

An edit is `file` + `old` -> `new`: `old` must occur exactly once in the file (an exact
replacement), or `old is None` and the file must not exist yet (a new file, full content).
Applying returns an `Applied` record of what was really written, so a retry can revert exactly
its own attempt (and nothing else) before trying again.
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Edit:
    """One edit: replace `old` by `new` in `file` (repo-relative, posix), or create `file`."""

    file: str
    old: str | None
    new: str

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "old": self.old, "new": self.new}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Edit:
        return cls(file=str(d["file"]), old=d.get("old"), new=str(d["new"]))

    def render(self) -> str:
        """The edit as the executor returns it (the documented edit format, docs/ab.md)."""
        if self.old is None:
            return f"=== create {self.file}\n{self.new}=== end\n"
        return f"=== edit {self.file}\n<<<<<<< old\n{self.old}\n=======\n{self.new}\n>>>>>>> new\n"


@dataclass(frozen=True)
class Applied:
    """What an applied edit really changed: revert replaces `written` by `old` (or deletes),
    where it was written (`at`, its offset): a cut-off write's text can occur earlier in the
    file too, and undoing that occurrence would corrupt the file."""

    file: str
    old: str | None
    written: str
    at: int = -1

    def undo(self, text: str) -> str:
        """`text` (the file, this edit applied) with this edit undone."""
        assert self.old is not None
        at = self.at
        if not (at >= 0 and text[at:at + len(self.written)] == self.written):
            at = text.find(self.written)  # the file moved under it: its first occurrence
        if at < 0:
            raise EditRejected(f"{self.file}: cannot revert, written text no longer present")
        return text[:at] + self.old + text[at + len(self.written):]


class EditRejected(Exception):
    """The edit does not apply to the tree as it is (old text missing or ambiguous)."""


def _target(repo: Path, rel: str) -> Path:
    p = (repo / rel).resolve()
    if not p.is_relative_to(repo.resolve()):
        raise EditRejected(f"{rel}: path leaves the repository")
    return p


def apply_edit(repo: Path, edit: Edit) -> Applied:
    """Apply one edit in `repo`; EditRejected when it does not apply (nothing is written)."""
    path = _target(repo, edit.file)
    if edit.old is None:
        if path.exists():
            raise EditRejected(f"{edit.file}: exists already, cannot create it")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(edit.new, "utf-8")
        return Applied(edit.file, None, edit.new)
    if not path.is_file():
        raise EditRejected(f"{edit.file}: no such file")
    text = path.read_text("utf-8")
    n = text.count(edit.old)
    if n != 1:
        raise EditRejected(f"{edit.file}: old text found {n} times, expected exactly once")
    at = text.index(edit.old)
    path.write_text(text[:at] + edit.new + text[at + len(edit.old):], "utf-8")
    return Applied(edit.file, edit.old, edit.new, at)


def revert(repo: Path, applied: Applied) -> None:
    """Undo exactly one applied edit (the inverse replacement, or delete a created file)."""
    path = _target(repo, applied.file)
    if applied.old is None:
        path.unlink(missing_ok=True)
        return
    path.write_text(applied.undo(path.read_text("utf-8")), "utf-8")


def revert_all(repo: Path, applied: list[Applied]) -> None:
    """Undo several applied edits, newest first."""
    for a in reversed(applied):
        revert(repo, a)


def bring_back(repo: Path, command: str, files: list[str]) -> list[Applied] | None:
    """Run the view's `saved_edit` (`git stash apply --index REF`, one per edit saved, joined by
    ` && `) in `repo`: the edits a node (a merged step: its members) had when set aside, back
    without a model call, as an agent reading the view would; what they wrote, as whole-file
    edits of `files` (so a failed check reverts them). None when git refuses one (a conflict
    with what landed since): the files are as before, and the executor makes the edit again."""
    parts = [shlex.split(c) for c in command.split(" && ")]
    if not parts or any(argv[:3] != ["git", "stash", "apply"] for argv in parts):
        return None
    before = {f: (repo / f).read_text() if (repo / f).exists() else None for f in files}
    for argv in parts:
        done = subprocess.run(["git", "-C", str(repo), *argv[1:]], capture_output=True,
                              check=False)
        if done.returncode != 0:
            subprocess.run(["git", "-C", str(repo), "checkout", "--", *files],
                           capture_output=True, check=False)
            return None
    return [Applied(f, old, (repo / f).read_text(), 0) for f, old in before.items()
            if (repo / f).exists() and (repo / f).read_text() != old]
