"""The check runner in the repo's own world (plan07.gate.runner, plan07.gate.baseline,
plan07.gate.checks): interpreter detection, the [tool.plan07] test command, per-test outcomes, the
CP0 baseline, red-green and environment problems. Real pytest runs on small repos built here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plan07.errors import InputError
from plan07.gate.baseline import Baseline
from plan07.gate.checks import GateContext, check_node, plan_check, take_baseline
from plan07.gate.interpreter import Interpreter, find_python, run_env
from plan07.gate.runner import parse_junit, run_tests
from plan07.gate.testcommand import TestCommand, load_command
from plan07.model import PlanNode

OWN = Interpreter(sys.executable, "plan07")


def node(nid: str, validation: str, *, verb: str = "modify", target: str = "pkg.mod.f") -> PlanNode:
    return PlanNode(id=nid, target_entity=target, obligation=verb, caused_by="t",
                    dependencies=[], evidence="", status="ready", validation=validation)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    (r / "pkg").mkdir(parents=True)
    (r / "tests").mkdir()
    (r / "pkg" / "__init__.py").write_text("")
    (r / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    (r / "tests" / "test_mod.py").write_text(
        "from pkg.mod import f\n\ndef test_ok():\n    assert f() == 1\n\n"
        "def test_old_bug():\n    assert f() == 2\n")
    return r


def ctx(repo: Path, **kw: object) -> GateContext:
    return GateContext(repo, OWN, env=dict(os.environ), **kw)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# the interpreter


def _fake_python(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_detection_order(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    assert find_python(repo, env={}).source == "plan07"
    assert find_python(repo, env={}).warning().startswith("warning: no environment")
    venv = _fake_python(repo / "venv" / "bin" / "python")
    assert find_python(repo, env={}) == Interpreter(str(venv), "venv")
    dot = _fake_python(repo / ".venv" / "bin" / "python")
    assert find_python(repo, env={}) == Interpreter(str(dot), ".venv")
    active = _fake_python(tmp_path / "active" / "bin" / "python")
    got = find_python(repo, env={"VIRTUAL_ENV": str(tmp_path / "active")})
    assert got == Interpreter(str(active), "VIRTUAL_ENV")
    assert got.warning() is None
    # plan07's own activated venv is not the repo's: the repo's .venv wins
    assert find_python(repo, env={"VIRTUAL_ENV": sys.prefix}).source == ".venv"
    explicit = _fake_python(tmp_path / "other" / "bin" / "python")
    assert find_python(repo, explicit, env={}).source == "--python"
    assert find_python(repo, tmp_path / "other", env={}).path == str(explicit)


@pytest.mark.parametrize("bad", ["missing/python", "emptydir"])
def test_a_bad_python_is_one_line(tmp_path: Path, bad: str) -> None:
    (tmp_path / "emptydir").mkdir()
    with pytest.raises(InputError, match="--python") as exc:
        find_python(tmp_path, tmp_path / bad, env={})
    assert "\n" not in exc.value.one_line()


def test_run_env_drops_plan07s_pytest_settings() -> None:
    base = {"PATH": "/bin", "PYTEST_XDIST_WORKER": "gw0", "PYTEST_ADDOPTS": "-x",
            "PYTHONDONTWRITEBYTECODE": "1", "VIRTUAL_ENV": sys.prefix}
    own = run_env(OWN, base)
    assert own == {"PATH": "/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                   "PYTHONDONTWRITEBYTECODE": "1", "VIRTUAL_ENV": sys.prefix}
    theirs = run_env(Interpreter("/r/.venv/bin/python", ".venv"), base)
    assert theirs == {"PATH": "/bin", "PYTHONDONTWRITEBYTECODE": "1", "VIRTUAL_ENV": "/r/.venv"}


def test_run_env_keeps_the_users_pytest_settings() -> None:
    """PYTEST_ADDOPTS says how the repo's tests run (a project's `-m "not slow"`, its
    `--ignore`s): outside a pytest run it reaches the check; a run's own variables never do."""
    base = {"PATH": "/bin", "PYTEST_ADDOPTS": "-m 'not slow'", "PYTEST_PLUGINS": "myplug",
            "PYTEST_XDIST_TESTRUNUID": "abc", "COV_CORE_SOURCE": "x"}
    theirs = run_env(Interpreter("/r/.venv/bin/python", ".venv"), base)
    assert theirs == {"PATH": "/bin", "PYTEST_ADDOPTS": "-m 'not slow'",
                      "PYTEST_PLUGINS": "myplug"}
    assert run_env(OWN, base)["PYTEST_ADDOPTS"] == "-m 'not slow'"
    inside = run_env(Interpreter("/r/.venv/bin/python", ".venv"),
                     {**base, "PYTEST_CURRENT_TEST": "t.py::t (call)"})
    assert inside == {"PATH": "/bin"}


def test_the_users_addopts_reach_the_repos_run(repo: Path) -> None:
    (repo / "tests" / "test_marked.py").write_text(
        "import pytest\n\ndef test_fast():\n    pass\n\n"
        "@pytest.mark.slow\ndef test_slow():\n    raise AssertionError('ran')\n")
    (repo / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_ADDOPTS"] = "-m 'not slow'"
    c = GateContext(repo, find_python(repo, env={}), env=env)
    v = check_node(node("O1", "pytest:tests/test_marked.py", verb="validate"), c)
    assert v.passed, v.output_tail


def test_plan07s_plugins_never_load_into_the_repos_run(repo: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "--this-option-does-not-exist")
    (repo / "tests" / "test_plugins.py").write_text(
        "import os\n\ndef test_none(pytestconfig):\n"
        "    pm = pytestconfig.pluginmanager\n"
        "    assert not pm.has_plugin('hypothesispytest') and not pm.has_plugin('xdist')\n"
        "    assert 'PYTEST_XDIST_WORKER' not in os.environ\n")
    v = check_node(node("O1", "tests/test_plugins.py::test_none", verb="validate"), ctx(repo))
    assert v.passed, v.output_tail


def test_a_repo_venv_without_pytest_is_an_environment_problem(repo: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")],
                   check=True)
    interp = find_python(repo, env={})
    assert interp.source == ".venv"
    c = GateContext(repo, interp, env={"PATH": os.environ.get("PATH", "")})
    v = check_node(node("O1", "tests/test_mod.py::test_ok", verb="validate"), c)
    assert not v.passed
    assert v.inconclusive is not None
    assert "cannot import pytest; pass --python" in v.inconclusive
    assert str(repo / ".venv") in v.inconclusive


# ---------------------------------------------------------------------------------------------
# the test command


def _pyproject(repo: Path, body: str) -> None:
    (repo / "pyproject.toml").write_text(body)


def test_tool_plan07_test_command(repo: Path) -> None:
    assert load_command(repo) == TestCommand()
    _pyproject(repo, '[tool.plan07]\ntest-command = ["{python}", "tests/runtests.py", '
                     '"{tests}"]\ntest-ids = "dotted"\ntest-root = "tests"\n')
    cmd = load_command(repo)
    assert cmd.argv == ("{python}", "tests/runtests.py", "{tests}")
    assert cmd.argv_for("/py", ["tests/admin/tests.py::T::test_x[1]", "tests/admin"], "j") == [
        "/py", "tests/runtests.py", "admin.tests.T.test_x", "admin"]
    flag = load_command(repo, '["tox", "-e", "py", "--", "{tests}"]')
    assert flag.argv_for("/py", ["a.py::t"], "j") == ["tox", "-e", "py", "--", "a.py::t"]


@pytest.mark.parametrize(("body", "needle"), [
    ("[tool.plan07\n", "cannot read [tool.plan07]"),
    ('[tool.plan07]\ntest-command = "pytest {tests}"\n', "non-empty list of strings"),
    ('[tool.plan07]\ntest-command = ["{python}", "x.py"]\n', "no {tests} argument"),
    ('[tool.plan07]\ntest-command = ["{py}", "{tests}"]\n', "unknown placeholder {py}"),
    ('[tool.plan07]\ntest-command = ["x", "--t={tests}"]\n', "argument of its own"),
    ('[tool.plan07]\ntest-comand = ["x", "{tests}"]\n', "unknown key(s) test-comand"),
    ('[tool.plan07]\ntest-command = ["x", "{tests}"]\ntest-ids = "django"\n', "test-ids"),
])
def test_bad_configuration_is_one_line(repo: Path, body: str, needle: str) -> None:
    _pyproject(repo, body)
    with pytest.raises(InputError) as exc:
        load_command(repo)
    assert needle in exc.value.one_line()
    assert "\n" not in exc.value.one_line()


@pytest.mark.parametrize("flag", ["not json", '["{tests}"', "[]", '["x"]'])
def test_bad_test_command_flag(repo: Path, flag: str) -> None:
    with pytest.raises(InputError, match="--test-command"):
        load_command(repo, flag)


def test_a_django_style_runner(repo: Path) -> None:
    """`python tests/runtests.py LABEL...`: the label in dots, the verdict from its exit status."""
    (repo / "tests" / "runtests.py").write_text(
        "import importlib, sys\nsys.path.insert(0, '.')\nbad = 0\n"
        "for label in sys.argv[1:]:\n"
        "    mod, _, name = label.rpartition('.')\n"
        "    try:\n        getattr(importlib.import_module('tests.' + mod), name)()\n"
        "    except AssertionError:\n        bad += 1\n"
        "sys.exit(1 if bad else 0)\n")
    _pyproject(repo, '[tool.plan07]\ntest-command = ["{python}", "tests/runtests.py", '
                     '"{tests}"]\ntest-ids = "dotted"\ntest-root = "tests"\n')
    c = ctx(repo, command=load_command(repo))
    assert check_node(node("O1", "tests/test_mod.py::test_ok", verb="validate"), c).passed
    bad = check_node(node("O1", "tests/test_mod.py::test_old_bug", verb="validate"), c)
    assert not bad.passed
    assert "exit 1" in bad.output_tail


# ---------------------------------------------------------------------------------------------
# outcomes, baseline, PASS_TO_PASS


def test_junit_outcomes_are_node_ids(repo: Path) -> None:
    (repo / "tests" / "test_cls.py").write_text(
        "import pytest\n\nclass TestA:\n    @pytest.mark.parametrize('x', [1, 2])\n"
        "    def test_p(self, x):\n        assert x == 1\n")
    (repo / "tests" / "test_broken.py").write_text("import nope_not_a_module_xyz\n")
    run = run_tests(TestCommand(), OWN, repo, ["tests"], timeout=60, env=dict(os.environ))
    assert run.outcomes is not None
    got = {k: o.status for k, o in run.outcomes.items()}
    assert got == {"tests/test_mod.py::test_ok": "passed",
                   "tests/test_mod.py::test_old_bug": "failed",
                   "tests/test_cls.py::TestA::test_p[1]": "passed",
                   "tests/test_cls.py::TestA::test_p[2]": "failed",
                   "tests/test_broken.py": "error"}
    assert parse_junit(repo / "absent.xml") is None


def test_a_preexisting_failure_is_reported_never_blamed(repo: Path) -> None:
    c = ctx(repo)
    nodes = [node("O1", "pytest:tests"), node("O2", "tests/test_mod.py::test_ok")]
    base, problem = take_baseline(nodes, c)
    assert problem is None
    assert base.failing() == ["tests/test_mod.py::test_old_bug"]
    c.baseline = base
    v = check_node(nodes[0], c)
    assert v.passed, v.output_tail
    assert v.preexisting == ["tests/test_mod.py::test_old_bug"]
    assert "pre-existing failures, not blamed: tests/test_mod.py::test_old_bug" in v.output_tail
    # without a baseline every failure is the node's
    assert not check_node(nodes[0], ctx(repo)).passed
    # a test that passed at the baseline and fails now is blamed
    (repo / "pkg" / "mod.py").write_text("def f():\n    return 3\n")
    v = check_node(nodes[0], c)
    assert not v.passed
    assert "failed: tests/test_mod.py::test_ok" in v.output_tail


def test_the_nodes_own_named_test_must_pass_even_if_it_failed_before(repo: Path) -> None:
    c = ctx(repo)
    c.baseline, _ = take_baseline([node("O1", "pytest:tests")], c)
    own = node("O1", "tests/test_mod.py::test_old_bug")
    assert not check_node(own, c).passed
    (repo / "pkg" / "mod.py").write_text("def f(x=2):\n    return x\n")
    (repo / "tests" / "test_mod.py").write_text(
        "from pkg.mod import f\n\ndef test_ok():\n    assert f(1) == 1\n\n"
        "def test_old_bug():\n    assert f() == 2\n")
    assert check_node(own, c).passed


def test_an_environment_problem_at_the_gate_is_not_the_nodes_failure(repo: Path) -> None:
    (repo / "tests" / "test_docs.py").write_text(
        "def test_render():\n    import docutils_not_installed_xyz\n")
    v = check_node(node("O1", "tests/test_docs.py::test_render", verb="validate"), ctx(repo))
    assert not v.passed
    assert v.inconclusive
    assert "cannot import docutils_not_installed_xyz; pass --python" \
        in v.inconclusive
    # a module of the repo itself that is missing is the node's business
    (repo / "tests" / "test_new.py").write_text("def test_new():\n    import pkg.newmod\n")
    v = check_node(node("O1", "tests/test_new.py::test_new", verb="validate"), ctx(repo))
    assert not v.passed
    assert v.inconclusive is None


def test_a_missing_plugin_option_is_an_environment_problem(repo: Path) -> None:
    (repo / "pytest.ini").write_text("[pytest]\naddopts = --cov=pkg\n")
    c = ctx(repo)
    base, problem = take_baseline([node("O1", "tests/test_mod.py::test_ok")], c)
    assert problem is not None
    assert "unrecognized arguments: --cov=pkg" in problem


# ---------------------------------------------------------------------------------------------
# red-green


def test_red_then_green(repo: Path) -> None:
    define = node("O1", "tests/test_mod.py::test_new", target="tests/test_mod.py::test_new")
    c = ctx(repo)
    c.baseline, _ = take_baseline([define], c)
    assert plan_check(define, c).mode == "red"
    v = check_node(define, c)  # not written yet
    assert not v.passed
    assert "is not collected" in v.output_tail
    src = (repo / "tests" / "test_mod.py").read_text()
    (repo / "tests" / "test_mod.py").write_text(src + "\nimport not_a_module_of_anyone_xyz\n")
    v = check_node(define, c)  # a collection error proves nothing (and it is the env here)
    assert not v.passed
    (repo / "tests" / "test_mod.py").write_text(src + "\ndef test_new():\n    x = (\n")
    v = check_node(define, c)  # a syntax error is no red
    assert not v.passed
    assert v.inconclusive is None
    (repo / "tests" / "test_mod.py").write_text(src + "\ndef test_new():\n    assert f(5) == 5\n")
    v = check_node(define, c)  # TypeError in the body: the change is not there yet -> red
    assert v.passed
    assert v.red
    assert "red as it should be" in v.output_tail
    (repo / "tests" / "test_mod.py").write_text(src + "\ndef test_new():\n    assert f() == 1\n")
    v = check_node(define, c)  # passes before the change: pins nothing
    assert not v.passed
    assert "passes before the change" in v.output_tail
    c.landed = True
    assert check_node(define, c).passed  # the change landed before the test was written
    # green: the fix, validated by the same test
    c.landed = False
    (repo / "tests" / "test_mod.py").write_text(src + "\ndef test_new():\n    assert f(5) == 5\n")
    fix = node("O2", "tests/test_mod.py::test_new")
    assert plan_check(fix, c).mode == "green"
    assert not check_node(fix, c).passed
    (repo / "pkg" / "mod.py").write_text("def f(x=1):\n    return x\n")
    assert check_node(fix, c).passed


# ---------------------------------------------------------------------------------------------
# no false done, the build check


def test_an_import_validated_modify_runs_the_tests_that_reach_its_target(repo: Path) -> None:
    c = ctx(repo, exercised={"pkg.mod.f": ["tests/test_mod.py::test_ok"]})
    n = node("O1", "import:pkg.mod")
    assert plan_check(n, c).tests == ("tests/test_mod.py::test_ok",)
    assert check_node(n, c).passed
    (repo / "pkg" / "mod.py").write_text("def f():\n    return 0\n")
    v = check_node(n, c)
    assert not v.passed
    assert v.tests == ["tests/test_mod.py::test_ok"]
    # a validate node keeps its import check alone
    assert check_node(node("O2", "import:pkg.mod", verb="validate"), c).passed


def test_the_build_check_compiles_only_the_changed_files(repo: Path) -> None:
    (repo / "pkg" / "old_py2.py").write_text("print 'never compiled by python 3'\n")
    assert not check_node(node("O1", "compile"), ctx(repo)).passed  # no git: every file
    assert check_node(node("O1", "compile"), ctx(repo, changed_py=["pkg/mod.py"])).passed
    (repo / "pkg" / "mod.py").write_text("def f(:\n")
    v = check_node(node("O1", "compile"), ctx(repo, changed_py=["pkg/mod.py"]))
    assert not v.passed
    assert "pkg/mod.py:1: SyntaxError" in v.output_tail


def test_the_build_check_in_process_says_what_the_repos_interpreter_says(repo: Path,
                                                                          tmp_path: Path) -> None:
    from plan07.gate.runner import compile_files, same_binary

    wrapper = tmp_path / "bin" / "python"  # the same Python behind another path: a process
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    other = Interpreter(str(wrapper), "--python")
    assert same_binary(OWN)
    assert not same_binary(other)
    (repo / "pkg" / "bad.py").write_text("def f(:\n")
    (repo / "pkg" / "nul.py").write_bytes(b"x = 1\0\n")
    (repo / "pkg" / "deep.py").write_text("x = " + "(" * 300 + ")" * 300 + "\n")
    files = ["pkg/mod.py", "pkg/bad.py", "pkg/nul.py", "pkg/gone.py", "pkg/deep.py"]
    env = dict(os.environ)
    here = compile_files(OWN, repo, files, timeout=60, env=env)
    there = compile_files(other, repo, files, timeout=60, env=env)
    assert here == there
    assert not here[0]
    assert "pkg/bad.py:1: SyntaxError" in here[1]
    assert "pkg/nul.py:" in here[1]
    assert compile_files(OWN, repo, ["pkg/mod.py"], timeout=60, env=env) == \
        compile_files(other, repo, ["pkg/mod.py"], timeout=60, env=env) == (True, "")


def test_baseline_json_round_trip() -> None:
    b = Baseline(1, {"a.py::t": "failed", "a.py::u": "passed"}, ("a.py",))
    assert Baseline.from_json(json.loads(json.dumps(b.to_json()))) == b
    assert b.passed("a.py::u")
    assert not b.passed("a.py::t")
    assert b.passed("a.py")
    assert not b.passed("b.py")


def test_a_src_layout_package_the_environment_lacks_is_an_environment_problem(
        tmp_path: Path) -> None:
    repo = tmp_path / "r"
    (repo / "src" / "srcpkg").mkdir(parents=True)
    (repo / "src" / "srcpkg" / "__init__.py").write_text("X = 1\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_x.py").write_text("import srcpkg\n\n\ndef test_x():\n"
                                              "    assert srcpkg.X == 1\n")
    v = check_node(node("O1", "tests/test_x.py::test_x", verb="validate"), ctx(repo))
    assert v.inconclusive is not None
    assert "cannot import srcpkg; pass --python" in v.inconclusive


# --- run_argv: the output pipe, read without waking at every write --------------------------


def _py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_run_argv_keeps_all_output_small_writes_big_writes_and_stderr(tmp_path: Path) -> None:
    from plan07.gate.runner import run_argv

    code = ("import sys\n"
            "for i in range(3000):\n"
            "    sys.stdout.write('.'); sys.stdout.flush()\n"
            "sys.stdout.write('x' * 3_000_000); sys.stdout.flush()\n"
            "sys.stderr.write('ERR'); sys.exit(3)\n")
    rc, out = run_argv(_py(code), tmp_path, 60, dict(os.environ))
    assert rc == 3
    assert out == "." * 3000 + "x" * 3_000_000 + "ERR"


def test_run_argv_ends_what_the_check_left_writing_to_the_output(tmp_path: Path) -> None:
    # docs/safety.md "A check ends with its processes": a child still writing to the output
    # when the check's process exits is ended with it (not waited for), its own session too
    from plan07.gate.runner import run_argv

    late = "import time; time.sleep(3); print('late', flush=True)"
    code = (f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', {late!r}])\n"
            f"subprocess.Popen([sys.executable, '-c', {late!r}], start_new_session=True)\n"
            "print('early', flush=True)\n")
    rc, out = run_argv(_py(code), tmp_path, 60, dict(os.environ))
    assert (rc, out.split()) == (0, ["early"])


def test_run_argv_timeout_keeps_what_was_written(tmp_path: Path) -> None:
    from plan07.gate.runner import run_argv

    code = "import time\nprint('started', flush=True)\ntime.sleep(60)\n"
    rc, out = run_argv(_py(code), tmp_path, 1.5, dict(os.environ))
    assert rc is None
    assert out.startswith("started\n")
    assert out.endswith("check timed out after 1.5s")
