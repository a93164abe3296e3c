"""Task sources beside the generator: the bundled example and SWE-bench-style JSONL instances
pointing at local checkouts (a git repo made here; no network)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from plan07.ab.checker import Checker
from plan07.ab.edits import apply_edit
from plan07.ab.sources import example_tasks, load_swebench
from plan07.ab.tasks import write_repo
from plan07.errors import InputError


def test_bundled_example_is_a_task_whose_gold_order_ends_green(
        tmp_path: Path, repo_root: Path, checker: Checker) -> None:
    tasks = example_tasks(repo_root / "examples")
    if not tasks:
        pytest.skip("no example with request.md + edits.json bundled yet")
    task = tasks[0]
    assert task.source == "example"
    assert task.evidence.recon.nodes  # built by plan07.evidence from the example itself
    repo = write_repo(task, tmp_path / "r")
    assert checker.check(repo).green
    for oid in task.gold_order:
        step = task.step(oid)
        if step.edit:
            apply_edit(repo, step.edit)
    r = checker.check(repo)
    assert r.green
    assert all(r.satisfies(s.obligation.validation) for s in task.steps)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


PATCH = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""
TEST_PATCH = """\
diff --git a/test_calc.py b/test_calc.py
new file mode 100644
--- /dev/null
+++ b/test_calc.py
@@ -0,0 +1,9 @@
+from calc import add
+
+
+def test_add():
+    assert add(2, 3) == 5
+
+
+def test_zero():
+    assert add(0, 0) == 0
"""


@pytest.fixture
def checkout(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "upstream"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    return repo, _git(repo, "rev-parse", "HEAD").strip()


def test_swebench_instance_from_a_local_checkout(
        tmp_path: Path, checkout: tuple[Path, str], checker: Checker) -> None:
    repo, commit = checkout
    inst = {"instance_id": "demo-1", "repo_path": str(repo), "base_commit": commit,
            "problem_statement": "add() subtracts", "patch": PATCH, "test_patch": TEST_PATCH,
            # the official dataset's encoding: each list is a JSON string
            "FAIL_TO_PASS": json.dumps(["test_calc.py::test_add"]),
            "PASS_TO_PASS": json.dumps(["test_calc.py::test_zero"])}
    f = tmp_path / "instances.jsonl"
    f.write_text(json.dumps(inst) + "\n\n")
    (task,) = load_swebench(f, tmp_path / "snap")
    assert task.id == "demo-1"
    assert task.final_tests == ("test_calc.py::test_add", "test_calc.py::test_zero")
    assert task.check_paths == ("test_calc.py",)  # scoped to the instance's test files
    (mod,) = [s for s in task.steps if s.edit is not None]
    assert (mod.edit.old, mod.edit.new) == ("    return a - b\n", "    return a + b\n")  # hunk
    assert "partial_edit" in mod.faults  # the same fault catalogue as generated tasks
    assert mod.obligation.validation == "test_calc.py::test_add"
    work = write_repo(task, tmp_path / "work")
    before = checker.check(work)
    assert "test_calc.py::test_add" in before.failed  # FAIL_TO_PASS fails at base_commit
    for oid in task.gold_order:
        for e in [task.step(oid).edit, *task.step(oid).more]:
            if e is not None:
                apply_edit(work, e)
    after = checker.check(work)
    assert set(task.final_tests) <= after.passed
    assert all(after.satisfies(s.obligation.validation) for s in task.steps)


@pytest.mark.parametrize(("line", "match"), [
    ("not json", "not JSON"),
    ("[1, 2]", "JSON object"),
    ('{"repo_path": "/nowhere"}', "missing field 'base_commit'"),
])
def test_bad_instances_name_the_line(tmp_path: Path, line: str, match: str) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text(line + "\n")
    with pytest.raises(InputError, match=match) as e:
        load_swebench(f, tmp_path / "snap")
    assert "bad.jsonl:1" in str(e.value) or "line 1" in str(e.value)


def test_a_repo_path_that_is_not_a_checkout_is_refused(tmp_path: Path) -> None:
    inst = {k: "" for k in ("problem_statement", "patch", "test_patch")}
    inst |= {"repo_path": str(tmp_path), "base_commit": "abc", "FAIL_TO_PASS": [],
             "PASS_TO_PASS": []}
    f = tmp_path / "i.jsonl"
    f.write_text(json.dumps(inst) + "\n")
    with pytest.raises(InputError, match="not a local git checkout"):
        load_swebench(f, tmp_path / "snap")


# --- --commits: real commits on local checkouts ---------------------------------------------

CORE_OLD = "def area(w, h):\n    return w * h\n\n\ndef label(name):\n    return name.title()\n"
CORE_NEW = ("import math\n\n\ndef area(w, h, *, scale=1):\n    return w * h * scale\n\n\n"
            "def label(name):\n    return name.title()\n\n\ndef circle(r):\n"
            "    return round(math.pi * r * r, 2)\n")
TEST_OLD = "from pkg.core import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n"
TEST_NEW = TEST_OLD + ("\n\ndef test_scale():\n    from pkg.core import area, circle\n\n"
                       "    assert area(2, 3, scale=2) == 12\n    assert circle(1) == 3.14\n")


@pytest.fixture
def commit_repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "proj"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "src" / "pkg" / "__init__.py").write_text("")
    (repo / "src" / "pkg" / "core.py").write_text(CORE_OLD)
    (repo / "tests" / "test_core.py").write_text(TEST_OLD)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    (repo / "src" / "pkg" / "core.py").write_text(CORE_NEW)
    (repo / "tests" / "test_core.py").write_text(TEST_NEW)
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "scale + circle")
    return repo, _git(repo, "rev-parse", "HEAD").strip()


def test_a_commit_is_a_task_of_hunk_edits_on_its_parent(
        tmp_path: Path, commit_repo: tuple[Path, str]) -> None:
    from plan07.ab.commits import load_commits

    repo, sha = commit_repo
    f = tmp_path / "commits.jsonl"
    f.write_text(json.dumps({"id": "proj-1", "repo_path": str(repo), "commit": sha,
                             "request": "Add a scale keyword to area and a circle helper.",
                             "tests": "tests", "pythonpath": ["src"]}) + "\n")
    (task,) = load_commits(f, tmp_path / "snap")
    assert (task.id, task.source, task.check_paths, task.pythonpath) == (
        "proj-1", "commit", ("tests",), ("src",))
    by_file = {s.edit.file: s for s in task.steps if s.edit is not None}
    assert set(by_file) == {"src/pkg/core.py", "tests/test_core.py"}
    core = by_file["src/pkg/core.py"]
    assert len([core.edit, *core.more]) == 2  # import + signature (adjacent), the new function
    assert core.obligation.target_entity == "pkg.core"
    assert task.gold_order[0] == by_file["tests/test_core.py"].id  # tests defined first
    assert core.obligation.dependencies == [by_file["tests/test_core.py"].id]
    assert task.steps[-1].obligation.obligation == "validate"
    assert task.steps[-1].obligation.validation == "pytest:tests"
    assert {"partial_edit", "missing_import"} <= set(core.faults)
    # the parent snapshot: the old text; the gold order reproduces the commit exactly
    work = write_repo(task, tmp_path / "work")
    assert (work / "src/pkg/core.py").read_text() == CORE_OLD
    for oid in task.gold_order:
        for e in [task.step(oid).edit, *task.step(oid).more]:
            if e is not None:
                apply_edit(work, e)
    assert (work / "src/pkg/core.py").read_text() == CORE_NEW
    assert (work / "tests/test_core.py").read_text() == TEST_NEW
    with Checker(pythonpath=task.pythonpath, paths=task.check_paths) as c:
        r = c.check(work)
    assert r.green
    assert all(r.satisfies(s.obligation.validation) for s in task.steps)


@pytest.mark.parametrize(("obj", "match"), [
    ("not json", "commits.jsonl:2: not JSON"),
    ({"id": "x"}, "commits.jsonl:2: repo_path: missing field 'repo_path'"),
    ({"commit": "nope"}, "commits.jsonl:2: commit: git rev-parse --verify failed"),
    ({"tests": "nowhere"}, "commits.jsonl:2: tests: 'nowhere' does not exist"),
    ({"pythonpath": ["/abs"]}, "commits.jsonl:2: pythonpath: must be a list of paths relative"),
    ({"python": "/no/python"}, "commits.jsonl:2: python: '/no/python' is not an interpreter"),
    ({"request": ""}, "commits.jsonl:2: request: field 'request' must be a non-empty string"),
])
def test_bad_commit_lines_are_one_line_errors_naming_the_line(
        tmp_path: Path, commit_repo: tuple[Path, str], obj: object, match: str) -> None:
    from plan07.ab.commits import load_commits

    repo, sha = commit_repo
    good = {"id": "ok", "repo_path": str(repo), "commit": sha, "request": "r", "tests": "tests"}
    bad = obj if isinstance(obj, str) else json.dumps(
        obj if "id" in obj else {**good, "id": "b", **obj})
    f = tmp_path / "commits.jsonl"
    f.write_text(json.dumps(good) + "\n" + bad + "\n")
    with pytest.raises(InputError) as e:
        load_commits(f, tmp_path / "snap")
    assert e.value.one_line().startswith(f"{f}:2: " + match.removeprefix("commits.jsonl:2: ")), \
        e.value.one_line()
