"""The results do not change: plan.json (and its evidence sidecar), the order and the recon graph
are byte-identical between two versions of plan07.

    .venv/bin/python benchmarks/perf/identical.py [--code DIR] [--click PATH --sphinx PATH
        --sympy PATH] [--recon] --out digests.json
    .venv/bin/python benchmarks/perf/identical.py --compare a.json b.json

The first form plans the bundled example and each given checkout (its benchmark request, the
builtin decomposer, plan07's own evidence as cached by the other benchmarks, both engines,
a fixed plan id and clock) and writes the SHA-256 of every file that matters. `--code DIR`
imports plan07 from the source tree DIR instead of the installed one (e.g. a `git worktree`
of the commit before a change), so the same script measures both sides. `--recon` also digests
the evidence bundle recon builds from scratch (slow on sympy). The second form compares two
digest files and exits 1 on any difference.

A git checkout gets the checkpoint ref `refs/plan07/identical/CP0`; it is deleted before each
plan (the checkout is the benchmark's own).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLAN_ID = "identical"
NOW = "2026-01-01T00:00:00Z"


def _use_code(src: Path) -> None:
    """Import plan07 from `src`: drop an editable install's finder, put `src` first."""
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, str(src.resolve()))
    for name in [m for m in sys.modules if m == "plan07" or m.startswith("plan07.")]:
        del sys.modules[name]


def _sha(p: Path) -> str | None:
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None


def _plan(name: str, request: str, repo: Path, evidence, engine: str,  # type: ignore[no-untyped-def]
          work: Path) -> dict[str, object]:
    from plan07.api import Planner

    if (repo / ".git").exists():
        subprocess.run(["git", "-C", str(repo), "update-ref", "-d",
                        f"refs/plan07/{PLAN_ID}/CP0"], check=False, capture_output=True)
    state = work / f"state-{name}-{engine}"
    shutil.rmtree(state, ignore_errors=True)
    Planner.create(request, repo=repo, evidence=evidence, llm="builtin", state_dir=state,
                   engine=engine, plan_id=PLAN_ID, now=NOW)
    if (repo / ".git").exists():
        subprocess.run(["git", "-C", str(repo), "update-ref", "-d",
                        f"refs/plan07/{PLAN_ID}/CP0"], check=False, capture_output=True)
    out = {"plan.json": _sha(state / "plan.json"), "evidence.json": _sha(state / "evidence.json"),
           "plan_bytes": (state / "plan.json").stat().st_size}
    data = json.loads((state / "plan.json").read_text("utf-8"))
    out["nodes"] = len(data["nodes"])
    return out


def digests(args: argparse.Namespace) -> dict[str, object]:
    sys.path.insert(0, str(HERE))
    import common

    from plan07.evidence import build_evidence

    res: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="plan07-identical-") as tmp:
        work = Path(tmp)
        # the example, at a fixed path (plan.json records the repo path)
        example = Path(tempfile.gettempdir()) / "plan07-identical-example" / "session_timeout"
        shutil.rmtree(example.parent, ignore_errors=True)
        shutil.copytree(HERE.parents[1] / "examples" / "session_timeout", example,
                        ignore=shutil.ignore_patterns("__pycache__", "edits.json"))
        request = (example / "request.md").read_text("utf-8")
        ev = build_evidence(example, request=request)
        res["example/evidence"] = hashlib.sha256(
            ev.model_dump_json(exclude_none=True).encode()).hexdigest()
        for engine in ("pydatalog", "clingo"):
            res[f"example/{engine}"] = _plan("example", request, example, None, engine, work)
        for name, repo in common.repos(args):
            ev = common.evidence(name, repo, args.cache)
            for engine in ("pydatalog", "clingo"):
                res[f"{name}/{engine}"] = _plan(name, common.request_text(name), repo, ev,
                                                engine, work)
            if args.recon:
                fresh = build_evidence(repo, request=common.request_text(name))
                res[f"{name}/recon"] = hashlib.sha256(
                    fresh.model_dump_json(exclude_none=True).encode()).hexdigest()
        shutil.rmtree(example.parent, ignore_errors=True)
    return res


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", type=Path, default=None, help="import plan07 from this tree")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--recon", action="store_true")
    ap.add_argument("--compare", nargs=2, type=Path, default=None)
    sys.path.insert(0, str(HERE))
    import common

    common.repo_args(ap)
    args = ap.parse_args(argv)
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        both = set(a) & set(b)
        diff = sorted(k for k in both if a[k] != b[k])
        for k in diff:
            print(f"DIFFERS {k}: {a[k]} != {b[k]}")
        only = sorted(set(a) ^ set(b))
        print(f"{len(both)} items compared, {len(diff)} differ"
              + (f"; in one file only: {', '.join(only)}" if only else ""))
        common.result("results unchanged", "items that differ / items compared",
                      len(diff) / max(len(both), 1), 0.0, compared=sorted(both), differ=diff)
        return 1 if diff else 0
    if args.code:
        _use_code(args.code)
    res = digests(args)
    text = json.dumps(res, indent=1, sort_keys=True)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
