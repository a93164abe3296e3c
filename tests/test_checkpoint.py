"""Git-backed checkpoints: plan07's own refs, the user's branch/index/stash untouched, restore
writes back changed and deleted files, removes added ones, never touches ignored or kept paths."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from plan07.errors import InputError, PlanStateError
from plan07.store.checkpoint import (
    delete_refs,
    is_git_tree,
    list_refs,
    ref_name,
    restore,
    snapshot,
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def make_repo(path: Path, *, commit: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "u@example.com")
    git(path, "config", "user.name", "User")
    (path / ".gitignore").write_text("*.log\n")
    (path / "a.py").write_text("A = 1\n")
    (path / "b.py").write_text("B = 1\n")
    (path / "pkg").mkdir()
    (path / "pkg" / "c.py").write_text("C = 1\n")
    if commit:
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", "init")
    return path


def user_state(repo: Path) -> tuple[str, ...]:
    return (git(repo, "rev-parse", "HEAD"), git(repo, "symbolic-ref", "HEAD"),
            git(repo, "diff", "--cached"), git(repo, "stash", "list"),
            git(repo, "status", "--porcelain"))


def test_snapshot_and_restore_leave_the_users_git_state_alone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    # the user has a stash, a staged change and an untracked file before planning starts
    (repo / "b.py").write_text("B = 'stashed'\n")
    git(repo, "stash", "-q")
    (repo / "a.py").write_text("A = 2  # staged by the user\n")
    git(repo, "add", "a.py")
    (repo / "notes.txt").write_text("untracked but not ignored\n")
    before = user_state(repo)

    ref = snapshot(repo, "plan-1", "CP1")
    assert ref == "refs/plan07/plan-1/CP1"
    assert user_state(repo) == before
    assert git(repo, "show", f"{ref}:a.py") == "A = 2  # staged by the user\n"
    assert git(repo, "show", f"{ref}:notes.txt") == "untracked but not ignored\n"

    # the agent edits after the checkpoint: change, delete, add, and an ignored log appears
    (repo / "a.py").write_text("A = 'broken'\n")
    (repo / "pkg" / "c.py").unlink()
    (repo / "new").mkdir()
    (repo / "new" / "added.py").write_text("X = 1\n")
    (repo / "debug.log").write_text("ignored\n")

    removed = restore(repo, ref)
    assert removed == ["new/added.py"]
    assert (repo / "a.py").read_text() == "A = 2  # staged by the user\n"
    assert (repo / "pkg" / "c.py").read_text() == "C = 1\n"
    assert not (repo / "new").exists()
    assert (repo / "debug.log").read_text() == "ignored\n"  # ignored files are never touched
    assert (repo / "notes.txt").exists()
    assert user_state(repo) == before


def test_keep_paths_are_neither_snapshotted_nor_restored(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    state = repo / "build" / "plan07"
    state.mkdir(parents=True)
    (state / "plan.json").write_text('{"v": 1}')
    ref = snapshot(repo, "p", "CP1", keep=[state])
    assert ref is not None
    assert "build" not in git(repo, "ls-tree", "-r", "--name-only", ref)
    (state / "plan.json").write_text('{"v": 2}')
    (state / "events.jsonl").write_text("x\n")
    assert restore(repo, ref, keep=[state]) == []
    assert (state / "plan.json").read_text() == '{"v": 2}'
    assert (state / "events.jsonl").exists()


def test_repo_without_commits_and_subdirectory_repo(tmp_path: Path) -> None:
    top = make_repo(tmp_path / "top", commit=False)
    sub = top / "pkg"
    ref = snapshot(sub, "p", "CP1")
    assert ref is not None
    (sub / "c.py").write_text("C = 'changed'\n")
    (top / "a.py").write_text("outside the planned dir\n")
    (sub / "d.py").write_text("added\n")
    assert restore(sub, ref) == ["d.py"]
    assert (sub / "c.py").read_text() == "C = 1\n"
    assert (top / "a.py").read_text() == "outside the planned dir\n"  # outside: untouched


def test_non_git_directory_has_no_snapshots_and_rollback_refuses(tmp_path: Path) -> None:
    d = tmp_path / "plain"
    d.mkdir()
    (d / "a.py").write_text("A = 1\n")
    assert not is_git_tree(d)
    assert snapshot(d, "p", "CP1") is None
    assert list_refs(d, "p") == []
    with pytest.raises(PlanStateError, match="not one.*git init"):
        restore(d, "refs/plan07/p/CP1")


def test_refs_are_listed_in_checkpoint_order_and_deletable(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    for n in (1, 2, 10):
        snapshot(repo, "p", f"CP{n}")
    snapshot(repo, "other", "CP1")
    refs = list_refs(repo, "p")
    assert refs == ["refs/plan07/p/CP1", "refs/plan07/p/CP2", "refs/plan07/p/CP10"]
    delete_refs(repo, refs[1:])
    assert list_refs(repo, "p") == ["refs/plan07/p/CP1"]
    assert git(repo, "branch", "--list").strip() == "* main"


@pytest.mark.parametrize(("plan_id", "cp"), [("../x", "CP1"), ("p", "CP 1"), ("p", "a..b"),
                                             ("", "CP1"), ("p", "x.lock")])
def test_bad_ref_parts_are_input_errors(tmp_path: Path, plan_id: str, cp: str) -> None:
    with pytest.raises(InputError, match="cannot name a git ref"):
        ref_name(plan_id, cp)


def test_restore_unknown_or_foreign_ref(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    with pytest.raises(PlanStateError, match="not found"):
        restore(repo, "refs/plan07/p/CP9")
    with pytest.raises(InputError, match="not a plan07 checkpoint ref"):
        restore(repo, "refs/heads/main")


@pytest.mark.parametrize("sub", ["", "sub"])
def test_a_file_git_cannot_re_encode_is_snapshotted_and_restored_byte_for_byte(
        tmp_path: Path, sub: str) -> None:
    # sphinx's .gitattributes names `working-tree-encoding=iso-8859` (no such charset) and a
    # UTF-16 file needs a BOM: `git add` refuses both, so a CP0 snapshot failed
    top = make_repo(tmp_path / "r")
    repo = top / sub if sub else top
    (repo / "enc").mkdir(parents=True)
    (repo / ".gitattributes").write_text("*.inc working-tree-encoding=UTF-16\n"
                                         "enc/*.txt working-tree-encoding=iso-8859\n")
    bad = {"wrongenc.inc": b"no BOM, odd length", "enc/latin.txt": b"Stra\xdfe M\xfcller\n",
           "ok.inc": "\ufeffhi".encode("utf-16-le")}
    for rel, data in bad.items():
        (repo / rel).write_bytes(data)
    (repo / "enc" / "run.txt").write_bytes(b"\xff exec\n")
    (repo / "enc" / "run.txt").chmod(0o755)
    before = user_state(top)

    ref = snapshot(repo, "plan-1", "CP0")
    assert ref == "refs/plan07/plan-1/CP0"
    prefix = f"{sub}/" if sub else ""
    for rel, data in bad.items():  # stored as the work tree has it, not re-encoded
        blob = subprocess.run(["git", "-C", str(top), "cat-file", "blob", f"{ref}:{prefix}{rel}"],
                              check=True, capture_output=True).stdout
        assert blob == data, rel
    assert "100755" in git(top, "ls-tree", ref, f"{prefix}enc/run.txt")

    for rel in bad:
        (repo / rel).write_bytes(b"changed\n")
    (repo / "enc" / "run.txt").unlink()
    (repo / "enc" / "new.txt").write_bytes(b"added \xe9\n")
    assert restore(repo, ref) == ["enc/new.txt"]
    for rel, data in bad.items():
        assert (repo / rel).read_bytes() == data, rel
    assert (repo / "enc" / "run.txt").read_bytes() == b"\xff exec\n"
    assert (repo / "enc" / "run.txt").stat().st_mode & 0o100
    assert user_state(top) == before


# ---------------------------------------------------------------------------------------------
# what a snapshot never holds: virtualenvs, caches, node_modules, build output (ignored or not)


def _junk(repo: Path) -> None:
    """Untracked, not ignored: a venv as `.venv` and one by another name, caches, node_modules,
    top-level build output, an egg-info; and code that only looks like junk."""
    subprocess.run(["python3", "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    (repo / "tools" / "env38").mkdir(parents=True)
    (repo / "tools" / "env38" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (repo / "tools" / "env38" / "lib.py").write_text("X = 1\n")
    for rel in ("pkg/__pycache__/c.cpython-311.pyc", ".pytest_cache/v/cache/nodeids",
                ".mypy_cache/3.11/x.json", "node_modules/left-pad/index.js", "build/lib/a.py",
                "dist/x-1.0.tar.gz", "x.egg-info/PKG-INFO", "pkg/stray.pyc"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("junk\n")
    (repo / "pkg" / "build").mkdir()
    (repo / "pkg" / "build" / "__init__.py").write_text("CODE = 1\n")  # a package named build


def test_a_snapshot_never_holds_venvs_caches_or_build_output(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    _junk(repo)
    (repo / "new.py").write_text("N = 1\n")
    ref = snapshot(repo, "plan-j", "CP1")
    files = set(git(repo, "ls-tree", "-r", "--name-only", ref).split())
    assert files == {".gitignore", "a.py", "b.py", "pkg/c.py", "new.py", "pkg/build/__init__.py"}
    # a restore leaves them where they are (they are no snapshot's to remove)
    (repo / "new.py").unlink()
    restore(repo, ref)
    assert (repo / "new.py").read_text() == "N = 1\n"
    assert (repo / ".venv" / "pyvenv.cfg").is_file()
    assert (repo / "node_modules" / "left-pad" / "index.js").is_file()
    assert (repo / "tools" / "env38" / "lib.py").is_file()


def test_a_tracked_file_in_a_junk_folder_is_kept(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    (repo / "dist").mkdir()
    (repo / "dist" / "bundle.js").write_text("v1\n")  # committed build output (a JS action)
    git(repo, "add", "dist/bundle.js")
    git(repo, "commit", "-q", "-m", "dist")
    (repo / "dist" / "bundle.js").write_text("v2\n")
    (repo / "dist" / "extra.map").write_text("untracked\n")
    ref = snapshot(repo, "plan-t", "CP1")
    assert git(repo, "show", f"{ref}:dist/bundle.js") == "v2\n"
    assert "dist/extra.map" not in git(repo, "ls-tree", "-r", "--name-only", ref).split()


def test_the_state_folder_inside_the_repo_leaves_git_status(tmp_path: Path) -> None:
    from plan07.store.checkpoint import snapshot_commit

    repo = make_repo(tmp_path / "r")
    (repo / ".gitignore").write_text("build/\n")  # ignores the default state folder's parent
    git(repo, "commit", "-qam", "ignore build")
    state = repo / "out" / "plan state"
    state.mkdir(parents=True)
    (state / "plan.json").write_text("{}")
    assert "out/" in git(repo, "status", "--porcelain")
    for _ in range(2):  # once, however many plans
        assert snapshot_commit(repo, "plan-s", "CP0", keep=[state])
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/out/plan state/\n") == 1
    assert git(repo, "status", "--porcelain") == ""
    ignored = repo / "build" / "07-task-decomposition-planning"  # an ignored state folder
    ignored.mkdir(parents=True)
    (ignored / "plan.json").write_text("{}")
    assert snapshot_commit(repo, "plan-s", "CP0", keep=[ignored])  # no `git add` refusal
    assert git(repo, "status", "--porcelain") == ""
