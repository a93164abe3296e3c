"""The `plan07` console script: a thin typer skin over the library (I/O only, no logic).

Each command group lives in its own module here and registers itself on `app`; heavy modules
(pyDatalog, clingo, openai, jsonschema) are imported inside the commands, so `plan07 next`
starts fast. Exit codes (design.md): 0 ok, 1 a domain "no", 2 bad input or usage.
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import TextIO

import typer

from plan07.errors import Plan07Error

HELP = "Plan a coding request into typed obligations, ordered by Datalog rules, driven one by one."

app = typer.Typer(
    name="plan07",
    help=HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root() -> None:
    """Plan a coding request into typed obligations, ordered by Datalog rules, driven one by one."""


# Command modules, each with `register(app)`. Order = order in --help.
COMMAND_MODULES = [
    "plan07.cli.basic",
    "plan07.cli.evidence",
    "plan07.cli.canon",
    "plan07.cli.decompose",
    "plan07.cli.rules",
    "plan07.cli.plan",
    "plan07.cli.recover",
    "plan07.cli.ab",
    "plan07.cli.mcp",
]

for _name in COMMAND_MODULES:
    import_module(_name).register(app)


class _Redacting:
    """A text stream that writes through plan07.sandbox.redact: no credential plan07 saw reaches
    the terminal, whatever printed it (typer, rich, print_json)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        from plan07.sandbox import redact

        self._stream.write(redact(text))
        return len(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def _error_line(text: str) -> str:
    from plan07 import caps
    from plan07.sandbox import redact

    line = redact(" ".join(text.split()))
    if len(line) > caps.ERROR_MAX_CHARS:
        line = line[: caps.ERROR_MAX_CHARS - 1] + "…"
    return line


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turn every error into one line on stderr and an exit code.
    Every line printed is redacted (plan07.sandbox) and an error line is cut to
    caps.ERROR_MAX_CHARS."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Redacting(out), _Redacting(err)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = out, err


def _main(argv: list[str] | None) -> int:
    try:
        # standalone_mode=False: click returns (not raises) the code of a `typer.Exit(n)`.
        rc = app(args=argv, prog_name="plan07", standalone_mode=False)
        if isinstance(rc, int) and not isinstance(rc, bool):
            return rc
    except Plan07Error as exc:
        print(f"error: {_error_line(exc.one_line())}", file=sys.stderr)
        return exc.exit_code
    except RecursionError:  # a structure nested past what a stage checks (input bounds, issue 15)
        print("error: input nested too deeply to process (RecursionError); "
              "nothing was written", file=sys.stderr)
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        print("error: aborted", file=sys.stderr)
        return 1
    except typer.TyperException as exc:  # usage errors: bad flag, missing argument
        print(f"error: {_error_line(exc.format_message())}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return 0


def run() -> None:  # pragma: no cover - console script shim
    raise SystemExit(main())
