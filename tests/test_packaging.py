"""A regular (non-editable) install carries everything plan07 reads at run time.

Checked by hand (a wheel build needs the network for its build backend, tests never do):
`pip install --no-deps . && find site-packages/plan07 -name '*.dl'` lists plan07/rules/ordering.dl.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_subpackage_is_listed_in_pyproject() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(pyproject["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "plan07").rglob("__init__.py")
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
