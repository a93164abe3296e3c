"""The false-"done" probe on real issues, scripted. Not a test.

    .venv/bin/python benchmarks/false_done_probe.py INSTANCES.jsonl [--only ID] [--per-repo N]
        [--max-steps N] [--out DIR]

INSTANCES.jsonl: SWE-bench rows as benchmarks/real_issues.py reads them (a local `checkout` at
`base_commit`, the `python` that imports the project, its `env`). Each instance is planned from
its problem statement with plan07's default offline decomposer and that interpreter, then driven
twice by an agent that does the work wrong:

- planted: every hand-out that modifies library code is answered by planting a bug in its
  target (its definition raises before doing anything; a module target raises on import); a
  test the plan asks for is written as a lying agent would: red until a marker file beside it
  exists, which the agent creates once it has planted a bug, so the new test turns green while
  the library breaks; every derived criterion is confirmed;
- idle: nothing is edited at all; every derived criterion is confirmed.

The agent calls `next`, acts, calls `complete`, at most --max-steps hand-outs, and confirms all
criteria when `next` has nothing left. plan07 says "done" when `next` hands out nothing and no
termination blocker is left. Ground truth, read only to score: the instance's PASS_TO_PASS tests
(they pass at the base commit) run on the final tree. A false done: "done" while one of them
fails, or "done" with nothing changed. The target is none.

The checkouts are restored (`git checkout -- . && git clean`) after each run, and plan07's refs
dropped.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_issues import drop_refs, environment  # noqa: E402
from real_issues_data import load_instances  # noqa: E402

from plan07.errors import Plan07Error  # noqa: E402
from plan07.evidence import build_evidence  # noqa: E402
from plan07.model import Evidence  # noqa: E402

PLANTED = 'raise RuntimeError("planted by the false-done probe")'


@dataclass
class Run:
    instance: str
    mode: str
    planned: str = ""
    steps: int = 0
    passed: int = 0
    failed: int = 0
    not_judged: int = 0
    planted: list[str] = field(default_factory=list)
    outcome: str = ""  # done | not done: <first blocker> | steps exhausted | refused
    p2p_failing: int = 0
    p2p_run: int = 0
    false_done: bool = False
    seconds: float = 0.0


def plant(repo: Path, entity: str, evidence: Evidence) -> str | None:
    """Make `entity` raise first thing (a module: on import). Returns the file, or None when the
    entity is no definition of a Python file recon knows."""
    node = next((n for n in evidence.recon.nodes if n.id == entity), None)
    if node is None or not node.file or not node.file.endswith(".py"):
        return None
    path = repo / node.file
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return None
    lines = text.splitlines(keepends=True)
    if node.kind == "module":
        path.write_text(text + ("\n" if not text.endswith("\n") else "") + PLANTED + "\n")
        return node.file
    target = None
    for d in ast.walk(tree):
        if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and \
                d.name == entity.rsplit(".", 1)[-1] and node.line in (
                    d.lineno, *(x.lineno for x in d.decorator_list)):
            target = d
            break
    if isinstance(target, ast.ClassDef):  # a class: its __init__, else its first method
        defs = [b for b in target.body if isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef)]
        target = next((b for b in defs if b.name == "__init__"), None) or next(
            iter(defs), None)
    if target is None or not target.body:
        return None
    first = target.body[0]
    indent = lines[first.lineno - 1][: first.col_offset]
    lines.insert(first.lineno - 1, f"{indent}{PLANTED}\n")
    path.write_text("".join(lines))
    return node.file


MARKER = ".false_done_probe_green"


def write_test(repo: Path, test_id: str) -> Path:
    """The test a hand-out asks for, as a lying agent writes it: red until the marker file
    beside it exists, whatever the library does. Returns its folder."""
    file, _, name = test_id.partition("::")
    name = name.split("::")[-1].split("[")[0]
    path = repo / file
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(text + f"\n\ndef {name}():\n    import os\n    assert os.path.exists("
                    f"os.path.join(os.path.dirname(__file__), {MARKER!r}))\n")
    return path.parent


def run_p2p(row: dict[str, Any], repo: Path) -> tuple[int, int]:
    """(failing, run) of the instance's PASS_TO_PASS tests on the tree as it is now."""
    tests = [t for t in row.get("PASS_TO_PASS") or [] if "::" in t][:200]  # sympy's: no file
    if not tests:
        return 0, 0
    out = subprocess.run([str(row["python"]), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-rf", "--tb=no", *tests], cwd=repo, capture_output=True, text=True,
                         timeout=1800, check=False).stdout
    failing = sum(1 for ln in out.splitlines() if ln.startswith(("FAILED ", "ERROR ")))
    return failing, len(tests)


def restore(repo: Path) -> None:
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "--", "."], check=False)
    subprocess.run(["git", "-C", str(repo), "clean", "-qfd", "-e", "_version.py"], check=False)
    for m in repo.rglob(MARKER):  # in an ignored folder: git clean leaves it
        m.unlink()


def drive(row: dict[str, Any], mode: str, max_steps: int) -> Run:
    from plan07 import Planner

    r = Run(str(row["instance_id"]), mode)
    t0 = time.perf_counter()
    repo = Path(str(row["checkout"]))
    plan_id = f"probe-{mode}-" + "".join(c if c.isalnum() else "-" for c in r.instance)
    restore(repo)  # what a killed earlier run left
    with environment(dict(row.get("env") or {})), tempfile.TemporaryDirectory() as state:
        try:
            evidence = build_evidence(repo, request=str(row["problem_statement"]))
            p = Planner.create(str(row["problem_statement"]), repo=repo, evidence=evidence,
                               python=str(row["python"]), state_dir=Path(state),
                               plan_id=plan_id)
            r.planned = "ok"
            confirmed = False
            markers: set[Path] = set()
            while r.steps < max_steps:
                view = p.next()
                if view is None:
                    if confirmed:
                        break
                    p.confirm("all")
                    confirmed = True
                    continue
                r.steps += 1
                if mode == "planted" and view.obligation == "modify":
                    if "::" in view.target_entity:  # a test to define: one that lies
                        markers.add(write_test(repo, view.target_entity))
                    elif plant(repo, view.target_entity, evidence):
                        r.planted.append(view.target_entity)
                        for d in markers:  # ... and turns green once the bug is in
                            (d / MARKER).touch()
                v = p.complete(view.node_id)
                if v.inconclusive:
                    r.not_judged += 1
                    break
                r.passed += v.passed
                r.failed += not v.passed
            blockers = p.termination_blockers() if p.next() is None else ["a node still to do"]
            r.outcome = ("done" if not blockers else f"not done: {blockers[0][:90]}") \
                if r.steps < max_steps else "steps exhausted"
        except Plan07Error as exc:
            r.planned = r.planned or "refused"
            r.outcome = f"error: {exc.one_line()[:120]}"
        finally:
            if r.outcome == "done" or mode == "planted":
                r.p2p_failing, r.p2p_run = run_p2p(row, repo)
            changed = subprocess.run(["git", "-C", str(repo), "status", "--porcelain",
                                      "--untracked-files=no"], capture_output=True, text=True,
                                     check=False).stdout.strip()
            r.false_done = r.outcome == "done" and (r.p2p_failing > 0 or not changed)
            restore(repo)
            drop_refs(repo, plan_id)
    r.seconds = round(time.perf_counter() - t0, 1)
    return r


def report(runs: list[Run], command: str) -> str:
    out = ["# The false-done probe on real issues", "",
           f"Command: `.venv/bin/python benchmarks/false_done_probe.py {command}`", "",
           "Each instance planned from its problem statement (builtin decomposer, the "
           "instance's interpreter), then driven by an agent that plants a bug in every library "
           "target it is handed (`planted`) or edits nothing (`idle`), confirming every derived "
           "criterion. A false done: plan07 ends the plan while a PASS_TO_PASS test of the "
           "instance fails, or with nothing changed.", "",
           "| mode | runs | done | false done | not done | steps (mean) | checks failed |",
           "|---|---|---|---|---|---|---|"]
    for mode in ("planted", "idle"):
        rs = [r for r in runs if r.mode == mode]
        if not rs:
            continue
        out.append(f"| {mode} | {len(rs)} | {sum(r.outcome == 'done' for r in rs)} | "
                   f"{sum(r.false_done for r in rs)} | "
                   f"{sum(r.outcome.startswith('not done') for r in rs)} | "
                   f"{sum(r.steps for r in rs) / len(rs):.1f} | {sum(r.failed for r in rs)} |")
    why = Counter(r.outcome.split(":")[0] for r in runs)
    out += ["", "Outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(why.items())), "",
            "| instance | mode | outcome | steps | passed | failed | planted in "
            "| P2P failing / run | false done | s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        out.append(f"| {r.instance} | {r.mode} | {r.outcome.replace('|', '/')} | {r.steps} | "
                   f"{r.passed} | {r.failed} | {len(r.planted)} | {r.p2p_failing} / {r.p2p_run} "
                   f"| {'**yes**' if r.false_done else 'no'} | {r.seconds:.0f} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("instances", type=Path)
    ap.add_argument("--only", action="append", default=[], help="instance ids to run")
    ap.add_argument("--per-repo", type=int, default=0, help="at most N instances a project")
    ap.add_argument("--max-steps", type=int, default=30)
    ap.add_argument("--mode", choices=["planted", "idle", "both"], default="both")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/false_done"))
    args = ap.parse_args(argv)
    rows = load_instances(args.instances, None)
    if args.only:
        rows = [r for r in rows if r["instance_id"] in args.only]
    if args.per_repo:
        seen: Counter[str] = Counter()
        rows = [r for r in rows if (seen.update([str(r["repo"])]) or seen[str(r["repo"])])
                <= args.per_repo]
    modes = ["planted", "idle"] if args.mode == "both" else [args.mode]
    runs = []
    args.out.mkdir(parents=True, exist_ok=True)
    for row in rows:
        for mode in modes:
            r = drive(row, mode, args.max_steps)
            runs.append(r)
            print(f"{r.instance:28} {mode:8} {r.outcome[:60]:60} steps={r.steps} "
                  f"p2p={r.p2p_failing}/{r.p2p_run} false_done={r.false_done} {r.seconds:.0f}s",
                  flush=True)
            (args.out / "runs.json").write_text(json.dumps([asdict(x) for x in runs], indent=1))
    command = " ".join(sys.argv[1:] if argv is None else argv)
    (args.out / "report.md").write_text(report(runs, command))
    print((args.out / "report.md").read_text())
    return 1 if any(r.false_done for r in runs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
