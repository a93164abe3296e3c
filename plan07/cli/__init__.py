"""The `plan07` console script: a thin typer skin over the library (I/O only, no logic).

Each command group lives in its own module here and registers itself on `app`; heavy modules
(pyDatalog, clingo, openai, jsonschema) are imported inside the commands, so `plan07 next`
starts fast. Exit codes (design.md): 0 ok, 1 a domain "no", 2 bad input or usage.
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Annotated

import typer

from plan07.cli import console

HELP = "Plan a coding request into typed obligations, ordered by Datalog rules, driven one by one."

app = typer.Typer(
    name="plan07",
    help=HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"plan07 {version('plan07')}")
        except PackageNotFoundError:  # run from a checkout that was never installed
            typer.echo("plan07 (not installed)")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print plan07's version and exit.",
                                          is_eager=True, callback=_version)] = False,
) -> None:
    """Plan a coding request into typed obligations, ordered by Datalog rules, driven one by one."""


# Command modules, each with `register(app)`. Order = order in --help.
COMMAND_MODULES = [
    "plan07.cli.basic",
    "plan07.cli.evidence",
    "plan07.cli.canon",
    "plan07.cli.decompose",
    "plan07.cli.rules",
    "plan07.cli.plan",
    "plan07.cli.lint",
    "plan07.cli.recover",
    "plan07.cli.ab",
    "plan07.cli.mcp",
]

for _name in COMMAND_MODULES:
    import_module(_name).register(app)


def _short_helps(group: typer.Typer) -> None:
    """Each command's line in a group's list: its docstring's first paragraph as one line (the
    rich formatter keeps a docstring's wrapped line breaks there; markdown mode, which would
    join them, eats backquotes)."""
    for info in group.registered_commands:
        doc = (info.help or (info.callback.__doc__ if info.callback else None) or "").strip()
        if info.short_help is None and doc:
            info.short_help = " ".join(doc.split("\n\n")[0].split())
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _short_helps(sub.typer_instance)


_short_helps(app)


_Redacting = console.Redacting  # the typer-free pieces the fast path shares (plan07.cli.console)
_error_line = console.error_line


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turn every error into one line on stderr and an exit code.
    Every line printed is redacted (plan07.sandbox) and an error line is cut to
    caps.ERROR_MAX_CHARS (plan07.cli.console.guarded)."""
    return console.guarded(lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    try:
        # standalone_mode=False: click returns (not raises) the code of a `typer.Exit(n)`.
        rc = app(args=argv, prog_name="plan07", standalone_mode=False)
        if isinstance(rc, int) and not isinstance(rc, bool):
            return rc
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        print("error: aborted", file=sys.stderr)
        return 1
    except typer.TyperException as exc:  # usage errors: bad flag, missing argument
        print(f"error: {_error_line(exc.format_message())}", file=sys.stderr)
        return exc.exit_code
    return 0


def run() -> None:  # pragma: no cover - console script shim
    raise SystemExit(main())
