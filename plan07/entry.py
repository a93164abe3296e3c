"""The `plan07` console script: a fast path for the one command an agent calls in a loop, then
the typer CLI (plan07.cli) for everything else. I/O only.

`plan07 next --json [--state DIR]` on a plan whose handed-out node is still the one to hand out
is answered without typer, pydantic or the CLI's twenty commands: each hand-out leaves the view
it printed in next.json, keyed by the SHA-256 of plan.json as it then was
(plan07.store.state.write_view); while plan.json still has exactly those bytes, `next` would print
the same again, so that text is printed (tests/test_entry.py compares the two paths byte for byte).
Any other case (another command or flag, no plan, a plan changed since, nothing handed out,
anything unexpected) goes to the full CLI, which does the same job with every check and every error
message.

`plan07 complete ID [--state DIR] [--timeout S] [--json]`, the gate's one call per node, runs
without typer and the CLI's command modules (`complete_args`, then plan07.cli.console, which the
typer command prints through as well: the same bytes either way, tests/test_entry.py); any other
spelling of it goes to the full CLI.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from pathlib import Path

# plan07.store.state's names (tests/test_entry.py checks they agree; importing plan07.store.state
# would build every pydantic model, which is what this path avoids)
STATE_ENV = "PLAN07_STATE"
DEFAULT_STATE = Path("build") / "07-task-decomposition-planning"
PLAN_FILE, VIEW_FILE, LOCK_FILE = "plan.json", "next.json", "plan.lock"
# plan07.caps.ARTIFACT_MAX_BYTES, the most plan07 ever writes to plan.json (checked likewise)
ARTIFACT_MAX_BYTES = 32 * 1024


def _state_arg(argv: list[str]) -> tuple[bool, str | None]:
    """(argv is `next --json [--state DIR]` in any order of the flags, the DIR or None)."""
    if not argv or argv[0] != "next":
        return False, None
    rest, state, seen_json = argv[1:], None, False
    i = 0
    while i < len(rest):
        a = rest[i]
        if a == "--json" and not seen_json:
            seen_json = True
        elif a == "--state" and state is None and i + 1 < len(rest):
            state = rest[i + 1]
            i += 1
        elif a.startswith("--state=") and state is None:
            state = a.partition("=")[2]
        else:
            return False, None
        i += 1
    if not seen_json or state == "" or (state is not None and state.startswith("-")):
        return False, None
    return True, state


def _read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file of at most `limit` bytes, never following a symlink and
    never blocking on a FIFO; None otherwise (the full CLI says what is wrong)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        return os.read(fd, limit + 1)
    finally:
        os.close(fd)


def _read_view(d: Path) -> str | None:
    """The view plan07 last handed out, if plan.json still holds the bytes it was computed on;
    both read under the plan's lock (shared)."""
    import fcntl

    try:
        fd = os.open(d / LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        fcntl.flock(fd, fcntl.LOCK_SH)
        raw = _read_regular(d / PLAN_FILE, ARTIFACT_MAX_BYTES)
        cached = _read_regular(d / VIEW_FILE, ARTIFACT_MAX_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    if raw is None or cached is None or any(  # a killed write's temp: the full CLI sweeps it
            n.startswith(".") and n.endswith(".tmp") for n in os.listdir(d)):  # noqa: PTH208
        return None
    data = json.loads(cached.decode("utf-8"))
    if not isinstance(data, dict) or data.get("plan_sha256") != hashlib.sha256(raw).hexdigest():
        return None
    text = data.get("text")
    return text if isinstance(text, str) and text.startswith("{") else None


def next_view(argv: list[str]) -> str | None:
    """The text `plan07 next --json` prints when the handed-out node stays the one to hand out
    (plan.json unchanged since that hand-out: nothing to write, nothing else to decide); None
    when the full CLI must answer."""
    ok, state = _state_arg(argv)
    if not ok:
        return None
    env = os.environ.get(STATE_ENV)
    d = Path(state) if state else (Path(env) if env else DEFAULT_STATE)
    try:
        return _read_view(d)
    except (ValueError, UnicodeDecodeError):
        return None


def complete_args(argv: list[str]) -> tuple[str, Path | None, float | None, bool, bool] | None:
    """(node id, state dir, timeout, json, quiet) when argv is `complete ID` with at most
    `--state DIR`, `--timeout SECONDS`, `--json` and `--quiet`/`-q` (each once, `--flag=value`
    too), as the full CLI parses them; None for anything else (help, another flag, a bad value:
    the full CLI says what)."""
    if len(argv) < 2 or argv[0] != "complete" or argv[1].startswith("-"):
        return None
    node_id, rest = argv[1], argv[2:]
    seen: dict[str, str | None] = {}
    i = 0
    while i < len(rest):
        a = rest[i]
        name, eq, value = a.partition("=")
        if a == "--json" and name not in seen:
            seen["--json"] = None
        elif a in ("--quiet", "-q") and "--quiet" not in seen:
            seen["--quiet"] = None
        elif name in ("--state", "--timeout") and name not in seen and (eq or i + 1 < len(rest)):
            if not eq:
                i += 1
                value = rest[i]
            if value.startswith("-") and not eq:
                return None
            seen[name] = value
        else:
            return None
        i += 1
    state = seen.get("--state")
    try:
        given = seen.get("--timeout")
        timeout = float(given) if given else None  # None: sized from the CP0 run
    except ValueError:
        return None
    if state == "" or seen.get("--timeout") == "":
        return None
    return (node_id, (Path(state) if state is not None else None), timeout, "--json" in seen,
            "--quiet" in seen)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = next_view(args)
    if text is not None:
        sys.stdout.write(text)
        return 0
    done = complete_args(args)
    if done is not None:  # the gate's one call per node: no typer, no CLI (plan07.cli.console)
        from plan07.cli import console

        node_id, state, timeout, as_json, quiet = done
        return console.guarded(lambda: console.complete(node_id, state, timeout, as_json,
                                                        quiet=quiet))
    from plan07.cli import main as cli_main

    return cli_main(args)


def run() -> None:  # pragma: no cover - console script shim
    raise SystemExit(main())
