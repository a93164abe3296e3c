"""Build: plan07 is Python; recon's pure modules (plan07/evidence/native.py: COMPILED) are also
compiled with mypyc when the machine can (a C compiler and the Python headers), for the same
results ~1.1x faster (recon of sphinx: 1.35x `ast.parse` instead of 1.53x, measured by
benchmarks/perf/recon_compiled.py). Without a compiler, or with PLAN07_PURE=1 in the
environment, the install is pure Python. Beside the compiled modules the build records the hash
of each source it compiled (compiled.json); plan07 uses them only while those sources are
unchanged (native.py), so an edited checkout runs what it says until the next install.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

PACKAGE_DIR = Path("plan07/evidence")


def _native() -> Any:
    """plan07/evidence/native.py, loaded by its path (it imports only the standard library; the
    package itself needs plan07's dependencies, which a build does not have): its list of the
    modules to compile, its record's name and its digest are the ones the runtime checks."""
    spec = importlib.util.spec_from_file_location("plan07_build_native", PACKAGE_DIR / "native.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


native = _native()
# mypyc type-checks what it compiles: the imported modules are read, their errors are not ours
# to report here (the dev extra's `mypy` checks the whole package, strictly)
MYPY_CONFIG = "[mypy]\nfollow_imports = silent\nignore_missing_imports = True\n"


def note(text: str) -> None:
    print(f"plan07 build: {text}", file=sys.stderr)


def ext_modules() -> list[object]:
    if os.environ.get("PLAN07_PURE"):
        note("PLAN07_PURE is set: pure Python")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError as exc:  # (a build without build isolation, mypy not installed)
        note(f"no mypyc ({exc}): pure Python")
        return []
    config = Path(tempfile.mkdtemp()) / "mypyc.ini"
    config.write_text(MYPY_CONFIG, "utf-8")
    try:
        sources = [str(PACKAGE_DIR / f"{m}.py") for m in native.COMPILED]
        return list(mypycify(["--config-file", str(config), *sources], opt_level="3"))
    except (Exception, SystemExit) as exc:  # (mypyc exits on a type error it cannot compile)
        note(f"mypyc could not compile ({exc}): pure Python")
        return []


class BuildExt(build_ext):
    """build_ext that falls back to pure Python when compiling fails, and records the sources
    it compiled beside the compiled modules."""

    def run(self) -> None:
        if not self.extensions:
            return
        try:
            super().run()
        except Exception as exc:  # any compiler or linker failure: pure Python
            note(f"compiling failed ({exc}): pure Python")
            for ext in self.extensions:
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
            return
        out = Path(self.get_ext_fullpath("plan07.evidence.body")).parent
        digests = {m: native.source_digest(PACKAGE_DIR / f"{m}.py") for m in native.COMPILED}
        (out / native.BUILT).write_text(json.dumps(digests, indent=1) + "\n", "utf-8")


setup(ext_modules=ext_modules(), cmdclass={"build_ext": BuildExt})
