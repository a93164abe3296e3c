"""Real issues, real trees (issue 12). Not a test: prints a table and writes a report.

    .venv/bin/python benchmarks/real_issues.py INSTANCES.jsonl [--checkouts DIR] [--out DIR]

INSTANCES.jsonl holds SWE-bench-style instances, one JSON object a line, with the standard fields
(`instance_id`, `repo`, `base_commit`, `problem_statement`, `patch`, `FAIL_TO_PASS`,
`PASS_TO_PASS`; the last two in the official encoding: a JSON *string* holding a list, decoded
with json.loads, a real list is accepted too). Each instance needs a local checkout of `repo` at
`base_commit`: the instance's own `checkout` field, else `--checkouts DIR/<instance_id>`. Nothing
is fetched or installed; a checkout whose HEAD is not `base_commit` is refused.

Per instance, with the builtin decomposer (no model, no network):

1. canonicalization of `problem_statement`: accepted clean, accepted with junk (a goal carrying
   tracker noise, a criterion that is a URL, template text or code, or that reverses the
   request), or refused;
2. recon (`build_evidence(checkout, request=problem_statement)`), then `plan` on that bundle
   (`Planner.create(..., evidence=bundle)`): does plan accept its own recon's bundle;
3. localization: the rank of the best gold entity (a recon function/method/class whose lines
   the gold patch changes) in the bundle's localization; top-1 / top-5 rates;
4. plan targets vs the gold patch's files: precision = planned non-test target files that the
   patch touches / planned non-test target files; recall = gold files some target lies in.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from plan07.api import Planner
from plan07.errors import Plan07Error
from plan07.evidence import build_evidence
from plan07.evidence.parse import is_test_file
from plan07.model import Evidence, Requirement
from plan07.request.canonicalize import canonicalize

TARGET_TOP5 = 0.5  # "most instances"
TARGET_PRECISION, TARGET_RECALL = 0.5, 0.8


# ---------------------------------------------------------------------------------------------
# input


def test_list(value: object) -> list[str]:
    """FAIL_TO_PASS / PASS_TO_PASS: the official encoding is a JSON string holding a list."""
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"not a list of test ids: {value!r:.80}")
    return value


def load_instances(path: Path, checkouts: Path | None) -> list[dict[str, object]]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        for key in ("instance_id", "repo", "base_commit", "problem_statement", "patch"):
            if not isinstance(row.get(key), str):
                raise SystemExit(f"error: {path}:{n}: field {key!r} missing or not a string")
        row["FAIL_TO_PASS"] = test_list(row.get("FAIL_TO_PASS", "[]"))
        row["PASS_TO_PASS"] = test_list(row.get("PASS_TO_PASS", "[]"))
        co = row.get("checkout") or (checkouts / str(row["instance_id"]) if checkouts else None)
        if not co or not Path(str(co)).is_dir():
            raise SystemExit(f"error: {path}:{n}: no checkout for {row['instance_id']}")
        head = subprocess.run(["git", "-C", str(co), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=False).stdout.strip()
        if head != row["base_commit"]:
            raise SystemExit(f"error: {co} is at {head[:12]}, not base_commit "
                             f"{str(row['base_commit'])[:12]}")
        row["checkout"] = str(co)
        out.append(row)
    return out


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
# canonicalization quality


_URL = re.compile(r"https?://|www\.")
_TEMPLATE = re.compile(r"_no response_|no response|describe the bug|to reproduce|steps to "
                       r"reproduce|expected behaviou?r:?$|a clear and concise", re.I)
_TRACKER = re.compile(r"^(?:description|summary|last modified by|reported by|### )", re.I)
_MUSING = re.compile(r"\b(?:imho|imo|i guess|not sure|another discussion)\b", re.I)
_CODEY = re.compile(r"^\s*(?:>>>|\$ |File \"|Traceback)|\)\s*$.*\(", re.M)


def junk(req: Requirement, problem: str) -> list[str]:
    """Why a canonicalized requirement is not clean (empty: clean)."""
    why = []
    if _TRACKER.search(req.goal) or _URL.search(req.goal) or _TEMPLATE.search(req.goal):
        why.append(f"goal carries tracker/template text: {req.goal[:60]!r}")
    for c in req.acceptance_criteria:
        if _URL.search(c):
            why.append(f"criterion is a URL: {c[:60]!r}")
        elif _TEMPLATE.search(c):
            why.append(f"criterion is template text: {c[:60]!r}")
        elif _CODEY.search(c):
            why.append(f"criterion is code: {c[:60]!r}")
        elif c.startswith("(") or _MUSING.search(c):
            why.append(f"criterion is an aside or an opinion: {c[:60]!r}")
    for ident in re.findall(r"`([^`\n]+)`", problem):  # identifiers byte for byte
        bare = ident.strip("`")
        if "__" in bare and bare.replace("__", "") in req.goal and bare not in req.goal:
            why.append(f"identifier {bare!r} mangled in the goal")
    return why


# ---------------------------------------------------------------------------------------------
# one instance


@dataclass
class Row:
    instance: str
    canon: str = "refused"  # clean | junk | refused
    canon_why: list[str] = field(default_factory=list)
    derived: bool = False
    planned: str = "-"  # ok | refused: ...
    gold: list[str] = field(default_factory=list)
    rank: int | None = None  # 1-based rank of the best gold entity in the localization
    rank_enclosing: int | None = None  # ... counting a changed method's class as gold too
    precision: float | None = None
    recall: float | None = None
    nodes: int = 0
    seconds: float = 0.0
    targets: list[str] = field(default_factory=list)


def target_files(plan_nodes: Sequence[tuple[str, str]], evidence: Evidence) -> set[str]:
    files = {n.id: n.file for n in evidence.recon.nodes if n.file}
    out = set()
    for verb, target in plan_nodes:
        f = files.get(target)
        if verb == "modify" and f and not is_test_file(f) and "/tests/" not in f"/{f}":
            out.add(f)
    return out


def run_one(row: dict[str, object]) -> Row:
    t0 = time.perf_counter()
    r = Row(str(row["instance_id"]))
    problem = str(row["problem_statement"])
    checkout = Path(str(row["checkout"]))
    try:
        req = canonicalize(problem)
    except Plan07Error as exc:
        r.canon_why = [str(exc)[:120]]
        req = None
    if req is not None:
        r.canon_why = junk(req, problem)
        r.canon = "junk" if r.canon_why else "clean"
        r.derived = req.needs_confirmation
    evidence = build_evidence(checkout, request=problem)
    r.gold = gold_entities(checkout, str(row["patch"]), evidence)
    ranked = [x.entity for x in evidence.localization]
    hits = [ranked.index(g) + 1 for g in r.gold if g in ranked]
    r.rank = min(hits) if hits else None
    wide = gold_entities(checkout, str(row["patch"]), evidence, enclosing=True)
    hits = [ranked.index(g) + 1 for g in wide if g in ranked]
    r.rank_enclosing = min(hits) if hits else None
    gold_files = {f for f in patch_lines(str(row["patch"])) if f.endswith(".py")}
    plan_id = "bench-" + re.sub(r"[^A-Za-z0-9-]", "-", r.instance)
    if req is not None:
        with tempfile.TemporaryDirectory() as state:
            try:
                p = Planner.create(problem, repo=checkout, evidence=evidence,
                                   state_dir=Path(state), plan_id=plan_id,
                                   now="2026-01-01T00:00:00Z")
                art = p.artifact  # a composite's members are what it modifies
                nodes = [(m.obligation, m.target_entity) for n in art.nodes
                         if n.status != "alternative"
                         for m in (art.collapsed.get(n.id) or [n])]
                r.nodes = len(p.artifact.nodes)
                r.planned = "ok"
                r.targets = [t for v, t in nodes if v == "modify"]
                planned = target_files(nodes, evidence)
                r.precision = len(planned & gold_files) / len(planned) if planned else 0.0
                r.recall = (len(gold_files & planned) / len(gold_files)) if gold_files else None
            except Plan07Error as exc:
                r.planned = f"refused: {str(exc)[:100]}"
            finally:
                _drop_refs(checkout, plan_id)
    r.seconds = time.perf_counter() - t0
    return r


# ---------------------------------------------------------------------------------------------
# report


def _rate(xs: list[bool]) -> str:
    return f"{sum(xs)}/{len(xs)}" if xs else "-"


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def report(rows: list[Row], command: str, instances: list[dict[str, object]]) -> str:
    planned = [r for r in rows if r.planned == "ok"]
    top1 = [r.rank == 1 for r in rows if r.gold]
    top5 = [r.rank is not None and r.rank <= 5 for r in rows if r.gold]
    top5_wide = [r.rank_enclosing is not None and r.rank_enclosing <= 5 for r in rows if r.gold]
    prec = [r.precision for r in planned if r.precision is not None]
    rec = [r.recall for r in planned if r.recall is not None]
    lines = [
        "# Real issues: canonicalize, recon → plan, localization, plan targets (issue 12)",
        "",
        f"Command: `.venv/bin/python benchmarks/real_issues.py {command}` (builtin decomposer, "
        "no model). Instances: SWE-bench-style rows (standard fields; FAIL_TO_PASS/PASS_TO_PASS "
        "decoded with json.loads), each on a local checkout at its `base_commit`:",
        "",
        "| instance | repo | base_commit |",
        "|---|---|---|",
        *[f"| {i['instance_id']} | {i['repo']} | {str(i['base_commit'])[:12]} |"
          for i in instances],
        "",
        "## Summary",
        "",
        "| measure | value | target |",
        "|---|---|---|",
        f"| canonicalized clean | {_rate([r.canon == 'clean' for r in rows])} | all |",
        f"| canonicalized with junk | {_rate([r.canon == 'junk' for r in rows])} | 0 |",
        f"| refused | {_rate([r.canon == 'refused' for r in rows])} | 0 |",
        f"| recon → plan accepts its own bundle | {_rate([r.planned == 'ok' for r in rows])} "
        "| all |",
        f"| gold entity top-1 | {_rate(top1)} | |",
        f"| gold entity top-5 (innermost changed definition) | {_rate(top5)} "
        f"| ≥ {TARGET_TOP5:.0%} |",
        f"| gold entity top-5 (any definition enclosing a change) | {_rate(top5_wide)} | |",
        f"| plan target precision (mean) | {_mean(prec):.2f} | ≥ {TARGET_PRECISION} |",
        f"| plan target recall (mean) | {_mean(rec):.2f} | ≥ {TARGET_RECALL} |",
        "",
        "Gold entity: the innermost recon definition containing a line the gold patch changes "
        "(a pure insertion: the lines around it); *enclosing* also counts the definitions "
        "around it (a changed method's class). Precision/recall: the non-test files of the "
        "plan's followed `modify` targets against the `.py` files of the gold patch.",
        "",
        "## Per instance",
        "",
        "| instance | canon | derived | plan | nodes | gold entity | rank | rank (enclosing) "
        "| P | R | s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p = "-" if r.precision is None else f"{r.precision:.2f}"
        rc = "-" if r.recall is None else f"{r.recall:.2f}"
        lines.append(
            f"| {r.instance} | {r.canon} | {'yes' if r.derived else 'no'} | "
            f"{r.planned if r.planned == 'ok' else 'refused'} | {r.nodes} | "
            f"{', '.join(r.gold[:2]) or '-'} | {r.rank or '-'} | {r.rank_enclosing or '-'} | "
            f"{p} | {rc} | {r.seconds:.1f} |")
    notes = [f"- {r.instance}: {w}" for r in rows for w in r.canon_why]
    notes += [f"- {r.instance}: plan {r.planned}" for r in rows if r.planned.startswith("ref")]
    if notes:
        lines += ["", "## Notes", "", *notes]
    return "\n".join(lines) + "\n"


def tree_check(tree: Path, requests: list[Path]) -> list[str]:
    """recon -> plan on one (large) tree for each request text: the plan accepts its own bundle,
    how many nodes, the largest number of direct predecessors (the cap is 16)."""
    lines = ["", f"## recon → plan on `{tree.name}` (HEAD "
             f"{_head(tree)[:12]}), one bundle per request", "",
             "| request | plan | nodes | modify targets | max predecessors | s |",
             "|---|---|---|---|---|---|"]
    for req in requests:
        t0 = time.perf_counter()
        text = req.read_text(encoding="utf-8")
        evidence = build_evidence(tree, request=text)
        plan_id = "bench-tree-" + re.sub(r"[^A-Za-z0-9-]", "-", req.stem)
        with tempfile.TemporaryDirectory() as state:
            try:
                p = Planner.create(text, repo=tree, evidence=evidence, state_dir=Path(state),
                                   plan_id=plan_id, now="2026-01-01T00:00:00Z")
                nodes = p.artifact.nodes
                mods = [n.target_entity for n in nodes
                        if n.obligation == "modify" and n.status != "alternative"]
                cell = (f"ok | {len(nodes)} | {', '.join(f'`{m}`' for m in mods[:3])} | "
                        f"{max((len(n.dependencies) for n in nodes), default=0)}")
            except Plan07Error as exc:
                cell = f"refused: {str(exc)[:80]} | - | - | -"
            finally:
                _drop_refs(tree, plan_id)
        lines.append(f"| {req.name} | {cell} | {time.perf_counter() - t0:.1f} |")
    return lines


def _head(tree: Path) -> str:
    return subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=False).stdout.strip()


def _drop_refs(tree: Path, plan_id: str) -> None:
    refs = subprocess.run(["git", "-C", str(tree), "for-each-ref", "--format=delete %(refname)",
                           f"refs/plan07/{plan_id}/"], capture_output=True, text=True,
                          check=False).stdout
    subprocess.run(["git", "-C", str(tree), "update-ref", "--stdin"], input=refs, text=True,
                   capture_output=True, check=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("instances", type=Path)
    ap.add_argument("--checkouts", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/real_issues"))
    ap.add_argument("--only", default=None, help="a substring of the instance ids to run")
    ap.add_argument("--tree", type=Path, default=None,
                    help="also plan each --tree-request on this (large) checkout")
    ap.add_argument("--tree-request", type=Path, action="append", default=[])
    ap.add_argument("--notes", type=Path, default=None, help="a markdown file appended as is")
    args = ap.parse_args(argv)
    instances = load_instances(args.instances, args.checkouts)
    if args.only:
        instances = [i for i in instances if args.only in str(i["instance_id"])]
    rows = []
    for inst in instances:
        r = run_one(inst)
        rows.append(r)
        print(f"{r.instance:28} canon={r.canon:7} plan={r.planned[:60]:12} nodes={r.nodes:2} "
              f"rank={r.rank} P={r.precision} R={r.recall} gold={r.gold[:2]} "
              f"targets={r.targets[:4]} {r.canon_why[:2]}", flush=True)
    text = report(rows, " ".join(argv if argv is not None else sys.argv[1:]), instances)
    if args.notes is not None:
        text += "\n" + args.notes.read_text(encoding="utf-8")
    if args.tree is not None:
        text += "\n".join(tree_check(args.tree, args.tree_request)) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
