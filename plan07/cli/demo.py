"""`plan07 demo`: the whole loop, offline, on the bundled example (plan07.cli.demo_run).
I/O only."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from plan07.cli._common import JsonOpt, QuietOpt, print_json
from plan07.errors import InputError


def demo(
    keep: Annotated[Path | None, typer.Option("--keep", help="Work in DIR (kept) instead of a "
                    "temporary copy.")] = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """The whole loop, offline, on a temporary copy of the bundled example (session_timeout).

    Plan it, drive every obligation with the scripted edits, run the real tests at each
    checkpoint, explain one edge, print the audit.
    """
    from plan07.cli.demo_run import EXAMPLE

    if not (EXAMPLE / "request.md").is_file():
        raise InputError("the bundled example is missing from this install (it ships inside the "
                         "package); reinstall plan07", source=str(EXAMPLE))
    if importlib.util.find_spec("pytest") is None:
        raise InputError("the demo runs the example's real tests and needs pytest; install it "
                         "with pip install pytest", field="pytest")
    from plan07.cli import demo_run as lib

    work = keep or Path(tempfile.mkdtemp(prefix="plan07-demo-"))
    from plan07.cli import progressline

    with lib.demo_env(), progressline.shown(quiet):
        run = lib.run(work, (lambda _: None) if as_json else typer.echo)
    if as_json:
        print_json({"plan_id": run.plan_id, "complete": run.complete,
                    "termination_blockers": run.blockers, "steps": run.steps,
                    "explained": run.proof, "audit": run.audit, "state": str(run.state_dir),
                    "repo": str(run.repo)})
    else:
        from plan07 import render_proof as render

        if run.proof is not None and run.edge is not None:
            typer.echo(f"\nwhy {run.edge.from_} -> {run.edge.to} (rule {run.edge.rule}):")
            typer.echo("\n".join(render(run.proof.tree)) if run.proof.tree else "  (no proof)")
        typer.echo(f"\naudit ({len(run.audit)} rows):")
        for r in run.audit:
            text = f"edit {r.accepted_edit}" if r.accepted_edit else r.trace
            typer.echo(lib.fit(f"  {r.obligation:>5} {r.event:<10} {text}"))
        for b in run.blockers:
            typer.echo(f"cannot terminate: {b}")
        typer.echo(f"\n{'every obligation validated' if run.complete else 'STOPPED'}; "
                   f"repo {run.repo}, state {run.state_dir}")
    if not run.complete:
        raise typer.Exit(1)
