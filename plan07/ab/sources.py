"""Task sources beside the generator: the bundled example(s) and SWE-bench-style instances
pointing at local checkouts (docs/ab.md "Task sources"). I/O (reads files, runs git locally;
never the network).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from plan07.ab.compose import _partial
from plan07.ab.edits import Edit
from plan07.ab.tasks import GoldStep, Task
from plan07.errors import InputError
from plan07.model import Evidence, Obligation

SKIP = {".git", "__pycache__", ".venv", "build", ".pytest_cache"}
SWE_FIELDS = ("repo_path", "base_commit", "problem_statement", "patch", "test_patch",
              "FAIL_TO_PASS", "PASS_TO_PASS")


def _read_tree(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if p.is_file() and not SKIP.intersection(rel.parts) and p.suffix in (".py", ".toml",
                                                                             ".cfg", ".ini"):
            out[rel.as_posix()] = p.read_text("utf-8")
    return out


def _evidence(files: dict[str, str], request: str) -> Evidence:
    from plan07 import build_evidence

    with tempfile.TemporaryDirectory() as d:
        for rel, text in files.items():
            (Path(d) / rel).parent.mkdir(parents=True, exist_ok=True)
            (Path(d) / rel).write_text(text, "utf-8")
        return build_evidence(Path(d), request=request)


def _ob(oid: str, target: str, verb: str, cause: str, deps: list[str], check: str) -> Obligation:
    return Obligation(id=oid, target_entity=target, obligation=verb,
                      caused_by=cause, dependencies=deps, evidence="example gold decomposition",
                      status="blocked" if deps else "ready", validation=check)


def example_task(folder: Path) -> Task:
    """A bundled example (request.md + edits.json in the `plan07 demo` format) as a task: the
    anchor tests are defined first in a new test file, each edited file is one modify (its
    edits merged into one full-file replacement), the test file preserves the old default, a
    final validate runs the suite."""
    spec = json.loads((folder / "edits.json").read_text("utf-8"))
    request = (folder / "request.md").read_text("utf-8")
    files = _read_tree(folder)
    tfile = "tests/test_ab_anchor.py"
    tests_src = "\n\n".join(spec.get("tests", {}).values())
    steps: list[GoldStep] = []
    ids: list[str] = []
    if tests_src:
        e = Edit(tfile, None, tests_src)
        steps.append(GoldStep(_ob("O1", f"{tfile}::{next(iter(spec['tests']))}", "modify",
                                  "test_anchor: define the acceptance tests first", [],
                                  "compile"), e, _faults(files, e)))
        ids.append("O1")
    by_file: dict[str, tuple[str, str]] = {}
    for ed in spec.get("edits", []):
        target, rel = ed["target"], ed["file"]
        text = by_file.get(rel, (target, files[rel]))[1]
        if text.count(ed["find"]) != 1:
            raise InputError(f"{folder}/edits.json: `find` of {target} does not occur once in "
                             f"{rel}", source=str(folder))
        by_file[rel] = (target, text.replace(ed["find"], ed["replace"], 1))
    for k, (rel, (target, new)) in enumerate(by_file.items()):
        oid = f"O{len(steps) + 1}"
        check = "pytest:tests" if k == len(by_file) - 1 else "compile"
        e = Edit(rel, files[rel], new)
        steps.append(GoldStep(_ob(oid, target, "modify", f"requirement: change {target}",
                                  list(ids), check), e, _faults(files, e)))
        ids.append(oid)
    steps.append(GoldStep(_ob(f"O{len(steps) + 1}", "tests", "validate",
                              "requirement: every acceptance test passes", list(ids),
                              "pytest:tests"), None))
    return Task(id=f"example-{folder.name}", source="example", shape="example",
                request=request, evidence=_evidence(files, request), steps=tuple(steps),
                gold_order=tuple(s.id for s in steps), files=files)


def _faults(files: dict[str, str], e: Edit) -> dict[str, Edit]:
    part = _partial(files, e)
    return {"partial_edit": part} if part else {}


def example_tasks(root: Path) -> list[Task]:
    """Every example folder under `root` with request.md and edits.json."""
    if not root.is_dir():
        return []
    return [example_task(d) for d in sorted(root.iterdir())
            if (d / "request.md").is_file() and (d / "edits.json").is_file()]


def _patched_files(patch: str) -> list[str]:
    return [line[6:] for line in patch.splitlines() if line.startswith("+++ b/")]


def _ids(inst: dict[str, Any], key: str, where: str) -> list[str]:
    """FAIL_TO_PASS / PASS_TO_PASS: the official dataset stores each as a JSON-encoded string
    (`"[\"tests/a.py::t\"]"`); a plain list is accepted too."""
    v = inst[key]
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            raise InputError(f"{key} is a string but not a JSON list", field=key,
                             source=where) from None
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise InputError(f"{key} must be a list of pytest ids (or its JSON string)", field=key,
                         source=where)
    return v


def _file_of(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def swebench_task(inst: dict[str, Any], line: int, snapshots: Path,
                  source: str = "") -> Task:
    """One SWE-bench-style instance: the checkout at base_commit with test_patch applied is the
    repo; each .py file of `patch` is one modify whose gold edits are its hunks (exact
    old -> new, with the seeded faults a real hunk admits), test files first; the last source
    modify validates the first FAIL_TO_PASS test; a final validate runs the FAIL_TO_PASS and
    PASS_TO_PASS test files; resolved needs every FAIL_TO_PASS and PASS_TO_PASS id to pass.
    The per-step consistency check runs those test files only."""
    from plan07.ab.commits import build_steps, evidence_for, snapshot

    where = f"{source}:{line}" if source else f"line {line}"
    for f in SWE_FIELDS:
        if f not in inst:
            raise InputError(f"missing field {f!r}", field=f, source=where)
    repo, commit = str(inst["repo_path"]), str(inst["base_commit"])
    if not Path(repo, ".git").exists():
        raise InputError(f"repo_path {repo!r} is not a local git checkout", field="repo_path",
                         source=where)
    f2p, p2p = _ids(inst, "FAIL_TO_PASS", where), _ids(inst, "PASS_TO_PASS", where)
    if not f2p:
        raise InputError("FAIL_TO_PASS is empty: nothing says the fix worked",
                         field="FAIL_TO_PASS", source=where)
    dest = snapshot(repo, commit, snapshots / f"swe-{line}", where)
    if inst["test_patch"].strip():
        _apply(dest, inst["test_patch"], where)
    touched = [f for f in _patched_files(inst["patch"]) if f.endswith(".py")]
    if not touched:
        raise InputError("patch changes no .py file", field="patch", source=where)
    old = {f: (dest / f).read_text("utf-8") if (dest / f).exists() else None for f in touched}
    with tempfile.TemporaryDirectory() as d:
        for f, text in old.items():
            if text is not None:
                (Path(d) / f).parent.mkdir(parents=True, exist_ok=True)
                (Path(d) / f).write_text(text, "utf-8")
        _apply(Path(d), inst["patch"], where)
        files = {f: (old[f], (Path(d) / f).read_text("utf-8")) for f in touched
                 if (Path(d) / f).exists()}
    test_files = tuple(dict.fromkeys(_file_of(t) for t in [*f2p, *p2p]))
    from plan07.vocab import classify

    first = f2p[0] if classify(f2p[0]) == "pytest_node" else f"pytest:{_file_of(f2p[0])}"
    steps, gold = build_steps(files, first, final=f"pytest:{test_files[0]}")
    final = steps[-1]
    steps[-1] = GoldStep(final.obligation.model_copy(update={
        "target_entity": _file_of(f2p[0]).removesuffix(".py").replace("/", "."),
        "validation": f"pytest:{_file_of(f2p[0])}"}), None)
    from plan07.ab.commits import with_criterion

    request = with_criterion(str(inst["problem_statement"]), test_files)
    return Task(id=str(inst.get("instance_id", f"swe-{line}")), source="swebench",
                shape="swebench", request=request,
                evidence=evidence_for(dest, request, [s.obligation.target_entity
                                                      for s in steps]),
                steps=tuple(steps), gold_order=tuple(gold), final_tests=tuple(f2p + p2p),
                snapshot=str(dest), check_paths=test_files,
                python=inst.get("python"), pythonpath=tuple(inst.get("pythonpath", [])))


def _apply(root: Path, patch: str, where: str) -> None:
    p = subprocess.run(["git", "apply", "--unsafe-paths", "--directory=.", "-"],  # noqa: S603
                       input=patch, cwd=root, capture_output=True, text=True, check=False)
    if p.returncode:
        raise InputError(f"patch does not apply: {p.stderr.strip()[:200]}", field="patch",
                         source=where)


def load_swebench(path: Path, snapshots: Path) -> list[Task]:
    """Read a JSONL file of SWE-bench-style instances (docs/ab.md); errors name the line.
    Snapshots go under `snapshots` (the caller removes it when the run is over)."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read instances: {exc.strerror}", source=str(path)) from None
    snap = snapshots
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            inst = json.loads(line)
        except ValueError as exc:
            raise InputError(f"not JSON: {exc}", source=f"{path}:{n}") from None
        if not isinstance(inst, dict):
            raise InputError("each line must be a JSON object", source=f"{path}:{n}")
        out.append(swebench_task(inst, n, snap, str(path)))
    return out
