"""The gate through the Planner and the CLI (issue 11): a git repo with its own .venv and a test
that already fails, a signature change driven to done with each node validated once, a
test-first plan red then green, a plan driven with no edits that never ends "done", environment
problems that change nothing, and checkpoints of the content the check ran on."""

from __future__ import annotations

import json
import site
import subprocess
import sys
from pathlib import Path

import pytest

from plan07 import Planner
from plan07.cli import main
from plan07.model import Evidence

REQUEST = """Add a `scale` parameter to `pkg.core.f`.

## Acceptance criteria

- `tests/test_core.py::test_g` passes
"""


def ob(i: str, target: str, verb: str, deps: list[str], validation: str) -> dict[str, object]:
    return {"id": i, "target_entity": target, "obligation": verb, "caused_by": "requirement",
            "dependencies": deps, "evidence": "03 recon", "status": "ready",
            "validation": validation}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                    *args], check=True, capture_output=True)


def make_repo(root: Path, *, venv: bool = True) -> Path:
    """A git repo whose own .venv (no pip; plan07's site-packages reachable through a .pth, plus
    a module only that environment has) runs its tests; one test fails already."""
    repo = root / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "core.py").write_text("def f(x):\n    return x\n")
    (repo / "pkg" / "use.py").write_text("from pkg.core import f\n\n\ndef g():\n"
                                         "    return f(2)\n")
    (repo / "tests" / "test_core.py").write_text(
        "import repo_env_only\nfrom pkg.core import f\nfrom pkg.use import g\n\n\n"
        "def test_f():\n    assert f(1) == repo_env_only.ONE\n\n\n"
        "def test_g():\n    assert g() == 2\n\n\n"
        "def test_known_bug():\n    assert f(0) == 'zero'\n")
    (repo / ".gitignore").write_text(".venv/\n__pycache__/\n")
    if venv:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")],
                       check=True)
        sp = next((repo / ".venv" / "lib").glob("python3*/site-packages"))
        (sp / "plan07_site.pth").write_text("\n".join(site.getsitepackages()) + "\n")
        (sp / "repo_env_only.py").write_text("ONE = 1\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


def plan(tmp_path: Path, repo: Path, obligations: list[dict[str, object]],
         request: str = REQUEST) -> Planner:
    replay = tmp_path / "completion.json"
    replay.write_text(json.dumps({"obligations": obligations}))
    return Planner.create(request, repo=repo, evidence=Evidence(), llm=f"replay:{replay}",
                          state_dir=tmp_path / "state")


SIGNATURE = [
    ob("O1", "pkg.core.f", "modify", [], "tests/test_core.py::test_f"),
    ob("O2", "pkg.use.g", "modify", ["O1"], "pytest:tests"),
    ob("O3", "tests/test_core.py::test_g", "validate", ["O2"], "tests/test_core.py::test_g"),
]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # speed: the repo needs none
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    return make_repo(tmp_path)


def test_a_signature_change_drives_to_done_with_a_preexisting_failure(
        tmp_path: Path, repo: Path) -> None:
    p = plan(tmp_path, repo, SIGNATURE)
    gate = p.artifact.gate
    assert gate is not None
    assert (gate.python_source, gate.python) == (".venv", str(repo / ".venv" / "bin" / "python"))
    assert gate.baseline_failing == ["tests/test_core.py::test_known_bug"]
    edits = {"O1": ("pkg/core.py", "def f(x, scale=1):\n    return x * scale\n"),
             "O2": ("pkg/use.py", "from pkg.core import f\n\n\ndef g():\n"
                                  "    return f(1, scale=2)\n")}
    for nid in ("O1", "O2", "O3", "O4"):  # O4: the regression run the plan lint added
        view = p.next()
        assert view is not None
        assert view.node_id == nid
        if nid in edits:
            (repo / edits[nid][0]).write_text(edits[nid][1])
        v = p.complete(nid)  # each node validated once
        assert v.passed, v.output_tail
        if nid == "O2":  # pytest:tests runs the known bug too: reported, never blamed
            assert v.preexisting == ["tests/test_core.py::test_known_bug"]
    assert (v.kind, v.ran) == ("regression", 3)  # tests/test_core.py imports pkg.core, pkg.use
    assert p.next() is None
    assert p.termination_blockers() == []
    passed = [e for e in p.events if e["event"] == "passed"]
    assert [e["node"] for e in passed] == ["O1", "O2", "O3", "O4"]
    assert "pre-existing failures not blamed" in p.artifact.audit[-2].trace \
        or any("pre-existing" in r.trace for r in p.artifact.audit)


def test_a_plan_driven_with_no_edits_never_ends_done(tmp_path: Path, repo: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(tmp_path, repo, SIGNATURE)
    for nid in ("O1", "O2", "O3"):
        view = p.next()
        assert view is not None
        assert view.check_note is not None  # ...and they prove nothing: they passed at CP0
        assert "proves nothing" in view.check_note
        assert p.complete(nid).passed  # the checks pass: nothing was broken...
    assert p.next() is not None
    v = p.complete("O4")  # ...and the regression run refuses a plan that changed nothing
    assert not v.passed
    assert "changed no file since CP0" in v.output_tail
    blockers = p.termination_blockers()
    assert any(b.startswith("no modify node changed any file") for b in blockers)
    assert main(["next", "--state", str(tmp_path / "state")]) == 0  # O4 again, never "done"
    assert "done" not in capsys.readouterr().out.splitlines()[0]


def test_a_test_first_plan_goes_red_then_green(tmp_path: Path, repo: Path) -> None:
    new = "tests/test_core.py::test_scale"
    p = plan(tmp_path, repo, [
        ob("O1", new, "modify", [], new),
        ob("O2", "pkg.core.f", "modify", ["O1"], new),
        ob("O3", new, "validate", ["O2"], new),
    ], REQUEST.replace("test_g`", "test_scale`"))
    assert p.next() is not None
    v = p.complete("O1")  # not written yet: red is refused
    assert not v.passed
    assert "is not collected" in v.output_tail
    assert p.next() is not None
    test = repo / "tests" / "test_core.py"
    test.write_text(test.read_text() + "\n\ndef test_scale():\n    assert f(2, scale=3) == 6\n")
    v = p.complete("O1")
    assert v.passed
    assert v.red
    assert "red as it should be" in v.output_tail
    assert p.next() is not None
    assert not p.complete("O2").passed  # the fix is not there: green refused
    view = p.next()
    assert view is not None
    assert view.node_id == "O2"
    (repo / "pkg" / "core.py").write_text("def f(x, scale=1):\n    return x * scale\n")
    v = p.complete("O2")
    assert v.passed
    assert not v.red
    assert p.next() is not None
    assert p.complete("O3").passed
    assert p.next() is not None
    assert p.complete("O4").passed  # the regression run
    assert p.next() is None
    assert p.termination_blockers() == []


def test_an_environment_problem_is_one_line_and_changes_nothing(
        tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(tmp_path, repo, SIGNATURE)
    assert p.next() is not None
    (repo / "pkg" / "core.py").write_text("import docutils_not_here\n\n\ndef f(x):\n"
                                          "    return x\n")
    before = p.artifact
    st = str(tmp_path / "state")
    assert main(["complete", "O1", "--state", st]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("error: O1 not judged: ")
    assert "cannot import docutils_not_here; pass --python" in err
    after = p.artifact
    assert [n.state for n in after.nodes] == [n.state for n in before.nodes]
    assert after.bounds.get("O1") is None or after.bounds["O1"].replans == 0
    assert after.audit[-1].event == "inconclusive"
    assert after.active == "O1"


def test_a_plan_without_an_environment_defers_its_baseline_to_the_first_complete_with_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path, venv=False)  # plan07's own python has no repo_env_only
    replay = tmp_path / "c.json"
    replay.write_text(json.dumps({"obligations": SIGNATURE}))
    (tmp_path / "r.md").write_text(REQUEST)
    st = str(tmp_path / "st")
    argv = ["plan", str(tmp_path / "r.md"), "--repo", str(repo), "--llm", f"replay:{replay}",
            "--state", st, "--python", sys.executable]
    assert main(argv) == 0  # the plan is made ...
    err = capsys.readouterr().err
    assert err.count("\n") == 1  # ... with one line of warning
    assert err.startswith("warning: the CP0 baseline is deferred")
    assert "cannot import repo_env_only" in err
    gate = Planner.open(st).artifact.gate
    assert gate is not None
    assert gate.baseline_deferred
    assert gate.baseline_file is None
    # the agent edits O1 first; no interpreter can run the tests yet: not judged, nothing kept
    assert main(["next", "--state", st]) == 0
    (repo / "pkg" / "core.py").write_text("def f(x):\n    return 0\n")  # a bug, planted
    assert main(["complete", "O1", "--state", st]) == 2
    assert "the CP0 baseline is not taken yet" in capsys.readouterr().err
    # an environment that runs them: the baseline is taken on the CP0 content, not the edit
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    sp = next((venv / "lib").glob("python3*/site-packages"))
    (sp / "plan07_site.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    (sp / "repo_env_only.py").write_text("ONE = 1\n")
    assert main(["complete", "O1", "--state", st, "--python", str(venv)]) == 1
    gate = Planner.open(st).artifact.gate
    assert gate is not None
    assert gate.baseline_deferred is None
    assert gate.baseline_file
    assert gate.baseline_failing == ["tests/test_core.py::test_known_bug"]  # CP0's, not mine
    assert gate.python == str(venv / "bin" / "python")
    (repo / "pyproject.toml").write_text('[tool.plan07]\ntest-command = "pytest"\n')
    assert main([*argv, "--replace"]) == 2
    assert "non-empty list of strings" in capsys.readouterr().err


def test_the_checkpoint_is_the_content_the_check_ran_on(tmp_path: Path, repo: Path) -> None:
    test = repo / "tests" / "test_core.py"
    # an edit made while the check runs (here: by the test itself) is never certified
    test.write_text(test.read_text() + "\n\ndef test_f_edits():\n"
                    "    open('pkg/late.py', 'a').write('x = 1\\n')\n")
    p = plan(tmp_path, repo, [ob("O1", "pkg.core.f", "modify", [],
                                 "tests/test_core.py::test_f_edits")])
    assert p.next() is not None
    v = p.complete("O1")
    assert not v.passed
    assert v.inconclusive
    assert "changed while the check ran" in v.inconclusive
    assert [n.state for n in p.artifact.nodes if n.id == "O1"] == ["pending"]
    assert p.artifact.audit[-1].event == "inconclusive"


def test_a_new_plan_that_crashes_before_plan_json_leaves_the_old_baseline(
        tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from plan07.gate import world as gate
    from plan07.gate.cp0 import BASELINE_FILE
    from plan07.store import state

    old = plan(tmp_path, repo, SIGNATURE)  # its baseline: tests/ (test_known_bug fails)
    info = old.artifact.gate
    assert info is not None
    assert info.baseline_file is not None
    assert info.baseline_file != BASELINE_FILE  # named by its content
    before = gate.read_baseline(tmp_path / "state", info)
    assert before is not None
    assert before.outcomes is not None
    assert before.outcomes["tests/test_core.py::test_known_bug"] == "failed"

    def crash(*a: object, **k: object) -> None:
        raise KeyboardInterrupt  # the process dies between the sidecar and plan.json

    monkeypatch.setattr(state, "write", crash)
    other = [ob("O1", "pkg.core.f", "modify", [], "tests/test_core.py::test_g")]
    (repo / "tests" / "test_core.py").write_text(
        (repo / "tests" / "test_core.py").read_text().replace("'zero'", "0"))  # now it passes
    with pytest.raises(KeyboardInterrupt):
        plan(tmp_path, repo, other)
    monkeypatch.undo()
    again = Planner.open(tmp_path / "state")  # the old plan, whole: its own baseline
    assert again.artifact.gate == info
    assert gate.read_baseline(tmp_path / "state", info) == before
    names = sorted(p.name for p in (tmp_path / "state").glob("baseline*.json"))
    assert len(names) == 2  # the crashed plan's, never named
    (repo / "tests" / "test_core.py").write_text(
        (repo / "tests" / "test_core.py").read_text().replace("== 0", "== 'zero'"))
    git(repo, "checkout", "-q", "--", ".")
    newer = plan(tmp_path, repo, other)  # a plan made after: the others go
    kept = newer.artifact.gate
    assert kept is not None
    assert sorted(p.name for p in (tmp_path / "state").glob("baseline*.json")) == [
        kept.baseline_file]
