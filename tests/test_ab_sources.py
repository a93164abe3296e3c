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
            "FAIL_TO_PASS": ["test_calc.py::test_add"], "PASS_TO_PASS": ["test_calc.py::test_zero"]}
    f = tmp_path / "instances.jsonl"
    f.write_text(json.dumps(inst) + "\n\n")
    (task,) = load_swebench(f, tmp_path / "snap")
    assert task.id == "demo-1"
    assert task.final_tests == ("test_calc.py::test_add", "test_calc.py::test_zero")
    work = write_repo(task, tmp_path / "work")
    before = checker.check(work)
    assert "test_calc.py::test_add" in before.failed  # FAIL_TO_PASS fails at base_commit
    for oid in task.gold_order:
        apply_edit(work, task.step(oid).edit)  # type: ignore[arg-type]
    after = checker.check(work)
    assert set(task.final_tests) <= after.passed


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
