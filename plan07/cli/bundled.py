"""The files plan07 ships beside its code, found: the demo's example and the per-rule fixtures.
I/O: looks at the filesystem.

A source checkout's own folders come first (examples/, tests/rules/: what a contributor edits and
the suite runs); a regular install (a wheel, `pip install .`) carries copies inside the package,
plan07/examples/ and plan07/rules/fixtures/ (pyproject `[tool.setuptools.package-dir]`). A folder
counts as the checkout only beside its pyproject.toml, never a stray `examples/` in
site-packages.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]
_SOURCE = _PACKAGE.parent


def _checkout() -> Path | None:
    return _SOURCE if (_SOURCE / "pyproject.toml").is_file() else None


def examples() -> Path:
    """The folder holding the bundled examples (session_timeout/)."""
    src = _checkout()
    return src / "examples" if src is not None else _PACKAGE / "examples"


def example(name: str = "session_timeout") -> Path:
    return examples() / name


def fixtures() -> Path:
    """The per-rule fixture root: tests/rules/<rule>/<case>/ in a checkout, plan07/rules/fixtures
    in an install."""
    src = _checkout()
    return src / "tests" / "rules" if src is not None else _PACKAGE / "rules" / "fixtures"


def fixtures_beside(rule_file: Path) -> Path | None:
    """The fixtures of the rule file at `rule_file`, when it has some: tests/rules beside the
    `rules/` folder holding it (a checkout), or fixtures/ beside it (the shipped rule file)."""
    parents = rule_file.resolve().parents
    for candidate in ((parents[1] / "tests" / "rules") if len(parents) > 1 else None,
                      rule_file.resolve().parent / "fixtures"):
        if candidate is not None and candidate.is_dir():
            return candidate
    return None
