"""The cycle collector around plan07's allocation-heavy work (recon, planning, pyDatalog).

CPython's cycle collector runs as allocations pile up, and each full collection rescans every
live object of the process. Planning a large repository allocates millions of objects (the
evidence, its facts, the models), so the collector's rescans grew with the heap: a quarter of
`plan` on sympy, half of a pyDatalog evaluation. Both helpers act only when no other thread
runs, so a pause never reaches code that is not plan07's; each leaves the collector as it found
it.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator


def _alone() -> bool:
    return threading.active_count() == 1


@contextlib.contextmanager
def paused(*, promote: bool = False) -> Iterator[None]:
    """The collector off while the block runs. For work that builds few reference cycles (ASTs,
    facts, the recon graph and the plan's models hold none): reference counting frees what it
    drops, and the few cycles left wait for the next collection after the block.

    `promote`: what the block leaves alive goes to the oldest generation at the end
    (`gc.freeze` then `gc.unfreeze`, two list splices), so the first allocation after the block
    does not rescan all of it as young objects (recon: every fact and the whole graph, 4% of a
    first recon of sphinx). Only when nothing else is frozen."""
    pause = _alone() and gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if pause:
            if promote and gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


@contextlib.contextmanager
def isolated() -> Iterator[None]:
    """The collector off while the block runs, with every object that existed before it frozen
    (`gc.freeze`); at the end what the block left in cycles is collected, a scan of the block's
    own survivors only, before the frozen objects come back. For work that builds many cycles
    (pyDatalog's clauses and queries): it pays for its own garbage, never for a rescan of the
    caller's heap, and leaves none behind."""
    if not _alone():
        yield
        return
    was = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.collect()
        gc.unfreeze()
        if was:
            gc.enable()
