"""Runtime-structured retry (§3.5 step 3, made cheap): classify a failed gate verdict without a
model, and read a ≤160-char failure digest out of the check's output. Pure.

A failure is one of three things (`decide`):

- **local**: the executor slipped inside the node's own work -- a build/syntax error, a failure
  whose innermost frame is in the node's target or edited files, or its own check failing. The
  same node is handed out again with the digest; no model call.
- **plan**: the failure implicates the plan -- tests that already-passed nodes validated now
  fail, the innermost failing frame is in a file no plan node covers (a consumer the
  decomposition missed) or in a file another planned node owns (the order is wrong), or the
  *same* failure signature came back after `k` local retries (the digest did not help: the
  obligation as given is what is wrong). That buys ONE scoped re-decomposition of the failed
  node and its true dependents (§3.5: never the whole plan).
- **stop**: the node's retry bound is spent; nothing more is asked of anyone (no model call).

- **reopen**: the failure is in the work of a node that already passed its own check, not in
  this node's: a `NameError` whose innermost frame is in a file a complete node owns and this
  node does not (an undefined name is that file's own text, which this node's edit did not
  write), or -- once the same failure came back after `k` local retries -- an error message
  naming a complete node's target (`f() got an unexpected keyword argument`: the callee that
  passed its own check is what is wrong). Those nodes (`Decision.reopen`) are handed out again
  first, with the digest, then this node; no model call (the plan is not what is wrong). It
  counts as one of this node's retries, so the bound holds.

A `plan` decision whose replans are spent (caps.MAX_REPLANS_PER_NODE) is downgraded to `local`:
never a model call past that bound either.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from plan07.model import Evidence, PlanArtifact, PlanNode

DIGEST_MAX_CHARS = 160  # caps.PROMPT_FAILURE_MAX_CHARS: the one line a retry carries
Action = Literal["local", "reopen", "plan", "stop"]

_PYTEST_FRAME = re.compile(r"^(?P<file>[\w./+-]+\.py):(?P<line>\d+):(?: |$)", re.M)
_PY_FRAME = re.compile(r'File "(?P<file>[^"]+\.py)", line (?P<line>\d+)')
_ERROR_LINE = re.compile(
    r"^(?:E\s+)?(?P<type>(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Warning)|assert)"
    r"(?::\s*(?P<msg>.*)|\s+(?P<expr>.*))?$", re.M)
_FAILED = re.compile(r"^(?:FAILED|ERROR) (?P<id>[\w./+-]+\.py(?:::[^\s]+)?)(?: - (?P<why>.*))?$",
                     re.M)
_BUILD = ("repo-wide build check failed", "*** Error compiling", "SyntaxError",
          "IndentationError", "TabError")
_SKIP_PARTS = ("site-packages", "/lib/python", "<frozen", "/_pytest/", "/pluggy/")


@dataclass(frozen=True)
class Parsed:
    """What a failed check's output says: a build failure or not, the innermost error (type,
    message), the repo frames (innermost last) and the test ids pytest reported failing."""

    build: bool
    error_type: str
    message: str
    frames: tuple[tuple[str, int], ...]
    failing_tests: tuple[str, ...]

    @property
    def where(self) -> tuple[str, int] | None:
        return self.frames[-1] if self.frames else None


@dataclass(frozen=True)
class History:
    """What earlier failures of this node left (NodeBounds): failures already handled, scoped
    replans already made, the last failure's signature and how many local retries in a row
    ended with it."""

    retries: int = 0
    replans: int = 0
    signature: str = ""
    repeats: int = 0


@dataclass(frozen=True)
class Facts:
    """The plan around the failed node, as values. `own_files`: the node's target file(s) and the
    files it edited; `own_tests`: test files/ids its own check names; `passed_checks`:
    validation strings of complete nodes; `planned_files`: file -> a node (not this one) that
    targets or edited it; every path repo-relative posix."""

    node_id: str
    check: str
    own_files: frozenset[str]
    own_target: str = ""
    own_tests: frozenset[str] = frozenset()
    passed_checks: tuple[tuple[str, str], ...] = ()  # (node id, validation)
    planned_files: tuple[tuple[str, str], ...] = ()  # (file, node id)
    complete_targets: tuple[tuple[str, str], ...] = ()  # (node id, target): complete modifies


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str
    digest: str
    signature: str
    repeats: int  # local retries in a row that ended with `signature` (after this one)
    reopen: tuple[str, ...] = ()  # complete nodes the failure is in (`reopen` only)


def _rel(path: str, repo: str) -> str | None:
    """`path` as repo-relative posix, or None for a frame outside the repo (stdlib, packages)."""
    p = path.replace("\\", "/")
    if any(s in p for s in _SKIP_PARTS):
        return None
    root = repo.rstrip("/") + "/" if repo else ""
    if root and p.startswith(root):
        p = p[len(root):]
    elif p.startswith("/"):
        return None
    while p.startswith("./"):
        p = p[2:]
    return p or None


def parse(output: str, *, repo: str = "") -> Parsed:
    """Read a check's output (pytest -q, compileall, a python traceback). `repo`: the absolute
    repo root, stripped from absolute frame paths."""
    frames: list[tuple[str, int]] = []
    for m in sorted([*_PYTEST_FRAME.finditer(output), *_PY_FRAME.finditer(output)],
                    key=lambda m: m.start()):
        rel = _rel(m["file"], repo)
        if rel is not None and (not frames or frames[-1] != (rel, int(m["line"]))):
            frames.append((rel, int(m["line"])))
    errors = [m for m in _ERROR_LINE.finditer(output) if m["type"] != "assert" or m["expr"]]
    etype, msg = "", ""
    if errors:
        last = errors[-1]
        etype = last["type"].rsplit(".", 1)[-1]
        msg = (last["msg"] if last["msg"] is not None else last["expr"] or "").strip()
        if etype == "assert":
            etype, msg = "AssertionError", "assert " + msg
    failing = tuple(dict.fromkeys(m["id"] for m in _FAILED.finditer(output)))
    if not etype:
        why = next((m["why"] for m in _FAILED.finditer(output) if m["why"]), "")
        etype, _, msg = why.partition(": ") if why else ("", "", "")
    build = any(b in output for b in _BUILD)
    return Parsed(build, etype, " ".join(msg.split()), tuple(frames), failing)


def signature(kind: str, p: Parsed) -> str:
    """What makes two failures 'the same': kind, error type, innermost file and failing test
    (not the line or message, which a retry of the same slip may shift)."""
    where = p.where[0] if p.where else ""
    return "|".join((kind, "build" if p.build else "", p.error_type, where,
                     p.failing_tests[0] if p.failing_tests else ""))[:200]


def digest(check: str, p: Parsed, tail: str = "") -> str:
    """One line of at most DIGEST_MAX_CHARS: the check, the innermost error and where."""
    head = "build check" if p.build else check
    err = f"{p.error_type}: {p.message}" if p.error_type else ""
    if not err:
        lines = [x.strip() for x in tail.splitlines() if x.strip()]
        err = lines[-1] if lines else "failed"
    at = f" at {p.where[0]}:{p.where[1]}" if p.where else ""
    text = " ".join(f"{head} failed: {err}".split())
    room = DIGEST_MAX_CHARS - len(at)
    if len(text) > room:
        text = text[: max(room - 1, 0)].rstrip() + "…"
    return (text + at)[:DIGEST_MAX_CHARS]


def failure_digest(check: str, output: str, repo: str = "") -> str:
    """The one line (<= DIGEST_MAX_CHARS) a retry carries for a failed check's `output` (the
    driver view's `failure_digest`): a harness's baselines give their retries the same."""
    return digest(check, parse(output, repo=repo), output)


def _test_file(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def _covers(validation: str, test_id: str) -> bool:
    """Does a node's validation string run `test_id`? (node id, or a pytest: path prefix)."""
    v = validation.strip()
    if v.startswith("pytest:"):
        path = v.removeprefix("pytest:").rstrip("/")
        return test_id == path or test_id.startswith((path + "/", path + "::"))
    return v == test_id or (test_id == _test_file(v) and "::" not in test_id)


def _implicates(f: Facts, p: Parsed) -> tuple[str, tuple[str, ...]] | None:
    """Why this failure implicates the plan and the complete nodes it is in, or None (the
    node's own work)."""
    if p.build:
        return None
    mine = [t for t in p.failing_tests if _covers(f.check, t) or _test_file(t) in f.own_tests]
    broken = sorted({nid for t in p.failing_tests if t not in mine
                     for nid, v in f.passed_checks if _covers(v, t)})
    if broken:
        return f"tests already validated by {', '.join(broken[:4])} now fail", ()
    if p.where is None:
        return None
    file = p.where[0]
    if p.error_type == "NameError" and file not in f.own_files:
        done = {nid for nid, _ in f.complete_targets}
        authors = sorted({nid for path, nid in f.planned_files if path == file and nid in done})
        if authors:
            return (f"NameError in {file}, which complete node(s) {', '.join(authors[:4])} "
                    "own: re-opened", tuple(authors[:4]))
    if file in f.own_files or file in f.own_tests or any(_test_file(t) == file for t in mine):
        return None
    owners = sorted({nid for path, nid in f.planned_files if path == file})
    if owners:
        return f"fails in {file}, which planned node(s) {', '.join(owners[:4])} own", ()
    if _is_test(file):
        return None  # a test file no node edits: the node's own check reading it
    return f"fails in {file}, which no plan node covers", ()


def _named(f: Facts, p: Parsed) -> tuple[str, ...]:
    """Complete modify nodes whose target the error message names (its last dotted part, as a
    word; not one this node's own target also ends with)."""
    mine = f.own_target.rsplit(".", 1)[-1]
    out = []
    for nid, target in f.complete_targets:
        name = target.rsplit(".", 1)[-1]
        if len(name) < 3 or name == mine:
            continue
        if re.search(rf"\b{re.escape(name)}\b", p.message):
            out.append(nid)
    return tuple(sorted(out)[:4])


def _is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" \
        or "/tests/" in f"/{path}"


def decide(f: Facts, kind: str, output: str, h: History, *, k: int, max_retries: int,
           max_replans: int, repo: str = "") -> Decision:
    """Classify one failed verdict of node `f.node_id` (module docstring). `k`: local retries
    with the same signature before it is taken to implicate the plan; `max_retries`: failures a
    node may have handled (the next is `stop`)."""
    p = parse(output, repo=repo)
    sig = signature(kind, p)
    dig = digest(f.check, p, output)
    failures = h.retries + 1
    repeats = h.repeats + 1 if sig == h.signature else 1
    if failures > max_retries:
        return Decision("stop", f"failure {failures} of a node allowed {max_retries} retries: "
                        "its bound is spent, no model call", dig, sig, repeats)
    found = _implicates(f, p)
    if found is None and sig == h.signature and h.repeats >= k:
        named = _named(f, p)
        found = (f"the same failure after {h.repeats} local retr"
                 f"{'y' if h.repeats == 1 else 'ies'}"
                 + (f"; it names the target of complete node(s) {', '.join(named)}: re-opened"
                    if named else ""), named)
    if found is None:
        return Decision("local", "build error" if p.build else "failure inside the node's own "
                        "work", dig, sig, repeats)
    why, reopen = found
    if reopen:
        return Decision("reopen", why, dig, sig, repeats, reopen)
    if h.replans >= max_replans:
        return Decision("local", f"{why}; replans spent ({h.replans}), so no model call: "
                        "retried locally", dig, sig, repeats)
    return Decision("plan", why, dig, sig, 0)


def own_files(target_entity: str, edited: Sequence[str], entity_files: Collection[str]) -> set[str]:
    """The files a node owns: those it edited, plus the files evidence places its target in
    (`entity_files`), plus the module path its dotted target spells (`a.b.c` -> a/b.py,
    a/b/c.py, src/a/b.py ...)."""
    out = set(edited) | set(entity_files)
    parts = target_entity.split(".")
    for i in range(1, len(parts) + 1):
        mod = "/".join(parts[:i])
        out |= {f"{mod}.py", f"{mod}/__init__.py", f"src/{mod}.py", f"src/{mod}/__init__.py"}
    return out


def _check_tests(validation: str) -> set[str]:
    """Test files/paths a validation string names (`a.py::t` -> a.py, `pytest:p` -> p)."""
    v = validation.strip()
    if v.startswith("pytest:"):
        return {v.removeprefix("pytest:").rstrip("/")}
    if "::" in v:
        return {v.split("::", 1)[0]}
    return set()


def _member_targets(art: PlanArtifact, node: PlanNode) -> list[str]:
    """A node's target; a merged node's: each member obligation's (its own joins them)."""
    members = art.collapsed.get(node.id, []) if node.cycle_collapsed else []
    return [m.target_entity for m in members] or [node.target_entity]


def facts_of(art: PlanArtifact, node_id: str, evidence: Evidence | None) -> Facts:
    """The Facts of a failed node in a persisted plan: its own files (target, edits, where the
    evidence places its target), its check's tests, the checks of complete nodes, and the files
    every other node owns."""
    files_by_entity: dict[str, set[str]] = {}
    for n in (evidence.recon.nodes if evidence is not None else []):
        if n.file:
            files_by_entity.setdefault(n.id, set()).add(n.file)

    def files(target: str, nid: str) -> set[str]:
        located = {f for e, fs in files_by_entity.items()
                   if e == target or target.startswith(e + ".") for f in fs}
        b = art.bounds.get(nid)
        return own_files(target, b.edited_files if b else [], located)

    node = next(n for n in art.nodes if n.id == node_id)
    members = {node_id, *node.members}
    others = [n for n in art.nodes if n.id not in members]
    return Facts(
        node_id=node_id, check=node.validation, own_target=node.target_entity,
        own_files=frozenset(files(node.target_entity, node_id)),
        own_tests=frozenset(_check_tests(node.validation)),
        passed_checks=tuple((n.id, n.validation) for n in others if n.state == "complete"),
        planned_files=tuple(sorted((f, n.id) for n in others
                                   for f in files(n.target_entity, n.id)
                                   if f.endswith(".py") and not f.endswith("__init__.py"))),
        complete_targets=tuple((n.id, t) for n in others
                               if n.state == "complete" and n.obligation == "modify"
                               for t in _member_targets(art, n)),
    )
