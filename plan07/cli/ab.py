"""`plan07 ab`: the §7 A/B and ablation harness (a thin skin over plan07.ab)."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from plan07.cli._common import JSON_HELP, print_json
from plan07.errors import InputError


def _price(text: str) -> tuple[float, float]:
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError:
        raise InputError(f"--price {text!r}: use IN,OUT dollars per 1M tokens, e.g. 0.27,1.10",
                         field="--price") from None
    if a < 0 or b < 0:
        raise InputError("--price must not be negative", field="--price")
    return a, b


def _mechanisms(text: str) -> tuple[str, ...]:
    from plan07.ab.metrics import ABLATION_ORDER

    if not text.strip():
        return ABLATION_ORDER
    names = [t.strip() for t in text.split(",") if t.strip()]
    if (bad := [n for n in names if n not in ABLATION_ORDER]) or not names:
        raise InputError(f"--ablation-mechanisms: unknown {', '.join(bad) or 'none given'}; "
                         f"use some of {', '.join(ABLATION_ORDER)}", field="--ablation-mechanisms")
    return tuple(m for m in ABLATION_ORDER if m in names)


def ab(
    tasks: Annotated[int, typer.Option(
        "--tasks", help="Generated tasks (3..30 obligations each).")] = 100,
    size: Annotated[int | None, typer.Option(
        "--size", help="Obligations per generated task (default: seeded, 3..30).")] = None,
    max_size: Annotated[int, typer.Option(
        "--max-size", help="Largest generated task (obligations, 3..30).")] = 30,
    engine: Annotated[str, typer.Option(
        "--engine", help="Rule engine plan07 orders with: pydatalog | clingo.")] = "pydatalog",
    runs: Annotated[int, typer.Option("--runs", help="Seeded runs (mean ± std over runs).")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Seed of tasks and faults.")] = 0,
    executor: Annotated[str, typer.Option(
        "--executor", help="scripted | openai:MODEL")] = "scripted",
    out: Annotated[Path, typer.Option(
        "--out", help="Where report.md, results.json and the chart go.")] = Path("build/ab"),
    ablation_tasks: Annotated[int, typer.Option(
        "--ablation-tasks", help="Run the ablation on the first N tasks; above --tasks "
                                 "(generated tasks only), the extra tasks run the ablation "
                                 "alone.")] = 0,
    ablation_mechanisms: Annotated[str, typer.Option(
        "--ablation-mechanisms", help="Comma-separated mechanisms the ablation removes "
                                      "(default: all five).")] = "",
    bound: Annotated[int, typer.Option("--bound", help="Retry bound: re-runs per obligation.")] = 2,
    faults: Annotated[bool, typer.Option(
        "--faults/--no-faults", help="Seeded fault injection (scripted executor).")] = True,
    p_first: Annotated[float, typer.Option(
        "--p-fault", help="Chance an obligation's first attempt is faulty.")] = 0.15,
    examples: Annotated[bool, typer.Option(
        "--examples/--no-examples", help="Add the bundled example(s) as tasks.")] = False,
    swebench: Annotated[Path | None, typer.Option(
        "--swebench", help="JSONL of SWE-bench-style instances with local checkouts.")] = None,
    commits: Annotated[Path | None, typer.Option(
        "--commits", help="JSONL of real commits on local checkouts (id, repo_path, commit, "
                          "request, tests, optional python and pythonpath).")] = None,
    tokenizer: Annotated[str, typer.Option(
        "--tokenizer", help="Token counts for the scripted executor: estimate | cl100k "
                            "(the tiktoken extra); the other is reported beside.")] = "estimate",
    ablation_executor: Annotated[str, typer.Option(
        "--ablation-executor", help="Executor of the ablation units (default: --executor); "
                                    "scripted:prompt slips more when the prompt names other "
                                    "work.")] = "",
    real_size: Annotated[bool, typer.Option(
        "--real-size/--toy-size", help="Pad generated modules to real module sizes.")] = True,
    workers: Annotated[int, typer.Option(
        "--workers", help="Parallel worker processes (with --ray local: the CPUs of the "
                          "cluster it starts).")] = 2,
    ray: Annotated[str | None, typer.Option(
        "--ray", help="Run each unit as a Ray task: local (start a loopback-only cluster "
                      "here), auto (a running one: ray start --head) or HOST:PORT. Needs "
                      "the scale extra (Ray).")] = None,
    ray_retries: Annotated[int, typer.Option(
        "--ray-retries", help="Times Ray re-runs a unit whose worker died.")] = 3,
    hidden_consumer_rate: Annotated[float, typer.Option(
        "--hidden-consumer-rate",
        help="Chance a widening with >= 2 consumers hides one consumer rebind from the "
             "decomposition every strategy is handed (what the revision trigger is for).")] = 0.0,
    price: Annotated[str, typer.Option("--price", help="IN,OUT $ per 1M tokens.")] = "0.27,1.10",
    as_json: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Run monolithic, static decomposition and plan07 on the same tasks (the A/B of
    docs/ab.md); write the report."""
    from plan07.ab.faults import FaultConfig
    from plan07.ab.runner import Config

    if not 3 <= max_size <= 30:
        raise InputError(f"--max-size must be in 3..30, got {max_size}", field="--max-size")
    if engine not in ("pydatalog", "clingo"):
        raise InputError(f"unknown engine {engine!r}; use pydatalog or clingo", field="--engine")
    if size is not None and not 3 <= size <= 30:
        raise InputError(f"--size must be in 3..30, got {size}", field="--size")
    for name, v, lo in (("--tasks", tasks, 0), ("--runs", runs, 1), ("--bound", bound, 0),
                        ("--workers", workers, 1), ("--ablation-tasks", ablation_tasks, 0),
                        ("--ray-retries", ray_retries, 0)):
        if v < lo:
            raise InputError(f"{name} must be >= {lo}, got {v}", field=name)
    if not 0 <= hidden_consumer_rate <= 1:
        raise InputError(f"--hidden-consumer-rate must be in [0, 1], got {hidden_consumer_rate}",
                         field="--hidden-consumer-rate")
    if not 0 <= p_first <= 1:
        raise InputError(f"--p-fault must be in [0, 1], got {p_first}", field="--p-fault")
    _require_extras(engine, executor, ablation_executor, tokenizer)
    from plan07.ab.executors import make_executor
    from plan07.ab.tokens import use

    make_executor(executor, seed=0)  # refused here, one line, when unknown
    if ablation_executor:
        make_executor(ablation_executor, seed=0)
    use(tokenizer)
    for name, path in (("--swebench", swebench), ("--commits", commits)):
        if path is not None and not path.is_file():
            raise InputError(f"{path} is not a file", field=name)
    if ray is not None:
        from plan07.ab.cluster import require

        require(ray.strip())
    mechs = _mechanisms(ablation_mechanisms)
    extra = ablation_tasks > tasks and not (examples or swebench or commits)
    cfg = Config(tasks=ablation_tasks if extra else tasks, main_tasks=tasks if extra else None,
                 runs=runs, seed=seed, executor=executor, bound=bound,
                 workers=workers, faults=FaultConfig(p_first=p_first, enabled=faults),
                 ablation_tasks=ablation_tasks, price=_price(price), examples=examples,
                 engine=engine, max_size=max_size, hidden_consumer_rate=hidden_consumer_rate,
                 ablation_executor=ablation_executor, tokenizer=tokenizer, real_size=real_size,
                 ablation_mechanisms=mechs)
    with tempfile.TemporaryDirectory(prefix="plan07-ab-snap-") as snaps:  # removed at the end
        _run(cfg, tasks, size, max_size, examples, swebench, commits, Path(snaps), out,
             as_json, _command(cfg, size, swebench, commits), ray, ray_retries)


def _require_extras(engine: str, executor: str, ablation_executor: str, tokenizer: str) -> None:
    """Every extra this run needs is installed, checked before any task runs: the chart's
    matplotlib always, clingo, openai and tiktoken when the flags name them."""
    from plan07 import extras

    needs = [("plot", "plan07 ab (its chart)")]
    if engine == "clingo":
        needs.append(("clingo", "--engine clingo"))
    for flag, value in (("--executor", executor), ("--ablation-executor", ablation_executor)):
        if value.startswith("openai:"):
            needs.append(("openai", f"{flag} {value}"))
    if tokenizer == "cl100k":
        needs.append(("tiktoken", "--tokenizer cl100k"))
    for extra, what in needs:
        if not extras.available(extra):
            raise extras.missing(extra, what)


def _command(cfg: Any, size: int | None, swebench: Path | None, commits: Path | None) -> str:
    """The command line the report shows: every flag that changes a number."""
    c = cfg
    parts = [("--tasks", c.tasks if c.main_tasks is None else c.main_tasks), ("--runs", c.runs),
             ("--seed", c.seed),
             ("--executor", c.executor), ("--ablation-tasks", c.ablation_tasks),
             ("--bound", c.bound), ("--p-fault", c.faults.p_first)]
    command = "plan07 ab " + " ".join(f"{k} {v}" for k, v in parts)
    command += (f" --size {size}" if size else "") + ("" if c.faults.enabled else " --no-faults")
    command += f" --max-size {c.max_size} --engine {c.engine} --tokenizer {c.tokenizer}"
    command += "" if c.real_size else " --toy-size"
    command += f" --ablation-executor {c.ablation_executor}" if c.ablation_executor else ""
    mechs = tuple(c.ablation_mechanisms)
    from plan07.ab.metrics import ABLATION_ORDER

    command += f" --ablation-mechanisms {','.join(mechs)}" \
        if c.ablation_tasks and mechs and mechs != ABLATION_ORDER else ""
    command += f" --hidden-consumer-rate {c.hidden_consumer_rate:g}" \
        if c.hidden_consumer_rate else ""
    command += " --examples" if c.examples else ""
    command += f" --swebench {swebench}" if swebench else ""
    command += f" --commits {commits}" if commits else ""
    return command


def _run(cfg: Any, tasks: int, size: int | None, max_size: int, examples: bool,
         swebench: Path | None, commits: Path | None, snaps: Path, out: Path, as_json: bool,
         command: str, ray: str | None = None, ray_retries: int = 3) -> None:
    from plan07.ab.generator import generate_tasks
    from plan07.ab.report import write
    from plan07.ab.runner import run_ab

    task_list = generate_tasks(cfg.seed, cfg.tasks, size=size, max_size=max_size,
                               hidden_consumer_rate=cfg.hidden_consumer_rate,
                               real_size=cfg.real_size)
    if examples:
        from plan07.ab.sources import example_tasks
        from plan07.cli import bundled

        task_list += example_tasks(bundled.examples())
    if swebench is not None:
        from plan07.ab.sources import load_swebench

        task_list += load_swebench(swebench, snaps / "swebench")
    if commits is not None:
        from plan07.ab.commits import load_commits

        task_list += load_commits(commits, snaps / "commits")
    if not task_list:
        raise InputError("no tasks: use --tasks N (N >= 1), --examples, --swebench FILE or "
                         "--commits FILE", field="--tasks")
    t0 = time.monotonic()

    def progress(k: int, n: int, row: dict[str, Any]) -> None:
        if not as_json:
            print(f"[{k}/{n}] {row['strategy']:<26} {row['task_id']} "
                  f"{'resolved' if row['resolved'] else 'UNRESOLVED'} retry={row['retry_tokens']} "
                  f"tc={row['consistency']:.2f} ({time.monotonic() - t0:.0f}s)",
                  file=sys.stderr, flush=True)

    try:
        if ray is None:
            res = run_ab(task_list, cfg, progress)
        else:
            from plan07.ab.cluster import on_ray

            res = run_ab(task_list, cfg, progress, execute=on_ray(ray.strip(), ray_retries))
    except KeyboardInterrupt:  # Ctrl-C: the units still out are cancelled (Ray) or ended
        typer.echo("error: interrupted; nothing written", err=True)
        raise typer.Exit(130) from None
    paths = write(res, out, command)
    if as_json:
        print_json({"out": [str(p) for p in paths], "aggregate": res["aggregate"],
                    "decision": res.get("decision"),
                    "ablation": res.get("ablation", {}).get("verdicts")})
        return
    from plan07.ab.report import markdown

    typer.echo(markdown(res, command).split("## Tasks")[0].rstrip()
               + f"\n\nwrote {', '.join(str(p) for p in paths)}")


def register(app: typer.Typer) -> None:
    app.command("ab")(ab)
