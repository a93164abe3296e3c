"""The interpreter that runs a plan's checks (§3.5 step 1), and the environment it runs them in.
I/O: reads the environment and looks for files; runs nothing.

`find_python`: `plan07 plan --python PATH`, else the ecosystem's order: `$VIRTUAL_ENV` (unless it
is plan07's own environment), `REPO/.venv`, `REPO/venv`; else plan07's own interpreter, with a
one-line warning. Plan07's own pytest plugins never load into the repo's run (`run_env`): the
repo's interpreter does not have them, and when plan07's own interpreter is the fallback, plugin
autoloading is off (`PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`) and every `PYTEST_*` variable of
plan07's process (xdist workers, addopts) is dropped.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plan07.errors import InputError

PythonSource = Literal["--python", "VIRTUAL_ENV", ".venv", "venv", "plan07"]


@dataclass(frozen=True)
class Interpreter:
    """The Python that runs a plan's checks, and where it was found."""

    path: str
    source: PythonSource

    @property
    def own(self) -> bool:
        """True when this is plan07's own interpreter (the fallback, or --python naming it):
        its pytest plugins are plan07's, never loaded into the repo's run."""
        if self.source == "plan07":
            return True
        p = Path(self.path).absolute()
        return p == Path(sys.executable).absolute() or p.parent.parent == Path(sys.prefix)

    def warning(self) -> str | None:
        """One line when the fallback is used: the repo's dependencies are probably missing."""
        if self.source != "plan07":
            return None
        return ("warning: no environment of the repository found ($VIRTUAL_ENV, REPO/.venv, "
                f"REPO/venv); checks run with plan07's own interpreter {self.path}; pass "
                "--python PATH to use the repo's")


def _venv_python(root: Path) -> Path | None:
    for rel in ("bin/python", "bin/python3", "Scripts/python.exe"):
        p = root / rel
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


def _own_prefix() -> Path:
    return Path(sys.prefix).resolve()


def find_python(repo: Path, explicit: str | Path | None = None,
                env: Mapping[str, str] | None = None) -> Interpreter:
    """The repo's interpreter: `explicit` (a python executable, or a virtualenv directory),
    else `$VIRTUAL_ENV` (not plan07's own), `REPO/.venv`, `REPO/venv`, else plan07's own.
    A bad `explicit` path is an InputError (one line, exit 2)."""
    env = os.environ if env is None else env
    if explicit is not None and str(explicit) != "":
        p = Path(explicit).expanduser()
        if p.is_dir():
            found = _venv_python(p)
            if found is None:
                raise InputError(f"{p} is a directory with no bin/python; pass the interpreter "
                                 "itself or a virtualenv directory", field="--python")
            p = found
        if not p.is_file() or not os.access(p, os.X_OK):
            raise InputError(f"{p} is not an executable file; pass the repo's Python "
                             "interpreter (e.g. REPO/.venv/bin/python)", field="--python")
        return Interpreter(str(p.absolute()), "--python")
    venv = env.get("VIRTUAL_ENV", "").strip()
    if venv and Path(venv).resolve() != _own_prefix():
        found = _venv_python(Path(venv))
        if found is not None:
            return Interpreter(str(found.absolute()), "VIRTUAL_ENV")
    for name in (".venv", "venv"):
        found = _venv_python(Path(repo) / name)
        if found is not None:
            src: PythonSource = ".venv" if name == ".venv" else "venv"
            return Interpreter(str(found.absolute()), src)
    return Interpreter(sys.executable, "plan07")


def run_env(interp: Interpreter, base: Mapping[str, str]) -> dict[str, str]:
    """The environment a check runs in, from `base` (the allowlisted environment): none of
    plan07's own pytest settings (`PYTEST_*`: xdist worker ids, addopts, plugins, the current
    test), and, on plan07's own interpreter, no plugin autoloading (its plugins are plan07's,
    not the repo's). The repo's interpreter loads the repo's plugins as it always does."""
    env = {k: v for k, v in base.items()
           if not k.startswith(("PYTEST_", "COV_CORE_"))
           or k == "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}  # loads less, never more: kept
    if interp.own:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    elif "VIRTUAL_ENV" in env:  # plan07's venv is not the repo's: point it at the repo's
        env["VIRTUAL_ENV"] = str(Path(interp.path).parent.parent)
    return env
