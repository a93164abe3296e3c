"""Shared fixtures. Tests never reach the network."""

from __future__ import annotations

import os
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


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """plan07's disk caches (parsed rules, recon facts; plan07.store.diskcache) live in a folder of
    this session, inherited by the CLI processes tests start: no test writes the user's
    ~/.cache, and none reads an entry that another run left there."""
    before = os.environ.get("PLAN07_CACHE_DIR")
    os.environ["PLAN07_CACHE_DIR"] = str(tmp_path_factory.mktemp("plan07-cache"))
    yield
    if before is None:
        os.environ.pop("PLAN07_CACHE_DIR", None)
    else:
        os.environ["PLAN07_CACHE_DIR"] = before


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


@pytest.fixture(scope="session")
def checker() -> Iterator[Any]:
    """One long-lived A/B test worker (plan07.ab.checker.Checker) per xdist worker."""
    from plan07.ab.checker import Checker

    with Checker() as c:
        yield c
