"""The steps that can take a while (recon, the model call, the ordering, the baseline run, a
check), named by the code that runs them and shown by whoever listens. Pure: a stage only names
its step; a skin's listener (the CLI's line on stderr, plan07.cli.progressline) shows it, and
with no listener nothing is shown, so the library, the MCP server and the tests print nothing.

    with progress.step("recon of flask"):        # where the work is
        ...
    with progress.listening(listener):           # in a skin, around a call of the library
        Planner.create(...)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class Listener(Protocol):
    def begin(self, label: str) -> None:
        """A step started (steps nest: the innermost one is the one running)."""

    def end(self, label: str, ok: bool) -> None:
        """The step that began last ended (`ok`: without an exception)."""


_listener: Listener | None = None


@contextmanager
def step(label: str) -> Iterator[None]:
    """Announce the step `label` to the listener, if any, for as long as the block runs."""
    listener = _listener
    if listener is None:
        yield
        return
    listener.begin(label)
    ok = False
    try:
        yield
        ok = True
    finally:
        listener.end(label, ok)


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Steps announced inside the block go to `listener` (None: to nobody)."""
    global _listener
    saved, _listener = _listener, listener
    try:
        yield
    finally:
        _listener = saved
