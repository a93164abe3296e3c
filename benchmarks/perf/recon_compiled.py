"""An experiment for the "recon" row: what compiling recon's pure stages with mypyc would buy.
plan07 does not ship compiled; this measures the option side by side with the code as it is.

    .venv/bin/pip install -e '.[test,dev]'      # the dev extra brings mypy, whose mypyc compiles
    .venv/bin/python benchmarks/perf/recon_compiled.py --sphinx PATH [--click PATH] [--runs 5]

A copy of plan07/ is made in a temporary directory and MODULES are compiled there with mypyc
(`build_ext --inplace`, a C compiler and the Python headers needed; about a minute). Then two
children run alternately, `--runs` times each: one imports plan07 from this checkout (pure),
one from the copy (compiled). Each child measures in its own process, as recon.py does, the
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

# recon's pure stages: the per-file walk and the cross-file resolution
MODULES = ("plan07/evidence/body.py", "plan07/evidence/syntax.py", "plan07/evidence/parse.py",
           "plan07/evidence/resolve.py", "plan07/evidence/index.py")
SETUP = """from setuptools import setup
from mypyc.build import mypycify
setup(name="plan07-recon-compiled", ext_modules=mypycify({modules!r}, opt_level="3"))
"""


def build(dest: Path) -> None:
    """plan07/ copied to `dest`, MODULES compiled in place there; SystemExit if it fails."""
    shutil.copytree(common.ROOT / "plan07", dest / "plan07",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    kept, inside = [], False  # the mypy sections of pyproject.toml (mypyc type-checks first)
    for line in (common.ROOT / "pyproject.toml").read_text("utf-8").splitlines():
        if line.startswith("["):
            inside = line.strip("[]").startswith("tool.mypy")
        if inside:
            kept.append(line)
    (dest / "pyproject.toml").write_text("\n".join(kept) + "\n", "utf-8")
    (dest / "setup.py").write_text(SETUP.format(modules=list(MODULES)), "utf-8")
    res = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=dest,
                         capture_output=True, text=True, check=False)
    built = [m for m in MODULES if list((dest / m).parent.glob(Path(m).stem + ".*.so"))]
    if res.returncode != 0 or len(built) != len(MODULES):
        tail = (res.stdout + res.stderr).strip().splitlines()[-3:]
        raise SystemExit("error: the mypyc build failed (is mypy installed, with a C compiler?): "
                         + " | ".join(tail))


def child(repo: Path, runs: int) -> None:
    """In this process: floor and cold recon interleaved `runs` times; one JSON line."""
    os.environ["PLAN07_CACHE_DIR"] = "off"
    import plan07
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
                      "graph": hashlib.sha256(graph.encode()).hexdigest()}))


def measure(root: Path, repo: Path, runs: int) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, __file__, "--child", str(repo), "--runs", str(runs)],
                         env=env, capture_output=True, text=True, check=True).stdout
    rec: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    if not str(rec["from"]).startswith(str(root)):
        raise SystemExit(f"error: the child imported plan07 from {rec['from']}, not {root}")
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
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        build(Path(tmp))
        print(f"compiled {len(MODULES)} modules with mypyc in {time.monotonic() - t0:.0f} s")
        for name, repo in common.repos(args):
            ratios: dict[str, list[float]] = {"pure": [], "compiled": []}
            graphs: dict[str, set[str]] = {"pure": set(), "compiled": set()}
            for _ in range(args.rounds):
                for tree, root in (("pure", common.ROOT), ("compiled", Path(tmp))):
                    rec = measure(root, repo, args.runs)
                    ratios[tree].append(float(rec["recon"]) / float(rec["floor"]))  # type: ignore[arg-type]
                    graphs[tree].add(str(rec["graph"]))
            same = len(graphs["pure"]) == 1 and graphs["pure"] == graphs["compiled"]
            pure, compiled = (statistics.median(ratios[k]) for k in ("pure", "compiled"))
            print(f"{name}: recon / floor, median of {args.rounds} children x {args.runs} runs: "
                  f"pure {pure:.2f}x {[round(x, 2) for x in ratios['pure']]}, compiled "
                  f"{compiled:.2f}x {[round(x, 2) for x in ratios['compiled']]}; "
                  f"same graph: {same}")
            common.result(f"recon compiled ({name})", "recon with mypyc-compiled walk and "
                          "resolve / read + ast.parse", compiled, 1.5, pure=round(pure, 3),
                          same_graph=same)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
