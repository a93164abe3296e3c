"""`plan07 canonicalize FILE|-`: a request -> the §3.1 requirement artifact. I/O only."""

from __future__ import annotations

from typing import Annotated

import typer

from plan07.cli._common import JSON_HELP, print_json, read_text


def canonicalize(
    file: Annotated[
        str, typer.Argument(help="The request (markdown or plain text); '-' reads stdin.")
    ],
    task_file: Annotated[
        str | None, typer.Option("--task-file", help="Optional task text (e.g. the issue body).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Turn a request into a typed requirement: goal, acceptance criteria, constraints.

    Deterministic, no model. Criteria the request does not name are derived from its verbs and
    marked "needs confirmation". Same input, same bytes out.
    """
    from plan07 import canonicalize_with_notes

    request = read_text(file, what="request")
    task = read_text(task_file, what="task") if task_file is not None else None
    result = canonicalize_with_notes(request, task)
    for note in result.notes:
        typer.echo(f"note: {' '.join(note.split())}", err=True)
    req = result.requirement
    if json_out:
        print_json(req)
        return
    from plan07 import display

    req = display(req)  # docs/safety.md: the request's text, one record per line
    mark = " (derived, needs confirmation)" if req.needs_confirmation else ""
    lines = [f"goal: {req.goal}", "acceptance criteria:"]
    lines += [f"  {i}. {c}{mark}" for i, c in enumerate(req.acceptance_criteria, 1)]
    lines.append("constraints:" if req.constraints else "constraints: (none)")
    lines += [f"  - {c}" for c in req.constraints]
    typer.echo("\n".join(lines))


def register(app: typer.Typer) -> None:
    app.command("canonicalize")(canonicalize)
