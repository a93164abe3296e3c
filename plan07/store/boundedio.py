"""Bounded input (docs/safety.md "Hostile input"): every file plan07 reads is a regular file of
bounded size, every JSON document a bounded depth, and what is wrong is one InputError naming the
file. I/O: os, json (imported when a document is decoded: reading the rule file needs none).

A FIFO, a directory or a device given where a file is expected is refused before it is opened for
reading (it would block, or read forever); the open itself is non-blocking and re-checked with
`fstat`, so a file swapped for a FIFO between the two checks cannot hang either. Python's JSON
decoder raises RecursionError on a document nested ~1000 deep; that, and any deeper recursion the
validators would make, is an InputError with the cap named (`caps.JSON_MAX_DEPTH`). What plan07
writes goes through `write_atomic` (a reader sees the old file or the new one, never a part).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from plan07 import caps
from plan07.errors import InputError


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def require_regular(path: str | Path, *, what: str, field: str | None = None) -> None:
    """InputError unless `path` is an existing regular file (checked without opening it)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"{what} file not found", source=str(p), field=field) from None
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=str(p),
                         field=field) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what} is {_kind(st.st_mode)}, not a regular file", source=str(p),
                         field=field)


def read_bytes(path: str | Path, *, what: str, max_bytes: int | None = None,
               field: str | None = None) -> bytes:
    """The bytes of a regular file, at most `max_bytes` (default: the cap of its kind `what`,
    caps.input_cap), refused from its size before it is read (the cap named)."""
    cap_name, cap = caps.input_cap(what)
    if max_bytes is not None:
        cap_name, cap = ("INPUT_MAX_BYTES" if max_bytes == caps.INPUT_MAX_BYTES else cap_name,
                         max_bytes)
    max_bytes = cap
    p = Path(path)
    require_regular(p, what=what, field=field)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=str(p),
                         field=field) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{what} is {_kind(st.st_mode)}, not a regular file",
                             source=str(p), field=field)
        if st.st_size > max_bytes:
            raise InputError(f"{what} is {st.st_size} bytes", source=str(p), field=field,
                             cap=f"{cap_name} {max_bytes}")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:  # the file grew while read
                raise InputError(f"{what} is over {max_bytes} bytes", source=str(p),
                                 field=field, cap=f"{cap_name} {max_bytes}")
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", source=str(p),
                         field=field) from None
    finally:
        os.close(fd)


def read_text(path: str | Path, *, what: str, max_bytes: int | None = None,
              field: str | None = None) -> str:
    """`read_bytes` decoded as UTF-8 (a binary file is one InputError, not a traceback)."""
    data = read_bytes(path, what=what, max_bytes=max_bytes, field=field)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} is not UTF-8 text (byte {exc.start}: {exc.reason})",
                         source=str(path), field=field) from None


def too_deep(source: str | None, what: str = "JSON document") -> InputError:
    return InputError(f"{what} is nested too deeply", source=source,
                      cap=f"JSON_MAX_DEPTH {caps.JSON_MAX_DEPTH}")


def loads(text: str | bytes, *, source: str | None = None) -> Any:
    """json.loads, with a document nested deeper than `caps.JSON_MAX_DEPTH` refused (and the
    decoder's own RecursionError turned into the same one-line InputError), and NaN or Infinity
    (which Python's decoder takes) refused as the JSON standard has it."""
    import json

    seen: list[str] = []

    def constant(name: str) -> Any:  # NaN, Infinity: Python's JSON, not RFC 8259's
        seen.append(name)
        return _Constant(name)

    try:
        data = json.loads(text, parse_constant=constant)
    except RecursionError:
        raise too_deep(source) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                         source=source) from None
    if depth_exceeds(data, caps.JSON_MAX_DEPTH):
        raise too_deep(source)
    if seen:
        raise InputError(f"{seen[0]} is no JSON value", field=_path_of(data), source=source)
    return data


class _Constant(str):
    """A NaN or Infinity where `loads` met it: found again to name its JSON path."""


def _path_of(data: Any) -> str:
    """The JSON path of the first `_Constant` in `data` (`nodes[2].epoch`)."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Constant):
            return path or "(top level)"
        if isinstance(value, dict):
            stack += [(v, f"{path}.{k}" if path else str(k)) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(v, f"{path}[{i}]") for i, v in enumerate(value)]
    return "(top level)"


def depth_exceeds(data: Any, limit: int) -> bool:
    """True iff `data` nests lists/dicts more than `limit` deep. Iterative (no recursion), and
    it visits containers only, so a large flat document costs one pass over its containers."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def walk(root: str | Path, *, what: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """os.walk(`root`) (prune the yielded folder list in place), refused past
    `caps.WALK_MAX_ENTRIES` files and folders seen: a walk of `/` or of a home directory is an
    InputError within about a second, not minutes of reading."""
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        seen += len(dirnames) + len(filenames)
        if seen > caps.WALK_MAX_ENTRIES:
            raise InputError(f"{what}: more than {caps.WALK_MAX_ENTRIES} files and folders; "
                             "is it the repository? (pass the repository's own folder)",
                             source=str(root), cap=f"WALK_MAX_ENTRIES {caps.WALK_MAX_ENTRIES}")
        yield dirpath, dirnames, filenames


def write_atomic(path: Path, text: str) -> None:
    """temp file in the same directory + fsync + rename + fsync of the directory."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        try:
            data = memoryview(text.encode("utf-8"))
            while data:  # os.write may write less than asked (a signal, a nearly full disk)
                data = data[os.write(fd, data):]
            os.fsync(fd)
        finally:
            os.close(fd)
        tmp.replace(path)
    except BaseException:  # a full disk, an interrupt: the old file stays, no temp is left
        tmp.unlink(missing_ok=True)
        raise
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def sweep_temps(*folders: Path) -> list[str]:
    """Delete the temp files of writes a killed plan07 left in `folders` (`write_atomic`'s
    `.<name>.<pid>.tmp` whose writer is gone; a live writer's is never touched, so no lock is
    needed). Returns their names. One directory listing each."""
    out = []
    for folder in folders:
        try:
            names = [e.name for e in os.scandir(folder) if e.name.endswith(".tmp")]
        except OSError:
            continue
        for name in names:
            pid = name.rsplit(".", 2)[-2] if name.startswith(".") and name.count(".") >= 3 \
                else ""
            if pid.isdigit() and not _running(int(pid)):
                with contextlib.suppress(OSError):
                    (Path(folder) / name).unlink()
                    out.append(name)
    return out


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: running
        return True
    return True
