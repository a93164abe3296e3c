"""Shared CLI pieces: the options every command group takes (defined once), opening the plan,
printing JSON or rich output, reading a request. I/O only."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plan07.cli.console import open_planner as open_planner  # shared with the fast path
from plan07.cli.console import print_json as print_json
from plan07.cli.console import to_jsonable as to_jsonable

if TYPE_CHECKING:
    from rich.console import Console

    from plan07.model import StatusRow

JSON_HELP = "Print machine-readable JSON instead of human output."


def read_text(path: str, *, what: str, max_bytes: int | None = None) -> str:
    """Read FILE or '-' (stdin) as UTF-8 text, with an error naming the file; refused past
    `max_bytes` (default: the cap of its kind, caps.input_cap) before it is read whole."""
    from plan07 import InputError, caps

    cap_name, limit = caps.input_cap(what)
    limit = limit if max_bytes is None else max_bytes
    if path == "-":
        buffer = getattr(sys.stdin, "buffer", None)  # a text stream (a test's) has none
        data = buffer.read(limit + 1) if buffer is not None else sys.stdin.read(limit + 1)
        if len(data) > limit:
            raise InputError(f"{what} on stdin is over {limit} bytes", source="-",
                             cap=f"{cap_name} {limit}")
        if isinstance(data, str):
            return data
        try:
            return str(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(f"{what} is not UTF-8 text (byte {exc.start}: {exc.reason})",
                             source="-") from None
    from plan07 import read_text as read_bounded

    return read_bounded(path, what=what, max_bytes=limit)


StateOpt = Annotated[
    Path | None,
    typer.Option("--state", help="Plan state dir (default $PLAN07_STATE or "
                 "build/07-task-decomposition-planning/)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress line on stderr (it "
                                        "is drawn only on a terminal, for steps over a second).")]
EngineOpt = Annotated[str, typer.Option("--engine", help="pydatalog (default) or clingo.")]
RulesOpt = Annotated[Path | None, typer.Option("--rules", help="Rule file (default "
                                                "rules/ordering.dl or $PLAN07_RULES).")]


def console() -> Console:
    from rich.console import Console

    return Console(width=min(shutil.get_terminal_size((80, 24)).columns, 100), soft_wrap=False)


def status_table(con: Console, rows: list[StatusRow]) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(show_edge=False, pad_edge=False, expand=False)
    for col, kw in (("id", {"no_wrap": True}), ("verb", {"no_wrap": True}),
                    ("target", {"overflow": "fold", "ratio": 1}), ("state", {"no_wrap": True}),
                    ("deps", {"overflow": "fold", "max_width": 18})):
        table.add_column(col, **kw)
    colours = {"complete": "green", "failed": "red", "pending": ""}
    for r in rows:
        state = r.state if r.state != "pending" else r.status
        if r.status == "alternative" and r.score is not None:
            state = f"alt {r.score:.2f}"
        style = colours.get(r.state, "")
        # a Text cell is never read as rich markup (a target of a model's may hold `[...]`)
        table.add_row(Text(("*" if r.active else "") + r.id), Text(r.verb), Text(r.target),
                      Text(state, style=style), Text(",".join(r.deps)))
    con.print(table)
