"""Whether recon's pure modules run compiled, and never compiled from other sources.

The install compiles COMPILED with mypyc when it can (setup.py; the same results, recon ~1.1x
faster: benchmarks/perf/recon_compiled.py) and records each module's source hash beside them
(BUILT). Python imports an extension module before the .py of the same name, so a compiled
module built from an older source (the file edited or checked out since the build) would run the
old code. `prefer_sources`, run by plan07.evidence before any of them is imported, checks the
recorded hashes against the sources and, if any differs or is missing, imports all of them from
their .py files (compiled together, they call each other natively: all or none); so it does
with PLAN07_PURE=1 in the environment. Stdlib only.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES, SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path

PACKAGE = "plan07.evidence"
# in import order (each imports only those before it)
COMPILED = ("syntax", "signatures", "callrefs", "body", "parse", "index", "resolve")
BUILT = "compiled.json"  # {module: sha256 of the source it was compiled from}, written by setup.py
HERE = Path(__file__).resolve().parent


def source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def built_from_sources(here: Path = HERE) -> bool | None:
    """None: nothing compiled here; True: every module's compiled file exists and was built from
    the source beside it; False: otherwise (some compiled, or built from other sources)."""
    present = [any((here / (name + s)).exists() for s in EXTENSION_SUFFIXES) for name in COMPILED]
    if not any(present):
        return None
    try:
        recorded = json.loads((here / BUILT).read_text("utf-8"))
        return all(present) and all(
            recorded.get(name) == source_digest(here / f"{name}.py") for name in COMPILED)
    except (OSError, ValueError, AttributeError):
        return False


def prefer_sources(here: Path = HERE) -> None:
    """Import COMPILED from their .py files unless their compiled files match them (or always,
    with PLAN07_PURE set in the environment: to compare, or to rule the compiled code out)."""
    found = built_from_sources(here)
    if found is None or (found and not os.environ.get("PLAN07_PURE")):
        return
    package = sys.modules[PACKAGE]
    for name in COMPILED:
        full = f"{PACKAGE}.{name}"
        if full in sys.modules:
            continue
        loader = SourceFileLoader(full, str(here / f"{name}.py"))
        spec = spec_from_loader(full, loader)
        assert spec is not None  # (a SourceFileLoader always gives one)
        module = module_from_spec(spec)
        sys.modules[full] = module
        try:
            loader.exec_module(module)
        except BaseException:
            del sys.modules[full]
            raise
        setattr(package, name, module)


def compiled() -> bool:
    """Whether the recon modules this process imported are the compiled ones."""
    files = [getattr(sys.modules.get(f"{PACKAGE}.{n}"), "__file__", None) or "" for n in COMPILED]
    return all(f and not f.endswith(".py") for f in files)
