"""The `plan07` console script: a fast path for the one command an agent calls in a loop, then
the typer CLI (plan07.cli) for everything else. I/O only.

`plan07 next --json [--state DIR]` on a plan whose handed-out node is still the one to hand out
is answered from plan.json's own bytes, without typer, pydantic or the CLI's twenty commands:
when those bytes are exactly what plan07 last wrote (their SHA-256 is in plan.json.sha256, so
the model validated them on the way out) the node is read from the JSON and its §3.4 view
printed, byte for byte what the full path prints (tests/test_entry.py compares the two). Any
other case — another command or flag, no plan, a hand-edited or unstamped plan, a node to hand
out afresh, nothing left to hand out, anything unexpected in the JSON — goes to the full CLI,
which does the same job with every check and every error message.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

# plan07.state's names (tests/test_entry.py checks they agree; importing plan07.state would
# build every pydantic model, which is what this path avoids)
STATE_ENV = "PLAN07_STATE"
DEFAULT_STATE = Path("build") / "07-task-decomposition-planning"
PLAN_FILE, STAMP_FILE, LOCK_FILE = "plan.json", "plan.json.sha256", "plan.lock"
# plan07.caps.MAX_EDIT_FILES / MAX_TEST_CALLS, the PermittedActions defaults, and
# ARTIFACT_MAX_BYTES, the most plan07 ever writes to plan.json (checked likewise)
MAX_EDIT_FILES, MAX_TEST_CALLS, ARTIFACT_MAX_BYTES = 5, 10, 32 * 1024


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


def _read_plan(d: Path) -> dict[str, Any] | None:
    """plan.json as plan07 last wrote it (its stamp matches), read under the plan's lock."""
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
        stamp = _read_regular(d / STAMP_FILE, 256)
    except OSError:
        return None
    finally:
        os.close(fd)
    if raw is None or stamp is None or len(raw) > ARTIFACT_MAX_BYTES:
        return None
    if stamp.decode("ascii", "replace").strip() != hashlib.sha256(raw).hexdigest():
        return None
    data = json.loads(raw.decode("utf-8"))
    return data if isinstance(data, dict) else None


def next_view(argv: list[str]) -> str | None:
    """The text `plan07 next --json` prints when the handed-out node stays the one to hand out
    (nothing to write, nothing else to decide); None when the full CLI must answer."""
    ok, state = _state_arg(argv)
    if not ok:
        return None
    env = os.environ.get(STATE_ENV)
    d = Path(state) if state else (Path(env) if env else DEFAULT_STATE)
    try:
        data = _read_plan(d)
        if data is None or not isinstance(data.get("active"), str):
            return None
        node = next((n for n in data["nodes"] if n.get("id") == data["active"]), None)
        # Planner.next keeps the handed-out node only while it is ready and not complete
        if node is None or node.get("state") == "complete" or node.get("status") != "ready":
            return None
        deps = node["dependencies"]
        fields = (node["id"], node["obligation"], node["target_entity"], node["validation"])
        if not all(isinstance(x, str) for x in (*fields, *deps)):
            return None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    view = {  # DriverView.model_dump(mode="json", by_alias=True): same keys, same order
        "node_id": node["id"],
        "obligation": node["obligation"],
        "target_entity": node["target_entity"],
        "preconditions": {dep: "complete" for dep in deps},
        "permitted_actions": {"read": True, "edit": True, "test": True,
                              "bounds": {"max_edit_files": MAX_EDIT_FILES,
                                         "max_test_calls": MAX_TEST_CALLS}},
        "required_validation": node["validation"],
    }
    return json.dumps(view, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = next_view(args)
    if text is not None:
        sys.stdout.write(text)
        return 0
    from plan07.cli import main as cli_main

    return cli_main(args)


def run() -> None:  # pragma: no cover - console script shim
    raise SystemExit(main())
