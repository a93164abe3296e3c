"""The gate's overhead: `plan07 complete` vs running the same test command directly (issue 11).

Side by side in one run, on a local checkout and its own interpreter (this script installs and
builds nothing): a plan of N modify steps is made (replayed decomposition, one step per run,
each validated by the same check), and for each run, interleaved:

- direct: `PYTHON -m pytest -q -p no:cacheprovider TEST` in the repo, as a user would;
- gate: the step's edit (one comment line appended to a source file, so every step changes the
  tree), then `plan07 complete Oi` (a fresh process: CLI start, plan load, content fingerprint,
  build check of the changed files, the repo's test command with its per-test record, the verdict
  against the CP0 baseline, state write, checkpoint snapshot).

The direct run sees the same edited tree. Wall and CPU (user+sys of the process and its
children, from RUSAGE_CHILDREN) are measured per run; the report gives medians and ratios.

    python benchmarks/gate.py --repo /path/to/click --python /path/to/click/.venv/bin/python \\
        --check pytest:tests/test_options.py --edit src/click/core.py --runs 7 \\
        --out benchmarks/results/gate-click.md
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = [str(Path(sys.executable).parent / "plan07")]  # the installed console script


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int, str]:
    """(wall s, cpu s of it and its children, returncode, output tail)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, (proc.stdout + proc.stderr)[-600:]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True, help="a git checkout (left as found)")
    ap.add_argument("--python", required=True, help="the repo's own interpreter")
    ap.add_argument("--check", required=True,
                    help="the validation every step runs: pytest:<path> or path::name")
    ap.add_argument("--edit", required=True, help="a source file each step appends a comment to")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--out", type=Path, help="write the markdown report here")
    args = ap.parse_args(argv)
    repo = args.repo.resolve()
    if git(repo, "status", "--porcelain", "--untracked-files=no"):
        print(f"error: {repo} has uncommitted changes; the benchmark edits and restores it",
              file=sys.stderr)
        return 2
    target = args.check.removeprefix("pytest:")
    direct = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", target]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.pop("VIRTUAL_ENV", None)
    # a user's shell writes bytecode: the direct run keeps the repo's __pycache__ as it would,
    # the gate its own cache (plan07.gate.bytecode)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    edit = repo / args.edit
    original = edit.read_bytes()
    work = Path(tempfile.mkdtemp(prefix="plan07-gate-bench-"))
    rows: list[dict[str, float]] = []
    try:
        obligations = [
            {"id": f"O{i}", "target_entity": f"step{i}", "obligation": "modify",
             "caused_by": "benchmark", "dependencies": [f"O{i - 1}"] if i > 1 else [],
             "evidence": "benchmark", "status": "ready", "validation": args.check}
            for i in range(1, args.runs + 1)]
        (work / "c.json").write_text(json.dumps({"obligations": obligations}))
        (work / "r.md").write_text("Benchmark the gate.\n\n## Acceptance criteria\n\n"
                                   "- every step is validated\n")
        st = work / "state"
        t0 = time.perf_counter()
        subprocess.run([*CLI, "plan", str(work / "r.md"), "--repo", str(repo), "--llm",
                        f"replay:{work / 'c.json'}", "--state", str(st), "--python",
                        args.python], check=True, env=env, capture_output=True)
        plan_s = time.perf_counter() - t0
        # warm both paths once (bytecode caches), not measured
        timed(direct, repo, env)
        for i in range(1, args.runs + 1):
            subprocess.run([*CLI, "next", "--state", str(st)], check=True, env=env,
                           capture_output=True)
            with edit.open("ab") as fh:
                fh.write(f"\n# plan07 gate benchmark step {i}\n".encode())
            g = timed([*CLI, "complete", f"O{i}", "--state", str(st)], repo, env)
            d = timed(direct, repo, env)
            if g[2] != 0 or d[2] not in (0, 1):  # direct: 1 when a test failed already
                print(f"error: step {i}: gate rc {g[2]}, direct rc {d[2]}\n{g[3]}\n{d[3]}",
                      file=sys.stderr)
                return 1
            rows.append({"gate_wall": g[0], "gate_cpu": g[1], "direct_wall": d[0],
                         "direct_cpu": d[1]})
            print(f"step {i}: gate {g[0]:.2f}s wall {g[1]:.2f}s cpu | direct {d[0]:.2f}s wall "
                  f"{d[1]:.2f}s cpu", file=sys.stderr)
        collected = subprocess.run([args.python, "-m", "pytest", "-q", "--co", "-p",
                                    "no:cacheprovider", target], cwd=repo, env=env,
                                   capture_output=True, text=True).stdout.strip().splitlines()
    finally:
        edit.write_bytes(original)
        for ref in git(repo, "for-each-ref", "--format=%(refname)", "refs/plan07/").split():
            git(repo, "update-ref", "-d", ref)
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    load = os.getloadavg()
    head = git(repo, "rev-parse", "HEAD")
    remote = git(repo, "config", "--get", "remote.origin.url") or str(repo)
    report = "\n".join([
        "# Gate overhead: `plan07 complete` vs the same tests run directly",
        "",
        f"- repo: {repo.name} ({remote}) at {head}",
        f"- interpreter: the repo's own ({args.python})",
        f"- check: `{args.check}` ({collected[-1] if collected else '?'}); each step appends "
        f"a comment to `{args.edit}`",
        f"- direct: `{' '.join(['python', *direct[1:]])}`",
        f"- runs: {len(rows)}, interleaved (gate then direct), medians; `plan07 plan` (baseline "
        f"included) once: {plan_s:.2f}s",
        "",
        "| | wall s | cpu s |",
        "|---|---:|---:|",
        f"| plan07 complete | {med['gate_wall']:.2f} | {med['gate_cpu']:.2f} |",
        f"| direct pytest | {med['direct_wall']:.2f} | {med['direct_cpu']:.2f} |",
        f"| **ratio** | **{med['gate_wall'] / med['direct_wall']:.2f}x** | "
        f"**{med['gate_cpu'] / med['direct_cpu']:.2f}x** |",
        "",
        f"Load average at the end: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} "
        f"({os.cpu_count()} CPUs). Each step (step 1 fills the gate's bytecode cache):",
        "",
        "| step | gate wall s | gate cpu s | direct wall s | direct cpu s |",
        "|---:|---:|---:|---:|---:|",
        *(f"| {i} | {r['gate_wall']:.2f} | {r['gate_cpu']:.2f} | {r['direct_wall']:.2f} | "
          f"{r['direct_cpu']:.2f} |" for i, r in enumerate(rows, 1)),
        "",
        f"Command: `python benchmarks/gate.py --repo {repo.name} --python {args.python} "
        f"--check {args.check} --edit {args.edit} --runs {args.runs}`",
        "",
    ])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
