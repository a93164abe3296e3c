"""An edit's Python files read out of git, for plan07.gate.observe: the .py paths that differ
between two tree-ishes with their texts before and after (one `git diff-tree`, one `git cat-file
--batch`), the texts of given paths in a tree, and the files of a tree naming given strings (one
`git grep`), each read bounded (MAX_FILES files, MAX_BYTES bytes). I/O: git."""

from __future__ import annotations

from pathlib import Path

from plan07.errors import PlanStateError
from plan07.store.git import cat_batch, git

# A node's edit is small (§3.4: at most 5 files); an observation reads at most this many files
# and bytes, so a tree rewritten wholesale (a formatter run) costs a bounded read, not the repo.
MAX_FILES = 64
MAX_BYTES = 4 * 1024 * 1024


def read_blobs(repo: Path, treeish: str, paths: list[str]) -> dict[str, str | None]:
    """Each path's text in `treeish` (None: absent there, or not UTF-8), one `git cat-file
    --batch` for all of them, at most MAX_BYTES in all."""
    return dict(zip(paths, _texts(repo, [f"{treeish}:{p}" for p in paths]), strict=True))


def _texts(repo: Path, specs: list[str]) -> list[str | None]:
    """The text of each object `specs` names (None: missing, not UTF-8, or past MAX_BYTES in
    all), one `git cat-file --batch`."""
    if not specs:
        return []
    out: list[str | None] = []
    data, pos, budget = cat_batch(repo, specs), 0, MAX_BYTES
    for _ in specs:
        end = data.find(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[-1] == b"missing":
            out.append(None)
            continue
        size = int(header[2])
        blob, pos = data[pos:pos + size], pos + size + 1
        budget -= size
        try:
            out.append(blob.decode("utf-8") if budget >= 0 else None)
        except UnicodeDecodeError:
            out.append(None)
    return out


def _file_blob(mode: str, sha: str) -> str | None:
    """`sha` when the raw diff entry names a file's blob (not a link, a submodule, absence)."""
    return sha if mode in ("100644", "100755") and sha.strip("0") else None


def changed_texts(repo: Path, base: str, tree: str) -> dict[str, tuple[str | None, str | None]]:
    """Each .py path that differs between tree-ishes `base` and `tree` (added, changed, deleted;
    no renames), sorted, at most MAX_FILES, with its text before and after (None: absent, or
    not a readable blob): one `git diff-tree --raw` and one `git cat-file --batch` for both
    sides."""
    out = git(repo, "diff-tree", "-r", "--no-commit-id", "--raw", "-z", "--no-renames",
              "--relative", base, tree).split("\0")
    entries: list[tuple[str, str | None, str | None]] = []
    for meta, path in zip(out[::2], out[1::2], strict=False):
        parts = meta.lstrip(":").split()
        if len(parts) >= 4 and path.endswith(".py"):
            entries.append((path, _file_blob(parts[0], parts[2]), _file_blob(parts[1], parts[3])))
    entries = sorted(entries)[:MAX_FILES]
    shas = [x for _, a, b in entries for x in (a, b) if x]
    texts = dict(zip(shas, _texts(repo, shas), strict=True))
    return {p: (texts.get(a) if a else None, texts.get(b) if b else None)
            for p, a, b in entries}


def files_naming(repo: Path, tree: str, needles: list[str], *, word: bool = False) -> list[str]:
    """The .py files of `tree` holding any of `needles` (fixed strings; `word`: as whole
    words), one `git grep`, sorted."""
    if not needles:
        return []
    try:
        listed = git(repo, "grep", "-l", *(["-w"] if word else []), "-F",
                     *(a for n in needles for a in ("-e", n)), tree, "--", "*.py")
    except PlanStateError:  # exit 1: no file holds them
        return []
    return sorted({line.partition(":")[2] for line in listed.splitlines() if ":" in line})
