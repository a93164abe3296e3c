"""Run the A/B: every (run, task, strategy) unit in a fresh copy of the task's repo, in worker
processes (each with its own test worker), then the metrics, decision and ablation. I/O.

Determinism: a unit's result depends only on (seed, run, task, strategy), never on scheduling;
results are sorted before they are aggregated, so the same seed gives the same numbers.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from plan07.ab import metrics
from plan07.ab.faults import FaultConfig
from plan07.ab.run import Ablation
from plan07.ab.tasks import Task, write_repo

VARIANTS: dict[str, Ablation] = {f"plan07-no_{m}": Ablation(**{m: False})
                                 for m in metrics.ABLATION_ORDER}


@dataclass(frozen=True)
class Config:
    tasks: int = 100
    runs: int = 1
    seed: int = 0
    executor: str = "scripted"
    bound: int = 2
    workers: int = 2
    faults: FaultConfig = field(default_factory=FaultConfig)
    strategies: tuple[str, ...] = ("monolithic", "static", "plan07")
    ablation_tasks: int = 0  # the first N tasks also run every ablation variant
    price: tuple[float, float] = metrics.DEFAULT_PRICE
    examples: bool = False  # add the bundled example(s) under examples/ as tasks
    engine: str = "pydatalog"  # the rule engine plan07 orders with (Planner.create(engine=))
    max_size: int | None = None  # cap on generated task sizes (None: 3..30)
    hidden_consumer_rate: float = 0.0  # widenings whose decomposition hides one consumer

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


Unit = tuple[int, int, str]  # (run, task index, strategy or variant)
_TASKS: list[Task] = []
_CONFIG: Config | None = None
_CHECKER: Any = None


def _init(tasks: list[Task], config: Config) -> None:
    global _TASKS, _CONFIG
    _TASKS, _CONFIG = tasks, config
    os.environ.setdefault("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def run_unit(unit: Unit) -> dict[str, Any]:
    """One strategy (or ablation variant) on one task for one seeded run, in a fresh repo."""
    global _CHECKER
    from plan07.ab.checker import Checker
    from plan07.ab.executors import make_executor
    from plan07.ab.strategies import RUNNERS

    assert _CONFIG is not None
    run, ti, name = unit
    task = _TASKS[ti]
    if _CHECKER is None:
        _CHECKER = Checker()
    ex = make_executor(_CONFIG.executor, seed=_CONFIG.seed + run, faults=_CONFIG.faults)
    tmp = Path(tempfile.mkdtemp(prefix="plan07-ab-"))
    try:
        repo = write_repo(task, tmp / "repo")
        if name in RUNNERS and name != "plan07":
            res = RUNNERS[name](task, repo, ex, _CHECKER, _CONFIG.bound)
        else:
            ab = VARIANTS.get(name, Ablation())
            res = RUNNERS["plan07"](task, repo, ex, _CHECKER, _CONFIG.bound,
                                    state_dir=tmp / "state", ablation=ab, engine=_CONFIG.engine)
            res.strategy = name
    except Exception as exc:  # noqa: BLE001 - one broken unit must not lose the whole run
        from plan07.ab.run import RunResult

        res = RunResult(name, task.id, len(task.steps), note=f"error: {type(exc).__name__}: "
                        f"{' '.join(str(exc).split())[:240]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {**res.to_dict(), "run": run, "task_index": ti, "shape": task.shape}


def units(config: Config, n_tasks: int) -> list[Unit]:
    out = [(r, i, s) for r in range(config.runs) for i in range(n_tasks)
           for s in config.strategies]
    k = min(config.ablation_tasks, n_tasks)
    out += [(r, i, v) for r in range(config.runs) for i in range(k) for v in VARIANTS]
    return out


def run_ab(tasks: list[Task], config: Config,
           progress: Callable[[int, int, dict[str, Any]], None] | None = None
           ) -> dict[str, Any]:
    """Run every unit and return results.json's content (rows, aggregates, decision, ablation)."""
    todo = units(config, len(tasks))
    rows: list[dict[str, Any]] = []
    if config.workers <= 1:
        _init(tasks, config)
        it: Any = map(run_unit, todo)
        pool = None
    else:
        pool = mp.get_context("fork").Pool(config.workers, initializer=_init,
                                          initargs=(tasks, config))
        it = pool.imap_unordered(run_unit, todo)
    try:
        for row in it:
            rows.append(row)
            if progress:
                progress(len(rows), len(todo), row)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    rows.sort(key=lambda r: (r["run"], r["task_index"], r["strategy"]))
    return summarize(tasks, config, rows)


def summarize(tasks: list[Task], config: Config, rows: list[dict[str, Any]]) -> dict[str, Any]:
    main = [r for r in rows if r["strategy"] in config.strategies]
    agg = metrics.aggregate(main, config.price)
    out: dict[str, Any] = {
        "config": config.to_dict(), "tokenizer": _tokenizer(config),
        "tasks": [t.summary() for t in tasks],
        "aggregate": {s: {m: v.to_dict() for m, v in ms.items()} for s, ms in agg.items()},
        "rows": rows,
    }
    if {"plan07", "monolithic", "static"} <= set(agg):
        out["decision"] = metrics.decision(agg)
    k = min(config.ablation_tasks, len(tasks))
    if k:
        sub = [r for r in rows if r["task_index"] < k
               and (r["strategy"] == "plan07" or r["strategy"] in VARIANTS)]
        abl = metrics.aggregate(sub, config.price)
        out["ablation"] = {"tasks": k, "aggregate": {s: {m: v.to_dict() for m, v in ms.items()}
                                                     for s, ms in abl.items()},
                           "verdicts": metrics.ablation(abl)}
    return out


def _tokenizer(config: Config) -> str:
    from plan07.ab.tokens import TOKENIZER_NAME

    return TOKENIZER_NAME if config.executor == "scripted" else "API usage"


def with_faults(config: Config, **kw: Any) -> Config:
    return replace(config, faults=replace(config.faults, **kw))
