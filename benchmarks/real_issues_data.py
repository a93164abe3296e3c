"""Real SWE-bench issues for the benchmarks (real_issues.py, false_done_probe.py): reading the
instances, the gold patch's files and entities, and the rule the criteria are judged
by. Only the scores read the gold fields (`patch`, `test_patch`, `FAIL_TO_PASS`): plan07 is given
the problem statement and the repository, as a user or a model would give them.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from plan07.model import Evidence

# ---------------------------------------------------------------------------------------------
# input


def test_list(value: object) -> list[str]:
    """FAIL_TO_PASS / PASS_TO_PASS: the official encoding is a JSON string holding a list."""
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"not a list of test ids: {value!r:.80}")
    return value


def _bad(message: str) -> SystemExit:
    """A bad instances file: one `error:` line on stderr, exit 2."""
    print(f"error: {message}", file=sys.stderr)
    return SystemExit(2)


def load_instances(path: Path, checkouts: Path | None) -> list[dict[str, object]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _bad(f"{path}: cannot read it: {exc.strerror or exc}") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("not a JSON object")
            row["FAIL_TO_PASS"] = test_list(row.get("FAIL_TO_PASS", "[]"))
            row["PASS_TO_PASS"] = test_list(row.get("PASS_TO_PASS", "[]"))
        except ValueError as exc:  # json.JSONDecodeError is one
            raise _bad(f"{path}:{n}: {exc}") from None
        for key in ("instance_id", "repo", "base_commit", "problem_statement", "patch"):
            if not isinstance(row.get(key), str):
                raise _bad(f"{path}:{n}: field {key!r} missing or not a string")
        co = row.get("checkout") or (checkouts / str(row["instance_id"]) if checkouts else None)
        if not co or not Path(str(co)).is_dir():
            raise _bad(f"{path}:{n}: no checkout for {row['instance_id']}")
        head = subprocess.run(["git", "-C", str(co), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=False).stdout.strip()
        if head != row["base_commit"]:
            raise _bad(f"{co} is at {head[:12]}, not base_commit {str(row['base_commit'])[:12]}")
        row["checkout"] = str(co)
        env = row.get("env") or {}
        if not isinstance(env, dict):
            raise _bad(f"{path}:{n}: field 'env' is not an object")
        row["env"] = {str(k): str(v) for k, v in env.items()}
        out.append(row)
    return out


def patch_files(patch: str) -> list[str]:
    """The .py files a patch changes (its `+++ b/...` lines)."""
    return [ln[6:] for ln in patch.splitlines() if ln.startswith("+++ b/") and ln.endswith(".py")]


# ---------------------------------------------------------------------------------------------
# gold: files and entities of the patch


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def patch_lines(patch: str) -> dict[str, set[int]]:
    """file -> the pre-image line numbers the patch changes (a pure insertion counts the line
    it lands after and before, so the enclosing definition is found)."""
    out: dict[str, set[int]] = {}
    file = None
    old = 0
    replacing = False
    for line in patch.splitlines():
        if line.startswith("--- "):
            continue
        if line.startswith("+++ "):
            file = line[6:] if line.startswith("+++ b/") else None
            if file:
                out.setdefault(file, set())
            continue
        if m := _HUNK.match(line):
            old = int(m.group(1))
            continue
        if file is None or not line or line.startswith("\\"):
            continue
        if line[0] == "-":
            out[file].add(old)
            old += 1
            replacing = True
        elif line[0] == "+":
            if not replacing:  # a pure insertion: the lines around it
                out[file].update({max(old - 1, 1), old})
        else:
            old += 1
            replacing = False
    return out


def spans(source: str) -> list[tuple[str, int, int]]:
    """(qualname, first line, last line) of every def and class of a module."""
    out: list[tuple[str, int, int]] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = f"{prefix}{node.name}"
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                out.append((q, first, node.end_lineno or node.lineno))
                walk(node.body, q + ".")

    walk(ast.parse(source).body, "")
    return out


def gold_entities(checkout: Path, patch: str, evidence: Evidence, *,
                  enclosing: bool = False) -> list[str]:
    """The recon ids of the innermost definitions containing a changed line (module-level
    changes: the module), in patch order; `enclosing`: every definition containing one (the
    class of a changed method too)."""
    by_file: dict[str, dict[str, str]] = {}
    for node in evidence.recon.nodes:
        if node.file:
            by_file.setdefault(node.file, {})[node.id] = node.kind
    out: list[str] = []
    for file, lines in patch_lines(patch).items():
        path = checkout / file
        if not file.endswith(".py") or not path.is_file():
            continue
        ids = by_file.get(file, {})
        module = min(ids, key=len) if ids else None  # the module node is the shortest id
        defs = spans(path.read_text(encoding="utf-8", errors="replace"))
        for ln in sorted(lines):
            hits = []  # the innermost enclosing definition recon has a node for (or all)
            for q, _, _ in sorted((d for d in defs if d[1] <= ln <= d[2]), key=lambda d: -d[1]):
                hit = next((i for i in ids if i == f"{module}.{q}" or i.endswith("." + q)), None)
                if hit:
                    hits.append(hit)
                    if not enclosing:
                        break
            for hit in hits or ([module] if module else []):
                if hit not in out:
                    out.append(hit)
    return out


# ---------------------------------------------------------------------------------------------
# the rule a criterion is judged by (stated in the report)

_SPAN = re.compile(r"`([^`]+)`")
_CODE = re.compile(r"[{};]|\[[^\]]*,|>>>|\w\([^()]*,[^()]*\)|\s=\s|\w:\d+:\d+")
_SQL = re.compile(r"\b(?:SELECT|FROM|WHERE|INSERT|UPDATE|DELETE|JOIN|GROUP BY|ORDER BY|VALUES)\b")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
_LITERAL = re.compile(r"'[^'\s]{1,20}'|\"[^\"\s]{1,20}\"")  # a short quoted value
_OPEN = re.compile(r"^(?:not|and|or|but|to|for|with|which|that|because|since|then|so|also)\b",
                   re.I)
_DANGLING = re.compile(r"\b(?:for|to|with|of|the|a|an|and|or|than|as|that|from|in|on|by)$", re.I)
_NARRATIVE = re.compile(r"\b(?:i|we) (?:get|got|see|saw|tried|think|guess|don't)\b|\binstead,? "
                        r"(?:i|we) get\b|\bcurrently\b|\bthe current (?:output|behaviou?r)\b|"
                        r"\byou(?:'ll| will| can)\b|\bmy (?:initial )?guess\b", re.I)
FALLBACK = "a test reproducing the report passes:"


def judge(criterion: str) -> str | None:
    """Why a criterion is bad (None: it is a checkable statement of expected behaviour): a
    placeholder, code (a code span with a list, braces, statements or a call with several
    arguments; `>>>`; a short quoted value such as '\\p{Han}' is a value, not code), SQL (two SQL
    keywords), a quote (a block quote, or a quoted passage that makes up most of it), a
    fragment (under three words, opening with a conjunction, a preposition or "not", ending
    on a dangling word, unbalanced brackets) or the reporter's narrative ("I get",
    "currently", "you will")."""
    t = criterion.strip()
    if re.match(r"^the request is (?:met|done)\b", t, re.I):
        return "placeholder"
    code = [s for s in _SPAN.findall(t) if _CODE.search(s)]
    if code or _CODE.search(_LITERAL.sub("x", _SPAN.sub("x", t))):
        return "code"
    if len(_SQL.findall(t)) >= 2:
        return "SQL"
    lead = _QUOTED.match(t)
    if t.startswith(">") or (lead is not None and len(lead.group(0)) > 0.6 * len(t)):
        return "quote"
    bare = _SPAN.sub("x", t)
    words = re.findall(r"[A-Za-z0-9_]+", bare)
    if (len(words) < 3 or _OPEN.match(bare) or _DANGLING.search(bare.rstrip(" .!?:,"))
            or bare.count("(") != bare.count(")")):
        return "fragment"
    if _NARRATIVE.search(bare):
        return "narrative"
    return None
