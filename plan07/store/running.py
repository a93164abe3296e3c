"""Records of running checks (docs/safety.md "A check ends with its processes"). I/O: one
private folder per user, /proc.

While a check runs, a file names the plan07 process that started it, the check's supervisor
(plan07.gate.supervisor, or a warm check server) and the check's session, each with its start
time (a pid alone may have been reused), and the PLAN07_CHECK value in the check's environment.
The supervisor ends the check when plan07 dies; `sweep` is for when it was killed as well: a
record whose plan07 is gone names a check nobody ends, and `sweep` ends its supervisor and every
process still in its session or holding its PLAN07_CHECK value. The folder is
`$XDG_RUNTIME_DIR/plan07-checks` (cleared at logout, as pids are), else `running/` in plan07's
cache folder (plan07.store.diskcache; none with `PLAN07_CACHE_DIR=off` and no runtime dir).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path


def folder() -> Path | None:
    """The records' folder (private, created when absent), or None: no records are kept."""
    from plan07.store.diskcache import cache_dir, usable

    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    d = Path(runtime) / "plan07-checks" if runtime and Path(runtime).is_absolute() else \
        cache_dir("running")
    return d if d is not None and usable(d) else None


def start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot), None when there is none."""
    fields = _stat(pid)
    return int(fields[19]) if fields else None


def _stat(pid: int | str) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (state, ppid, pgrp, session, ...)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:  # noqa: PTH123
            fields = fh.read().rsplit(b")", 1)[1].decode("ascii", "replace").split()
    except (OSError, IndexError):
        return None
    return fields if len(fields) > 19 else None


def started(supervisor: int, check: int, mark: str = "") -> Path | None:
    """Record a check while it runs; None when no record can be kept (it is not needed for
    the check to end: only for a sweep after its supervisor is killed too)."""
    d = folder()
    me = os.getpid()
    if d is None:
        return None
    body = {"owner": [me, start_time(me)], "supervisor": [supervisor, start_time(supervisor)],
            "check": [check, start_time(check)], "mark": mark}
    path = d / f"{me}-{supervisor}-{check}.json"
    try:  # a torn record (a kill while it is written) is dropped by the next sweep
        path.write_text(json.dumps(body))
    except OSError:
        return None
    return path


def ended(path: Path | None) -> None:
    """The check of record `path` ended (its processes with it)."""
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def _alive(entry: object) -> bool:
    """True when `entry` ([pid, start time]) is a process that is still running."""
    if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], int)):
        return False
    now = start_time(entry[0])
    return now is not None and (entry[1] is None or now == entry[1])


def sweep() -> int:
    """End the checks a killed plan07 left (its supervisor killed too); returns how many
    processes were ended. Records of a live plan07 are left alone; cheap when there is no
    record (one directory listing)."""
    d = folder()
    ended_n = 0
    for f in sorted(d.glob("*.json")) if d is not None else []:
        try:
            rec = json.loads(f.read_text())
            owner, sup, check = rec["owner"], rec["supervisor"], rec["check"]
        except (OSError, ValueError, KeyError, TypeError):
            ended(f)
            continue
        if _alive(owner):
            continue
        if _alive(sup) and sup[0] != os.getpid():
            with contextlib.suppress(OSError):
                os.kill(sup[0], signal.SIGKILL)
                ended_n += 1
        if isinstance(check, list) and len(check) == 2 and all(isinstance(x, int)
                                                                for x in check):
            mark = rec.get("mark")
            ended_n += _end_check(check[0], check[1], mark if isinstance(mark, str) else "")
        ended(f)
    return ended_n


def _end_check(sid: int, since: int, mark: str) -> int:
    """SIGKILL every process started at `since` or later that is in session (or group) `sid`,
    or whose environment holds PLAN07_CHECK=`mark` (plan07.gate.supervisor: what left the
    check's session keeps it, unless it cleared its environment)."""
    needle = f"\0PLAN07_CHECK={mark}\0".encode() if len(mark) >= 16 else None
    n = 0
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        name = entry.name
        if not name.isdigit() or int(name) == os.getpid():
            continue
        fields = _stat(name)
        if not fields or int(fields[19]) < since:
            continue
        ours = sid in (int(fields[2]), int(fields[3]))
        if not ours and needle is not None:
            with contextlib.suppress(OSError):
                ours = needle in b"\0" + (entry / "environ").read_bytes()
        if ours:
            with contextlib.suppress(OSError):
                os.kill(int(name), signal.SIGKILL)
                n += 1
    return n
