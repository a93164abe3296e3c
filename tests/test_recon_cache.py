"""The recon facts cache (plan07.evidence.factcache): a hit gives the graph a fresh parse gives
without parsing, an edited or moved file is a miss, a corrupt entry is a miss and is rewritten,
and `PLAN07_CACHE_DIR=off` writes nothing."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from plan07.evidence import parse
from plan07.evidence.recon import recon as run_recon

# the module itself: plan07.evidence exports a function of that name
recon = importlib.import_module("plan07.evidence.recon")

PKG = {
    "pkg/__init__.py": "",
    "pkg/core.py": "class Config:\n    timeout: int = 30\n\n\n"
                   "def load(c: Config) -> int:\n    return c.timeout\n",
    "pkg/use.py": "from pkg.core import Config, load\n\n\n"
                  "def main():\n    return load(Config())\n",
    "tests/test_use.py": "from pkg.use import main\n\n\n"
                         "def test_main():\n    assert main() == 30\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel, text in PKG.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("PLAN07_CACHE_DIR", str(d))
    return d / "recon"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = parse.parse_module

    def counting(source: str, file: str, test: bool | None = None) -> parse.ModuleFacts:
        seen.append(file)
        return real(source, file, test)

    monkeypatch.setattr(recon, "parse_module", counting)
    return seen


def _graph(repo: Path) -> tuple[object, ...]:
    r = run_recon(repo, workers=1)
    return r.nodes, r.edges, r.docs, r.arity, r.passed, r.warnings


def test_a_hit_is_the_graph_without_a_parse(repo: Path, cache: Path, parses: list[str]) -> None:
    first = _graph(repo)
    assert sorted(parses) == sorted(PKG)
    assert len(list(cache.glob("*.pickle"))) == len(PKG)
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    parses.clear()
    assert _graph(repo) == first
    assert parses == []


def test_an_edited_or_moved_file_is_parsed_again(repo: Path, cache: Path,
                                                 parses: list[str]) -> None:
    _graph(repo)
    parses.clear()
    (repo / "pkg/use.py").write_text(PKG["pkg/use.py"] + "\n\ndef extra():\n    return main()\n")
    (repo / "pkg/core.py").rename(repo / "pkg/base.py")  # same bytes, another module
    nodes = {n.id for n in run_recon(repo, workers=1).nodes}
    assert sorted(parses) == ["pkg/base.py", "pkg/use.py"]
    assert {"pkg.use.extra", "pkg.base.Config"} <= nodes
    assert "pkg.core.Config" not in nodes


@pytest.mark.parametrize("junk", [b"", b"not a pickle", b"\x80\x04K\x01.", b"\x80\x04\x95"])
def test_a_corrupt_entry_is_a_miss_and_is_rewritten(repo: Path, cache: Path, parses: list[str],
                                                     junk: bytes) -> None:
    want = _graph(repo)
    for entry in cache.glob("*.pickle"):
        entry.write_bytes(junk)
    parses.clear()
    assert _graph(repo) == want
    assert sorted(parses) == sorted(PKG)
    assert all(e.read_bytes() != junk for e in cache.glob("*.pickle"))


def test_a_file_that_does_not_parse_is_a_warning_every_time(repo: Path, cache: Path) -> None:
    (repo / "pkg/broken.py").write_text("def f(:\n")
    for _ in range(2):
        assert any(w.startswith("pkg/broken.py:1: does not parse") for w in _graph(repo)[-1])


def test_a_coding_line_and_crlf_read_as_tokenize_reads_them(repo: Path, cache: Path) -> None:
    (repo / "pkg/latin.py").write_bytes(
        b"# -*- coding: latin-1 -*-\r\ndef caf\xe9():\r\n    '''Caf\xe9 au lait.'''\r\n")
    cold = _graph(repo)
    assert "pkg.latin.café" in {n.id for n in cold[0]}  # type: ignore[attr-defined]
    assert _graph(repo) == cold


def test_off_writes_nothing(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            parses: list[str]) -> None:
    monkeypatch.setenv("PLAN07_CACHE_DIR", "off")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    first = _graph(repo)
    assert _graph(repo) == first
    assert len(parses) == 2 * len(PKG)
    assert not (tmp_path / "home").exists()
    assert not (tmp_path / "xdg").exists()
