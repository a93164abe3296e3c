"""Built-in recon on a small repository the test writes: nodes, kinds, signatures and the edges a
reader expects (calls through imports, self, super, inheritance, a Django migration, pytest tests,
a file that does not parse, ignored and vendored paths)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from plan07.evidence.build import resolve_seed
from plan07.evidence.recon import recon
from plan07.evidence.resolve import ReconResult

FILES = {
    "pkg/__init__.py": "from .auth import SessionManager\n",
    "pkg/auth.py": '''
"""Sessions."""
from dataclasses import dataclass
import os


@dataclass
class SessionConfig:
    timeout: int = 30
    name: str = "s"


def helper(x):
    return x


class SessionManager:
    """Loads sessions."""

    def __init__(self, config: SessionConfig | None = None):
        self.config = config or SessionConfig()
        self.store = Store()

    def load(self, key: str, *, retries: int = 1) -> "Session":
        """Load one session."""
        os.path.join("a", "b")          # external: dropped
        undefined_thing()               # unresolvable: dropped
        self._read(key)
        self.store.get(key)             # through the attribute's known class
        return helper(key)

    def _read(self, key):
        return SessionConfig(timeout=5)


class Store:
    def get(self, key):
        return key


class RedisSessionManager(SessionManager):
    def load(self, key: str, *, retries: int = 1):
        return super().load(key)


class Session:
    pass
''',
    "pkg/cli.py": '''
from pkg import auth
from .auth import SessionManager as SM
from . import auth as a2


def main():
    m = SM()
    m.load("k")
    auth.helper(1)
    a2.helper(2)
    local = lambda y: y
    local(3)


def shadow(helper):
    helper()                            # a parameter, not pkg.auth.helper: dropped


STORE = auth.Store()                    # a module-level singleton of a known class
mixed = auth.Store()
mixed = 3                               # assigned two things: calls through it are dropped


def use_globals():
    STORE.get("k")
    mixed.get("k")


def make_store() -> "auth.Store":
    return auth.Store()


def use_factory():
    make_store().get("a")               # through the declared return type
    s = make_store()
    s.get("b")
''',
    "pkg/settings.py": '''
from typing import TypedDict
from pydantic import BaseModel


class AppSettings(BaseModel):
    debug: bool = False


class Payload(TypedDict):
    id: int


class ChildSettings(AppSettings):
    level: int = 1
''',
    "app/__init__.py": "",
    "app/models.py": '''
from django.db import models


class Session(models.Model):
    key = models.CharField(max_length=40)
''',
    "app/migrations/__init__.py": "",
    "app/migrations/0002_session_timeout.py": '''
from django.db import migrations, models


class Migration(migrations.Migration):
    operations = [
        migrations.AddField(model_name="session", name="timeout", field=models.IntegerField()),
    ]
''',
    "alembic/versions/ab12_add_timeout.py": '''
revision = "ab12"
down_revision = None


def upgrade():
    pass
''',
    "deep.py": "".join("    " * i + f"class N{i:03d}{'x' * 20}:\n" for i in range(14))
               + "    " * 14 + "pass\n",
    "tests/test_session.py": '''
from pkg.auth import SessionManager, SessionConfig


def test_custom_timeout():
    m = SessionManager(SessionConfig(timeout=5))
    m.load("k")


class TestStore:
    def test_get(self):
        SessionManager().store.get("k")

    def helper_not_a_test(self):
        pass
''',
    "broken.py": "def oops(:\n    pass\n",
    ".venv/lib/site.py": "def vendored(): pass\n",
    "build/lib/pkg/auth.py": "def built(): pass\n",
    "node_modules/x.py": "def js(): pass\n",
    "generated/gen.py": "def gen(): pass\n",
    ".gitignore": "generated/\n*.tmp.py\n",
    "scratch.tmp.py": "def scratch(): pass\n",
}


def write_repo(root: Path) -> Path:
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text.lstrip("\n"))
    return root


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> ReconResult:
    return recon(write_repo(tmp_path_factory.mktemp("repo")))


def edges(r: ReconResult) -> set[tuple[str, str, str]]:
    return {(e.src, e.dst, e.kind) for e in r.edges}


@pytest.mark.parametrize(("src", "dst", "kind"), [
    # calls: same module, through self, through an attribute's class, via super()
    ("pkg.auth.SessionManager.load", "pkg.auth.SessionManager._read", "calls"),
    ("pkg.auth.SessionManager.load", "pkg.auth.Store.get", "calls"),
    ("pkg.auth.SessionManager.load", "pkg.auth.helper", "calls"),
    ("pkg.auth.SessionManager._read", "pkg.auth.SessionConfig", "calls"),  # Class(...) -> class
    ("pkg.auth.SessionManager.__init__", "pkg.auth.Store", "calls"),
    ("pkg.auth.RedisSessionManager.load", "pkg.auth.SessionManager.load", "calls"),
    # calls through imports: `from x import y as z`, relative, `import pkg.mod` attribute
    ("pkg.cli.main", "pkg.auth.SessionManager", "calls"),
    ("pkg.cli.main", "pkg.auth.SessionManager.load", "calls"),  # m = SM(); m.load()
    ("pkg.cli.main", "pkg.auth.helper", "calls"),
    ("pkg.cli.use_globals", "pkg.auth.Store.get", "calls"),  # STORE = auth.Store()
    ("pkg.cli.use_factory", "pkg.auth.Store.get", "calls"),  # make_store() -> "auth.Store"
    # imports: the module and the symbol; a re-export in pkg/__init__ resolves to its origin
    ("pkg.cli", "pkg.auth", "imports"),
    ("pkg.cli", "pkg.auth.SessionManager", "imports"),
    ("pkg", "pkg.auth.SessionManager", "imports"),
    # inherits, in-repo and through a schema base
    ("pkg.auth.RedisSessionManager", "pkg.auth.SessionManager", "inherits"),
    ("pkg.settings.ChildSettings", "pkg.settings.AppSettings", "inherits"),
    # uses_type from annotations (a string annotation too)
    ("pkg.auth.SessionManager.__init__", "pkg.auth.SessionConfig", "uses_type"),
    ("pkg.auth.SessionManager.load", "pkg.auth.Session", "uses_type"),
    # defines
    ("pkg.auth", "pkg.auth.SessionManager", "defines"),
    ("pkg.auth.SessionManager", "pkg.auth.SessionManager.load", "defines"),
    # tests: a pytest test exercises what it calls
    ("tests.test_session.test_custom_timeout", "pkg.auth.SessionManager.load", "tests"),
    ("tests.test_session.test_custom_timeout", "pkg.auth.SessionConfig", "tests"),
    ("tests.test_session.TestStore.test_get", "pkg.auth.Store.get", "tests"),
    # a Django migration writes the model it names
    ("app.migrations.0002_session_timeout", "app.models.Session", "writes"),
])
def test_expected_edge(result: ReconResult, src: str, dst: str, kind: str) -> None:
    assert (src, dst, kind) in edges(result)


@pytest.mark.parametrize(("src", "dst"), [
    ("pkg.cli.shadow", "pkg.auth.helper"),  # the parameter `helper` shadows the import
    ("pkg.cli", "pkg.auth.Store.get"),  # module code does not call what a function calls
    ("pkg.auth.SessionManager.load", "pkg.auth.SessionManager.load"),  # no self loops
])
def test_unresolved_calls_are_dropped_not_guessed(result: ReconResult, src: str, dst: str) -> None:
    assert (src, dst, "calls") not in edges(result)
    load = "pkg.auth.SessionManager.load"
    callees = {d for s, d, k in edges(result) if s == load and k == "calls"}
    assert callees == {"pkg.auth.SessionManager._read", "pkg.auth.Store.get", "pkg.auth.helper"}


@pytest.mark.parametrize(("entity", "kind"), [
    ("pkg", "module"),
    ("pkg.auth", "module"),
    ("pkg.auth.SessionManager", "class"),
    ("pkg.auth.SessionManager.load", "method"),
    ("pkg.auth.helper", "function"),
    ("pkg.auth.SessionConfig", "config"),  # a dataclass named like a config
    ("pkg.settings.AppSettings", "config"),
    ("pkg.settings.Payload", "schema"),  # TypedDict
    ("pkg.settings.ChildSettings", "config"),  # inherits a config type
    ("app.models.Session", "schema"),  # a Django model
    ("app.migrations.0002_session_timeout", "migration"),
    ("alembic.versions.ab12_add_timeout", "migration"),
    ("tests.test_session.test_custom_timeout", "test"),
    ("tests.test_session.TestStore", "test"),
    ("tests.test_session.TestStore.test_get", "test"),
    ("tests.test_session.TestStore.helper_not_a_test", "method"),
])
def test_node_kinds(result: ReconResult, entity: str, kind: str) -> None:
    kinds = {n.id: n.kind for n in result.nodes}
    assert kinds.get(entity) == kind


def test_signature_line_only_never_the_body(result: ReconResult) -> None:
    by_id = {n.id: n for n in result.nodes}
    load = by_id["pkg.auth.SessionManager.load"]
    assert load.signature == "def load(self, key: str, *, retries: int = 1) -> 'Session'"
    assert (load.file, load.line) == ("pkg/auth.py", 23)
    assert by_id["pkg.auth.SessionConfig"].signature == (
        "class SessionConfig(timeout: int = 30, name: str = 's')")
    assert by_id["pkg.auth.RedisSessionManager"].signature == (
        "class RedisSessionManager(SessionManager)")
    assert all("os.path" not in (n.signature or "") for n in result.nodes)


def test_every_edge_endpoint_is_a_node_and_output_is_sorted(result: ReconResult) -> None:
    ids = [n.id for n in result.nodes]
    assert ids == sorted(ids)
    assert len(ids) == len(set(ids))
    assert all(e.src in set(ids) and e.dst in set(ids) for e in result.edges)
    keys = [(e.src, e.dst, e.kind) for e in result.edges]
    assert keys == sorted(set(keys))


def test_syntax_error_is_a_warning_not_fatal(result: ReconResult) -> None:
    assert any(w.startswith("broken.py:1: does not parse") for w in result.warnings)
    assert "broken" not in {n.id for n in result.nodes}


def test_overlong_names_are_skipped_with_a_warning(result: ReconResult) -> None:
    # deep.py nests 14 classes of 24-character names: past ENTITY_MAX_CHARS (300) at depth 13
    deep = [n.id for n in result.nodes if n.id.startswith("deep.")]
    assert deep
    assert max(len(i) for i in deep) <= 300
    assert len(deep) < 14
    assert any("deep.py" in w and "longer than 300" in w for w in result.warnings)


@pytest.mark.parametrize("skipped", ["site", "lib.pkg.auth", "x", "generated.gen", "scratch.tmp"])
def test_vendored_and_gitignored_paths_are_skipped(result: ReconResult, skipped: str) -> None:
    ids = {n.id for n in result.nodes}
    assert not any(i == skipped or i.startswith(skipped + ".") or i.endswith("." + skipped)
                   for i in ids)
    assert not any(n.file and n.file.startswith((".venv/", "build/", "node_modules/",
                                                  "generated/")) for n in result.nodes)


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git_tree_uses_git_ignore_rules(tmp_path: Path) -> None:
    repo = write_repo(tmp_path)
    (repo / "pkg" / ".gitignore").write_text("cli.py\n")  # a nested .gitignore: git honours it
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    ids = {n.id for n in recon(repo).nodes}
    assert "pkg.auth" in ids
    assert "pkg.cli" not in ids
    assert "generated.gen" not in ids


def test_same_repo_same_graph(tmp_path: Path) -> None:
    a = recon(write_repo(tmp_path / "a"))
    b = recon(write_repo(tmp_path / "b"))
    assert a.nodes == b.nodes
    assert a.edges == b.edges


@pytest.mark.parametrize(("seed", "entity"), [
    ("pkg.auth.SessionManager.load", "pkg.auth.SessionManager.load"),
    ("tests/test_session.py::test_custom_timeout", "tests.test_session.test_custom_timeout"),
    ("tests/test_session.py::TestStore::test_get", "tests.test_session.TestStore.test_get"),
])
def test_seed_accepts_dotted_names_and_pytest_node_ids(
    result: ReconResult, seed: str, entity: str
) -> None:
    assert resolve_seed(seed, {n.id: n for n in result.nodes}) == entity


@pytest.mark.parametrize("enabled", [True, False])
def test_recon_leaves_the_collector_as_found_and_makes_no_cycles(
        tmp_path: Path, result: ReconResult, enabled: bool) -> None:
    # recon pauses the cycle collector while it parses and resolves: sound only because what
    # it builds holds no reference cycles (refcounting frees all of it)
    import gc

    repo = write_repo(tmp_path / "repo")
    gc.collect()
    was = gc.isenabled()
    try:
        if not enabled:
            gc.disable()
        got = recon(repo, workers=1)
        assert gc.isenabled() is enabled
        same = ({(e.src, e.dst, e.kind) for e in got.edges} == edges(result)
                and len(got.nodes) == len(result.nodes))
        del got
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()
    assert same


# What a source file may be: the fast reading path must give what tokenize.open gives, or fail the
# same way (plan07.evidence.recon._decode)
ENCODED = {
    "plain": b"x = 1\ny = 'caf\xc3\xa9'\n",
    "crlf": b"x = 1\r\ny = 2\r\n",
    "lone cr": b"x = 1\ry = 2\n",
    "bom": b"\xef\xbb\xbfx = 'caf\xc3\xa9'\n",
    "latin-1 cookie": b"# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n",
    "cookie on line 2": b"#!/usr/bin/env python\n# coding: latin-1\nx = '\xe9'\n",
    "no newline": b"x = 1",
    "empty": b"",
    "latin-1, no cookie, line 1": b"x = '\xe9'\n",
    "latin-1, no cookie, line 5": b"\n\n\n\nx = '\xe9'\n",
    "unknown cookie": b"# coding: nonesuch\nx = 1\n",
}


@pytest.mark.parametrize("name", sorted(ENCODED))
def test_a_file_reads_as_tokenize_open_reads_it(name: str, tmp_path: Path) -> None:
    import io
    import tokenize

    from plan07.evidence.recon import _decode

    def general(data: bytes) -> str:  # tokenize.open's steps on the bytes (no file name)
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        with io.TextIOWrapper(io.BytesIO(data), encoding, line_buffering=True) as fh:
            return fh.read()

    def outcome(read: object, arg: object) -> object:
        try:
            return read(arg)  # type: ignore[operator]
        except (SyntaxError, UnicodeDecodeError) as exc:
            return type(exc), str(exc)

    path = tmp_path / "m.py"
    path.write_bytes(ENCODED[name])

    def from_file(p: Path) -> str:
        with tokenize.open(p) as fh:
            return fh.read()

    got, want = outcome(_decode, ENCODED[name]), outcome(from_file, path)
    if isinstance(want, str):
        assert got == want
    else:  # the same error; its text as the general path words it (no file name)
        assert got == outcome(general, ENCODED[name])
        assert got[0] == want[0]  # type: ignore[index]


@pytest.mark.parametrize("root", [".", "/", "/a/b", "a/b", "./a", "/a/b/"])
def test_a_file_path_is_the_one_pathlib_joins(root: str) -> None:
    from plan07.evidence.files import path_prefix

    assert path_prefix(Path(root)) + "pkg/m.py" == str(Path(root) / "pkg/m.py")


@pytest.mark.parametrize(("rel", "vendored"), [
    ("pkg/mod.py", False), ("venv/lib/x.py", True), ("a/node_modules/b/c.py", True),
    ("src/foo.egg-info/x.py", True), ("foo.egg-info.py", False), ("build.py", False),
    ("a/build/x.py", True), ("a/.git/hooks/x.py", True), ("docs/egg-info/x.py", False),
])
def test_vendored_paths_are_the_directories_named(rel: str, vendored: bool) -> None:
    from plan07.evidence.files import _vendored

    assert _vendored(rel) is vendored
