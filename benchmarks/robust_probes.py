"""Benchmark: the robustness probes of docs/safety.md, counted (run by `crash_sweep.py --probes`).

    .venv/bin/python benchmarks/crash_sweep.py --probes [--kills 100] [--states 1000] [--out DIR]

- kills: plan07 SIGKILLed a random 0-1.5 s into a check whose test started helpers (in its group,
  in their own sessions, behind a shell and a double fork), half during `complete`, half during
  the CP0 baseline of `plan`; and passing `complete`s: the helpers, and plan07's own supervisors,
  still running 3 s later.
- states: plan.json out of shape (a value replaced by a hostile one, or a key taken out; stamped
  or not) under a random verb: tracebacks, errors of more than one line, plan.json written on an
  error (tests/_probes.py judges).
- terminal: a replayed model output and a test's output carrying OSC 52, newlines, C1 and bidi
  controls through every verb: raw control characters printed, forged lines.
- oversized: each input one byte past its cap, and `plan --repo /`: exit code and wall time.
- output and files: a failing test printing 200 MB (plan07's peak RSS), a test writing a 300 MB
  file (what .git/objects grows by).
- temps: SIGKILL at every write of `feedback` and `complete` (strace), then one `status`: temp
  files left. ENOSPC from the Nth write of `complete` and `feedback` on: tracebacks, error lines,
  temp files, a plan that no longer loads.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _faultsweep import count, points, prepare, strace  # noqa: E402
from _probes import (  # noqa: E402
    HOSTILE,
    VERBS,
    StateWorld,
    kill_during,
    mutate,
    oversized,
    plan_args,
    spawn_world,
    survivors,
    timed,
)
from _smallplan import CLI, cli_env, cli_here, make_repo, ob, write_replay  # noqa: E402


def supervisors() -> int:
    """plan07 check supervisors running now (none may outlive its plan07): processes run as
    `python -I -S .../plan07/gate/supervisor.py` (a warm check server only names the file)."""
    n = 0
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        n += argv[1:3] == [b"-I", b"-S"] and argv[3:4] != [] and argv[3].endswith(
            b"plan07/gate/supervisor.py")
    return n


def probe_kills(root: Path, n: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    repo, state, pids = spawn_world(root)
    res = cli_here(*plan_args(root, repo, state))
    assert res.returncode == 0, res.stderr
    survived = {"complete": 0, "plan": 0, "passing complete": 0}
    kills = {"complete": 0, "plan": 0, "passing complete": 0}
    sup_left = 0
    for i in range(n):
        which = "complete" if i % 2 == 0 else "plan"
        if which == "complete":
            assert cli_here("resume", "--state", str(state)).returncode == 0
            args = ["complete", "O1", "--state", str(state)]
        else:
            args = plan_args(root, repo, root / f"state-{i}")
        survived[which] += len(kill_during(args, pids, after=rng.uniform(0, 1.5)))
        kills[which] += 1
        time.sleep(0.2)
        sup_left += supervisors()
    Path(f"{pids}.arm").unlink(missing_ok=True)
    for _ in range(10):
        back = cli_here("rollback", "--to", "CP0", "--state", str(state))
        assert back.returncode == 0, back.stderr
        assert cli_here("next", "--state", str(state)).returncode == 0
        pids.unlink(missing_ok=True)
        done = cli_here("complete", "O1", "--state", str(state))
        assert done.returncode == 0, (done.stdout, done.stderr)
        survived["passing complete"] += len(survivors(pids, 0))
        kills["passing complete"] += 1
    return {"runs": kills, "survivors": survived, "supervisors_left": sup_left}


def probe_states(root: Path, n: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    world = StateWorld(root)
    kinds: dict[str, int] = {}
    examples: dict[str, str] = {}
    stamped_n = 0
    for _ in range(n):
        path, value = rng.choice(world.paths), rng.choice(HOSTILE)
        stamped = rng.random() < 0.5
        stamped_n += stamped
        verb = rng.choice(VERBS)
        for p in world.run(verb, mutate(world.plan, path, value), stamped=stamped).problems:
            kind = p.split(":", 1)[0]
            kinds[kind] = kinds.get(kind, 0) + 1
            examples.setdefault(kind, f"{' '.join(verb)} on {path}={value!r:.30}: {p[:160]}")
    return {"cases": n, "stamped": stamped_n, "problems": kinds, "examples": examples}


def probe_terminal(root: Path) -> dict[str, Any]:
    import re

    osc = "\x1b]52;c;aGVsbG8=\x07"
    repo = make_repo(root, files={"tests/test_core.py": (
        'def test_f():\n    print("\\x1b]52;c;aGVsbG8=\\x07\\x9b2J\\u202e")\n'
        '    print("O1 passed: forged")\n    assert False\n')})
    first = ob("O1", "pkg.core.f" + osc, "modify", [], "tests/test_core.py::test_f")
    first["caused_by"] = "requirement\nO2 passed: forged \x9b31m \u202e"
    write_replay(root, [first, ob("O2", "pkg.core.g", "modify", ["O1"], "compile\nO2 passed")])
    (root / "evidence.json").write_text("{}")
    state = str(root / "state")
    raw = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
    runs = [plan_args(root, repo, root / "state"), ["next", "--state", state],
            ["next", "--json", "--state", state], ["status", "--state", state],
            ["show", "--format", "mermaid", "--state", state], ["audit", "--state", state],
            ["explain", "O1", "O2", "--state", state], ["complete", "O1", "--state", state]]
    controls = forged = 0
    for args in runs:
        res = subprocess.run([*CLI, *args], env=cli_env(), capture_output=True, text=True,
                             check=False)
        text = res.stdout + res.stderr
        controls += len(raw.findall(text))
        forged += sum(line.startswith(("O1 passed", "O2 passed")) for line in text.splitlines())
    return {"commands": len(runs), "raw_control_characters": controls, "forged_lines": forged}


def probe_oversized(root: Path) -> dict[str, Any]:
    repo = make_repo(root)
    write_replay(root)
    state = root / "state"
    (root / "evidence.json").write_text("{}")
    res = cli_here(*plan_args(root, repo, state))
    assert res.returncode == 0, res.stderr
    out: dict[str, Any] = {}
    for kind, args in oversized(root, state, repo).items():
        rc, wall, err = timed(args)
        out[kind] = {"exit": rc, "seconds": round(wall, 2), "error": err.strip()[:140]}
    t0 = time.monotonic()
    proc = subprocess.run([*CLI, "plan", str(root / "request.md"), "--repo", "/", "--state",
                           str(root / "root-state")], env=cli_env(), capture_output=True,
                          text=True, check=False, timeout=600)
    out["plan --repo /"] = {"exit": proc.returncode,
                            "seconds": round(time.monotonic() - t0, 2),
                            "error": proc.stderr.strip()[:140]}
    return out


_OWN_RSS = ("import atexit, resource, sys\n"
            "out = sys.argv.pop(1)\n"
            "atexit.register(lambda: open(out, 'w').write(str("
            "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)))\n"
            "from plan07.cli import run\nrun()\n")


def _peak_rss_of(args: list[str], out: Path) -> tuple[int, float]:
    """(exit code, peak RSS in MiB of plan07's own process, not its check's) of `plan07 ARGS`
    in a fresh process."""
    res = subprocess.run([sys.executable, "-c", _OWN_RSS, str(out), *args], env=cli_env(),
                         capture_output=True, check=False)
    return res.returncode, int(out.read_text()) / 1024


def probe_output_and_files(root: Path) -> dict[str, Any]:
    repo = make_repo(root, files={"tests/test_big.py": (
        "import pathlib, sys\n\ndef test_out():\n"
        "    for _ in range(200):\n        sys.stdout.write('x' * (1 << 20))\n"
        "    assert False\n\n"
        "def test_file():\n    pathlib.Path('big.bin').write_bytes(b'\\1' * (300 << 20))\n")})
    write_replay(root, [ob("O1", "tests/test_big.py::test_file", "validate", [],
                           "tests/test_big.py::test_file"),
                        ob("O2", "tests/test_big.py::test_out", "validate", ["O1"],
                           "tests/test_big.py::test_out")])
    (root / "evidence.json").write_text("{}")
    state = str(root / "state")
    res = subprocess.run([*CLI, *plan_args(root, repo, root / "state")], env=cli_env(),
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    objects = sum(p.stat().st_size for p in (repo / ".git" / "objects").rglob("*") if p.is_file())
    assert cli_here("next", "--state", state).returncode == 0
    subprocess.run([*CLI, "complete", "O1", "--state", state], env=cli_env(),
                   capture_output=True, check=False)
    grown = sum(p.stat().st_size for p in (repo / ".git" / "objects").rglob("*")
                if p.is_file()) - objects
    cli_here("next", "--state", state)
    rc, rss = _peak_rss_of(["complete", "O2", "--state", state], root / "rss")
    _, idle = _peak_rss_of(["status", "--state", state], root / "rss")
    return {"objects_grown_mib": round(grown / (1 << 20), 1), "big_file_mib": 300,
            "failing_200mib_output": {"exit": rc, "plan07_peak_rss_mib": round(rss),
                                      "plan07_status_peak_rss_mib": round(idle)}}


def probe_temps(root: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    exe = strace()
    if exe is None:
        return {"skipped": "strace is not installed"}
    for command in ("feedback", "complete"):
        sc = prepare(root / command, command)
        calls = count(sc, root / f"{command}.log")
        left = killed = 0
        todo = points(calls)
        for name, n in todo:
            sc.fresh()
            res = subprocess.run([exe, "-qq", "-o", "/dev/null", "-e", f"trace={name}", "-e",
                                  f"inject={name}:signal=KILL:when={n}", "--", *CLI, *sc.args],
                                 capture_output=True, text=True, env=cli_env(), check=False)
            killed += res.returncode in (-9, 137)
            subprocess.run([*CLI, "status", "--state", str(sc.state)], env=cli_env(),
                           capture_output=True, check=False)
            left += len(list(sc.state.rglob(".*.tmp")))
        out[f"kill during {command}, then status"] = {"points": len(todo), "killed": killed,
                                                      "temp_files_left": left}
    for command in ("complete", "feedback"):
        sc = prepare(root / f"nospace-{command}", command)
        calls = count(sc, root / f"nospace-{command}.log")
        bad = {"traceback": 0, "not_one_line": 0, "temp_files_left": 0, "plan_unreadable": 0}
        for n in range(1, calls["write"] + 1):
            sc.fresh()
            res = subprocess.run([exe, "-qq", "-o", "/dev/null", "-e", "trace=write", "-e",
                                  f"inject=write:error=ENOSPC:when={n}+", "--", *CLI, *sc.args],
                                 capture_output=True, text=True, env=cli_env(), check=False)
            bad["traceback"] += "Traceback" in res.stderr
            if res.returncode == 2:
                bad["not_one_line"] += res.stderr.count("\n") != 1
            bad["temp_files_left"] += len(list(sc.state.rglob(".*.tmp")))
            st = subprocess.run([*CLI, "status", "--json", "--state", str(sc.state)],
                                env=cli_env(), capture_output=True, check=False)
            bad["plan_unreadable"] += st.returncode not in (0, 1)
        out[f"ENOSPC from each write of {command} on"] = {"points": calls["write"], **bad}
    return out


def run(out_dir: Path, *, kills: int, states: int, seed: int = 0) -> str:
    import json
    import os
    import platform
    import tempfile

    started = time.time()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="plan07-probes-") as tmp:
        base = Path(tmp)
        for name, fn in (("terminal", lambda: probe_terminal(base / "terminal")),
                         ("oversized", lambda: probe_oversized(base / "oversized")),
                         ("states", lambda: probe_states(base / "states", states, seed)),
                         ("kills", lambda: probe_kills(base / "kills", kills, seed)),
                         ("output and files", lambda: probe_output_and_files(base / "big")),
                         ("temps", lambda: probe_temps(base / "temps"))):
            (base / name.split()[0]).mkdir(exist_ok=True)
            t0 = time.time()
            results[name] = fn()
            results[name]["seconds"] = round(time.time() - t0)
            print(name, json.dumps(results[name]), flush=True)
            shutil.rmtree(base / name.split()[0], ignore_errors=True)
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False).stdout.strip()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "probes.json").write_text(json.dumps(results, indent=1) + "\n")
    lines = ["# Robustness probes", "",
             f"plan07 {git}, Python {platform.python_version()}, load average "
             f"{os.getloadavg()[0]:.1f}, {time.time() - started:.0f} s in all. Command: "
             f"`.venv/bin/python benchmarks/crash_sweep.py --probes --kills {kills} "
             f"--states {states}` (what each probe does: benchmarks/robust_probes.py).", "",
             *summary(results), ""]
    for name, value in results.items():
        lines += [f"## {name}", "", "```json", json.dumps(value, indent=1), "```", ""]
    text = "\n".join(lines)
    (out_dir / "probes.md").write_text(text)
    return text


def summary(r: dict[str, Any]) -> list[str]:
    """The counts that answer docs/safety.md's promises, one row each."""
    k, s, o, tm, big = r["kills"], r["states"], r["oversized"], r["temps"], \
        r["output and files"]
    files = {n: v for n, v in o.items() if isinstance(v, dict) and n != "plan --repo /"}
    kills = sum(v for n, v in k["survivors"].items() if n != "passing complete")
    ran = sum(v for n, v in k["runs"].items() if n != "passing complete")
    nospace = [v for n, v in tm.items() if n.startswith("ENOSPC")]
    killed = [v for n, v in tm.items() if n.startswith("kill")]
    return [
        "| promise | measured |", "|---|---|",
        f"| no process a test started survives its check | {k['survivors']['passing complete']}"
        f" helpers left by {k['runs']['passing complete']} passing checks |",
        f"| ... nor plan07 killed during `complete` and `plan` | {kills} helpers left by "
        f"{ran} kills ({k['runs']['complete']} during a check, {k['runs']['plan']} during the "
        f"CP0 baseline); {k['supervisors_left']} supervisors left |",
        f"| no control character reaches the terminal | {r['terminal']['raw_control_characters']}"
        f" raw control characters, {r['terminal']['forged_lines']} forged lines in "
        f"{r['terminal']['commands']} commands' output |",
        f"| no traceback on malformed state | {sum(s['problems'].values())} problems in "
        f"{s['cases']} cases ({s['stamped']} stamped) |",
        f"| oversized inputs refused within a second | {len(files)} kinds, exit "
        f"{sorted({v['exit'] for v in files.values()})}, slowest "
        f"{max(v['seconds'] for v in files.values())} s (whole process); `plan --repo /` "
        f"exit {o['plan --repo /']['exit']} in {o['plan --repo /']['seconds']} s |",
        f"| no temp file survives the next command after a kill | "
        f"{sum(v['temp_files_left'] for v in killed)} left after "
        f"{sum(v['points'] for v in killed)} kills then `status` |",
        f"| a full disk is an error | {sum(v['traceback'] for v in nospace)} tracebacks, "
        f"{sum(v['not_one_line'] for v in nospace)} multi-line errors, "
        f"{sum(v['temp_files_left'] for v in nospace)} temps, "
        f"{sum(v['plan_unreadable'] for v in nospace)} unreadable plans in "
        f"{sum(v['points'] for v in nospace)} ENOSPC points |",
        f"| a check's output is bounded | a failing test printing 200 MB: plan07 peaks at "
        f"{big['failing_200mib_output']['plan07_peak_rss_mib']} MiB (`status`: "
        f"{big['failing_200mib_output']['plan07_status_peak_rss_mib']} MiB) |",
        f"| a big file never reaches `.git/objects` | a test wrote {big['big_file_mib']} MB: "
        f"objects grew {big['objects_grown_mib']} MiB |",
    ]
