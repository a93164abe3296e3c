"""What the repository's own history says about an issue (docs/evidence.md "Localization"): the
past commits whose messages read like the issue, and the library files they changed. A report
like one fixed before is usually fixed in the same files (bug localization from version history:
BugLocator's similar-report score, Zhou et al. 2012). Only the history behind the checkout's
HEAD is read: what any clone of the repository has before the fix exists.

`past_commits` and `commit_files` (soft-rank's cochange window) read `git log` (I/O);
`history_scores` is pure.
"""

from __future__ import annotations

import subprocess
from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from plan07.evidence.filerank import Index, words
from plan07.evidence.softrank import COCHANGE_MAX_COMMITS

HISTORY_MAX_COMMITS = 5000  # the window of history read (a few tenths of a second of git log)
HISTORY_TOP_COMMITS = 10  # the commits whose messages fit the issue best are read
HISTORY_MAX_FILES = 50  # a sweeping commit (reformat, rename) says nothing about one issue,
# nor about which files change together (soft-rank's cochange)


@dataclass(frozen=True)
class Commit:
    message: str
    files: tuple[str, ...]

    @property
    def sweeping(self) -> bool:
        """A commit over HISTORY_MAX_FILES files: a reformat, a rename, a vendored update."""
        return len(self.files) > HISTORY_MAX_FILES


def git(repo: Path, *args: str) -> str | None:
    """`git -C repo ARGS`'s stdout, or None where git is missing, fails or hangs."""
    try:
        res = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                             encoding="utf-8", errors="replace", timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return res.stdout if res.returncode == 0 else None


def full_history(repo: Path) -> bool:
    """Whether `repo` is in a git work tree with its whole history (a shallow clone's cut would
    report an artefact of the cut, not the project)."""
    out = git(repo, "rev-parse", "--show-toplevel", "--is-shallow-repository")
    lines = out.split() if out else []
    return len(lines) >= 2 and lines[-1] == "false"


def past_commits(repo: Path, max_commits: int = HISTORY_MAX_COMMITS) -> list[Commit]:
    """The last `max_commits` non-merge commits behind HEAD that changed a file below `repo`:
    message and files (relative to `repo`); [] outside git or in a shallow clone."""
    if not full_history(repo):
        return []
    out = git(repo, "log", f"-n{max_commits}", "--no-merges", "--name-only",
              "--format=%x00%B%x01", "--relative", "--", ".")
    if out is None:
        return []
    commits = []
    for chunk in out.split("\0")[1:]:
        message, _, names = chunk.partition("\x01")
        files = tuple(ln.strip() for ln in names.splitlines() if ln.strip())
        if files:
            commits.append(Commit(message.strip(), files))
    return commits


def commit_files(repo: Path, max_commits: int = COCHANGE_MAX_COMMITS,
                 commits: Sequence[Commit] | None = None) -> list[set[str]]:
    """The file sets of the last `max_commits` commits, sweeping ones left out (soft-rank's
    cochange, plan07.evidence.softrank): of `commits` when the history was read already,
    else read now; [] outside git or in a shallow clone."""
    window = past_commits(repo, max_commits) if commits is None else commits[:max_commits]
    return [set(c.files) for c in window if not c.sweeping]


def history_scores(request: str, commits: Sequence[Commit], library: Collection[str],
                   top: int = HISTORY_TOP_COMMITS) -> dict[str, float]:
    """Each library file's share of the `top` past commits whose messages BM25 ranks best for
    the request: a commit's score split evenly over the library files it changed (a file no
    longer there, or a test, gets nothing; a sweeping commit is no document), normalized to
    [0, 1]."""
    docs = {str(i): Counter(words(c.message)) for i, c in enumerate(commits) if not c.sweeping}
    raw = Index(docs).scores(Counter(words(request)))
    best = sorted((i for i in raw if raw[i] > 0), key=lambda i: (-raw[i], int(i)))[:top]
    out: defaultdict[str, float] = defaultdict(float)
    for i in best:
        files = [f for f in commits[int(i)].files if f in library]
        for f in files:
            out[f] += raw[i] / len(files)
    high = max(out.values(), default=0.0)
    return {f: round(s / high, 6) for f, s in out.items()} if high > 0 else {}
