"""The plan CLI (plan, next, status, show, audit, complete) as a harness or a person uses it, and
the golden plan.json of the bundled example."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from test_api import OBLIGATIONS, REQUEST, make_repo

from plan07.cli import main

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")

GOLDEN = Path(__file__).parent / "golden" / "plan" / "session_timeout.plan.json"
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "session_timeout"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def _planned_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("planned")
    work = root / "work"
    work.mkdir()
    replay = work / "completion.json"
    replay.write_text(json.dumps({"obligations": OBLIGATIONS}))
    (work / "request.md").write_text(REQUEST)
    evidence = work / "evidence.json"
    evidence.write_text("{}")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["plan", str(work / "request.md"), "--repo", str(make_repo(work)),
                   "--evidence", str(evidence), "--llm", f"replay:{replay}", "--state",
                   str(work / "state"), "--json", "--python", sys.executable])
    assert (rc, err.getvalue()) == (0, "")  # --python: no warning
    assert json.loads(out.getvalue())["plan_id"].startswith("plan-")
    shutil.copytree(work, root / "template", symlinks=True)
    return root


@pytest.fixture
def planned(_planned_once: Path) -> Path:
    """The state dir of `plan07 plan` of OBLIGATIONS: planned once per module (the CP0 baseline
    run and all), restored whole (repo, git refs, state) before each test that takes it, at the
    path it was planned at (plan.json names the repo by its absolute path)."""
    work = _planned_once / "work"
    shutil.rmtree(work)
    shutil.copytree(_planned_once / "template", work, symlinks=True)
    return work / "state"


def test_plan_then_next_in_a_loop_yields_the_ladder_order(
    planned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    order = json.loads((planned / "plan.json").read_text())["schedule"]["order"]
    seen = []
    while True:
        rc, out, _ = run(capsys, "next", "--state", str(planned), "--json")
        assert rc == 0
        view = json.loads(out)
        if view["node_id"] is None:
            assert view == {"node_id": None, "can_terminate": True, "termination_blockers": []}
            break
        assert set(view) - {"check_note"} == {
            "node_id", "obligation", "target_entity", "preconditions", "permitted_actions",
            "required_validation",  # §3.4
            "goal", "caused_by", "evidence", "criteria", "check"}
        seen.append(view["node_id"])
        if view["obligation"] == "modify":  # the agent's edit (a plan of no edits never ends)
            core = planned.parent / "repo" / "pkg" / "core.py"
            core.write_text(core.read_text() + f"# {view['node_id']}\n")
        rc, out, _ = run(capsys, "complete", view["node_id"], "--state", str(planned), "--json")
        assert (rc, json.loads(out)["passed"]) == (0, True)
    assert seen == order == ["O1", "O2", "O3", "O4", "O6"]  # O6: the regression run
    rc, out, _ = run(capsys, "next", "--state", str(planned))
    assert (rc, out.strip()) == (0, "done: every scheduled obligation is validated and every "
                                    "acceptance criterion is settled")


def test_status_show_and_audit(planned: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "next", "--state", str(planned))
    rc, out, _ = run(capsys, "status", "--state", str(planned), "--json")
    rows = json.loads(out)["nodes"]
    assert [(r["id"], r["status"], r["deps"]) for r in rows][:2] == [
        ("O1", "ready", []), ("O2", "blocked", ["O1"])]
    assert json.loads(out)["active"] == "O1"
    rc, out, _ = run(capsys, "status", "--state", str(planned))
    assert rc == 0
    assert all(len(line) <= 80 for line in out.splitlines())
    assert re.search(r"\*O1\s+.*modify\s+.*pkg\.core\.f\s+.*ready", out)
    rc, out, _ = run(capsys, "show", "--format", "mermaid", "--state", str(planned))
    assert out.startswith("flowchart TD\n")
    assert "  O1 --> O2" in out
    assert "CP1{{CP1}}" in out
    rc, out, _ = run(capsys, "show", "--format", "dot", "--state", str(planned))
    assert out.startswith("digraph plan {")
    assert '"O1" -> "O2";' in out
    rc, out, _ = run(capsys, "show", "--state", str(planned), "--json")
    dag = json.loads(out)
    assert dag["ready"] == ["O1", "O3"]
    assert dag["alternative"] == ["O5"]
    rc, out, _ = run(capsys, "audit", "--state", str(planned), "--json")
    assert [r["event"] for r in json.loads(out)["audit"]] == ["planned", "checkpoint",
                                                              "handed_out"]
    rc, out, _ = run(capsys, "audit", "--state", str(planned))
    assert rc == 0
    assert "handed_out" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["next"], "no plan here; run `plan07 plan"),
        (["show", "--format", "svg"], "unknown format 'svg'"),
        (["complete", "O2"], "'O2' is blocked"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    planned: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    state = str(planned if argv[0] != "next" else planned.parent / "nowhere")
    rc, out, err = run(capsys, *argv, "--state", state)
    assert rc == 2
    assert err.startswith("error: ")
    assert message in err
    assert err.count("\n") == 1


def test_a_failed_check_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    obs = [{**OBLIGATIONS[3], "dependencies": []}]
    replay = tmp_path / "c.json"
    replay.write_text(json.dumps({"obligations": obs}))
    (tmp_path / "r.md").write_text(REQUEST)
    repo = make_repo(tmp_path, broken_test=True)
    st = str(tmp_path / "st")
    assert run(capsys, "plan", str(tmp_path / "r.md"), "--repo", str(repo), "--llm",
               f"replay:{replay}", "--state", st)[0] == 0
    assert run(capsys, "next", "--state", st)[0] == 0
    rc, out, _ = run(capsys, "complete", "O4", "--state", st)
    assert rc == 1
    assert "O4 FAILED" in out


def normalized(plan: dict[str, object], repo: Path) -> dict[str, object]:
    text = json.dumps(plan, indent=1, sort_keys=True, ensure_ascii=False)
    text = re.sub(r'"time": "[^"]*"', '"time": "T"', text)
    text = re.sub(r'"plan-\d{8}-\d{6}-[0-9a-f]{8}"', '"PLAN_ID"', text)
    text = text.replace(str(repo.resolve()), "REPO")
    text = re.sub(r'"python": "[^"]*"', '"python": "PYTHON"', text)
    text = re.sub(r'"stat:[0-9a-f]{64}"', '"TREE"', text)
    text = re.sub(r'"baseline_seconds": [\d.]+', '"baseline_seconds": 0', text)  # measured
    out: dict[str, object] = json.loads(text)
    return out


def test_golden_plan_of_the_bundled_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], update_goldens: bool
) -> None:
    """The builtin pipeline on examples/session_timeout. Rewrite deliberately with
    `pytest --update-goldens` after a change to the decomposer, the rules or the scheduler."""
    repo = tmp_path / "session_timeout"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", "edits.json"))
    rc, _, err = run(capsys, "plan", str(repo / "request.md"), "--repo", str(repo),
                     "--state", str(tmp_path / "st"))
    assert rc == 0
    assert err.startswith("warning: no environment of the repository found")
    assert err.count("\n") == 1
    got = normalized(json.loads((tmp_path / "st" / "plan.json").read_text()), repo)
    if update_goldens:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    assert got == json.loads(GOLDEN.read_text()), "plan drifted; pytest --update-goldens rewrites"
    assert len((tmp_path / "st" / "plan.json").read_bytes()) <= 32 * 1024


CLI = "import sys; from plan07.cli import main; raise SystemExit(main(sys.argv[1:]))"


def test_the_plan_is_the_same_bytes_under_any_hash_seed(tmp_path: Path) -> None:
    import subprocess
    import sys

    repo = tmp_path / "session_timeout"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", "edits.json"))
    texts = set()
    for seed in ("0", "4242"):
        st = tmp_path / f"st{seed}"
        subprocess.run([sys.executable, "-c", CLI, "plan", str(repo / "request.md"),
                        "--repo", str(repo), "--state", str(st), "--json"], check=True,
                       stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONHASHSEED": seed})
        text = (st / "plan.json").read_text()
        text = re.sub(r'"time":"[^"]*"', '"time":"T"', text)
        text = re.sub(r'"baseline_seconds":[\d.]+', '"baseline_seconds":S', text)  # measured
        texts.add(re.sub(r"plan-\d{8}-\d{6}-[0-9a-f]{8}", "PLAN_ID", text))
    assert len(texts) == 1


@pytest.mark.parametrize("timeout", ["-5", "0"])
def test_complete_with_a_timeout_not_above_zero_is_exit_2_and_writes_nothing(
    planned: Path, capsys: pytest.CaptureFixture[str], timeout: str
) -> None:
    assert run(capsys, "next", "--state", str(planned))[0] == 0
    before = sorted((p.name, p.read_bytes()) for p in planned.rglob("*") if p.is_file())
    rc, out, err = run(capsys, "complete", "O1", "--timeout", timeout, "--state", str(planned))
    assert (rc, out) == (2, "")
    assert err.startswith("error: ")
    assert err.count("\n") == 1
    assert "--timeout" in err
    assert "> 0" in err
    assert sorted((p.name, p.read_bytes()) for p in planned.rglob("*") if p.is_file()) == before


def test_next_and_status_exit_1_until_the_plan_may_terminate_then_confirm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replay = tmp_path / "c.json"
    replay.write_text(json.dumps({"obligations": OBLIGATIONS[:3]}))
    (tmp_path / "r.md").write_text("Make f configurable.\n")  # no criterion named: derived
    st = str(tmp_path / "st")
    assert run(capsys, "plan", str(tmp_path / "r.md"), "--repo", str(make_repo(tmp_path)),
               "--llm", f"replay:{replay}", "--state", st)[0] == 0
    rc, out, _ = run(capsys, "status", "--state", st, "--json")
    assert (rc, json.loads(out)["can_terminate"]) == (0, False)  # in progress: not a "no"
    core = tmp_path / "repo" / "pkg" / "core.py"
    test = tmp_path / "repo" / "tests" / "test_core.py"
    # the plan lint covered the derived criterion with a test (O4 defines it, O5 runs it) and
    # ended the plan with its regression run (O6)
    for nid in ("O1", "O2", "O3", "O4", "O5", "O6"):
        rc, out, _ = run(capsys, "next", "--state", st, "--json")
        assert (rc, json.loads(out)["node_id"]) == (0, nid)
        if nid in ("O1", "O2", "O3"):
            core.write_text(core.read_text() + f"# {nid}\n")  # the modify's edit
        elif nid == "O4":
            test.write_text(test.read_text() + "\n\ndef test_f_configurable():\n    pass\n")
        assert run(capsys, "complete", nid, "--state", st)[0] == 0
    rc, out, _ = run(capsys, "next", "--state", st)
    assert rc == 1
    assert "cannot terminate" in out
    assert "plan07 confirm 1" in out
    rc, out, _ = run(capsys, "next", "--state", st, "--json")
    assert rc == 1
    assert json.loads(out)["termination_blockers"][0].startswith("criterion 1 ")
    rc, out, _ = run(capsys, "status", "--state", st, "--json")
    assert rc == 1
    assert json.loads(out)["criteria"][0]["kind"] == "derived"
    before = (tmp_path / "st" / "plan.json").read_bytes()
    for argv, why in ((["confirm"], "by number, or --all"), (["confirm", "1", "--all"], "not both"),
                      (["confirm", "7"], "no acceptance criterion 7")):
        rc, out, err = run(capsys, *argv, "--state", st)
        assert (rc, out) == (2, "")
        assert why in err
    assert (tmp_path / "st" / "plan.json").read_bytes() == before
    rc, out, _ = run(capsys, "confirm", "--all", "--state", st, "--json")
    assert (rc, json.loads(out)) == (0, {"confirmed": [1], "can_terminate": True})
    assert run(capsys, "next", "--state", st)[0] == 0
    rc, out, _ = run(capsys, "status", "--state", st)
    assert rc == 0
    assert "can terminate" in out
    rc, out, _ = run(capsys, "audit", "--state", st, "--json")
    assert json.loads(out)["audit"][-1]["event"] == "confirmed"
