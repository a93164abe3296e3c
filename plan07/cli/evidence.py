"""`plan07 recon REPO`: built-in evidence (recon, impact, soft-rank, localization) for a Python
repository, written as a JSON bundle and/or a SQLite recon.db. A thin skin over plan07.evidence.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from plan07.cli._common import JSON_HELP, QuietOpt, print_json, read_text


def recon(
    repo: Annotated[Path, typer.Argument(help="Root of the Python repository to read.")],
    output: Annotated[str | None, typer.Option(
        "-o", "--output", help="Write the evidence bundle (JSON) here; '-' or absent with no "
                               "--db: print it to stdout.")] = None,
    seed: Annotated[list[str] | None, typer.Option(
        "--seed", help="Entity to compute impact from (dotted name or pytest node id); "
                       "repeatable. Default: the lex localization of --request.")] = None,
    request: Annotated[str | None, typer.Option(
        "--request", help="Request text file ('-' for stdin), for lex scores and localization.",
    )] = None,
    depth: Annotated[int, typer.Option("--depth", help="Impact depth from each seed.")] = 2,
    db: Annotated[Path | None, typer.Option(
        "--db", help="Also write the bundle as a SQLite recon.db (docs/evidence.md).")] = None,
    reproduce: Annotated[bool, typer.Option(
        "--reproduce", help="Run the request's own Python snippets first (with --python); what "
        "they raise and call steers localization.")] = False,
    python: Annotated[str | None, typer.Option(
        "--python", help="The repo's Python (or virtualenv dir) --reproduce runs with; default: "
        "$VIRTUAL_ENV, REPO/.venv, REPO/venv, else plan07's own.")] = None,
    preamble: Annotated[str | None, typer.Option(
        "--reproduce-preamble", help="Python code run before the snippets (default: "
        "reproduce-preamble in the tool.plan07 table of pyproject.toml).")] = None,
    quiet: QuietOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Build evidence for a Python repository: recon graph, impact, soft-rank, localization."""
    from plan07 import evidence_report, printable, progress, write_db
    from plan07.cli import progressline

    text = read_text(request, what="request") if request else None
    if reproduce and not text:
        from plan07.errors import InputError

        raise InputError("--reproduce runs the request's code: pass --request FILE",
                         field="--reproduce")
    rep = None
    if reproduce and text and repo.is_dir():
        from plan07 import describe_reproduction
        from plan07 import reproduce as run_reproduction

        with progressline.shown(quiet), progress.step("the issue's reproduction"):
            rep = run_reproduction(repo, text, python=python, preamble=preamble)
        print(f"reproduction: {printable(describe_reproduction(rep))}", file=sys.stderr)
    with progressline.shown(quiet), progress.step(f"recon of {repo.resolve().name or repo}"):
        built = evidence_report(repo, request=text, seeds=seed or None, depth=depth,
                                reproduction=rep)
    for w in built.warnings:  # a file's name may hold any byte but / and NUL
        print(f"warning: {printable(w)}", file=sys.stderr)
    ev = built.evidence
    bundle = json.dumps(ev.model_dump(mode="json", exclude_none=True), indent=1,
                        ensure_ascii=False) + "\n"
    to_stdout = output == "-" or (output is None and db is None)
    if output and output != "-":
        _write_atomic(Path(output), bundle)
    if db is not None:
        write_db(ev, db, meta={"repo": str(repo.resolve())})
    if to_stdout:
        sys.stdout.write(bundle)
        return
    summary = {
        "files": built.files, "nodes": len(ev.recon.nodes), "edges": len(ev.recon.edges),
        "impact_edges": len(ev.impact.edges), "localization": [x.entity for x in ev.localization],
        "warnings": built.warnings, "output": output, "db": str(db) if db else None,
    }
    if as_json:
        print_json(summary)
        return
    wrote = " and ".join(x for x in (output, str(db) if db else None) if x)
    typer.echo(f"recon: {built.files} files, {summary['nodes']} nodes, {summary['edges']} edges, "
               f"{summary['impact_edges']} impact edges, {len(built.warnings)} warnings -> {wrote}")


def _write_atomic(path: Path, text: str) -> None:
    from plan07.errors import InputError

    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, "utf-8")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write evidence: {exc}", source=str(path)) from None


def register(app: typer.Typer) -> None:
    app.command("recon")(recon)
