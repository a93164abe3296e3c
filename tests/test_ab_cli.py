"""`plan07 ab`: a small seeded run end to end (the CI-sized A/B), determinism, and bad input
refused with one line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plan07.ab.faults import FaultConfig
from plan07.ab.generator import generate_tasks
from plan07.ab.runner import Config, run_ab
from plan07.cli import main

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")


def test_small_ab_run_writes_report_results_and_chart(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ab"
    rc = main(["ab", "--tasks", "2", "--size", "3", "--toy-size", "--runs", "1", "--seed", "1",
               "--workers",
               "1", "--engine", "clingo", "--out", str(out), "--json"])
    assert rc == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["aggregate"]) == {"monolithic", "static", "plan07"}
    res = json.loads((out / "results.json").read_text())
    assert len(res["rows"]) == 6
    assert {c["clause"] for c in res["decision"]["clauses"]} >= {"resolve >= current"}
    report = (out / "report.md").read_text()
    assert "## Decision (§7.4)" in report
    assert (out / "retry_consistency.png").read_bytes()[:4] == b"\x89PNG"


def test_same_seed_same_numbers() -> None:
    tasks = generate_tasks(5, 1, size=5)
    cfg = Config(tasks=1, runs=2, seed=5, workers=1, strategies=("monolithic", "static"),
                 faults=FaultConfig(p_first=0.5, p_again=0.0))
    a, b = run_ab(tasks, cfg), run_ab(tasks, cfg)
    assert a["rows"] == b["rows"]
    assert a["aggregate"] == b["aggregate"]
    assert any(r["retry_tokens"] for r in a["rows"])  # faults did fire


@pytest.mark.parametrize(("args", "needle"), [
    (["--tasks", "-1"], "--tasks must be >= 0"),
    (["--runs", "0"], "--runs must be >= 1"),
    (["--executor", "gpt4"], "unknown executor"),
    (["--price", "cheap"], "--price"),
    (["--size", "31"], "--size must be in 3..30"),
    (["--p-fault", "2"], "--p-fault"),
    (["--engine", "souffle"], "unknown engine"),
    (["--tasks", "0"], "no tasks"),
])
def test_bad_input_is_one_line_exit_2_nothing_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str) -> None:
    out = tmp_path / "ab"
    assert main(["ab", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ")
    assert needle in err
    assert len(err.splitlines()) == 1
    assert not out.exists()
