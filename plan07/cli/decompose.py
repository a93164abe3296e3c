"""`plan07 decompose REQUEST --evidence E.json [--llm SPEC]`: the one §4 model call alone, printing
the obligation set or the fallback, without planning. I/O only; the logic is plan07.decompose.

Exit codes: 0 obligations; 1 the §4 fallback (`re_decompose`: the completion could not be used,
or > 64 records were flagged for re-scoping) — a domain "no", printed in full (reason and raw
text) so it can be audited or replayed; 2 bad input, or no completion at all (LLMUnavailable).
"""

from __future__ import annotations

from typing import Annotated

import typer

from plan07.cli._common import JSON_HELP, QuietOpt, print_json, read_text


def decompose(
    request: Annotated[str, typer.Argument(
        help="The request (text, canonicalized first) or a requirement .json; '-' = stdin.")],
    evidence: Annotated[str, typer.Option(
        "--evidence", help="Evidence bundle (.json) or recon.db (see docs/evidence.md).")],
    llm: Annotated[str, typer.Option(
        "--llm", help="builtin (default, offline) | replay:PATH | openai:MODEL.")] = "builtin",
    quiet: QuietOpt = False,
    json_out: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Break a request into typed obligations with the one model call, alone (no plan is made);
    when the reply cannot be used, print the fallback and exit 1."""
    from plan07 import decompose_requirement as run
    from plan07 import load_evidence, make_client

    client = make_client(llm)  # first: a bad --llm or a missing env var fails before any reading
    if request.endswith(".json") and request != "-":
        from plan07 import load_artifact

        requirement = load_artifact("requirement", request)
    else:
        from plan07 import canonicalize

        requirement = canonicalize(read_text(request, what="request"))
    ev = load_evidence(evidence)
    from plan07 import progress
    from plan07.cli import progressline

    with progressline.shown(quiet), progress.step(f"decomposition ({client.name})"):
        result = run(requirement, ev, client)
    if json_out:
        print_json(result)
    else:
        _human(result)
    if result.re_decompose:
        raise typer.Exit(1)


def _human(result: object) -> None:
    from plan07 import display
    from plan07.model import Decomposition

    assert isinstance(result, Decomposition)
    result = display(result)  # docs/safety.md: a model's output, one record per line
    usage = result.usage
    tokens = f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens" \
        if usage else "no usage"
    if result.re_decompose:
        flag = " (flagged for re-scoping)" if result.rescope else ""
        typer.echo(f"fallback{flag}: {result.reason}\nre_decompose: true; nothing to schedule "
                   f"({result.client}, {tokens})")
        return
    for o in result.obligations:
        deps = f" after {', '.join(o.dependencies)}" if o.dependencies else ""
        typer.echo(f"{o.id:>4} {o.obligation:<8} {o.target_entity}{deps} [{o.status}]\n"
                   f"       check: {o.validation}\n       why:   {o.caused_by}")
    typer.echo(f"{len(result.obligations)} obligations ({result.client}, {tokens})")


def register(app: typer.Typer) -> None:
    app.command("decompose")(decompose)
