"""The "recon" row, compiled and pure side by side: what compiling recon's pure modules with
mypyc (setup.py, plan07/evidence/native.py) buys, and that it changes no result.

    .venv/bin/python benchmarks/perf/recon_compiled.py --sphinx PATH [--click PATH] [--runs 5]

Two children run alternately, `--rounds` times each: one with PLAN07_PURE=1 (recon's modules
imported from their sources), one with the compiled modules: this checkout's own when its
install compiled them and they match its sources, else a copy of the checkout compiled in a
temporary directory by its setup.py (`build_ext --inplace`: mypy, the dev extra, and a C
compiler needed; about a minute). Each child measures in its own process, as recon.py does, the
floor (read every file recon reads and `ast.parse` it, the collector paused) and a cold recon
(`recon(repo, workers=1)`, no facts cache), interleaved, and prints the two CPU times and a
digest of the graph. Reported: the median ratio of each tree, and whether the compiled tree's
graph equals the pure one's (nodes, edges, docs, arities, arguments passed, warnings).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
from recon import floor  # noqa: E402  (recon.py's floor, the same measure)


def _env(**extra: str) -> dict[str, str]:
    """This process's environment without PLAN07_PURE, plus `extra`."""
    return {**{k: v for k, v in os.environ.items() if k != "PLAN07_PURE"}, **extra}


def build(dest: Path) -> None:
    """This checkout's plan07/ copied to `dest` and compiled in place there by its own setup.py
    (which records what it compiled, as an install does); SystemExit if it fails."""
    shutil.copytree(common.ROOT / "plan07", dest / "plan07",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "compiled.json"))
    shutil.copytree(common.ROOT / "rules", dest / "rules")
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(common.ROOT / name, dest / name)
    res = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=dest,
                         env=_env(), capture_output=True, text=True, check=False)
    if res.returncode != 0 or not (dest / "plan07" / "evidence" / "compiled.json").exists():
        tail = (res.stdout + res.stderr).strip().splitlines()[-3:]
        raise SystemExit("error: the mypyc build failed (is mypy installed, with a C compiler?): "
                         + " | ".join(tail))


def child(repo: Path, runs: int) -> None:
    """In this process: floor and cold recon interleaved `runs` times; one JSON line."""
    os.environ["PLAN07_CACHE_DIR"] = "off"
    import plan07
    from plan07.evidence import native
    from plan07.evidence.files import python_files
    from plan07.evidence.recon import recon

    files = python_files(repo)
    t = common.side_by_side({"floor": lambda: floor(repo, files),
                             "recon": lambda: recon(repo, workers=1)}, runs)
    r = recon(repo, workers=1)
    graph = json.dumps([[n.model_dump() for n in r.nodes], [e.model_dump() for e in r.edges],
                        r.docs, sorted(r.arity.items()),
                        sorted([list(k), v] for k, v in r.passed.items()), r.warnings],
                       sort_keys=True)
    print(json.dumps({"floor": t["floor"], "recon": t["recon"], "from": plan07.__file__,
                      "compiled": native.compiled(),
                      "graph": hashlib.sha256(graph.encode()).hexdigest()}))


def measure(root: Path, repo: Path, runs: int, *, pure: bool) -> dict[str, object]:
    env = _env(PYTHONPATH=str(root), **({"PLAN07_PURE": "1"} if pure else {}))
    out = subprocess.run([sys.executable, __file__, "--child", str(repo), "--runs", str(runs)],
                         env=env, capture_output=True, text=True, check=True).stdout
    rec: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    if not str(rec["from"]).startswith(str(root)):
        raise SystemExit(f"error: the child imported plan07 from {rec['from']}, not {root}")
    if rec["compiled"] == pure:
        raise SystemExit(f"error: a {'pure' if pure else 'compiled'} child ran "
                         f"{'compiled' if pure else 'pure'} code")
    return rec


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.repo_args(ap)
    ap.add_argument("--runs", type=int, default=5, help="interleaved rounds per child")
    ap.add_argument("--rounds", type=int, default=3, help="children per tree, alternating")
    ap.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        child(args.child, args.runs)
        return 0
    print(common.load_avg())
    from plan07.evidence import native

    with tempfile.TemporaryDirectory() as tmp:
        if native.built_from_sources() is True:
            where = common.ROOT
            print("compiled: this checkout's install")
        else:
            t0 = time.monotonic()
            build(Path(tmp))
            where = Path(tmp)
            print(f"compiled: a copy, by its setup.py in "
                  f"{time.monotonic() - t0:.0f} s (this checkout's install is pure)")
        for name, repo in common.repos(args):
            ratios: dict[str, list[float]] = {"pure": [], "compiled": []}
            graphs: dict[str, set[str]] = {"pure": set(), "compiled": set()}
            for _ in range(args.rounds):
                for tree, root in (("pure", common.ROOT), ("compiled", where)):
                    rec = measure(root, repo, args.runs, pure=tree == "pure")
                    ratios[tree].append(float(rec["recon"]) / float(rec["floor"]))  # type: ignore[arg-type]
                    graphs[tree].add(str(rec["graph"]))
            same = len(graphs["pure"]) == 1 and graphs["pure"] == graphs["compiled"]
            pure, compiled = (statistics.median(ratios[k]) for k in ("pure", "compiled"))
            print(f"{name}: recon / floor, median of {args.rounds} children x {args.runs} runs: "
                  f"pure {pure:.2f}x {[round(x, 2) for x in ratios['pure']]}, compiled "
                  f"{compiled:.2f}x {[round(x, 2) for x in ratios['compiled']]}; "
                  f"same graph: {same}")
            common.result(f"recon compiled ({name})", "recon, recon's modules compiled / read "
                          "+ ast.parse", compiled, 1.5, pure=round(pure, 3), same_graph=same)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
