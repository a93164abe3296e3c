"""`plan07 lint`: what the plan lint finds in a persisted plan (docs/rules.md "Plan lint"). A
thin skin over plan07.reader (I/O only)."""

from __future__ import annotations

import typer

from plan07.cli._common import JsonOpt, StateOpt, print_json


def lint(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """The plan lint's findings (exit 1 when there is any; `plan07 explain --finding KIND A
    [B]` proves one). What it could repair was repaired when the plan was made (`plan07
    audit` lists the repairs)."""
    from plan07 import PlanReader

    found = PlanReader.at(state).lint()
    if as_json:
        print_json([f.model_dump(mode="json") for f in found])
    elif not found:
        typer.echo("the plan lint finds nothing")
    else:
        for f in found:
            typer.echo(f"finding {f.kind}: {' '.join(f.nodes)}: {f.detail}")
    if found:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("lint")(lint)
