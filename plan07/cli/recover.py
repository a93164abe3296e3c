"""`plan07 feedback|rollback|resume`: impact feedback (§3.6) and the return to a checkpoint.
A thin skin over plan07.api (I/O only); heavy imports live inside the commands."""

from __future__ import annotations

from typing import Annotated

import typer

from plan07.cli._common import JsonOpt, StateOpt, print_json


def feedback(
    file: Annotated[str, typer.Argument(help="Feedback JSON (docs/revise.md; "
                                        "`plan07 schema feedback`); '-' reads stdin.")],
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Impact feedback: add missing obligations, remove falsified ones.

    Only the touched neighbourhood's edges are re-walked through the rules. Prints one line per
    revision."""
    from plan07 import Planner, load_artifact

    fb = load_artifact("feedback", file)
    revisions = Planner.open(state).feedback(fb)  # checks fb against the plan before any write
    if as_json:
        print_json(revisions)
        return
    if not revisions:
        typer.echo("no revision: the plan already accounts for this feedback")
    from plan07 import display

    for r in display(revisions):  # one record per line (docs/safety.md)
        typer.echo(f"rev {r.rev}: {r.change} (caused by {r.caused_by})")


def rollback(
    to: Annotated[str | None, typer.Option("--to", help="Checkpoint id, e.g. CP2 "
                                           "(default: the last one reached).")] = None,
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Restore the repository's files and the plan state to a checkpoint (git work trees only)."""
    from plan07 import Planner

    done = Planner.open(state).rollback(to)
    if as_json:
        print_json({"checkpoint": done.checkpoint, "git_ref": done.git_ref,
                    "removed": done.removed, "saved": done.saved})
        return
    from plan07 import printable

    typer.echo(f"rolled back to {done.checkpoint} ({done.git_ref})")
    for path in map(printable, done.removed):  # a file name may hold any byte but / and NUL
        typer.echo(f"  removed {path} (added after the checkpoint)")
    _say_saved(done.saved)


def _say_saved(saved: str | None, *, err: bool = False) -> None:
    if saved:
        typer.echo(f"  your files as they were are saved in {saved}: `git stash apply --index "
                   f"{saved}` brings them back, `git checkout {saved} -- PATH` one of them",
                   err=err)


def resume(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """After a crash: continue from the last checkpoint, not from the top.

    The plan state (and, in a git work tree, the files) return to the last checkpoint; the
    obligation to continue with is printed, as `plan07 next` does."""
    from plan07 import Planner

    planner = Planner.open(state)
    step = planner.resume_step()
    view = step.node
    saved = planner.restored.saved if planner.restored is not None else None
    if as_json:  # the shape of `plan07 next --json`; the saved ref on stderr
        print_json(step.data())
        _say_saved(saved, err=True)
        return
    _say_saved(saved)
    from plan07 import display

    view = display(view)
    if view is None:
        typer.echo("resumed: nothing is ready (the plan is complete, or waits on a failed node; "
                   "`plan07 status` shows which)")
        return
    typer.echo(f"resumed at {view.node_id}  {view.obligation}  {view.target_entity}\n"
               f"  required validation: {view.required_validation}\n"
               f"  then: plan07 complete {view.node_id}")


def register(app: typer.Typer) -> None:
    app.command("feedback")(feedback)
    app.command("rollback")(rollback)
    app.command("resume")(resume)
