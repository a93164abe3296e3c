"""Real tasks from local git checkouts: `--commits FILE` (one real commit a line) and the shared
machinery `--swebench` uses too (snapshot at a commit, hunk edits, faults, evidence). I/O
(runs git locally, reads files; never the network).

A commit task (docs/ab.md): the parent commit's tree is the snapshot; each changed `.py` file is
one `modify` whose gold edits are the commit's hunks (exact old -> new, plan07.ab.hunks); test
files are defined first (test_anchor), source files after them; a final `validate` runs the
repo's own tests (`tests`); the seeded fault plan applies as for generated tasks.
"""

from __future__ import annotations

import ast
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from plan07.ab import observed
from plan07.ab.edits import Edit
from plan07.ab.hunks import hunk_edits, real_faults
from plan07.ab.tasks import GoldStep, Task
from plan07.errors import InputError
from plan07.model import Evidence, Obligation

COMMIT_FIELDS = ("id", "repo_path", "commit", "request", "tests")
MAX_FILES = 12  # a commit touching more .py files is not one planning task


def git(repo: str, *args: str, where: str, field: str = "commit") -> str:
    p = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,  # noqa: S603
                       check=False)
    if p.returncode:
        raise InputError(f"git {' '.join(args[:2])} failed: {p.stderr.strip()[:160]}",
                         field=field, source=where)
    return p.stdout


def snapshot(repo: str, commit: str, dest: Path, where: str) -> Path:
    """`git archive` of `commit` unpacked at `dest` (created)."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", repo, "archive", commit], capture_output=True,  # noqa: S603
                             check=False)
    if archive.returncode:
        raise InputError(f"git archive {commit} failed: {archive.stderr.decode()[:160]}",
                         field="commit", source=where)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)  # noqa: S603
    return dest


def is_test(path: str) -> bool:
    name = PurePosixPath(path).name
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" \
        or "tests" in PurePosixPath(path).parts[:-1]


def module_of(path: str) -> str:
    """`src/pkg/core.py` -> `pkg.core` (plan07.ab.observed.module_of); a top-level `__init__.py`,
    which names no module, stays its path."""
    return observed.module_of(path) or path


def target_of(path: str, new: str, edit: Edit) -> str:
    """The entity a file's change is about: its module, plus the top-level def/class the first
    hunk lands in (when the new text parses)."""
    mod = module_of(path)
    try:
        tree = ast.parse(new)
    except SyntaxError:
        return mod
    at = new.find(edit.new)
    line = new.count("\n", 0, at) + 1 if at >= 0 else 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                node.lineno <= line <= (node.end_lineno or node.lineno):
            return f"{mod}.{node.name}"
    return mod


def _ob(oid: str, target: str, verb: str, cause: str, deps: list[str], check: str) -> Obligation:
    return Obligation(id=oid, target_entity=target[:300], obligation=verb, caused_by=cause[:500],
                      dependencies=deps, evidence="the commit's own change", validation=check,
                      status="blocked" if deps else "ready")


def evidence_for(root: Path, request: str, targets: Sequence[str]) -> Evidence:
    """plan07's own evidence of the snapshot, cut to the targets' 2-hop neighbourhood (what the
    planner keeps, and a bounded summary for the monolithic prompt)."""
    from plan07 import build_evidence, neighbourhood

    try:
        ev = build_evidence(root, request=request)
    except Exception:  # noqa: BLE001 - evidence is a hint; a repo recon cannot read is planned bare
        return Evidence()
    return neighbourhood(ev, list(targets), hops=2)


def build_steps(files: dict[str, tuple[str | None, str]], check: str, *, final: str
                ) -> tuple[list[GoldStep], list[str]]:
    """Steps for changed files (path -> (old text or None, new text)): tests first, then
    sources, then one validate (`final`). Returns (steps in listed order, gold order)."""
    tests = sorted(f for f in files if is_test(f))
    srcs = sorted(f for f in files if not is_test(f))
    gold: list[tuple[str, str, GoldStep]] = []  # (kind, file, step)
    ids: dict[str, str] = {}
    n = 0
    for f in [*tests, *srcs]:
        n += 1
        ids[f] = f"O{n}"
    test_ids = [ids[f] for f in tests]
    for k, f in enumerate([*tests, *srcs]):
        old, new = files[f]
        edits = [Edit(f, None, new)] if old is None else hunk_edits(f, old, new)
        if not edits:
            continue
        first, more = edits[0], tuple(edits[1:])
        faults = real_faults(old or "", first) if old is not None else {}
        if f in tests:
            ob = _ob(ids[f], target_of(f, new, first), "modify",
                     f"test_anchor: define the commit's tests in {f} first", [], "compile")
        else:
            last = f == srcs[-1]
            ob = _ob(ids[f], target_of(f, new, first), "modify",
                     f"requirement: the commit changes {f}", list(test_ids),
                     check if last else "compile")
        gold.append(("t" if f in tests else "s", f, GoldStep(ob, first, faults, more)))
        del k
    all_ids = [s.id for _, _, s in gold]
    n += 1
    v = GoldStep(_ob(f"O{n}", final, "validate", "requirement: the repo's own tests pass",
                     all_ids, check), None)
    listed = sorted(gold, key=lambda g: g[1])  # how a model walking the files lists them
    return [g[2] for g in listed] + [v], [g[2].id for g in gold] + [v.id]


def with_criterion(request: str, tests: Sequence[str]) -> str:
    """The request as every strategy gets it: the real text, plus the acceptance criterion the
    task is judged by (a commit message names none; a generated request does)."""
    runs = ", ".join(f"`pytest {t}`" for t in tests)
    return (f"{request.rstrip()}\n\n## Acceptance criteria\n\n- {runs} must pass, with the "
            "new behaviour tested.\n")


def commit_task(obj: dict[str, Any], where: str, dest: Path) -> Task:
    """One JSONL object (docs/ab.md) -> a task whose snapshot is unpacked at `dest`."""
    for f in COMMIT_FIELDS:
        if f not in obj:
            raise InputError(f"missing field {f!r}", field=f, source=where)
        if not isinstance(obj[f], str) or not obj[f].strip():
            raise InputError(f"field {f!r} must be a non-empty string", field=f, source=where)
    repo, commit, tests = obj["repo_path"], obj["commit"], obj["tests"].strip().rstrip("/")
    if not Path(repo, ".git").exists():
        raise InputError(f"repo_path {repo!r} is not a local git checkout", field="repo_path",
                         source=where)
    python = obj.get("python")
    if python is not None and (not isinstance(python, str) or not Path(python).is_file()):
        raise InputError(f"{python!r} is not an interpreter file", field="python",
                         source=where)
    pythonpath = obj.get("pythonpath", [])
    if not isinstance(pythonpath, list) or not all(isinstance(p, str) and p and
                                                   not p.startswith("/") and ".." not in p
                                                   for p in pythonpath):
        raise InputError("must be a list of paths relative to the repo root",
                         field="pythonpath", source=where)
    sha = git(repo, "rev-parse", "--verify", f"{commit}^{{commit}}", where=where).strip()
    parent = git(repo, "rev-parse", "--verify", f"{sha}^", where=where).strip()
    status = git(repo, "diff", "--name-status", "--no-renames", parent, sha, "--", "*.py",
                 where=where)
    files: dict[str, tuple[str | None, str]] = {}
    for line in status.splitlines():
        st, _, path = line.partition("\t")
        if st.startswith("D"):
            continue  # a deleted file is no edit to make; its tests go with it
        old = git(repo, "show", f"{parent}:{path}", where=where) if st != "A" else None
        files[path] = (old, git(repo, "show", f"{sha}:{path}", where=where))
    if not files:
        raise InputError(f"commit {commit} changes no .py file", field="commit", source=where)
    if len(files) > MAX_FILES:
        raise InputError(f"commit {commit} changes {len(files)} .py files (at most "
                         f"{MAX_FILES})", field="commit", source=where)
    snapshot(repo, parent, dest, where)
    if not (dest / tests).exists():
        raise InputError(f"{tests!r} does not exist at the parent commit", field="tests",
                         source=where)
    check = f"pytest:{tests}"
    steps, gold = build_steps(files, check, final=module_of(tests))
    request = with_criterion(obj["request"], [tests])
    return Task(id=str(obj["id"]), source="commit", shape=f"commit:{len(files)}f",
                request=request, evidence=evidence_for(dest, request, [
                    s.obligation.target_entity for s in steps]),
                steps=tuple(steps), gold_order=tuple(gold), snapshot=str(dest),
                python=python, pythonpath=tuple(pythonpath), check_paths=(tests,))


def load_commits(path: Path, snapshots: Path) -> list[Task]:
    """Read a JSONL of real commits (docs/ab.md); every bad line is one error naming it."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read commits: {exc.strerror}", source=str(path)) from None
    out = []
    seen: set[str] = set()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise InputError(f"not JSON: {exc}", source=where) from None
        if not isinstance(obj, dict):
            raise InputError("each line must be a JSON object", source=where)
        task = commit_task(obj, where, snapshots / f"commit-{n}")
        if task.id in seen:
            raise InputError(f"duplicate id {task.id!r}", field="id", source=where)
        seen.add(task.id)
        out.append(task)
    return out
