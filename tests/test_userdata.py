"""Rollback and resume never destroy a byte plan07 did not write (issue 15): an untracked file
created after the checkpoint, a file the user committed after it, a newly staged file, an
uncommitted edit, an ignored file the snapshot would overwrite. Whatever the restore replaces or
removes is first saved, stash-like, under refs/plan07-saved/<plan_id>/<n> (parents: HEAD and the
user's index), and the user's HEAD, branch, index and stash are left as they were."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _smallplan import cli, cli_env, git, make_repo, plan_here, write_replay

from plan07.api import Planner
from plan07.model import Feedback
from plan07.store import state

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")


def planned(tmp_path: Path) -> tuple[Planner, Path]:
    repo = make_repo(tmp_path, files={".gitignore": "__pycache__/\n"})
    write_replay(tmp_path)
    state = tmp_path / "state"
    assert plan_here(tmp_path, state, repo, process=False).returncode == 0
    p = Planner(state)
    view = p.next()
    assert view is not None
    assert p.complete(view.node_id).passed  # CP1
    return p, repo


def user(repo: Path, *args: str) -> str:
    return git(repo, "-c", "user.name=U", "-c", "user.email=u@example.com", *args)


def users_git(repo: Path) -> tuple[str, ...]:
    return (git(repo, "rev-parse", "HEAD"), git(repo, "symbolic-ref", "HEAD"),
            git(repo, "ls-files", "-s"), git(repo, "stash", "list"))


@pytest.mark.parametrize("how", ["rollback", "resume"])
def test_whatever_the_restore_replaces_is_saved_and_the_users_git_untouched(
    tmp_path: Path, how: str,
) -> None:
    p, repo = planned(tmp_path)
    p.next()
    # after CP1: the user (not plan07) does all of these
    (repo / "notes.txt").write_text("my untracked notes\n")
    (repo / "pkg" / "extra.py").write_text("X = 1  # committed by the user\n")
    user(repo, "add", "pkg/extra.py")
    user(repo, "commit", "-q", "-m", "user's own commit")
    (repo / "pkg" / "staged.py").write_text("S = 1  # staged, never committed\n")
    user(repo, "add", "pkg/staged.py")
    (repo / "pkg" / "core.py").write_text("def f(x):\n    return x + 0  # uncommitted edit\n")
    before = {rel: (repo / rel).read_bytes() for rel in
              ("notes.txt", "pkg/extra.py", "pkg/staged.py", "pkg/core.py")}
    git_before = users_git(repo)

    if how == "rollback":
        done = p.rollback(to="CP0")
    else:
        p.resume()
        done = p.restored
    assert done is not None
    assert done.saved is not None
    assert done.saved.startswith(f"refs/plan07-saved/{p.artifact.plan_id}/")
    assert users_git(repo) == git_before  # HEAD, branch, index, stash as they were
    # every byte the restore replaced or removed is in the saved commit
    for rel, data in before.items():
        assert git(repo, "show", f"{done.saved}:{rel}").encode() == data, rel
    # ... whose parents are HEAD and a commit of the user's index, as `git stash` makes them
    parents = git(repo, "rev-list", "--parents", "-n", "1", done.saved).split()[1:]
    assert parents[0] == git_before[0].strip()
    assert "pkg/staged.py" in git(repo, "ls-tree", "-r", "--name-only", parents[1])
    # and the audit says where it went
    rows = state.full_audit(p.state_dir, p.artifact)
    assert any(done.saved in r.trace for r in rows)
    # one checkout brings it all back
    git(repo, "checkout", done.saved, "--", ".")
    for rel, data in before.items():
        assert (repo / rel).read_bytes() == data


def test_an_ignored_file_the_snapshot_has_is_saved_before_it_is_overwritten(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    write_replay(tmp_path)
    state_dir = tmp_path / "state"
    assert plan_here(tmp_path, state_dir, repo, process=False).returncode == 0
    p = Planner(state_dir)
    (repo / "local.cfg").write_text("at CP1\n")  # untracked, not ignored: in the CP1 snapshot
    view = p.next()
    assert view is not None
    assert p.complete(view.node_id).passed
    # now the user ignores it and edits it: the restore writes CP1's version back over it
    (repo / ".gitignore").write_text("__pycache__/\nlocal.cfg\n")
    (repo / "local.cfg").write_text("mine, edited after CP1\n")
    done = p.rollback(to="CP1")
    assert (repo / "local.cfg").read_text() == "at CP1\n"
    assert done.saved is not None
    assert git(repo, "show", f"{done.saved}:local.cfg") == "mine, edited after CP1\n"


def test_nothing_to_lose_saves_nothing(tmp_path: Path) -> None:
    p, repo = planned(tmp_path)
    done = p.rollback(to="CP1")
    assert done.saved is None
    assert git(repo, "for-each-ref", "refs/plan07-saved") == ""


def test_the_cli_names_the_saved_ref(tmp_path: Path) -> None:
    p, repo = planned(tmp_path)
    (repo / "notes.txt").write_text("mine\n")
    res = cli("rollback", "--to", "CP0", "--state", str(p.state_dir))
    assert res.returncode == 0, res.stderr
    assert "refs/plan07-saved/" in res.stdout
    assert "git stash apply --index" in res.stdout
    res = cli("rollback", "--to", "CP0", "--json", "--state", str(p.state_dir))
    assert json.loads(res.stdout)["saved"] is None  # already at CP0: nothing replaced


def test_feedback_cannot_falsify_a_complete_obligation(tmp_path: Path) -> None:
    from plan07.errors import InputError

    p, _ = planned(tmp_path)
    before = (p.state_dir / "plan.json").read_bytes()
    with pytest.raises(InputError, match="O1 are complete"):
        p.feedback(Feedback(caused_by="O1", falsified_obligations=["O1"]))
    assert (p.state_dir / "plan.json").read_bytes() == before


def test_a_cli_process_of_the_tests_uses_the_sessions_cache_never_the_users(
        tmp_path: Path) -> None:
    """The CLI processes tests start (`_smallplan.cli_env`) keep the session's private
    PLAN07_CACHE_DIR (conftest): none reads or writes the user's ~/.cache/plan07."""
    session = Path(os.environ["PLAN07_CACHE_DIR"])
    home = tmp_path / "home"
    env = cli_env({"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")})
    assert env["PLAN07_CACHE_DIR"] == str(session)
    obligations = tmp_path / "O.json"
    obligations.write_text(json.dumps([{
        "id": "O1", "target_entity": "pkg.core.f", "obligation": "modify",
        "caused_by": "requirement", "dependencies": [], "evidence": "", "status": "ready",
        "validation": "compile"}]))
    res = cli("order", "--obligations", str(obligations), env=env)
    assert res.returncode == 0, res.stderr
    assert not (home / ".cache").exists(), sorted(home.rglob("*"))
    assert list((session / "rules").iterdir())  # the parsed rules: read or written there
