"""The parsed-program cache (plan07.engine.cache): a hit is the same program, a changed file is
a miss, a corrupt or foreign entry is ignored, and the cache can be turned off."""

from __future__ import annotations

from pathlib import Path

import pytest

from plan07 import engine
from plan07.engine import cache, load_program
from plan07.engine.parser import parse_file
from plan07.errors import RuleError

RULES = 'a("x").\nb(X) :- a(X).\n'


@pytest.fixture
def rules_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("PLAN07_CACHE_DIR", str(d))
    monkeypatch.setattr(engine, "_cache", {})  # no in-process memo: every call reads the disk
    return d / "rules"


def _entries(d: Path) -> list[Path]:
    return sorted(d.glob("*.pickle"))


def test_a_hit_is_the_parsed_program(tmp_path: Path, rules_cache: Path) -> None:
    f = tmp_path / "r.dl"
    f.write_text(RULES)
    first = load_program(f)
    assert len(_entries(rules_cache)) == 1
    assert oct(rules_cache.stat().st_mode & 0o777) == "0o700"
    engine._cache.clear()
    again = load_program(f)
    assert again == first == parse_file(f)
    assert again is not first  # it came from the pickle


def test_changed_content_is_a_new_entry(tmp_path: Path, rules_cache: Path) -> None:
    f = tmp_path / "r.dl"
    f.write_text(RULES)
    load_program(f)
    f.write_text(RULES + 'c(X) :- b(X).\n')
    engine._cache.clear()
    assert "c" in load_program(f).derived()
    assert len(_entries(rules_cache)) == 2


@pytest.mark.parametrize("junk", [b"", b"not a pickle", b"\x80\x04K\x01.", b"\x80\x04\x95"])
def test_a_corrupt_entry_is_a_miss_and_is_rewritten(tmp_path: Path, rules_cache: Path,
                                                     junk: bytes) -> None:
    f = tmp_path / "r.dl"
    f.write_text(RULES)
    want = load_program(f)
    (entry,) = _entries(rules_cache)
    entry.write_bytes(junk)
    engine._cache.clear()
    assert load_program(f) == want
    assert entry.read_bytes() != junk


def test_a_directory_others_may_write_is_not_read(tmp_path: Path, rules_cache: Path) -> None:
    f = tmp_path / "r.dl"
    f.write_text(RULES)
    load_program(f)
    rules_cache.chmod(0o777)
    assert cache.get(cache.key(f, f.read_bytes())) is None
    engine._cache.clear()
    assert load_program(f) == parse_file(f)  # parsed again, nothing read from there


def test_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAN07_CACHE_DIR", "off")
    monkeypatch.setattr(engine, "_cache", {})
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    f = tmp_path / "r.dl"
    f.write_text(RULES)
    assert load_program(f) == parse_file(f)
    assert not (tmp_path / "home").exists()
    assert not (tmp_path / "xdg").exists()


def test_xdg_cache_home_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLAN07_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "plan07" / "rules"


def test_errors_are_not_cached(tmp_path: Path, rules_cache: Path) -> None:
    f = tmp_path / "r.dl"
    f.write_text("a(X) :- !a(X), b(X).\nb(\"x\").\n")  # unstratifiable
    with pytest.raises(RuleError):
        load_program(f)
    assert _entries(rules_cache) == []
    with pytest.raises(RuleError, match="not found"):
        load_program(tmp_path / "missing.dl")
