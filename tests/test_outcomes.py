"""The default pytest command's per-test outcomes (plan07.gate.outcomes): the standalone plugin
gives the ids, statuses and messages the JUnit report gave (`parse_junit`), on every kind of
outcome, so a CP0 baseline recorded either way judges a check the same (PASS_TO_PASS). Real pytest
runs on a small repo built here."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from plan07.gate import bytecode, outcomes
from plan07.gate.baseline import Baseline, judge
from plan07.gate.interpreter import Interpreter, run_env
from plan07.gate.runner import TestRun, parse_junit, run_argv, run_tests
from plan07.gate.testcommand import PYTEST_COMMAND, TestCommand

OWN = Interpreter(sys.executable, "plan07")
USER_PATH = "/nonexistent-plan07-user-path"

KINDS = f'''\
import os
import sys

import pytest


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup broke")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown broke")


def test_pass():
    print("some output")
    assert os.environ.get("PYTHONPATH") == "{USER_PATH}"


def test_fail():
    sys.stderr.write("err output\\r\\nline\\n")
    assert 1 == 2, "one is not two"


def test_setup_error(broken_setup):
    pass


def test_teardown_error_after_pass(broken_teardown):
    pass


def test_fail_then_teardown_error(broken_teardown):
    assert False


def test_skip_in_body():
    pytest.skip("not here")


@pytest.mark.skip(reason="marked off")
def test_skip_marker():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="fixed already")
def test_xpass():
    pass


@pytest.mark.xfail(reason="strict", strict=True)
def test_xpass_strict():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail_then_teardown_error(broken_teardown):
    assert False


def test_raises():
    raise ValueError("bad value \\x1b[31m red")


@pytest.mark.parametrize("x", ["a.b", "c::d", "e[f]", "\\u00e9", "\\x1b"])
def test_ids(x):
    assert x != "c::d"


class TestOuter:
    def test_m(self):
        pass

    class TestInner:
        def test_n(self):
            assert 0
'''

MIXIN = "class Mixin:\n    def test_inherited(self):\n        assert self.value == 1\n"
INHERIT = ("from base_mixin import Mixin\n\n\nclass TestChild(Mixin):\n    value = 2\n\n\n"
           "class TestOther(Mixin):\n    value = 1\n")


@pytest.fixture(scope="module")
def kinds_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("kinds")
    (r / "tests" / "sub").mkdir(parents=True)
    # the repo's own --junitxml: written by neither run into the repo
    (r / "pytest.ini").write_text("[pytest]\naddopts = --junitxml=repo-report.xml\n")
    (r / "tests" / "test_kinds.py").write_text(KINDS)
    (r / "tests" / "base_mixin.py").write_text(MIXIN)
    (r / "tests" / "test_inherit.py").write_text(INHERIT)
    (r / "tests" / "test_broken.py").write_text("import nope_not_a_module_xyz\n")
    (r / "tests" / "sub" / "test_modskip.py").write_text(
        "import pytest\n\npytest.skip('whole module', allow_module_level=True)\n")
    return r


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = USER_PATH
    return env


def _same_run(message: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0x?", message)


def junit_run(repo: Path, tests: list[str], tmp: Path) -> TestRun:
    """The default command as it ran before plan07.gate.outcomes: with its JUnit report."""
    junit = tmp / "junit.xml"
    argv = TestCommand().argv_for(OWN.path, tests, str(junit))
    rc, out = run_argv(argv, repo, 120, run_env(OWN, _env()))
    return TestRun(rc, out, parse_junit(junit), argv)


def test_the_plugin_gives_what_the_junit_report_gave(kinds_repo: Path, tmp_path: Path) -> None:
    old = junit_run(kinds_repo, ["tests"], tmp_path)
    new = run_tests(TestCommand(), OWN, kinds_repo, ["tests"], timeout=120, env=_env())
    assert old.outcomes is not None
    assert new.outcomes is not None
    assert "--junitxml" not in " ".join(new.argv)
    assert f"-p {outcomes.MODULE}" in " ".join(new.argv)
    assert new.rc == old.rc == 1
    got = {k: o.status for k, o in new.outcomes.items()}
    assert got == {k: o.status for k, o in old.outcomes.items()}
    # the messages too, byte for byte but for object addresses (two runs)
    assert {k: _same_run(o.message) for k, o in new.outcomes.items()} == \
        {k: _same_run(o.message) for k, o in old.outcomes.items()}
    k = "tests/test_kinds.py::"
    assert {key: got[key] for key in got if key.startswith(k)} == {
        k + "test_pass": "passed",  # the tests see the user's PYTHONPATH
        k + "test_fail": "failed",
        k + "test_setup_error": "error",
        k + "test_teardown_error_after_pass": "error",
        k + "test_fail_then_teardown_error": "error",
        k + "test_skip_in_body": "skipped",
        k + "test_skip_marker": "skipped",
        k + "test_xfail": "xfailed",
        k + "test_xpass": "passed",
        k + "test_xpass_strict": "failed",  # [XPASS(strict)]
        k + "test_xfail_then_teardown_error": "xfailed",
        k + "test_raises": "failed",
        k + "test_ids[a.b]": "passed",
        k + "test_ids[c::d]": "failed",
        k + "test_ids[e[f]]": "passed",
        k + "test_ids[\\xe9]": "passed",
        k + "test_ids[\\x1b]": "passed",
        k + "TestOuter::test_m": "passed",
        k + "TestOuter::TestInner::test_n": "failed",
    }
    assert got["tests/test_broken.py"] == "error"
    assert got["tests/sub/test_modskip.py"] == "skipped"
    assert got["tests/base_mixin.py::test_inherited"] == "failed"  # JUnit's id, kept
    assert "No module named 'nope_not_a_module_xyz'" in new.outcomes["tests/test_broken.py"].message
    assert new.outcomes[k + "test_fail"].message.startswith("AssertionError: one is not two")
    assert not (kinds_repo / "repo-report.xml").exists()


def test_a_baseline_either_way_judges_the_same(kinds_repo: Path, tmp_path: Path) -> None:
    """An old plan's CP0 baseline (from JUnit) and a new one's (from the plugin) give the same
    verdicts on the same runs (PASS_TO_PASS: pre-existing failures reported, never blamed)."""
    old = junit_run(kinds_repo, ["tests"], tmp_path)
    new = run_tests(TestCommand(), OWN, kinds_repo, ["tests"], timeout=120, env=_env())
    assert old.outcomes is not None
    assert new.outcomes is not None
    bases = [Baseline(r.rc, {k: o.status for k, o in r.outcomes.items()}, ("tests",))
             for r in (old, new)]
    assert bases[0] == bases[1]
    for run in (old, new):
        verdicts = {(j.passed, j.summary, tuple(j.preexisting)) for j in
                    (judge(run, mode="suite", own=(), baseline=b, repo=kinds_repo, interp=OWN)
                     for b in bases)}
        assert len(verdicts) == 1
        (passed, summary, pre), = verdicts
        assert passed
        assert "pre-existing failures, not blamed" in summary
    green = {judge(r, mode="green", own=("tests/test_kinds.py::test_pass",), baseline=bases[0],
                   repo=kinds_repo, interp=OWN).summary for r in (old, new)}
    assert len(green) == 1


def test_a_run_that_stops_early_reports_no_outcomes(tmp_path: Path) -> None:
    """No record (the run ended before the session finished): outcomes None, as with no
    JUnit file; a user-configured command keeps its JUnit report."""
    r = tmp_path / "r"
    (r / "tests").mkdir(parents=True)
    (r / "conftest.py").write_text("import os\n\ndef pytest_sessionstart():\n    os._exit(3)\n")
    (r / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    run = run_tests(TestCommand(), OWN, r, ["tests"], timeout=60, env=_env())
    assert (run.rc, run.outcomes) == (3, None)
    (r / "conftest.py").unlink()
    user = TestCommand(PYTEST_COMMAND[:-1] + ("{tests}", "-q"), source="--test-command")
    assert not user.is_pytest
    run = run_tests(user, OWN, r, ["tests"], timeout=60, env=_env())
    assert "--junitxml" in " ".join(run.argv)
    assert run.outcomes is not None
    assert run.outcomes["tests/test_x.py::test_x"].status == "passed"


def test_the_plugin_leaves_no_bytecode_in_plan07s_cache(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAN07_CACHE_DIR", str(tmp_path / "cache"))
    cache = bytecode.cache_dir()
    assert cache is not None
    r = tmp_path / "r"
    (r / "tests").mkdir(parents=True)
    (r / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    env = bytecode.check_env(_env(), cache)
    run = run_tests(TestCommand(), OWN, r, ["tests"], timeout=60, env=env)
    assert run.outcomes == {"tests/test_x.py::test_x": run.outcomes["tests/test_x.py::test_x"]}
    left = [p for p in cache.rglob("*.pyc") if outcomes.MODULE in p.name]
    assert left == []
    assert any(cache.rglob("test_x*.pyc"))  # the repo's own test module is cached as before
