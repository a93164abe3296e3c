"""The CLI's progress line: a step that has run for a second (plan07.progress) is shown on stderr
as `⠙ recon of flask  3s`, redrawn in place, and left as `recon of flask: 4.2s` when it ends.
Only on a terminal: piped, redirected or with `--quiet`, nothing is drawn. I/O: stderr, one
drawing thread.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from plan07 import progress

SHOW_AFTER_S = 1.0  # a step shorter than this is never shown
TICK_S = 0.1
FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def wanted(stream: TextIO, quiet: bool) -> bool:
    """Draw on `stream`: not asked to be quiet, and a terminal."""
    if quiet:
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a stream without isatty, or a closed one
        return False


class Line:
    """A `progress.Listener` that draws the innermost running step on `stream`."""

    def __init__(self, stream: TextIO, *, show_after_s: float | None = None) -> None:
        self._stream = stream
        self._show_after = SHOW_AFTER_S if show_after_s is None else show_after_s
        self._steps: list[tuple[str, float]] = []
        self._drawn = 0  # characters of the line drawn now (0: none)
        self._frame = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="plan07-progress", daemon=True)

    def begin(self, label: str) -> None:
        with self._lock:
            self._steps.append((label, time.monotonic()))
            if not self._thread.is_alive() and not self._stop.is_set():
                self._thread.start()

    def end(self, label: str, ok: bool) -> None:
        with self._lock:
            if not self._steps:
                return
            name, start = self._steps.pop()
            took = time.monotonic() - start
            if took >= self._show_after:
                self._write(f"{name}: {took:.1f}s{'' if ok else ' (stopped)'}", final=True)
            else:
                self._clear()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        with self._lock:
            self._clear()

    def _run(self) -> None:
        while not self._stop.wait(TICK_S):
            with self._lock:
                if not self._steps:
                    continue
                name, start = self._steps[-1]
                took = time.monotonic() - start
                if took >= self._show_after:
                    self._frame = (self._frame + 1) % len(FRAMES)
                    self._write(f"{FRAMES[self._frame]} {name}  {took:.0f}s", final=False)

    def _write(self, text: str, *, final: bool) -> None:
        pad = " " * max(0, self._drawn - len(text))
        try:
            self._stream.write(f"\r{text}{pad}" + ("\n" if final else ""))
            self._stream.flush()
        except (OSError, ValueError):  # the terminal went away: stop drawing, keep working
            self._stop.set()
        self._drawn = 0 if final else len(text)

    def _clear(self) -> None:
        if self._drawn:
            self._write("", final=False)
            try:
                self._stream.write("\r")
                self._stream.flush()
            except (OSError, ValueError):
                self._stop.set()
            self._drawn = 0


@contextmanager
def shown(quiet: bool = False, stream: TextIO | None = None) -> Iterator[None]:
    """Show the steps run inside the block on `stream` (default stderr) when `wanted`."""
    out = sys.stderr if stream is None else stream
    if not wanted(out, quiet):
        yield
        return
    line = Line(out)
    try:
        with progress.listening(line):
            yield
    finally:
        line.close()
