"""Temporal consistency on real multi-file commits (spec 07 §7.2, invariant 7). Not a test.

    .venv/bin/python benchmarks/real_commits.py --commits COMMITS.json [--out DIR] \
        [--checkout NAME=PATH --python NAME=PY ...] [--only NAME ...]

Each commit of COMMITS.json (repository, commit, test command; an entry may name its own local
`checkout` and `python`, else --checkout/--python give them per project; nothing is cloned,
installed or built here) changes an interface and its call sites in several Python files. The
commit is replayed from its parent in a temporary git worktree, one obligation per changed file,
four ways in one run:

- plan07, terse: the decomposition a terse model writes: a target per file (the smallest recon
  entity of the parent enclosing every changed line), `caused_by` the request, no word of
  whether a change is compatible or breaking. plan07 reads each edit itself at `complete`.
- plan07, labelled: the same, with the kind of each interface change written into `caused_by`
  as an author who knows it would ("compatible change: adds optional parameter(s) ...",
  "breaking change: ..."; read here from the commit's own old and new signatures and rewritten
  tests: knowledge no decomposer has before the edit, shown only as a comparison row);
- definition-first: the files that change a signature first, then the rest, alphabetically;
- alphabetical: the changed files in path order.

The options of the project's test command (not its paths) reach plan07 as PYTEST_ADDOPTS, as a
user who runs the suite that way has them set (werkzeug's `-m "not dev_server"`: its dev-server
tests hang in this sandbox).

plan07 is driven by `plan07 next --json` / `plan07 complete --json` as a harness would: each
hand-out lands the commit's version of the files of the node handed out (all members of a
merged step). A `complete` that plan07 answers with `merged_into` (the observed edit cannot be
valid alone: it joined pending work in one step, nothing was checked) leaves a mid-step state:
the step goes on, and the state is shown apart, as a change half-typed would be. One answered
with `set_aside_for` (the edit narrows what pending consumers still use: plan07 put the node's
files back, its edit saved, and hands the consumers out first) is shown apart the same way; the
replay takes the node's files off what it has landed, and lands them again when the node comes
back. Every other
`complete` ends an executed step; the project's own suite runs on that state. A step is valid
when no test fails that passed at the parent (a test the commit adds counts from when it
exists). For the naive orders every file landed is a step. Suite results are cached by the set
of files landed, so orders sharing a prefix share runs.

Also measured: re-offers (a node handed out again after a check of it failed), plan07's steps
per changed file, the seconds plan07 spent reading each edit before its check (`observe_s`)
against the check's own (`duration_s`), and the recall of consumer files (the share of the
files the commit changed that call an entity whose signature it changes that recon at the
parent links to it).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PLAN07 = [str(Path(sys.executable).with_name("plan07"))]  # the CLI of this interpreter's venv
ENGINE = "pydatalog"  # --engine: plan07's rule engine
CALL_KINDS = {"calls", "by_name", "references", "tests"}


def git(repo: Path, *args: str, check: bool = True) -> str:
    r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"error: git {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


# ---- what a commit changes ----------------------------------------------------------------------


@dataclass
class Def:
    qualname: str
    start: int
    end: int
    params: tuple[list[str], int, list[tuple[str, bool]], bool, bool] | None  # None: a class


def defs_of(source: str) -> dict[str, Def]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out: dict[str, Def] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for n in body:
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                a = n.args
                pos = [p.arg for p in a.posonlyargs + a.args]
                kw = [(p.arg, d is not None) for p, d in zip(a.kwonlyargs, a.kw_defaults,
                                                              strict=True)]
                start = min([n.lineno, *(d.lineno for d in n.decorator_list)])
                out[prefix + n.name] = Def(prefix + n.name, start, n.end_lineno or n.lineno,
                                           (pos, len(pos) - len(a.defaults), kw,
                                            a.vararg is not None, a.kwarg is not None))
            elif isinstance(n, ast.ClassDef):
                start = min([n.lineno, *(d.lineno for d in n.decorator_list)])
                out[prefix + n.name] = Def(prefix + n.name, start, n.end_lineno or n.lineno, None)
                walk(n.body, prefix + n.name + ".")
            elif isinstance(n, ast.If | ast.Try):
                for block in (n.body, n.orelse, getattr(n, "finalbody", [])):
                    walk(block, prefix)

    walk(tree.body, "")
    return out


def change_kind(old: Def, new: Def | None) -> tuple[str, str] | None:
    """('compatible' | 'breaking', what) for a definition whose parameters change; None if not."""
    if new is None:
        return "breaking", f"removes {old.qualname}"
    if old.params is None or new.params is None or old.params == new.params:
        return None
    opos, oreq, okw, ova, okwa = old.params
    npos, nreq, nkw, nva, nkwa = new.params
    nkwd = dict(nkw)
    added = [p for p in npos if p not in opos] + [k for k, _ in nkw if k not in dict(okw)]
    removed = [p for p in opos if p not in npos and p not in nkwd] + [
        k for k, _ in okw if k not in nkwd and k not in npos]
    kept = [p for p in npos if p in opos]
    defaulted = set(npos[nreq:]) | {k for k, d in nkw if d}
    # Compatible for callers passing the new parameters by keyword (how these projects call):
    compatible = (not removed and kept == opos  # the old parameters, in their order
                  and all(p in defaulted for p in added)  # every new one optional
                  and all(p in defaulted for p in opos[oreq:] if p in npos)  # no default lost
                  and (nva or not ova) and (nkwa or not okwa))
    if compatible:
        return "compatible", (f"adds optional parameter(s) {', '.join(added)} with a default to "
                              f"{new.qualname}, keeping the old form")
    what = f"removes parameter(s) {', '.join(removed)} of" if removed else \
        f"changes the parameters of ({', '.join(added) or 'reorders or requires'})"
    return "breaking", f"{what} {old.qualname}"


def changed_lines(repo: Path, parent: str, commit: str, path: str) -> list[int]:
    """Lines of the parent's version of `path` that the commit touches (a pure insertion marks
    the line it follows)."""
    out = git(repo, "diff", "-U0", parent, commit, "--", path)
    lines: list[int] = []
    for ln in out.splitlines():
        if ln.startswith("@@"):
            old = ln.split()[1][1:]
            start, _, count = old.partition(",")
            n = int(count) if count else 1
            s = int(start)
            lines += list(range(s, s + n)) if n else [max(s, 1)]
    return lines


def module_of(path: str) -> str:
    from plan07.evidence.parse import module_name

    return module_name(path)[0]


@dataclass
class FileChange:
    path: str
    target: str
    changes: list[tuple[str, str, str]] = field(default_factory=list)  # (qualified, kind, what)
    retested: list[str] = field(default_factory=list)  # existing tests whose body it changes


def file_changes(repo: Path, parent: str, commit: str) -> list[FileChange]:
    files = [f for f in git(repo, "diff", "--name-only", parent, commit, "--", "*.py").split()]
    out = []
    for f in sorted(files):
        old_src = git(repo, "show", f"{parent}:{f}", check=False)
        new_src = git(repo, "show", f"{commit}:{f}", check=False)
        old, new = defs_of(old_src), defs_of(new_src)
        mod = module_of(f)
        lines = changed_lines(repo, parent, commit, f)
        covering = [d for d in old.values() if all(d.start <= x <= d.end for x in lines)]
        best = max(covering, key=lambda d: d.qualname.count("."), default=None)
        target = f"{mod}.{best.qualname}" if best else mod
        fc = FileChange(f, target)
        old_lines, new_lines = old_src.splitlines(), new_src.splitlines()
        for q, d in old.items():
            k = change_kind(d, new.get(q))
            if k and not q.rpartition(".")[2].startswith("test"):
                fc.changes.append((f"{mod}.{q}", *k))
            n = new.get(q)
            if (q.rpartition(".")[2].startswith("test") and n is not None and d.params is not None
                    and old_lines[d.start - 1:d.end] != new_lines[n.start - 1:n.end]):
                fc.retested.append(f"{mod}.{q}")
        out.append(fc)
    return out


def behaviour_changes(changes: list[FileChange], ev_path: Path) -> None:
    """A commit that rewrites existing tests changes behaviour they assert: the files holding what
    those tests exercise (recon at the parent: their calls, by-name calls, tested entities) say
    "breaking change", as the author updating those tests knows (no order of separate steps can
    pass the old and the new assertion)."""
    ev = json.loads(ev_path.read_text())
    file_of = {n["id"]: n.get("file") for n in ev["recon"]["nodes"]}
    retested = {t for c in changes for t in c.retested}
    hit: dict[str, list[str]] = {}
    for e in ev["recon"]["edges"]:
        if e["kind"] in CALL_KINDS and e["src"] in retested:
            f = file_of.get(e["dst"])
            if f:
                hit.setdefault(f, []).append(e["src"])
    for c in changes:
        if c.path in hit and not c.retested:
            tests = sorted(set(hit[c.path]))
            c.changes.append((c.target, "breaking", "changes behaviour existing tests assert ("
                              + ", ".join(t.rpartition(".")[2] for t in tests[:3])
                              + (", ..." if len(tests) > 3 else "") + ")"))


# ---- the suite ----------------------------------------------------------------------------------


class Suite:
    """The project's own suite in the replay worktree; results cached by the files landed.

    Flaky tests (real suites have them: click's pager tests fail one run in two on this box) are
    handled in the open, the same way for every order: the parent's baseline is the union of the
    failures of `baseline_runs` runs (a test that failed in any of them never reliably passed),
    and a test newly failing after a hand-out counts only if it fails in each of `confirm_runs`
    runs of that same tree; one that passes in one of them is recorded in `flaky`, and the report
    lists it."""

    def __init__(self, wt: Path, argv: list[str], env: dict[str, str], timeout: float, *,
                 baseline_runs: int = 3, confirm_runs: int = 3) -> None:
        self.wt, self.argv, self.env, self.timeout = wt, argv, env, timeout
        self.baseline_runs, self.confirm_runs = baseline_runs, confirm_runs
        self.cache: dict[frozenset[str], set[str]] = {}
        self.flaky: set[str] = set()
        self.runs = 0
        self.seconds = 0.0

    def _run(self) -> set[str]:
        junit = self.wt.parent / "junit.xml"
        argv = [*self.argv, f"--junitxml={junit}", "-p", "no:cacheprovider",
                "--continue-on-collection-errors"]
        t = time.perf_counter()
        r = subprocess.run(argv, cwd=self.wt, env={**os.environ, **self.env},
                           capture_output=True, text=True, timeout=self.timeout)
        self.seconds += time.perf_counter() - t
        self.runs += 1
        bad = parse_junit(junit) if junit.exists() else {f"<suite exit {r.returncode}>"}
        junit.unlink(missing_ok=True)
        return bad

    def baseline(self) -> set[str]:
        """What fails at the parent in any of `baseline_runs` runs."""
        runs = [self._run() for _ in range(max(1, self.baseline_runs))]
        self.flaky |= set.union(*runs) - set.intersection(*runs)
        self.cache[frozenset()] = bad = set.union(*runs)
        return bad

    def failing(self, landed: frozenset[str], baseline: set[str]) -> set[str]:
        """What fails with `landed` applied: a failure beyond the baseline must repeat in each
        of `confirm_runs` runs (stopping at the first run it passes)."""
        if landed not in self.cache:
            bad = self._run()
            for _ in range(self.confirm_runs - 1):
                if not bad - baseline:
                    break
                again = self._run()
                self.flaky |= (bad - again) - baseline
                bad &= again
            self.cache[landed] = bad
        return self.cache[landed]


def parse_junit(path: Path) -> set[str]:
    import xml.etree.ElementTree as ET

    bad: set[str] = set()
    for case in ET.parse(path).getroot().iter("testcase"):
        if any(child.tag in ("failure", "error") for child in case):
            bad.add(f"{case.get('classname')}::{case.get('name')}")
    return bad


# ---- one replay ---------------------------------------------------------------------------------


@dataclass
class Replay:
    wt: Path
    repo: Path
    commit: str
    parent: str
    suite: Suite
    baseline: set[str]
    landed: set[str] = field(default_factory=set)
    steps: list[dict[str, Any]] = field(default_factory=list)

    def reset(self) -> None:
        git(self.wt, "checkout", "-q", "--force", self.parent, "--", ".")
        git(self.wt, "clean", "-qfd", "-e", "!.venv")
        self.landed = set()
        self.steps = []

    def land(self, files: list[str]) -> None:
        """The commit's version of `files` in the worktree (a file the commit deletes, gone)."""
        for f in files:
            src = git(self.repo, "show", f"{self.commit}:{f}", check=False)
            p = self.wt / f
            if src == "" and not git(self.repo, "cat-file", "-e", f"{self.commit}:{f}",
                                     check=False):
                p.unlink(missing_ok=True)
            else:
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(src)
        self.landed |= set(files)

    def judge(self, label: str, files: list[str], **extra: Any) -> bool:
        """The suite on the files landed so far: one step, valid when nothing that passed at
        the parent fails."""
        worse = sorted(self.suite.failing(frozenset(self.landed), self.baseline) - self.baseline)
        self.steps.append({"hand_out": label, "files": files, "valid": not worse,
                           "newly_failing": worse[:5], **extra})
        return not worse


def obligations_for(changes: list[FileChange], subject: str, *,
                    labelled: bool) -> list[dict[str, Any]]:
    """One modify per changed file. Terse: `caused_by` the request, nothing of the kind of
    change. Labelled: the kind of each interface change the commit makes, as its author knows."""
    out = []
    for i, c in enumerate(changes, 1):
        if labelled:
            kinds = "; ".join(f"{kind} change: {what}" for _q, kind, what in c.changes)
            why = (f"{kinds}; " if kinds else "") + f"commit: {subject}"
        else:
            why = "requirement: the requested change, in this file"
        out.append({"id": f"O{i}", "target_entity": c.target, "obligation": "modify",
                    "caused_by": why[:400], "dependencies": [],
                    "evidence": f"the commit changes {c.path}", "status": "ready",
                    "validation": "compile"})
    return out


def run_plan07(rp: Replay, changes: list[FileChange], subject: str, body: str, tmp: Path,
               python: str, env: dict[str, str], *, labelled: bool) -> dict[str, Any]:
    """Drive plan07 over the commit as a harness does; every `complete` is recorded."""
    rp.reset()
    tag = "labelled" if labelled else "terse"
    state, ev = tmp / f"state-{tag}", tmp / "evidence.json"
    obligations = obligations_for(changes, subject, labelled=labelled)
    file_of = {o["id"]: c.path for o, c in zip(obligations, changes, strict=True)}
    (tmp / f"completion-{tag}.json").write_text(json.dumps({"obligations": obligations}))
    request = tmp / "request.md"
    request.write_text(f"# {subject}\n\n{body}\n")
    run_env = {**os.environ, **env}
    made = subprocess.run([*PLAN07, "plan", str(request), "--repo", str(rp.wt), "--evidence",
                           str(ev), "--llm", f"replay:{tmp / f'completion-{tag}.json'}",
                           "--state", str(state), "--python", python, "--quiet",
                           "--engine", ENGINE],
                          capture_output=True, text=True, env=run_env)
    if made.returncode != 0:  # a refused plan is a result of its own, not a crash of the run
        return {"steps": [], "mid_steps": [], "other": [], "reoffers": 0, "can_terminate": None,
                "nodes": [], "error": made.stderr.strip()[-400:]}
    seen: dict[str, int] = {}
    failed_before: set[str] = set()
    reoffers = 0
    limit = 4 * len(changes) + 8  # a bound on the loop, far above any plan's need
    mid: list[dict[str, Any]] = []
    other: list[dict[str, Any]] = []  # hand-outs of nodes the commit has no edit for
    while len(rp.steps) + len(mid) + len(other) < limit:
        r = subprocess.run([*PLAN07, "next", "--json", "--state", str(state)],
                           capture_output=True, text=True, env=run_env)
        view = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
        nid = view.get("node_id")
        if not nid:
            break
        if nid in failed_before:
            reoffers += 1
        seen[nid] = seen.get(nid, 0) + 1
        plan = json.loads((state / "plan.json").read_text())
        node = next(n for n in plan["nodes"] if n["id"] == nid)
        files = [file_of[m] for m in (node.get("members") or [nid]) if m in file_of]
        rp.land(files)
        done = subprocess.run([*PLAN07, "complete", nid, "--json", "--state", str(state)],
                              capture_output=True, text=True, env=run_env)
        verdict = json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}
        info = {"exit": done.returncode, "order": len(rp.steps) + len(mid),
                **({"error": done.stderr.strip()[-400:]} if done.returncode not in (0, 1) else {}),
                "observed": verdict.get("observed", [])[:4],
                "observe_s": verdict.get("observe_s", 0.0),
                "check_s": verdict.get("duration_s", 0.0)}
        if verdict.get("merged_into") or verdict.get("set_aside_for"):
            worse = sorted(rp.suite.failing(frozenset(rp.landed), rp.baseline) - rp.baseline)
            mid.append({"hand_out": nid, "files": files, "valid": not worse,
                        "merged_into": verdict.get("merged_into"),
                        "set_aside_for": verdict.get("set_aside_for") or [], **info})
            if verdict.get("set_aside_for"):  # plan07 put its files back (the last checkpoint)
                rp.landed -= set(files)
            continue
        if files:
            rp.judge(nid, files, passed=bool(verdict.get("passed")), **info)
        else:  # a test the plan adds, its regression run: the tree is as the last step left it
            other.append({"hand_out": nid, "passed": bool(verdict.get("passed")), **info})
        if not verdict.get("passed"):
            failed_before.add(nid)
        if done.returncode not in (0, 1):
            break
    final = json.loads(subprocess.run([*PLAN07, "status", "--json", "--state", str(state)],
                                      capture_output=True, text=True, env=run_env).stdout or "{}")
    return {"steps": rp.steps, "mid_steps": mid, "other": other, "reoffers": reoffers,
            "can_terminate": final.get("can_terminate"),
            "nodes": [(n["id"], n["state"]) for n in final.get("nodes", [])]}


def run_fixed(rp: Replay, files: list[str]) -> list[dict[str, Any]]:
    rp.reset()
    for f in files:
        rp.land([f])
        rp.judge(f, [f])
    return rp.steps


def consumer_recall(ev_path: Path, changes: list[FileChange], all_files: list[str],
                    wt: Path) -> dict[str, Any]:
    """Files the commit changed that call an entity whose signature it changes (ground truth: the
    file's parent text names the entity's last name outside its own definition), and which of
    them recon links to it (an edge from an entity of that file to the entity, or to a part of it:
    a class stands for its constructor)."""
    ev = json.loads(ev_path.read_text())
    file_of = {n["id"]: n.get("file") for n in ev["recon"]["nodes"]}
    changed = [(q, c.path) for c in changes for q, _k, _w in c.changes]
    truth: set[tuple[str, str]] = set()
    for q, home in changed:
        name = q.rpartition(".")[2]
        if name == "__init__":
            name = q.rsplit(".", 2)[-2]
        for f in all_files:
            if f == home:
                continue
            text = (wt / f).read_text() if (wt / f).exists() else ""
            if any(name in ln and not ln.lstrip().startswith(("def ", "class "))
                   for ln in text.splitlines()):
                truth.add((q, f))

    def linked(kinds: set[str]) -> set[tuple[str, str]]:
        found = set()
        for e in ev["recon"]["edges"]:
            if e["kind"] not in kinds:
                continue
            for q, _home in changed:
                cls = q.rsplit(".", 1)[0] if q.endswith(".__init__") else None
                if e["dst"] == q or e["dst"] == cls or e["dst"].startswith(q + "."):
                    f = file_of.get(e["src"])
                    if f and (q, f) in truth:
                        found.add((q, f))
        return found

    full, calls_only = linked(CALL_KINDS), linked({"calls", "tests"})
    files = {f for _q, f in truth}
    return {"consumer_files": sorted(files),
            "found_files": sorted({f for _q, f in full}),
            "found_files_calls_only": sorted({f for _q, f in calls_only}),
            "pairs": len(truth), "found_pairs": len(full),
            "found_pairs_calls_only": len(calls_only)}


def recon(wt: Path, changes: list[FileChange], ev: Path) -> None:
    """plan07's own evidence of the parent, seeded by the obligations' targets."""
    seeds = [x for t in sorted({c.target for c in changes}) for x in ("--seed", t)]
    r = subprocess.run([*PLAN07, "recon", str(wt), "-o", str(ev), *seeds, "--quiet"],
                       capture_output=True, text=True)
    if r.returncode != 0:  # a target recon does not know (a new module): recon unseeded
        subprocess.run([*PLAN07, "recon", str(wt), "-o", str(ev), "--quiet"], check=True,
                       capture_output=True, text=True)


_VALUED = {"-m", "-p", "-k", "-o", "-W", "-c", "--deselect", "--ignore", "--ignore-glob",
           "--rootdir", "--confcutdir", "--timeout"}


def pytest_addopts(argv: list[str]) -> str:
    """The options of a pytest command (`{python} -m pytest OPTS PATHS`) without its paths, as
    PYTEST_ADDOPTS holds them: how the project's tests are run, wherever plan07 runs them."""
    args = list(argv)
    if "pytest" in args:
        args = args[args.index("pytest") + 1:]
    out: list[str] = []
    take = False
    for a in args:
        if take or a.startswith("-"):
            out.append(a)
            take = not take and a in _VALUED
        # a bare path: the tests to run, not how to run them
    return shlex.join(out)


def replay_commit(spec: dict[str, Any], checkout: Path, python: str,
                  timeout: float, runs: tuple[int, int] = (3, 3)) -> dict[str, Any]:
    import copy

    commit = git(checkout, "rev-parse", spec["commit"]).strip()
    parent = git(checkout, "rev-parse", f"{commit}^").strip()
    subject = git(checkout, "log", "-1", "--format=%s", commit).strip()
    body = git(checkout, "log", "-1", "--format=%b", commit).strip()
    changes = file_changes(checkout, parent, commit)
    env = dict(spec.get("env", {}))
    with tempfile.TemporaryDirectory(prefix="p7-real-") as t:
        tmp = Path(t)
        wt = tmp / "wt"
        git(checkout, "worktree", "add", "-q", "--detach", str(wt), parent)
        try:
            argv = [a.replace("{python}", python) for a in spec["test"]]
            suite = Suite(wt, argv, env, timeout, baseline_runs=runs[0], confirm_runs=runs[1])
            baseline = suite.baseline()
            rp = Replay(wt, checkout, commit, parent, suite, baseline)
            final = suite.failing(frozenset(c.path for c in changes), baseline)
            defining = [c.path for c in changes if c.changes]  # signatures, read off the commit
            recon(wt, changes, tmp / "evidence.json")
            t0 = time.perf_counter()
            # what the user's own test command says about how tests run reaches plan07's checks
            # as the user would pass it: PYTEST_ADDOPTS (werkzeug's `-m "not dev_server"`)
            env = {**env, "PYTEST_ADDOPTS": pytest_addopts(spec["test"])}
            terse = run_plan07(rp, changes, subject, body, tmp, python, env, labelled=False)
            plan_s = time.perf_counter() - t0
            told = copy.deepcopy(changes)
            behaviour_changes(told, tmp / "evidence.json")
            labelled = run_plan07(rp, told, subject, body, tmp, python, env, labelled=True)
            naive = {
                "definition_first": run_fixed(rp, defining + [c.path for c in changes
                                                              if c.path not in defining]),
                "alphabetical": run_fixed(rp, sorted(c.path for c in changes)),
            }
            recall = consumer_recall(tmp / "evidence.json", changes,
                                     [c.path for c in changes], wt)
        finally:
            git(checkout, "worktree", "remove", "--force", str(wt), check=False)
    return {"name": spec["name"], "repo": spec["repo"], "commit": commit, "parent": parent,
            "subject": subject, "test": " ".join(spec["test"]), "env": env,
            "files": [c.path for c in changes],
            "obligations": [{"file": c.path, "target": c.target, "changes": c.changes}
                            for c in told],
            "baseline_failing": len(baseline), "final_newly_failing": sorted(final - baseline),
            "plan07": terse, "plan07_labelled": labelled, **naive, "recall": recall,
            "flaky": sorted(suite.flaky), "suite_runs": suite.runs,
            "suite_seconds": round(suite.seconds, 1), "plan07_seconds": round(plan_s, 1)}


def score(steps: list[dict[str, Any]]) -> tuple[int, int]:
    return sum(s["valid"] for s in steps), len(steps)


def pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f} %)" if b else "0/0"


ORDERS = ("plan07", "plan07_labelled", "definition_first", "alphabetical")


def _steps(r: dict[str, Any], k: str) -> list[dict[str, Any]]:
    return r[k]["steps"] if k.startswith("plan07") else r[k]


def report(results: list[dict[str, Any]], out: Path, argv: list[str],
           runs: tuple[int, int] = (3, 3)) -> str:
    rows = ["| commit | files | plan07 terse: valid steps | steps / files | mid-step states "
            "valid | re-offers | outside the commit | labelled: valid steps | definition-first | "
            "alphabetical | observe / check s | consumer files found |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    tot = {k: [0, 0] for k in ORDERS}
    files = mids = mids_ok = reoffers = outside = 0
    obs_s = check_s = before = at_merge = 0.0
    ratios: list[float] = []
    rec = [0, 0]
    below = []
    for r in results:
        cells = {}
        for k in ORDERS:
            v, n = score(_steps(r, k))
            tot[k][0] += v
            tot[k][1] += n
            cells[k] = f"{v}/{n}"
        p = r["plan07"]
        mid_v, mid_n = score(p["mid_steps"])
        mids, mids_ok, reoffers = mids + mid_n, mids_ok + mid_v, reoffers + p["reoffers"]
        outside += len(p.get("other", []))
        o = sum(s.get("observe_s", 0.0) for s in [*p["steps"], *p["mid_steps"]])
        c = sum(s.get("check_s", 0.0) for s in p["steps"])
        obs_s, check_s = obs_s + o, check_s + c
        before += sum(s.get("observe_s", 0.0) for s in p["steps"])
        at_merge += sum(s.get("observe_s", 0.0) for s in p["mid_steps"])
        ratios += [s["observe_s"] / s["check_s"] for s in p["steps"]
                   if s.get("check_s") and "observe_s" in s]
        files += len(r["files"])
        rc = r["recall"]
        rec[0] += len(rc["consumer_files"])
        rec[1] += len(rc["found_files"])
        v7, n7 = score(p["steps"])
        vd, nd = score(r["definition_first"])
        if n7 and nd and v7 / n7 < vd / nd:
            below.append(r["name"])
        rows.append(f"| {r['name']} `{r['commit'][:10]}` | {len(r['files'])} | "
                    f"{cells['plan07']} | {n7}/{len(r['files'])} | {mid_v}/{mid_n} | "
                    f"{p['reoffers']} | {len(p.get('other', []))} | {cells['plan07_labelled']} | "
                    f"{cells['definition_first']} | {cells['alphabetical']} | "
                    f"{o:.2f} / {c:.1f} | {len(rc['found_files'])}/{len(rc['consumer_files'])} |")
    steps = tot["plan07"][1]
    rows.append(f"| **all** | {files} | **{pct(*tot['plan07'])}** | {steps}/{files} | "
                f"{pct(mids_ok, mids)} | {reoffers} | {outside} | {pct(*tot['plan07_labelled'])} | "
                f"{pct(*tot['definition_first'])} | {pct(*tot['alphabetical'])} | "
                f"{obs_s:.2f} / {check_s:.1f} | {pct(rec[1], rec[0])} |")
    projects = sorted({r["repo"] for r in results})
    lines = [
        "# Temporal consistency on real multi-file commits",
        "",
        f"Command: `{' '.join(argv)}`",
        "",
        f"{len(results)} commits of {len(projects)} projects, each replayed from its parent, one "
        "obligation per changed Python file, the project's own suite after every executed step "
        "(a step is valid when no test that passed at the parent fails). plan07 terse: no word "
        "of the kind of change (plan07 reads each edit itself); labelled: the kinds written in "
        "as the commit's author knows them (a comparison row, not a decomposer's knowledge). "
        "The naive orders land one file per step. All in one run.",
        "",
        "A *mid-step state* is a hand-out whose `complete` plan07 answered with `merged_into`: "
        "its edit cannot be valid alone (observed breaking, or a behaviour change whose planned "
        "tests are pending), so it joined pending work as one step and nothing was checked; "
        "the step goes on; or with `set_aside_for`: its edit narrows what pending consumers "
        "still use, so plan07 put its files back (the edit saved) and hands the consumers out "
        "first, the node again after them. Those states are shown apart (the suite's verdict on "
        "them in their column), as a half-typed change would be. A *re-offer* is a node handed "
        "out again after a check of it failed. A hand-out *outside the commit* is a node the "
        "commit has no edit for (a test the plan's lint adds to cover a criterion, the closing "
        "regression run): "
        "the replay lands nothing for it, so the tree stays as the last step left it and it is "
        "no step; it is completed as handed out (a test the commit never wrote fails its "
        "check).",
        "",
        f"Flaky tests, the same rule for every order: the parent's baseline is every test that "
        f"failed in any of {runs[0]} suite runs there, and a test newly failing after a step "
        f"counts only if it fails in each of {runs[1]} runs of that tree.",
        "",
        *rows,
        "",
        f"- plan07 (terse) steps: {steps} for {files} changed files; at least half as many "
        f"steps as files: {'yes' if 2 * steps >= files else 'no'}.",
        f"- Commits where plan07 (terse) is below definition-first: "
        f"{', '.join(below) or 'none'}.",
        f"- Reading the edits (observe_s: diff, classification, call sites, the rules' re-walk) "
        f"cost {obs_s:.2f} s against {check_s:.1f} s of the checks they precede: "
        f"{100 * obs_s / check_s if check_s else 0:.1f} %. Of that, {before:.2f} s was read "
        f"before the {len(ratios)} checks that followed "
        f"({100 * before / check_s if check_s else 0:.1f} % of them; per check, median "
        f"{100 * statistics.median(ratios) if ratios else 0:.1f} %, "
        f"at most {100 * max(ratios, default=0):.1f} %), and {at_merge:.2f} s at the {mids} "
        f"merges and set-asides (no check ran there: the step lands later; the failing check "
        f"each spared is not timed).",
        "",
        "| commit | repository | test command | plan07 terse: hand-outs (files) |",
        "|---|---|---|---|",
    ]
    for r in results:
        p = r["plan07"]
        seq = sorted([*[(s, False) for s in p["steps"]], *[(s, True) for s in p["mid_steps"]]],
                     key=lambda x: x[0].get("order", 0))
        hs = "; ".join(
            f"{s['hand_out']} ({', '.join(Path(f).name for f in s['files'])})"
            + (f" -> {s['merged_into']}" if mid and s.get("merged_into") else
               f" set aside for {', '.join(s['set_aside_for'])}" if mid else "")
            + ("" if s["valid"] else " INVALID") for s, mid in seq)
        env = " ".join(f"{k}={v}" for k, v in r["env"].items())
        lines.append(f"| `{r['commit'][:10]}` {r['name']} | {r['repo']} | "
                     f"`{env} {r['test'][:80]}` | {hs} |")
    flaky = [(r["name"], t) for r in results for t in r.get("flaky", [])]
    lines += ["", "Flaky tests seen (passed and failed on one tree, or across the parent's runs; "
              "not counted for any order):", ""]
    lines += [f"- {name}: `{t}`" for name, t in flaky] or ["- none"]
    text = "\n".join(lines) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(text)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=Path, default=HERE / "real_commits.json")
    ap.add_argument("--checkout", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--python", action="append", default=[], metavar="NAME=PY")
    ap.add_argument("--only", action="append", default=[], help="commit names to run")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per suite run")
    ap.add_argument("--engine", default="pydatalog", choices=["pydatalog", "clingo"],
                    help="plan07's rule engine (the re-walk of each observed edit runs on it)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "real_commits")
    ap.add_argument("--baseline-runs", type=int, default=3,
                    help="suite runs at the parent; a test failing in any is not counted")
    ap.add_argument("--confirm-runs", type=int, default=3,
                    help="runs a new failure must repeat in to count (else it is flaky)")
    a = ap.parse_args()
    global ENGINE
    ENGINE = a.engine
    checkouts = dict(x.split("=", 1) for x in a.checkout)
    pythons = dict(x.split("=", 1) for x in a.python)
    specs = json.loads(a.commits.read_text())["commits"]
    results = []
    for spec in specs:
        if a.only and spec["name"] not in a.only:
            continue
        proj = spec["project"]
        checkout = spec.get("checkout") or checkouts.get(proj)
        python = spec.get("python") or pythons.get(proj)
        if not checkout or not python:
            print(f"skip {spec['name']}: no checkout/python for {proj}", file=sys.stderr)
            continue
        print(f"== {spec['name']} {spec['commit']}", file=sys.stderr, flush=True)
        results.append(replay_commit(spec, Path(checkout), python, a.timeout,
                                     (a.baseline_runs, a.confirm_runs)))
        report(results, a.out, ["benchmarks/real_commits.py", *sys.argv[1:]],
               (a.baseline_runs, a.confirm_runs))  # written as it goes: a long run is readable
    if not results:
        print("error: no commit ran (give each commit a checkout and a python)", file=sys.stderr)
        return 2
    print(report(results, a.out, ["benchmarks/real_commits.py", *sys.argv[1:]],
                 (a.baseline_runs, a.confirm_runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
