"""`plan07 schema NAME`: print a shipped JSON Schema."""

from __future__ import annotations

from typing import Annotated

import typer


def schema(
    name: Annotated[str, typer.Argument(help="Artifact: requirement, obligation, decomposition, "
                                         "evidence, order, plan-dag, driver-view, plan.")],
) -> None:
    """Print the JSON Schema of an artifact, as shipped inside the package."""
    from plan07.schema import render, shipped

    typer.echo(render(shipped(name)), nl=False)


def register(app: typer.Typer) -> None:
    app.command("schema")(schema)
