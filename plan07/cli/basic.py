"""`plan07 schema NAME`: print a shipped JSON Schema."""

from __future__ import annotations

from typing import Annotated

import typer

from plan07 import SCHEMAS  # a dict of names: cheap, imports no jsonschema


def schema(
    name: Annotated[str, typer.Argument(help=f"Artifact: {', '.join(SCHEMAS)}.")],
) -> None:
    """Print the JSON Schema of an artifact, as shipped inside the package."""
    from plan07 import render_schema, shipped_schema

    typer.echo(render_schema(shipped_schema(name)), nl=False)


def register(app: typer.Typer) -> None:
    app.command("schema")(schema)
