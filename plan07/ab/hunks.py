"""A file's change as exact hunk edits, and the seeded faults a real hunk admits. Pure.

`hunk_edits(file, old, new)` turns a before/after pair into the fewest exact `old -> new`
replacements (one per diff hunk), each widened by context lines until its old text occurs
exactly once in the file as it is when the edit is applied (hunks apply top to bottom).
Applying them in order turns `old` into `new` (checked).

`real_faults` gives a real hunk the catalogue's faults where they are meaningful:
`partial_edit` (the write cut off so the file does not compile), `wrong_arg_name` (an
identifier the hunk introduces misspelt, the file still compiling), `missing_import` (an
import line the hunk adds dropped).
"""

from __future__ import annotations

import builtins
import difflib
import keyword
import re

from plan07.ab.compose import _compiles, _partial
from plan07.ab.edits import Edit

_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,}\b")
_STRING = re.compile(r"[rbfu]*(\"[^\"]*\"|'[^']*')", re.I)


def hunk_edits(file: str, old: str, new: str) -> list[Edit]:
    """The exact edits that turn `old` into `new` (one per diff hunk, top to bottom)."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    groups = difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(0)
    cur = list(a)
    delta = 0
    out: list[Edit] = []
    for g in groups:
        i1, i2, j1, j2 = g[0][1], g[-1][2], g[0][3], g[-1][4]
        s, e = i1 + delta, i2 + delta
        repl = b[j1:j2]
        text = "".join(cur)
        for c in range(len(cur) + 1):
            lo, hi = max(0, s - c), min(len(cur), e + c)
            o = "".join(cur[lo:hi])
            if o and text.count(o) == 1:
                out.append(Edit(file, o, "".join(cur[lo:s] + repl + cur[e:hi])))
                break
        else:  # pragma: no cover - the whole file is always unique
            raise AssertionError(f"{file}: no unique context for a hunk")
        cur[s:e] = repl
        delta += (j2 - j1) - (i2 - i1)
    check = old
    for ed in out:
        assert ed.old is not None
        assert check.count(ed.old) == 1, f"{file}: hunk not unique"
        check = check.replace(ed.old, ed.new, 1)
    assert check == new, f"{file}: hunks do not reproduce the new text"
    return out


def _added_lines(e: Edit) -> list[str]:
    old = set((e.old or "").splitlines())
    return [ln for ln in e.new.splitlines() if ln not in old]


def real_faults(text: str, e: Edit) -> dict[str, Edit]:
    """The faults a real hunk `e` (applied to file text `text`) admits (module docstring)."""
    files = {e.file: text}
    out: dict[str, Edit] = {}
    part = _partial(files, e)
    if part is not None:
        out["partial_edit"] = part
    after = text.replace(e.old, e.new, 1) if e.old is not None else e.new
    added = _added_lines(e)
    for line in added:
        if line.lstrip().startswith(("import ", "from ")) and e.new.count(line) == 1:
            cut = Edit(e.file, e.old, e.new.replace(line + "\n", "", 1))
            if _compiles(after.replace(line + "\n", "", 1)):
                out["missing_import"] = cut
                break
    body = [ln for ln in added if not ln.lstrip().startswith(("#", "import ", "from "))]
    skip = set(keyword.kwlist) | set(dir(builtins)) | {"self", "cls"}
    for line in body:
        if line.count('"') % 2 or line.count("'") % 2:
            continue  # a line inside a multi-line string
        masked = _STRING.sub(lambda m: " " * len(m.group(0)), line).split("#", 1)[0]
        for m in _IDENT.finditer(masked):
            name = m.group(0)
            if name in skip:
                continue
            wrong = name[:-1] if name[-1] != name[-2] else name + name[-1]
            bad_line = line[: m.start()] + wrong + line[m.end():]
            if e.new.count(line) != 1:
                continue
            cand = Edit(e.file, e.old, e.new.replace(line, bad_line, 1))
            if _compiles(after.replace(line, bad_line, 1) if e.old is not None else cand.new):
                out["wrong_arg_name"] = cand
                return out
    return out
