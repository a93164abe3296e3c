"""Built-in recon (the 03 default) for a Python repository: read its files, parse each with `ast`,
resolve across files. I/O (reads the tree); the work is done by the pure parse and resolve modules.
"""

from __future__ import annotations

import tokenize
from pathlib import Path

from plan07.errors import InputError
from plan07.evidence.facts import ModuleFacts
from plan07.evidence.files import python_files
from plan07.evidence.parse import parse_module
from plan07.evidence.resolve import ReconResult, build_recon


def read_modules(repo: Path) -> tuple[list[ModuleFacts], list[str]]:
    """Every parsable module's facts, and one warning per file that was skipped."""
    if not repo.is_dir():
        raise InputError("not a directory; give the repository root", source=str(repo))
    modules: list[ModuleFacts] = []
    warnings: list[str] = []
    for rel in python_files(repo):
        try:
            with tokenize.open(repo / rel) as fh:  # honours a PEP 263 coding line
                source = fh.read()
            modules.append(parse_module(source, rel))
        except SyntaxError as exc:
            warnings.append(f"{rel}:{exc.lineno or 0}: does not parse ({exc.msg}); skipped")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            warnings.append(f"{rel}: cannot read ({exc}); skipped")
    return modules, warnings


def recon(repo: Path) -> ReconResult:
    """The recon graph of the Python repository at `repo`; unreadable files become warnings."""
    modules, warnings = read_modules(repo)
    result = build_recon(modules)
    result.warnings = warnings + result.warnings
    return result
