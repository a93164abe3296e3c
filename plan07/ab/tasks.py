"""The A/B task: a repo snapshot, a request, evidence, a gold decomposition with one gold edit
per obligation, and the repo's own tests. Pure values plus `write_repo` (I/O at the edge).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plan07.ab.edits import Edit
from plan07.model import Decomposition, Evidence, Obligation


@dataclass(frozen=True)
class GoldStep:
    """One obligation of the gold decomposition, its gold edit (None for a preserve/validate
    obligation: it is discharged by its check, not by an edit) and the faulty variants the
    scripted executor may return instead (fault kind -> edit)."""

    obligation: Obligation
    edit: Edit | None
    faults: Mapping[str, Edit] = field(default_factory=dict)
    # further gold edits of the same obligation (a real commit's other hunks in the same file),
    # applied after `edit` (or after the faulty variant that replaces `edit`)
    more: tuple[Edit, ...] = ()

    @property
    def id(self) -> str:
        return self.obligation.id


@dataclass(frozen=True)
class Task:
    """An A/B task. `steps` are in the decomposition's listed order (what a static chain runs);
    `gold_order` is a valid order of the same ids. `files` is the repo snapshot (posix path ->
    text); `checkout` is an existing directory to copy instead (SWE-bench-style instances)."""

    id: str
    source: str  # "generated" | "example" | "swebench"
    shape: str
    request: str
    evidence: Evidence
    steps: tuple[GoldStep, ...]
    gold_order: tuple[str, ...]
    files: dict[str, str] = field(default_factory=dict)
    test_dir: str = "tests"
    final_tests: tuple[str, ...] = ()  # pytest ids that must pass at the end (empty: whole suite)
    snapshot: str | None = None  # a prepared directory to copy instead of `files`
    # Gold steps left out of the decomposition every strategy is handed (a hidden consumer):
    # the repo's tests and `steps` still need them; see `visible`.
    hidden: tuple[str, ...] = ()
    # A real repo (--commits, --swebench): the interpreter that runs its tests (None: the
    # harness's), import paths relative to the repo root, and the test paths the per-step
    # temporal-consistency check runs (the instance's own tests, not a whole foreign suite).
    python: str | None = None
    pythonpath: tuple[str, ...] = ()
    check_paths: tuple[str, ...] = (".",)

    def step(self, oid: str) -> GoldStep:
        for s in self.steps:
            if s.id == oid:
                return s
        raise KeyError(oid)

    @property
    def visible(self) -> tuple[GoldStep, ...]:
        """The decomposition the strategies are handed: `steps` minus the hidden ones, with
        dependencies on a hidden step dropped (the decomposition never names it)."""
        if not self.hidden:
            return self.steps
        out = []
        for s in self.steps:
            if s.id in self.hidden:
                continue
            deps = [d for d in s.obligation.dependencies if d not in self.hidden]
            ob = s.obligation.model_copy(update={
                "dependencies": deps,
                "status": "blocked" if deps else "ready"})
            out.append(GoldStep(ob, s.edit, s.faults, s.more))
        return tuple(out)

    @property
    def obligations(self) -> list[Obligation]:
        """The handed decomposition's obligations (hidden steps left out)."""
        return [s.obligation for s in self.visible]

    def decomposition(self) -> Decomposition:
        return Decomposition(obligations=self.obligations)

    def decomposition_json(self) -> str:
        """The gold decomposition as the §4 completion text a model would return."""
        return json.dumps({"obligations": [o.model_dump(mode="json") for o in self.obligations]},
                          indent=1)

    def digest(self) -> str:
        """A content hash: distinct tasks have distinct digests."""
        h = hashlib.sha256(self.request.encode())
        for k in sorted(self.files):
            h.update(k.encode() + b"\0" + self.files[k].encode() + b"\0")
        return h.hexdigest()[:16]

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "source": self.source, "shape": self.shape,
                "obligations": len(self.steps), "files": len(self.files),
                "hidden": list(self.hidden), "digest": self.digest()}


def write_repo(task: Task, dest: Path) -> Path:
    """Write the task's repo snapshot under `dest` (created; must be empty or absent)."""
    if task.snapshot is not None:
        import shutil

        shutil.copytree(task.snapshot, dest, symlinks=True)
    else:
        dest.mkdir(parents=True, exist_ok=True)
        if any(dest.iterdir()):
            raise FileExistsError(f"{dest} is not empty")
        for rel, text in sorted(task.files.items()):
            p = dest / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, "utf-8")
    _commit(dest)
    return dest


def _commit(repo: Path) -> None:
    """The snapshot as a git work tree with one commit, as a user's repository is: plan07
    snapshots its checkpoints and reads each edit against them (the same for every strategy:
    only plan07 looks). No user config, hooks or signing apply."""
    import os
    import subprocess

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "ab", "GIT_AUTHOR_EMAIL": "ab@localhost",
           "GIT_COMMITTER_NAME": "ab", "GIT_COMMITTER_EMAIL": "ab@localhost"}
    for args in (["init", "-q"], ["add", "-A"],
                 ["commit", "-q", "--no-verify", "--no-gpg-sign", "-m", "snapshot"]):
        subprocess.run(["git", "-C", str(repo), *args], env=env, check=True,  # noqa: S603
                       capture_output=True)
