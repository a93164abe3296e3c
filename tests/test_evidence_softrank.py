"""Soft-rank inputs: identifier-aware lex similarity and git co-change, both in [0,1]; a non-git or
shallow directory reports zero co-change."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plan07.evidence.history import commit_files
from plan07.evidence.softrank import cochange, lex, lex_scores, tokens
from plan07.model import ReconNode

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


@pytest.mark.parametrize(("text", "expected"), [
    ("SessionManager.load_config", ["session", "manager", "load", "config"]),
    ("HTTPServerError", ["http", "server", "error"]),
    ("make the session timeouts configurable", ["session", "timeout", "configurable"]),
    ("get_user_id2", ["user", "id"]),
    ("class Foo(a: int = 3)", ["foo"]),
])
def test_tokens(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


def node(eid: str, sig: str | None = None) -> ReconNode:
    return ReconNode(id=eid, kind="function", signature=sig)


def test_lex_ranks_the_named_entity_first() -> None:
    nodes = [node("pkg.auth.SessionConfig", "class SessionConfig(timeout: int = 30)"),
             node("pkg.auth.SessionManager.load", "def load(self, key)"),
             node("pkg.io.read_bytes", "def read_bytes(path)")]
    scores = lex_scores("Make the session timeout configurable in SessionConfig", nodes)
    assert set(scores) == {"pkg.auth.SessionConfig", "pkg.auth.SessionManager.load"}
    assert scores["pkg.auth.SessionConfig"] > scores["pkg.auth.SessionManager.load"]
    # name words session+config (weight 1 each) and signature word timeout (0.3) are in the
    # request; its qualifiers pkg, auth (0.5 each) are not: 2.3 / 3.3
    assert scores["pkg.auth.SessionConfig"] == round(2.3 / 3.3, 4)
    # load's own name is not in the request, so its match counts half: `session` (0.5) out of
    # load 1 + auth, session, manager 0.5 each + key 0.3
    assert scores["pkg.auth.SessionManager.load"] == round(0.5 * 0.5 / 2.8, 4)


@given(st.text(max_size=80), st.from_regex(r"[a-z_]{1,10}(\.[A-Za-z_]{1,10}){0,3}", fullmatch=True),
       st.text(max_size=80))
def test_lex_is_in_unit_interval(request: str, eid: str, sig: str) -> None:
    assert 0.0 <= lex(set(tokens(request)), node(eid, sig)) <= 1.0


def test_cochange_from_commit_sets() -> None:
    commits = [{"a.py", "b.py"}, {"a.py", "b.py", "c.py"}, {"a.py"}, {"c.py"}, {"b.py", "d.py"}]
    out = cochange(commits, anchors=["a.py"], files=["a.py", "b.py", "c.py", "d.py", "e.py"])
    assert out == {"a.py": 0.0, "b.py": round(2 / 3, 4), "c.py": 0.5, "d.py": 0.0, "e.py": 0.0}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                    "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)


@needs_git
def test_cochange_reads_git_history_and_shallow_is_zero(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    for i, files in enumerate([["a.py", "b.py"], ["a.py", "b.py"], ["a.py"], ["c.py"]]):
        for f in files:
            (repo / f).write_text(f"x = {i}\n")
        git(repo, "add", *files)
        git(repo, "commit", "-q", "-m", f"c{i}")
    commits = commit_files(repo)
    assert len(commits) == 4
    assert cochange(commits, ["a.py"], ["b.py", "c.py"]) == {"b.py": 1.0, "c.py": 0.0}
    assert commit_files(repo, max_commits=1) == [{"c.py"}]  # the bounded window
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    assert commit_files(shallow) == []


def test_not_git_is_zero(tmp_path: Path) -> None:
    assert commit_files(tmp_path) == []
