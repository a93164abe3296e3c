"""Real issues, real trees: plan07 on SWE-bench instances with the default offline `builtin`
decomposer. Not a test: prints a line per instance and writes a report.

    .venv/bin/python benchmarks/real_issues.py INSTANCES.jsonl [--out DIR] [--only ID]
        [--per-repo N] [--quick]

INSTANCES.jsonl: SWE-bench rows (benchmarks/real_issues_data.py reads them), each with a local
`checkout` at its `base_commit`, and, for the full run, the `python` that imports the project and
its `env` (PYTHONPATH). plan07 is given what a user gives it: the problem statement, the
repository, that interpreter. The gold patch, test patch and FAIL_TO_PASS only score the plan.

Per instance: the plan is made (`Planner.create`, its CP0 baseline run with the instance's
interpreter) or refused, and scored:

- modify targets: the non-test files of the followed `modify` obligations against the `.py`
  files of the gold patch (precision, recall);
- the first hand-out (`Planner.next()`): its file in the gold patch, in the gold patch or test
  patch; the first hand-out that changes library code, in the gold patch;
- new tests: the files of the tests the plan writes, in the files the gold test patch changes;
- criteria, by the rule `real_issues_data.judge` states (a placeholder, code, SQL, a quote, a
  fragment, the reporter's narrative);
- the plan lint's findings and repairs, plan.json's size, the baseline (tests, seconds).

`--quick` stops before the gate (no baseline, no state: the pipeline in memory) for iterating on
localization. The checkouts are left as they were: no file is written there and plan07's refs
are deleted.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_issues_data import (  # noqa: E402
    FALLBACK,
    gold_entities,
    judge,
    load_instances,
    patch_files,
)

from plan07.errors import Plan07Error  # noqa: E402
from plan07.evidence import build_evidence  # noqa: E402
from plan07.evidence.layout import read_layout  # noqa: E402
from plan07.model import Evidence, PlanArtifact  # noqa: E402
from plan07.sandbox import environ  # noqa: E402

TARGET_PRECISION, TARGET_RECALL = 0.5, 0.8
# --reproduce: what a user of each project sets once as [tool.plan07] reproduce-preamble
PREAMBLES: dict[str, str] = {
    k: v for k, v in json.loads((Path(__file__).parent / "real_issues_preambles.json")
                                .read_text(encoding="utf-8")).items() if not k.startswith("_")}


@dataclass
class Row:
    instance: str
    repo: str
    planned: str = "-"  # ok | refused: ...
    criteria: list[tuple[str, str | None]] = field(default_factory=list)  # (text, why bad)
    derived: bool = False
    gold: list[str] = field(default_factory=list)  # gold patch .py files
    gold_tests: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)  # followed modify target files
    precision: float | None = None
    recall: float | None = None
    first: str = ""  # the first hand-out: "verb target"
    first_file: str = ""
    first_source_file: str = ""
    new_tests: list[str] = field(default_factory=list)  # files of the tests the plan writes
    rank: int | None = None  # the best gold entity's rank in the localization
    file_rank: int | None = None  # the best gold file's rank among the localization's files
    nodes: int = 0
    findings: list[str] = field(default_factory=list)
    repairs: int = 0
    size: int = 0
    baseline: str = ""
    reproduction: str = ""  # --reproduce: what running the issue's snippets showed
    seconds: float = 0.0

    @property
    def first_in_gold(self) -> bool:
        return self.first_file in self.gold

    @property
    def first_in_gold_or_tests(self) -> bool:
        return self.first_file in self.gold or self.first_file in self.gold_tests

    @property
    def tests_in_gold(self) -> bool | None:
        if not self.new_tests:
            return None
        return all(f in self.gold_tests for f in self.new_tests)


def environment(extra: dict[str, str]) -> Any:
    """The instance's environment (its PYTHONPATH) while its plan is made and checked."""
    return environ(extra)


def file_of(entity: str, evidence: Evidence) -> str:
    if "::" in entity:
        return entity.split("::", 1)[0]
    files = {n.id: n.file for n in evidence.recon.nodes if n.file}
    parts = entity.split(".")
    for k in range(len(parts), 0, -1):
        f = files.get(".".join(parts[:k]))
        if f:
            return f
    return ""


def score_plan(r: Row, art: PlanArtifact, evidence: Evidence, first: Any, repo: Path) -> None:
    layout = read_layout(repo)
    followed = [(m.obligation, m.target_entity) for n in art.nodes if n.status != "alternative"
                for m in (art.collapsed.get(n.id) or [n])]
    mods = [t for v, t in followed if v == "modify"]
    r.targets = sorted({f for t in mods if "::" not in t and (f := file_of(t, evidence))
                        and not layout.is_test(f) and "/tests/" not in f"/{f}"})
    r.new_tests = sorted({t.split("::", 1)[0] for t in mods if "::" in t})
    hit = set(r.targets) & set(r.gold)
    r.precision = len(hit) / len(r.targets) if r.targets else 0.0
    r.recall = len(set(r.gold) & set(r.targets)) / len(r.gold) if r.gold else None
    if first is not None:
        r.first = f"{first.obligation} {first.target_entity}"
        r.first_file = file_of(first.target_entity, evidence)
    order = art.schedule.order or [n.id for n in art.nodes]
    nodes = {n.id: n for n in art.nodes}
    for nid in order:
        n = nodes.get(nid)
        if n is not None and n.obligation == "modify" and "::" not in n.target_entity:
            r.first_source_file = file_of(n.target_entity, evidence)
            break
    r.nodes = len(art.nodes)
    r.findings = [f.kind for f in art.findings]
    r.repairs = sum(1 for x in art.revision_history if x.change.startswith("lint repair"))


def run_one(row: dict[str, Any], *, quick: bool, reproduce: bool = False) -> Row:
    from plan07.api import Planner
    from plan07.plan import pipeline
    from plan07.request.canonicalize import canonicalize

    t0 = time.perf_counter()
    r = Row(str(row["instance_id"]), str(row["repo"]))
    problem = str(row["problem_statement"])
    repo = Path(str(row["checkout"]))
    r.gold = patch_files(str(row["patch"]))
    r.gold_tests = patch_files(str(row.get("test_patch") or ""))
    try:
        req = canonicalize(problem)
        r.criteria = [(c, judge(c) or ("fallback" if c.startswith(FALLBACK) else None))
                      for c in req.acceptance_criteria]
        r.derived = req.needs_confirmation
    except Plan07Error as exc:
        r.planned = f"refused: {exc.one_line()[:100]}"
        return r
    plan_id = "bench-" + re.sub(r"[^A-Za-z0-9-]", "-", r.instance)
    with environment(dict(row.get("env") or {})):
        rep = None
        if reproduce:  # what `plan --reproduce` runs: the issue's own code, nothing of the gold
            from plan07.evidence.repro import describe
            from plan07.gate.reproduce import reproduce as run_reproduction

            rep = run_reproduction(repo, problem, python=str(row["python"]),
                                   preamble=PREAMBLES.get(str(row["repo"])))
            r.reproduction = describe(rep)
        evidence = build_evidence(repo, request=problem, reproduction=rep)
        ranked = [x.entity for x in evidence.localization]
        hits = [ranked.index(g) + 1 for g in gold_entities(repo, str(row["patch"]), evidence)
                if g in ranked]
        r.rank = min(hits) if hits else None
        file_of = {n.id: n.file for n in evidence.recon.nodes}
        files = list(dict.fromkeys(f for e in ranked if (f := file_of.get(e))))
        r.file_rank = min((files.index(g) + 1 for g in r.gold if g in files), default=None)
        with tempfile.TemporaryDirectory() as state:
            try:
                if quick:
                    draft = pipeline.draft_plan(
                        problem, repo=repo, evidence=evidence, llm="builtin", engine="pydatalog",
                        task_text=None, plan_id=plan_id, now="2026-01-01T00:00:00Z",
                        max_retries=3, ordering=True).artifact
                    first = _first_of(draft)
                    score_plan(r, draft, evidence, first, repo)
                else:
                    p = Planner.create(problem, repo=repo, evidence=evidence,
                                       python=str(row["python"]), state_dir=Path(state),
                                       plan_id=plan_id, now="2026-01-01T00:00:00Z")
                    art = p.artifact
                    r.size = (Path(state) / "plan.json").stat().st_size
                    gate = art.gate
                    if gate is not None:
                        r.baseline = (f"deferred: {gate.baseline_deferred[:60]}"
                                      if gate.baseline_deferred else
                                      f"{gate.baseline_tests} tests, {gate.baseline_seconds:.0f}s")
                    score_plan(r, art, evidence, p.next(), repo)
                r.planned = "ok"
            except Plan07Error as exc:
                r.planned = f"refused: {exc.one_line()[:100]}"
            finally:
                drop_refs(repo, plan_id)
    r.seconds = time.perf_counter() - t0
    return r


def _first_of(art: PlanArtifact) -> Any:
    from plan07.plan import artifact, driver

    return driver.pick(artifact.dag_of(art))


def drop_refs(tree: Path, plan_id: str) -> None:
    refs = subprocess.run(["git", "-C", str(tree), "for-each-ref", "--format=delete %(refname)",
                           f"refs/plan07/{plan_id}/", "refs/plan07-saved/"],
                          capture_output=True, text=True, check=False).stdout
    subprocess.run(["git", "-C", str(tree), "update-ref", "--stdin"], input=refs, text=True,
                   capture_output=True, check=False)


# ---------------------------------------------------------------------------------------------
# report


def _rate(xs: list[bool]) -> str:
    return f"{sum(xs)}/{len(xs)}" if xs else "-"


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def summary(rows: list[Row]) -> list[str]:
    ok = [r for r in rows if r.planned == "ok"]
    crits = [why for r in rows for _, why in r.criteria]
    bad = [w for w in crits if w and w != "fallback"]
    tests = [t for r in ok if (t := r.tests_in_gold) is not None]
    by_project: dict[str, list[Row]] = {}
    for r in ok:
        by_project.setdefault(r.repo, []).append(r)
    lines = [
        "| measure | value | target |", "|---|---|---|",
        f"| instances | {len(rows)} from {len({r.repo for r in rows})} projects | ≥ 30 from ≥ 4 |",
        f"| planned | {_rate([r.planned == 'ok' for r in rows])} | all |",
        f"| refused (size, environment, anything) | "
        f"{_rate([r.planned.startswith('refused') for r in rows])} | 0 |",
        f"| baseline deferred (no interpreter could run the tests) | "
        f"{_rate([r.baseline.startswith('deferred') for r in ok])} | |",
        f"| plan.json bytes (max) | {max((r.size for r in ok), default=0)} | ≤ 32768 |",
        f"| modify target precision (mean) | {_mean([r.precision or 0.0 for r in ok]):.2f} "
        f"| ≥ {TARGET_PRECISION} |",
        f"| modify target recall (mean) | "
        f"{_mean([r.recall for r in ok if r.recall is not None]):.2f} | ≥ {TARGET_RECALL} |",
        f"| first hand-out's file in the gold patch or its test patch | "
        f"{_rate([r.first_in_gold_or_tests for r in ok])} | most |",
        f"| first hand-out's file in the gold patch | {_rate([r.first_in_gold for r in ok])} | |",
        f"| first library change handed out in the gold patch | "
        f"{_rate([r.first_source_file in r.gold for r in ok])} | |",
        f"| new tests all in the gold test patch's files | {_rate(tests)} (of plans writing a "
        f"test) | most |",
        f"| gold entity ranked top-1 / top-5 by localization | "
        f"{_rate([r.rank == 1 for r in rows])} / "
        f"{_rate([r.rank is not None and r.rank <= 5 for r in rows])} | |",
        f"| gold file ranked top-1 / top-2 among the localization's files | "
        f"{_rate([r.file_rank == 1 for r in rows])} / "
        f"{_rate([r.file_rank is not None and r.file_rank <= 2 for r in rows])} | |",
        f"| criteria judged bad (placeholder, code, SQL, quote, fragment, narrative) | "
        f"{len(bad)}/{len(crits)} | 0 |",
        f"| criteria that are the fallback check (`{FALLBACK} <goal>`) | "
        f"{sum(1 for w in crits if w == 'fallback')}/{len(crits)} | |",
        f"| plans with a lint finding left | {_rate([bool(r.findings) for r in ok])} | |",
        f"| lint repairs made | {sum(r.repairs for r in ok)} | |",
        "", "By project (planned plans): precision, recall, first hand-out in a gold file, new "
        "tests in gold test files", "",
        "| project | plans | P | R | first | tests |", "|---|---|---|---|---|---|",
    ]
    for repo, rs in sorted(by_project.items()):
        ts = [t for r in rs if (t := r.tests_in_gold) is not None]
        lines.append(f"| {repo} | {len(rs)} | {_mean([r.precision or 0.0 for r in rs]):.2f} | "
                     f"{_mean([r.recall for r in rs if r.recall is not None]):.2f} | "
                     f"{_rate([r.first_in_gold_or_tests for r in rs])} | {_rate(ts)} |")
    return lines


def report(rows: list[Row], command: str) -> str:
    lines = ["# Real issues: SWE-bench Lite, planned with the builtin decomposer", "",
             f"Command: `.venv/bin/python benchmarks/real_issues.py {command}`", "",
             "## Summary", "", *summary(rows), "", "## Per instance", "",
             "| instance | plan | nodes | P | R | first hand-out | in gold | new tests | in gold "
             "tests | rank | findings | baseline | s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p = "-" if r.precision is None else f"{r.precision:.2f}"
        rc = "-" if r.recall is None else f"{r.recall:.2f}"
        first = "src+tests" if r.first_in_gold else ("tests" if r.first_in_gold_or_tests else "no")
        tests = {None: "-", True: "yes", False: "no"}[r.tests_in_gold]
        lines.append(
            f"| {r.instance} | {r.planned if r.planned == 'ok' else 'REFUSED'} | {r.nodes} | {p} | "
            f"{rc} | `{r.first[:60]}` | {first} | {', '.join(r.new_tests) or '-'} | {tests} | "
            f"{r.rank or '-'} | {', '.join(sorted(set(r.findings))) or '-'} | {r.baseline} | "
            f"{r.seconds:.0f} |")
    lines += ["", "## Criteria", "",
              "Judged by `benchmarks/real_issues_data.judge`: bad when a placeholder, code (a "
              "code span with a list, braces, statements or a call with several arguments), "
              "SQL, a quote, a fragment (under three words, opening with a conjunction, a "
              "preposition or \"not\", ending on a dangling word, unbalanced brackets) or the "
              "reporter's narrative (\"I get\", \"currently\", \"you will\"). *derived*: the "
              "issue named none; canonicalization derived it from the headline and marked it "
              "for confirmation.", ""]
    for r in rows:
        for c, why in r.criteria:
            tag = f" **{why}**" if why else ""
            lines.append(f"- {r.instance}{' (derived)' if r.derived else ''}: {c}{tag}")
    if any(r.reproduction for r in rows):
        lines += ["", "## Reproduction (`--reproduce`)", "",
                  "What running each issue's own snippets with its interpreter showed "
                  "(`plan --reproduce`; preambles: `benchmarks/real_issues_preambles.json`).", ""]
        lines += [f"- {r.instance}: {r.reproduction}" for r in rows]
    notes = [f"- {r.instance}: {r.planned}" for r in rows if r.planned.startswith("refused")]
    if notes:
        lines += ["", "## Refused", "", *notes]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("instances", type=Path)
    ap.add_argument("--checkouts", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/real_issues"))
    ap.add_argument("--only", default=None, help="a substring of the instance ids to run")
    ap.add_argument("--per-repo", type=int, default=0, help="at most N instances a project")
    ap.add_argument("--quick", action="store_true", help="the pipeline in memory, no gate")
    ap.add_argument("--notes", type=Path, default=None, help="a markdown file appended as is")
    ap.add_argument("--reproduce", action="store_true",
                    help="run each issue's own snippets with its `python` first (plan --reproduce)")
    args = ap.parse_args(argv)
    instances = load_instances(args.instances, args.checkouts)
    if args.only:
        instances = [i for i in instances if args.only in str(i["instance_id"])]
    if args.per_repo:
        seen: dict[str, int] = {}
        kept = []
        for i in instances:
            seen[str(i["repo"])] = seen.get(str(i["repo"]), 0) + 1
            if seen[str(i["repo"])] <= args.per_repo:
                kept.append(i)
        instances = kept
    rows = []
    for inst in instances:
        r = run_one(inst, quick=args.quick, reproduce=args.reproduce)
        rows.append(r)
        print(f"{r.instance:28} {r.planned[:40]:12} P={r.precision} R={r.recall} "
              f"first={r.first[:60]!r} in_gold={r.first_in_gold_or_tests} tests={r.new_tests} "
              f"in_gold_tests={r.tests_in_gold} rank={r.rank} {r.seconds:.0f}s"
              + (f" repro={r.reproduction[:90]!r}" if r.reproduction else ""), flush=True)
    text = report(rows, " ".join(argv if argv is not None else sys.argv[1:]))
    if args.notes is not None:
        text += "\n" + args.notes.read_text(encoding="utf-8")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.md").write_text(text, encoding="utf-8")
    (args.out / "rows.json").write_text(json.dumps([r.__dict__ for r in rows], indent=1,
                                                   default=str) + "\n", encoding="utf-8")
    print("\n".join(summary(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
