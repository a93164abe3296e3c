"""Where fixes of reports like this one went (docs/evidence.md "Localization"): the past commits
whose messages read like the issue, read from a git repository built on the fly."""

from __future__ import annotations

import subprocess
from pathlib import Path

from _smallplan import make_repo

from plan07.evidence import build_evidence
from plan07.evidence.history import Commit, commit_files, history_scores, past_commits


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=U", "-c", "user.email=u@example.com",
                    *args], check=True, capture_output=True)


def commit(repo: Path, files: dict[str, str], message: str) -> None:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


WRITERS = {"pkg/report.py": "def write(rows):\n    return rows\n",
           "pkg/table.py": "def write(rows):\n    return list(rows)\n"}
ISSUE = ("The write of a sheet with no entries crashes\n\n"
         "Saving a sheet that has no entries fails.\n")


def with_history(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path)
    commit(repo, WRITERS, "Add the report and table writers")
    commit(repo, {"pkg/table.py": "def write(rows):\n    return list(rows or ())\n"},
           "Fix saving a sheet with no entries\n\nAn empty sheet is exported as no rows.")
    commit(repo, {"pkg/report.py": "def write(rows):\n    return rows or []\n"},
           "Speed up the report writer")
    return repo


def test_past_commits_read_messages_and_files_behind_head(tmp_path: Path) -> None:
    repo = with_history(tmp_path)
    commits = past_commits(repo)
    assert [c.message.splitlines()[0] for c in commits] == [
        "Speed up the report writer", "Fix saving a sheet with no entries",
        "Add the report and table writers", "init"]
    assert commits[1] == Commit("Fix saving a sheet with no entries\n\nAn empty sheet is "
                                "exported as no rows.", ("pkg/table.py",))
    assert set(commits[2].files) == {"pkg/report.py", "pkg/table.py"}


def test_no_history_outside_git_or_in_a_shallow_clone(tmp_path: Path) -> None:
    assert past_commits(make_repo(tmp_path / "plain", use_git=False)) == []
    repo = with_history(tmp_path)
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)],
                   check=True, capture_output=True)
    assert past_commits(shallow) == []


def test_a_commit_credits_the_library_files_it_changed_by_how_well_it_reads_like_the_issue(
        ) -> None:
    commits = [Commit("Fix saving a sheet with no entries", ("pkg/report.py", "tests/t.py")),
               Commit("Add writers for sheets", ("pkg/report.py", "pkg/table.py")),
               Commit("Speed up the parser", ("pkg/parse.py",))]
    scores = history_scores(ISSUE, commits, {"pkg/report.py", "pkg/table.py", "pkg/parse.py"})
    assert scores["pkg/report.py"] == 1.0  # both commits; the test file is not library
    assert 0 < scores["pkg/table.py"] < 0.5  # half of the weaker commit
    assert "pkg/parse.py" not in scores  # its message shares no word with the issue
    assert history_scores(ISSUE, commits, set()) == {}
    assert history_scores(ISSUE, [], {"pkg/report.py"}) == {}


def test_the_file_a_like_report_was_fixed_in_localizes_first(tmp_path: Path) -> None:
    """Both files' words fit the issue alike (`write`); the history says where the last fix of
    a report like it went."""
    repo = with_history(tmp_path)
    ev = build_evidence(repo, request=ISSUE)
    assert [x.entity for x in ev.localization][:1] == ["pkg.table.write"]


def test_a_sweeping_commit_and_a_file_gone_since_credit_nothing(tmp_path: Path) -> None:
    """A reformat of the whole tree says nothing about one issue; a file a past fix changed
    that the checkout no longer has is no place for this one."""
    from plan07.evidence.history import HISTORY_MAX_FILES

    repo = with_history(tmp_path)
    many = {f"pkg/gen/m{i}.py": "X = 1\n" for i in range(HISTORY_MAX_FILES + 1)}
    commit(repo, many, "Fix saving a sheet with no entries everywhere")
    commit(repo, {"pkg/old.py": "def save():\n    pass\n"}, "Add the old sheet saver")
    commit(repo, {"pkg/old.py": "def save(rows=()):\n    pass\n"},
           "Fix saving a sheet with no entries in the old saver")
    (repo / "pkg/old.py").unlink()
    commit(repo, {}, "Drop the old saver")
    commits = past_commits(repo)
    assert [c.sweeping for c in commits].count(True) == 1
    assert all(len(files) <= HISTORY_MAX_FILES for files in commit_files(repo, commits=commits))
    assert commit_files(repo, commits=commits) == commit_files(repo)  # one read serves both
    library = {"pkg/report.py", "pkg/table.py", *many}
    scores = history_scores(ISSUE, commits, library)
    assert set(scores) == {"pkg/table.py"}  # not the reformat's files, not the gone pkg/old.py
