"""Shared fixtures. Tests never reach the network."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite the golden files the tests compare against, then review the "
                          "diff (the only switch for it; `plan07 rules test --accept` is the "
                          "CLI's own for rule fixtures)")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    """True under `pytest --update-goldens`: a golden test writes what it got first."""
    return bool(request.config.getoption("--update-goldens"))


@pytest.fixture
def repo_root() -> Path:
    return ROOT


@pytest.fixture
def no_pytest_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks that run pytest in a small test repo skip this venv's plugins (hypothesis, xdist,
    timeout): they cost about a second per run and those repos need none. Speed only.
    A module opts in with `pytestmark = pytest.mark.usefixtures("no_pytest_plugins")`."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture(scope="module")
def checker() -> Iterator[Any]:
    """One long-lived A/B test worker (plan07.ab.checker.Checker) per test module."""
    from plan07.ab.checker import Checker

    with Checker() as c:
        yield c
