"""No false "done" (README "No false done"): a modify node's check exercises its target, a check
that passed at CP0 proves nothing, the plan ends with a regression run against CP0 (a failing test
the CP0 run never ran is judged on the CP0 content), a check past its time is not judged.

The repository is the issue's shape: the tests reach `Calc.add` only through a fixture returning
`functools.partial(Calc)`, so recon links no test to it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from plan07 import Planner
from plan07.gate.scope import sized_timeout
from plan07.model import GateInfo

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")

REQUEST = """`Calc.add` should accept floats

## Acceptance criteria

- `Calc.add` returns a float when given floats
- existing tests keep passing
"""

FILES = {
    "pkg/__init__.py": "from pkg.calc import Calc\n",
    "pkg/calc.py": "class Calc:\n    def add(self, a, b):\n        return a + b\n",
    "pkg/report.py": "from pkg.calc import Calc\n\n\ndef total(xs):\n"
                     "    out = 0\n    for x in xs:\n        out = Calc().add(out, x)\n"
                     "    return out\n",
    "tests/test_calc.py": "import functools\n\nimport pytest\n\nfrom pkg import Calc\n\n\n"
                          "@pytest.fixture\ndef make():\n    return functools.partial(Calc)\n\n\n"
                          "def test_add(make):\n    assert make().add(1, 2) == 3\n\n\n"
                          "def test_add_negative(make):\n    assert make().add(-1, -2) == -3\n",
    "tests/test_report.py": "from pkg.report import total\n\n\ndef test_total():\n"
                            "    assert total([1, 2, 3]) == 6\n\n\n"
                            "def test_known_bug():\n    assert total([]) == 'empty'\n",
}
ADD = "pkg.calc.Calc.add"


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                       check=True, capture_output=True)
    return repo


def ob(i: str, target: str, verb: str, deps: list[str], validation: str) -> dict[str, object]:
    return {"id": i, "target_entity": target, "obligation": verb, "caused_by": "requirement",
            "dependencies": deps, "evidence": "03 recon", "status": "ready",
            "validation": validation}


def plan(tmp_path: Path, repo: Path, obligations: list[dict[str, object]]) -> Planner:
    replay = tmp_path / "reply.json"
    replay.write_text(json.dumps({"obligations": obligations}))
    return Planner.create(REQUEST, repo=repo, llm=f"replay:{replay}", python=sys.executable,
                          state_dir=tmp_path / "state", lint=False)


def test_a_bug_planted_in_the_target_fails_its_check_though_recon_links_no_test(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    p = plan(tmp_path, repo, [ob("O1", ADD, "modify", [], "import:pkg.calc"),
                              ob("O2", "pkg", "validate", ["O1"], "regression")])
    view = p.next()
    assert view is not None
    assert view.check_note is not None  # its check passed on the untouched tree
    (repo / "pkg" / "calc.py").write_text(
        "class Calc:\n    def add(self, a, b):\n        return a - b\n")
    v = p.complete("O1")
    assert not v.passed  # the importing test module ran: import:pkg.calc alone never does
    assert v.tests == ["tests/test_calc.py"]
    assert "tests/test_calc.py::test_add" in v.output_tail


def test_nothing_changed_never_ends_done(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    p = plan(tmp_path, repo, [ob("O1", ADD, "modify", [], "import:pkg.calc"),
                              ob("O2", "pkg", "validate", ["O1"], "regression")])
    assert p.next() is not None
    assert p.complete("O1").passed  # it broke nothing ...
    assert p.next() is not None
    v = p.complete("O2")
    assert not v.passed  # ... and changed nothing: the regression run refuses to end the plan
    assert "changed no file since CP0" in v.output_tail
    p.confirm("all")
    assert p.termination_blockers()


def test_the_regression_run_catches_what_no_node_checked_and_settles_its_criterion(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    new = "tests/test_calc.py::test_add_floats"
    p = plan(tmp_path, repo, [
        ob("O1", new, "modify", [], new),
        ob("O2", ADD, "modify", ["O1"], new),
        ob("O3", "pkg", "validate", ["O2"], "regression")])
    test = repo / "tests" / "test_calc.py"
    test.write_text(test.read_text() + "\n\ndef test_add_floats(make):\n"
                    "    assert make().add(0.5, 0.25) == 0.75 and 1 / 0\n")
    assert p.next() is not None
    assert p.complete("O1").passed  # red
    test.write_text(test.read_text().replace(" and 1 / 0", ""))
    # the change: floats added, and total() of an empty list broken on the way
    (repo / "pkg" / "calc.py").write_text(
        "class Calc:\n    def add(self, a, b):\n        return float(a + b)\n")
    report = repo / "pkg" / "report.py"
    report.write_text(report.read_text().replace("out = 0\n", "out = None\n"))
    assert p.next() is not None
    v = p.complete("O2")
    assert v.passed  # its own test passes: green
    assert v.fixed == [new]
    assert p.next() is not None
    v = p.complete("O3")
    assert not v.passed  # tests/test_report.py: never in O2's check, nor in the CP0 run
    assert "tests/test_report.py::test_total" in v.output_tail
    assert "test_known_bug" not in v.output_tail.split("failed:")[-1].split(";")[0]
    report.write_text(report.read_text().replace("out = None\n", "out = 0\n"))
    assert p.next() is not None
    v = p.complete("O3")
    assert v.passed, v.output_tail
    # test_known_bug failed on the CP0 content too: not blamed
    assert "tests/test_report.py::test_known_bug" in v.preexisting
    status = {c.criterion: c for c in p.status().criteria}
    assert status["existing tests keep passing"].settled  # by the regression run alone
    assert status["`Calc.add` returns a float when given floats"].settled  # red, then green
    assert p.next() is None
    assert p.termination_blockers() == []


def test_a_check_past_its_time_is_not_judged(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    slow = "tests/test_calc.py::test_slow"
    test = repo / "tests" / "test_calc.py"
    test.write_text(test.read_text() + "\n\ndef test_slow():\n    import time\n"
                    "    time.sleep(30)\n")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "s"],
                   cwd=repo, check=True, capture_output=True)
    p = plan(tmp_path, repo, [ob("O1", ADD, "modify", [], slow),
                              ob("O2", "pkg", "validate", ["O1"], "regression")])
    assert p.next() is not None
    v = p.complete("O1", timeout=2)
    assert not v.passed
    assert v.inconclusive is not None
    assert "timed out" in v.inconclusive
    assert next(n for n in p.artifact.nodes if n.id == "O1").state == "pending"  # not failed


def test_a_timeout_is_sized_from_the_cp0_run() -> None:
    gate = GateInfo(python="p", python_source="plan07", baseline_seconds=100.0)
    assert sized_timeout(gate) == 420.0  # 3 x 100 + 120
    assert sized_timeout(gate, scope=20, covered=5) == 1320.0  # four times the tests
    assert sized_timeout(None) == 120.0


def test_a_build_check_past_its_time_is_not_judged(tmp_path: Path) -> None:
    """The compile step before every check runs with the check's timeout: run out, it is the
    environment's time, not the node's failure (nothing recorded, the node still pending)."""
    repo = make_repo(tmp_path)
    marker = tmp_path / "slow"
    python = tmp_path / "python"  # the repo's interpreter, slow once the marker exists
    python.write_text(f"#!/bin/sh\n[ -f {marker} ] && sleep 20\nexec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    replay = tmp_path / "reply.json"
    replay.write_text(json.dumps({"obligations": [
        ob("O1", ADD, "modify", [], "compile"),
        ob("O2", "pkg", "validate", ["O1"], "regression")]}))
    p = Planner.create(REQUEST, repo=repo, llm=f"replay:{replay}", python=str(python),
                       state_dir=tmp_path / "state", lint=False)
    assert p.next() is not None
    (repo / "pkg" / "calc.py").write_text(
        "class Calc:\n    def add(self, a, b):\n        return float(a + b)\n")
    marker.touch()
    v = p.complete("O1", timeout=2)
    assert not v.passed
    assert v.inconclusive is not None
    assert "timed out" in v.inconclusive
    assert next(n for n in p.artifact.nodes if n.id == "O1").state == "pending"  # not failed
