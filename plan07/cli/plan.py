"""`plan07 plan|next|complete|confirm`: a persisted plan made and driven from the command line
(status/show/audit: cli/view.py, demo: cli/demo.py). A thin skin over plan07.api (I/O only);
heavy imports live inside the commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from plan07.cli._common import (
    JsonOpt,
    QuietOpt,
    StateOpt,
    console,
    open_planner,
    print_json,
    read_text,
    status_table,
)

# ---------------------------------------------------------------------------------------------
# plan, next, complete


def plan(
    file: Annotated[str, typer.Argument(help="The request (markdown or text); '-' reads stdin.")],
    repo: Annotated[Path, typer.Option("--repo", help="The repository the plan edits.")],
    evidence: Annotated[Path | None, typer.Option(
        "--evidence", help="Evidence bundle (JSON or recon.db); built-in recon if absent.")] = None,
    llm: Annotated[str, typer.Option("--llm", help="builtin|replay:PATH|openai:MODEL")] = "builtin",
    state: StateOpt = None,
    engine: Annotated[str, typer.Option("--engine", help="pydatalog or clingo.")] = "pydatalog",
    task_file: Annotated[str | None, typer.Option("--task-file", help="Task text.")] = None,
    python: Annotated[str | None, typer.Option(
        "--python", help="The repo's Python (or virtualenv dir) every check runs with; default: "
        "$VIRTUAL_ENV, REPO/.venv, REPO/venv, else plan07's own.")] = None,
    test_command: Annotated[str | None, typer.Option(
        "--test-command", help='The test command as a JSON argv template, e.g. \'["{python}", '
        '"tests/runtests.py", "{tests}"]\' (default: the test-command of the repository\'s '
        'pyproject.toml, section tool.plan07; else pytest).'
    )] = None,
    replace: Annotated[bool, typer.Option(
        "--replace", help="Replace a plan in the state dir that has progress (without it, such "
        "a plan is kept and this command refused).")] = False,
    reproduce: Annotated[bool, typer.Option(
        "--reproduce", help="Run the issue's own Python snippets with the repo's interpreter "
        "first; what they raise and call steers localization.")] = False,
    preamble: Annotated[str | None, typer.Option(
        "--reproduce-preamble", help="Python code run before the snippets: the session the "
        "project's issues assume (default: reproduce-preamble in the tool.plan07 table of "
        "pyproject.toml).")] = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Plan a request: read it, break it into obligations, order them, schedule them, and save
    the plan. The repository's interpreter and test command are fixed here, and the plan's tests
    run once on the unchanged repository (the baseline: what fails already is never blamed on
    an obligation). A plan already in the state dir that has progress is kept unless --replace."""
    from plan07 import Planner
    from plan07.cli import progressline

    request = read_text(file, what="request")
    task = read_text(task_file, what="task") if task_file else None
    with progressline.shown(quiet):
        planner = Planner.create(request, repo=repo, evidence=evidence, llm=llm,
                                 state_dir=state, engine=engine, task_text=task, python=python,
                                 test_command=test_command, replace=replace,
                                 reproduce=reproduce, preamble=preamble)
    for warning in planner.warnings:
        typer.echo(warning, err=True)
    if planner.reproduced:
        typer.echo(f"reproduction: {planner.reproduced}", err=True)
    art = planner.artifact
    gate = art.gate
    if as_json:
        print_json(art)
        return
    from rich.markup import escape

    from plan07 import display

    art = display(art)  # docs/safety.md: no control character, no rich markup of theirs
    con = console()
    con.print(f"[bold]{art.plan_id}[/bold]: {escape(art.requirement.goal)}")
    con.print(f"{len(art.nodes)} nodes, {len(art.edges)} edges, {len(art.violations)} "
              f"violations, {len(art.checkpoints)} checkpoints -> {planner.state_dir}/plan.json")
    if gate is not None:
        failing = (f", {gate.baseline_failing_total} failing already (never blamed): "
                   f"{', '.join(gate.baseline_failing[:3])}"
                   f"{' ...' if gate.baseline_failing_total > 3 else ''}"
                   if gate.baseline_failing_total else "")
        con.print(escape(f"checks run with {gate.python} (from {gate.python_source}); "
                         f"baseline: {gate.baseline_tests} tests{failing}"), overflow="fold")
    for v in art.violations:
        con.print(f"  [yellow]violation[/yellow] {escape(f'{v.kind}: {chr(32).join(v.nodes)}')}"
                  f" {escape(v.detail)}", overflow="fold")
    status_table(con, display(planner.status().nodes))
    con.print("next: [bold]plan07 next[/bold]")


def next_(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """The one obligation to work on now, and nothing of the rest of the plan."""
    from plan07 import display

    step = open_planner(state).next_step()
    view, blockers = step.node, step.termination_blockers
    if as_json:
        print_json(step.data())
        if blockers:
            raise typer.Exit(1)
        return
    view, blockers = display(view), display(blockers)  # one record per line (docs/safety.md)
    if view is None:
        # §3.1 step 2: nothing left to hand out; the plan ends only if it may terminate
        if blockers:
            typer.echo("nothing left to hand out, but the plan cannot terminate:")
            for line in blockers:
                typer.echo(f"  {line}")
        else:
            typer.echo("done: every scheduled obligation is validated and every acceptance "
                       "criterion is settled")
        if blockers:
            raise typer.Exit(1)
        return
    pre = ", ".join(view.preconditions) or "none"
    b = view.permitted_actions.bounds
    served = "".join(f"\n  serves: {c}" for c in view.criteria)
    typer.echo(f"{view.node_id}  {view.obligation}  {view.target_entity}\n"
               f"  goal: {view.goal}\n"
               f"  why: {view.caused_by}\n"
               f"  evidence: {view.evidence}{served}\n"
               f"  preconditions complete: {pre}\n"
               f"  permitted: read, edit (<= {b.max_edit_files} files), "
               f"test (<= {b.max_test_calls} calls)\n"
               f"  required validation: {view.required_validation}\n"
               f"  check: {view.check}\n"
               + (f"  note: {view.check_note}\n" if view.check_note else "") +
               f"  then: plan07 complete {view.node_id}")


def complete(
    node_id: Annotated[str, typer.Argument(help="The obligation to validate, e.g. O3.")],
    state: StateOpt = None,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", help="Seconds per check (default: sized from how long the plan's tests "
        "took when the plan was made).")
    ] = None,
    python: Annotated[str | None, typer.Option(
        "--python", help="The interpreter that runs the repository's tests, when the plan "
        "was made without one.")] = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the obligation's check: passed, it is complete and the plan moves on; failed, exit 1
    (only it and what depends on it are planned again)."""
    from plan07.cli import console  # the console script's fast path prints through it too

    rc = console.complete(node_id, state, timeout, as_json, python=python, quiet=quiet)
    if rc:
        raise typer.Exit(rc)


def confirm(
    numbers: Annotated[list[int] | None, typer.Argument(
        help="Acceptance criteria to confirm, by number (`plan07 status` lists them).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Confirm every derived criterion and "
                                       "every command plan07 does not run.")] = False,
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Confirm acceptance criteria only a person can settle: a plan may not finish on a derived
    one, or on a command plan07 never runs."""
    planner = open_planner(state)
    new = planner.confirm(numbers or (), all=all_)
    if as_json:
        print_json({"confirmed": new, "can_terminate": not planner.termination_blockers()})
        return
    typer.echo(f"confirmed criteria {', '.join(map(str, new))}" if new
               else "nothing to confirm: those criteria were already confirmed")


def register(app: typer.Typer) -> None:
    from plan07.cli import demo, view

    app.command("plan")(plan)
    app.command("next")(next_)
    app.command("status")(view.status)
    app.command("show")(view.show)
    app.command("audit")(view.audit)
    app.command("complete")(complete)
    app.command("confirm")(confirm)
    app.command("demo")(demo.demo)
