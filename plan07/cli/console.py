"""What the console script prints, without typer: the redacted streams, the one-line errors and
`plan07 complete`'s report. I/O only. The typer CLI (plan07.cli) uses these, and so does the
console script's fast path for `complete` (plan07.entry), so both print the same bytes.

- `guarded(fn)`: runs `fn` with stdout/stderr redacted (plan07.sandbox: no credential plan07 saw
  reaches the terminal, whatever printed it), turns every plan07 error into one `error: …` line
  on stderr (cut to caps.ERROR_MAX_CHARS) and its exit code.
- `complete(...)`: §3.3 step 4 as `plan07 complete` reports it; returns the exit code (0 passed,
  1 failed, 2 not judged: the environment, nothing recorded).
- `echo`: a line as typer's echo writes it (ANSI codes stripped when not a terminal, flushed).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from plan07.errors import Plan07Error

if TYPE_CHECKING:
    from plan07 import Planner

_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")  # typer's (click's) own pattern


class Redacting:
    """A text stream that writes through plan07.sandbox.redact and plan07.term.scrub: no
    credential plan07 saw, and no control character but what rich itself writes, reaches the
    terminal, whatever printed it (typer, rich, print_json)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        try:
            self._tty = bool(stream.isatty())
        except Exception:  # noqa: BLE001 - a stream without isatty is no terminal
            self._tty = False

    def write(self, text: str) -> int:
        from plan07 import scrub
        from plan07.sandbox import redact

        self._stream.write(scrub(redact(text), tty=self._tty))
        return len(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def error_line(text: str) -> str:
    from plan07 import caps, printable
    from plan07.sandbox import redact

    line = printable(redact(" ".join(text.split())))
    if len(line) > caps.ERROR_MAX_CHARS:
        line = line[: caps.ERROR_MAX_CHARS - 1] + "…"
    return line


def guarded(fn: Callable[[], int]) -> int:
    """`fn()`'s exit code, with the streams redacted and every plan07 error one line."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Redacting(out), Redacting(err)
    try:
        return fn()
    except Plan07Error as exc:
        print(f"error: {error_line(exc.one_line())}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # a fault of the machine (a full disk): one line, never a traceback
        from plan07.errors import fault_line

        print(f"error: {error_line(fault_line(exc))}", file=sys.stderr)
        return 2
    except RecursionError:  # a structure nested past what a stage checks (input bounds)
        print("error: input nested too deeply to process (RecursionError); "
              "nothing was written", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout, sys.stderr = out, err


def echo(text: str, *, err: bool = False) -> None:
    """One line, as typer.echo writes it: ANSI codes stripped unless the stream is a terminal."""
    stream = sys.stderr if err else sys.stdout
    try:
        tty = stream.isatty()
    except Exception:  # noqa: BLE001 - a stream without isatty is no terminal
        tty = False
    stream.write((text if tty else _ANSI.sub("", text)) + "\n")
    stream.flush()


def to_jsonable(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", by_alias=True)
    if isinstance(obj, list | tuple):
        return [to_jsonable(x) for x in obj]
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    return obj


def print_json(obj: Any) -> None:
    from plan07 import json_text

    sys.stdout.write(json_text(json.dumps(to_jsonable(obj), indent=2, ensure_ascii=False)) + "\n")


def open_planner(state: Path | None) -> Planner:
    """The plan in the state dir (refused when there is none); every command loads (and
    validates) it once, after this."""
    from plan07 import Planner

    return Planner.at(state)


def complete(node_id: str, state: Path | None, timeout: float | None, as_json: bool, *,
             python: str | None = None, quiet: bool = False) -> int:
    """Run the node's validation; pass -> complete and advance (0); fail -> 1; not judged -> 2;
    not checked because its observed edit cannot be valid alone and joined pending work in one
    step, or narrows what pending work still uses and was set aside behind it -> 0 (nothing
    failed; that step, or that work, is handed out next). A judged (or merged) check then
    hands out what `plan07 next` would (`_hand_out_next`)."""
    from plan07 import block, printable, progress
    from plan07.cli.progressline import shown

    planner = open_planner(state)
    with shown(quiet), progress.step(f"check of {node_id}"):
        verdict = planner.complete(node_id, timeout=timeout, python=python)
    if as_json:
        print_json(verdict)
    elif verdict.inconclusive:
        echo(f"error: {error_line(f'{node_id} not judged: {verdict.inconclusive}')}", err=True)
    elif verdict.merged_into is not None or verdict.set_aside_for:
        echo(f"{printable(node_id)} not checked: {printable(verdict.output_tail)}")
        for line in verdict.observed:
            echo(f"  observed {printable(line)}")
    else:  # one record per line: the check and the output can forge none of plan07's own
        word = "passed" if verdict.passed else "FAILED"
        echo(f"{printable(node_id)} {word}: {printable(verdict.check)} ({verdict.kind}, "
             f"{verdict.duration_s}s)")
        if verdict.passed and verdict.tests:  # the gate's verdict line (red, pre-existing...)
            echo("  " + printable((verdict.output_tail.rstrip().splitlines() or [""])[-1]))
        if not verdict.passed:
            echo(block(verdict.output_tail[-800:]))
    if verdict.inconclusive:  # the environment, not the node: exit 2, nothing recorded
        return 2
    _hand_out_next(planner)
    return 0 if verdict.passed or verdict.merged_into is not None or verdict.set_aside_for \
        else 1


def _hand_out_next(planner: Planner) -> None:
    """The hand-out the agent's next call, `plan07 next`, would make, made now, while this
    process has the plan's models loaded: it leaves the view in next.json, so that call is
    answered by the console script's fast path (plan07.entry) without loading them again. A
    refusal here is left for that call to report."""
    with contextlib.suppress(Plan07Error):
        planner.next_step()
