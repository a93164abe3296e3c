"""`plan07 status|show|audit`: a persisted plan seen from the command line. A thin skin over the
Planner's reading side (plan07.reader) and plan07.cli.render (I/O only)."""

from __future__ import annotations

from typing import Annotated

import typer

from plan07.cli._common import JsonOpt, StateOpt, console, open_planner, print_json, status_table
from plan07.errors import InputError


def status(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """The plan as a table: id, verb, target, state, deps (* marks the handed-out node), then the
    acceptance criteria. Exit 1 when nothing is left to hand out and the plan cannot terminate."""
    from plan07 import display

    planner = open_planner(state)
    art, data = planner.artifact, planner.status()
    left, blockers, reached = data.left, data.termination_blockers, data.checkpoints_reached
    if as_json:
        print_json(data)
    else:  # docs/safety.md: no control character of a model's, one record per line
        data, blockers = display(data), display(blockers)
        con = console()
        done = sum(n.state == "complete" for n in art.nodes)
        from rich.markup import escape

        con.print(f"[bold]{escape(display(art.plan_id))}[/bold]: {done}/"
                  f"{len(art.schedule.order)} steps complete, checkpoint "
                  f"{escape(display(reached[-1])) if reached else '-'} of "
                  f"{len(art.checkpoints) - 1}")
        status_table(con, data.nodes)
        for c in data.criteria:
            how = ("proven by " + ", ".join(c.covered_by) if c.covered_by else
                   "confirmed" if c.confirmed else
                   "" if c.kind == "named" else "UNSETTLED")
            how = f"{c.kind}, {how}" if how else c.kind
            con.print(f"  criterion {c.n} [{how}]: {c.criterion}", overflow="fold",
                      markup=False)
        if not left:
            con.print("can terminate" if not blockers else "cannot terminate:", markup=False)
            for b in blockers:
                con.print(f"  {b}", overflow="fold", markup=False)
    if not left and blockers:
        raise typer.Exit(1)


def show(
    fmt: Annotated[str, typer.Option("--format", help="json | mermaid | dot")] = "json",
    state: StateOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The plan DAG with node states and checkpoints, as JSON, Mermaid or Graphviz dot."""
    formats = {"json", "mermaid", "dot"}
    if fmt not in formats:
        raise InputError(f"unknown format {fmt!r}; use one of json, mermaid, dot", field="--format")
    dag = open_planner(state).dag()
    if as_json or fmt == "json":
        print_json(dag)
    else:
        from plan07 import display
        from plan07.cli.render import dot, mermaid

        typer.echo(mermaid(display(dag)) if fmt == "mermaid" else dot(display(dag)), nl=False)


def audit(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """Every audit row (spilled ones included): one per state transition, edits linked."""
    log = open_planner(state).audit()
    rows, revs = log.audit, log.revision_history
    if as_json:
        print_json(log)
        return
    from rich.table import Table
    from rich.text import Text

    from plan07 import display

    rows, revs = display(rows), display(revs)  # docs/safety.md: one record per line
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("#", no_wrap=True, justify="right")
    table.add_column("node", no_wrap=True)
    table.add_column("event", no_wrap=True)
    table.add_column("trace", overflow="fold", ratio=1)
    for i, r in enumerate(rows, 1):
        edit = f" [edit {r.accepted_edit}]" if r.accepted_edit else ""
        table.add_row(str(i), Text(r.obligation), Text(r.event), Text(r.trace + edit))
    con = console()
    con.print(table)
    for rev in revs:
        con.print(f"rev {rev.rev} {rev.time}: {rev.change} (caused by {rev.caused_by})",
                  overflow="fold", markup=False)
