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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from plan07.ab import metrics
from plan07.ab.faults import FaultConfig
from plan07.ab.run import Ablation
from plan07.ab.tasks import Task, write_repo
from plan07.sandbox import environ

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
    # the mechanisms whose removal is run (the full plan07 always runs beside them): a subset
    # gives exactly those mechanisms' numbers and verdicts of the whole ablation, for less
    ablation_mechanisms: tuple[str, ...] = metrics.ABLATION_ORDER
    # the main A/B (config.strategies) runs on the first N tasks only (None: all of them); the
    # ablation may run on more (`ablation_tasks`), for its per-seed verdicts' sake
    main_tasks: int | None = None
    price: tuple[float, float] = metrics.DEFAULT_PRICE
    examples: bool = False  # add the bundled example(s) under examples/ as tasks
    engine: str = "pydatalog"  # the rule engine plan07 orders with (Planner.create(engine=))
    max_size: int | None = None  # cap on generated task sizes (None: 3..30)
    hidden_consumer_rate: float = 0.0  # widenings whose decomposition hides one consumer
    ablation_executor: str = ""  # the executor of the ablation units ("": `executor`)
    tokenizer: str = "estimate"  # plan07.ab.tokens: estimate | cl100k (the other is reported)
    real_size: bool = True  # generated modules padded to real module sizes

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


Unit = tuple[int, int, str]  # (run, task index, strategy or variant)
Progress = Callable[[int, int, dict[str, Any]], None]  # (units done, units, the row)
Rows = list[dict[str, Any]]
# runs the units: (tasks, config, units, progress) -> (rows, units not run exactly once)
Execute = Callable[[list[Task], "Config", list[Unit], Progress | None], tuple[Rows, Rows]]
# Ablation units run the full plan07 and each variant with the ablation executor (which may be
# the prompt-sensitive one, `scripted:prompt`), beside the A/B's own units.
ABL = "ablation/"
_TASKS: list[Task] = []
_CONFIG: Config | None = None
_CHECKER: Any = None
# (interpreter, import path, the process that started it): a pool worker forked from a process
# that had a test worker must start its own, not write to its parent's pipes beside its siblings
_CHECKER_KEY: tuple[str, tuple[str, ...], int] | None = None


@contextmanager
def _gate_env(task: Task) -> Iterator[None]:
    """A real repo's import path (`Task.pythonpath`, relative to the repo root) for plan07's own
    gate too: its checks run with cwd = the repo and inherit PYTHONPATH (entries stay relative,
    so they resolve inside whichever copy the check runs in)."""
    if not task.pythonpath and not task.python:
        yield
        return
    want = {"PYTHONPATH": os.pathsep.join(task.pythonpath)}
    if task.python:  # the repo's interpreter, for a gate that honours $VIRTUAL_ENV
        want["VIRTUAL_ENV"] = str(Path(task.python).parent.parent)
    with environ(want):
        yield


def _init(tasks: list[Task], config: Config) -> None:
    global _TASKS, _CONFIG
    _TASKS, _CONFIG = tasks, config
    prepare(config)


def prepare(config: Config) -> None:
    """What a process that runs units needs first (a pool worker, a Ray worker)."""
    from plan07.ab import tokens

    tokens.use(config.tokenizer)
    os.environ.setdefault("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def run_unit(unit: Unit) -> dict[str, Any]:
    """One unit of this process's tasks (the pool's workers: set by `_init`)."""
    assert _CONFIG is not None
    return run_one(_TASKS[unit[1]], _CONFIG, unit)


def run_one(task: Task, config: Config, unit: Unit) -> dict[str, Any]:
    """One strategy (or ablation variant) on one task for one seeded run, in a fresh repo.
    The process's test worker is kept for the next unit with the same interpreter."""
    global _CHECKER, _CHECKER_KEY
    from plan07.ab.checker import Checker
    from plan07.ab.executors import make_executor
    from plan07.ab.strategies import RUNNERS

    run, ti, name = unit
    key = (task.python or "", task.pythonpath, os.getpid())
    if _CHECKER is None or key != _CHECKER_KEY:
        if _CHECKER is not None and _CHECKER_KEY and _CHECKER_KEY[2] == os.getpid():
            _CHECKER.close()
        _CHECKER = Checker(python=task.python, pythonpath=task.pythonpath, paths=task.check_paths)
        _CHECKER_KEY = key
    _CHECKER.paths = task.check_paths
    spec = config.ablation_executor if name.startswith(ABL) and config.ablation_executor \
        else config.executor
    ex = make_executor(spec, seed=config.seed + run, faults=config.faults)
    tmp = Path(tempfile.mkdtemp(prefix="plan07-ab-"))
    base = name.removeprefix(ABL)
    from plan07.ab import run as runmod

    runmod.Session.current = None
    try:
        repo = write_repo(task, tmp / "repo")
        with _gate_env(task):
            if base in RUNNERS and base != "plan07":
                res = RUNNERS[base](task, repo, ex, _CHECKER, config.bound)
            else:
                ab = VARIANTS.get(base, Ablation())
                res = RUNNERS["plan07"](task, repo, ex, _CHECKER, config.bound,
                                        state_dir=tmp / "state", ablation=ab,
                                        engine=config.engine)
        res.strategy = name
    except Exception as exc:  # noqa: BLE001 - one broken unit must not lose the whole run
        why = f"error: {type(exc).__name__}: {' '.join(str(exc).split())[:240]}"
        res = runmod.salvage(name, task, why)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {**res.to_dict(), "run": run, "task_index": ti, "shape": task.shape}


def salvaged_row(task: Task, unit: Unit, why: str) -> dict[str, Any]:
    """The row of a unit that never returned one (its worker lost): unresolved, `why` noted."""
    from plan07.ab import run as runmod

    run, ti, name = unit
    runmod.Session.current = None
    res = runmod.salvage(name, task, why)
    return {**res.to_dict(), "run": run, "task_index": ti, "shape": task.shape}


def units(config: Config, n_tasks: int) -> list[Unit]:
    n_main = n_tasks if config.main_tasks is None else min(config.main_tasks, n_tasks)
    out = [(r, i, s) for r in range(config.runs) for i in range(n_main)
           for s in config.strategies]
    k = min(config.ablation_tasks, n_tasks)
    variants = [f"plan07-no_{m}" for m in metrics.ABLATION_ORDER
                if m in config.ablation_mechanisms]
    out += [(r, i, ABL + v) for r in range(config.runs) for i in range(k)
            for v in ("plan07", *variants)]
    return out


def run_ab(tasks: list[Task], config: Config, progress: Progress | None = None, *,
           execute: Execute | None = None) -> dict[str, Any]:
    """Run every unit and return results.json's content (rows, aggregates, decision, ablation).
    `execute` runs the units elsewhere (plan07.ab.cluster.on_ray: as Ray tasks) instead of
    here; the units it reports as not run exactly once are listed under `retried` (absent when
    none: the same seed gives the same results.json either way)."""
    todo = units(config, len(tasks))
    rows, retried = (execute or run_local)(tasks, config, todo, progress)
    rows.sort(key=lambda r: (r["run"], r["task_index"], r["strategy"]))
    out = summarize(tasks, config, rows)
    return {**out, "retried": retried} if retried else out


def run_local(tasks: list[Task], config: Config, todo: list[Unit], progress: Progress | None
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The units in this process (`workers` 1) or a pool of forked worker processes; each runs
    exactly once (an exception in a unit is its salvaged row), so none is `retried`."""
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
    return rows, []


def summarize(tasks: list[Task], config: Config, rows: list[dict[str, Any]]) -> dict[str, Any]:
    main = [r for r in rows if r["strategy"] in config.strategies]
    agg = metrics.aggregate(main, config.price)
    from plan07.ab import tokens

    tokens.use(config.tokenizer)
    out: dict[str, Any] = {
        "config": config.to_dict(), "tokenizer": _tokenizer(config),
        "tokenizer_beside": tokens.other_name(),
        "tasks": [t.summary() for t in tasks],
        "aggregate": {s: {m: v.to_dict() for m, v in ms.items()} for s, ms in agg.items()},
        "rows": rows,
    }
    if {"plan07", "monolithic", "static"} <= set(agg):
        out["decision"] = metrics.decision(agg, rows=main, price=config.price, seed=config.seed)
    k = min(config.ablation_tasks, len(tasks))
    if k:
        sub = [dict(r, strategy=r["strategy"].removeprefix(ABL)) for r in rows
               if r["task_index"] < k and r["strategy"].startswith(ABL)]
        abl = metrics.aggregate(sub, config.price)
        out["ablation"] = {"tasks": k, "executor": config.ablation_executor or config.executor,
                           "aggregate": {s: {m: v.to_dict() for m, v in ms.items()}
                                         for s, ms in abl.items()},
                           "verdicts": metrics.ablation(abl, rows=sub, price=config.price,
                                                        seed=config.seed)}
    return out


def _tokenizer(config: Config) -> str:
    from plan07.ab.tokens import NAMES

    return NAMES[config.tokenizer] if config.executor.startswith("scripted") else "API usage"


def with_faults(config: Config, **kw: Any) -> Config:
    return replace(config, faults=replace(config.faults, **kw))
