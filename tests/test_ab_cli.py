"""`plan07 ab`: a small seeded run end to end (the CI-sized A/B), determinism, and bad input
refused with one line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plan07.ab.faults import FaultConfig
from plan07.ab.generator import generate_tasks
from plan07.ab.runner import Config, run_ab
from plan07.cli import main
from plan07.cli.ab import _command

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


class _Captured(Exception):
    pass


def test_ablation_tasks_above_tasks_run_the_ablation_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--ablation-tasks 3 with --tasks 1: three tasks generated, the main A/B on task 0 only,
    the ablation on tasks 0-2 (the first task is the same task either way)."""
    from plan07.ab import runner

    seen = {}

    def capture(tasks: list[Any], cfg: Config, progress: Any = None) -> None:
        seen.update(tasks=tasks, cfg=cfg)
        raise _Captured

    monkeypatch.setattr(runner, "run_ab", capture)
    with pytest.raises(_Captured):
        main(["ab", "--tasks", "1", "--ablation-tasks", "3", "--size", "3", "--toy-size",
              "--seed", "1", "--out", str(tmp_path / "ab")])
    cfg = seen["cfg"]
    assert (cfg.tasks, cfg.main_tasks, cfg.ablation_tasks) == (3, 1, 3)
    assert [t.id for t in seen["tasks"]] == [t.id for t in generate_tasks(1, 3, size=3,
                                                                           real_size=False)]
    todo = runner.units(cfg, 3)
    assert {i for _, i, s in todo if not s.startswith(runner.ABL)} == {0}
    assert {i for _, i, s in todo if s.startswith(runner.ABL)} == {0, 1, 2}
    assert "--tasks 1 " in _command(cfg, 3, None, None)
    assert "--ablation-mechanisms" not in _command(cfg, 3, None, None)


def test_ablation_mechanisms_runs_those_variants_beside_the_full_plan07(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from plan07.ab import runner

    seen = {}

    def capture(tasks: list[Any], cfg: Config, progress: Any = None) -> None:
        seen.update(cfg=cfg)
        raise _Captured

    monkeypatch.setattr(runner, "run_ab", capture)
    with pytest.raises(_Captured):
        main(["ab", "--tasks", "1", "--ablation-tasks", "2", "--size", "3", "--toy-size",
              "--ablation-mechanisms", "gate, typed_artifacts", "--out", str(tmp_path / "ab")])
    cfg = seen["cfg"]
    assert cfg.ablation_mechanisms == ("typed_artifacts", "gate")  # the ablation's own order
    abl = {s for _, _, s in runner.units(cfg, 2) if s.startswith(runner.ABL)}
    assert abl == {"ablation/plan07", "ablation/plan07-no_typed_artifacts",
                   "ablation/plan07-no_gate"}
    assert "--ablation-mechanisms typed_artifacts,gate" in _command(cfg, 3, None, None)


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
    (["--ablation-mechanisms", "gate,planning"], "--ablation-mechanisms: unknown planning"),
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
