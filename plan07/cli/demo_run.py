"""The demo: the whole loop, offline, on a copy of examples/session_timeout, driven by a scripted
agent (the example's edits.json stands in for the coding agent). Plan it, drive every obligation,
run the repo's real tests at each checkpoint, explain one edge. I/O: a work directory, pytest.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plan07.cli import bundled
from plan07.errors import InputError
from plan07.sandbox import check_env, environ
from plan07.vocab import related

EXAMPLE = bundled.example("session_timeout")
ANCHOR = '@pytest.mark.xfail(reason="anchor test, defined early (§3.2)", strict=False)\n'


def scripted(example: Path) -> dict[str, Any]:
    """The scripted agent's edits (the example's edits.json)."""
    data: dict[str, Any] = json.loads((example / "edits.json").read_text("utf-8"))
    return data


def apply_edits(repo: Path, verb: str, target: str, script: dict[str, Any],
                applied: set[int]) -> list[str]:
    """What the scripted agent edits for one obligation (see examples/.../edits.json "about"):
    an anchor test defined or promoted, or the code edits keyed on `target`. Returns files."""
    path_part, sep, name = target.partition("::")
    if sep and name in script["tests"]:
        path = repo / path_part
        text = path.read_text("utf-8") if path.exists() else ""
        marked = ANCHOR + f"def {name}("
        if verb == "modify" and f"def {name}(" not in text:
            head = "" if "import pytest\n" in text else "import pytest\n\n"
            text = head + text.rstrip("\n") + "\n\n\n" + ANCHOR + script["tests"][name]
        elif verb == "validate" and marked in text:
            text = text.replace(marked, f"def {name}(", 1)
        else:
            return []
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"), "utf-8")
        return [path_part]
    edits = script["edits"]
    exact = [i for i, e in enumerate(edits) if e["target"] == target]
    files: list[str] = []
    for i in exact or [i for i, e in enumerate(edits) if related(e["target"], target)]:
        if i in applied:
            continue
        e = edits[i]
        path = repo / e["file"]
        text = path.read_text("utf-8")
        if e["find"] not in text:
            raise InputError(f"scripted edit {i} for {e['target']}: text to replace not found",
                             source=str(path))
        path.write_text(text.replace(e["find"], e["replace"], 1), "utf-8")
        applied.add(i)
        if e["file"] not in files:
            files.append(e["file"])
    return files


# The example's tests need no pytest plugin; not loading the venv's (xdist, hypothesis, ...) makes
# each check ~5x cheaper. Set for the demo's own runs and the gate's (run_check copies os.environ).
DEMO_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def fit(line: str, width: int = 80) -> str:
    """`line` cut to `width` characters (an ellipsis marks the cut)."""
    return line if len(line) <= width else line[: width - 1] + "…"


def run_pytest(repo: Path, *args: str) -> tuple[bool, list[str]]:
    """Run pytest in the demo repo (argv, no shell); (passed, the test ids it names)."""
    argv = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *args]
    env = {**check_env(), **DEMO_ENV}
    res = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True,
                         timeout=300, check=False)
    ids = sorted({line.split()[-1] if line.startswith(("PASSED", "FAILED")) else line.strip()
                  for line in res.stdout.splitlines()
                  if "::" in line and not line.startswith("ERROR")})
    return res.returncode == 0, ids


@contextmanager
def demo_env() -> Iterator[None]:
    """DEMO_ENV set for the demo's own runs and the gate's, restored after."""
    with environ(DEMO_ENV):
        yield


@dataclass
class DemoRun:
    """What one demo run did: the steps driven, the final suite, the explained edge, the audit."""

    plan_id: str
    repo: Path
    state_dir: Path
    steps: list[dict[str, Any]] = field(default_factory=list)
    final_ok: bool = False
    blockers: list[str] = field(default_factory=list)
    edge: Any = None  # the DerivedEdge explained
    proof: Any = None  # its provenance (plan07.order.derive.explain)
    audit: list[Any] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.final_ok and not self.blockers


def run(work: Path, say: Callable[[str], None]) -> DemoRun:
    """Copy the example into `work`, plan it and drive it to the end (or the first failure);
    `say` gets one line per step."""
    from plan07 import Planner

    repo, state_dir = work / "session_timeout", work / "state"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache",
                                                                 "edits.json"))
    planner = Planner.create((repo / "request.md").read_text("utf-8"), repo=repo,
                             state_dir=state_dir)
    art = planner.artifact
    out = DemoRun(art.plan_id, repo, state_dir)
    steps, kept = len(art.schedule.order), len(art.schedule.alternative)
    aside = (f" and {kept} alternative{'s' * (kept != 1)} (kept aside, never run)"
             if kept else "")
    say(f"planned {art.plan_id}: {len(art.nodes)} obligations, {steps} steps to run{aside}; "
        f"{len(art.edges)} edges, {len(art.checkpoints)} checkpoints (state: {state_dir})")
    script, applied = scripted(EXAMPLE), set[int]()
    existing = run_pytest(repo, "--collect-only")[1]  # the tests the repo had before the plan
    say(f"{len(existing)} existing tests; each checkpoint re-runs them (temporal consistency)")
    log = out.steps
    while (view := planner.next()) is not None:
        files = apply_edits(repo, view.obligation, view.target_entity, script, applied)
        for f in files:
            planner.report_edit(view.node_id, f)
        verdict = planner.complete(view.node_id)
        step: dict[str, Any] = {"node": view.node_id, "verb": view.obligation,
                                "target": view.target_entity, "edited": files,
                                "check": verdict.check, "passed": verdict.passed}
        say(fit(f"{view.node_id:>4} {view.obligation:<8} {view.target_entity[:40]:<40} "
                f"{'pass' if verdict.passed else 'FAIL'} {', '.join(files)}"))
        log.append(step)
        if not verdict.passed:
            say(verdict.output_tail[-800:])
            break
        cps = [e["node"] for e in planner.events if e["event"] == "checkpoint"]
        if cps and cps[-1] not in {s.get("checkpoint") for s in log[:-1]}:
            ok = run_pytest(repo, *existing)[0]
            step["checkpoint"], step["existing_tests_pass"] = cps[-1], ok
            say(f"     {cps[-1]}: existing tests {'pass' if ok else 'FAIL'}")
    out.final_ok, final_ids = run_pytest(repo)
    say(f"final: full suite ({len(final_ids)} tests) {'passes' if out.final_ok else 'FAILS'}")
    art = planner.artifact
    out.blockers = planner.termination_blockers()  # §3.1: every node validated, criteria settled
    out.edge = next((e for e in art.edges if e.rule != "declared"),
                    art.edges[0] if art.edges else None)
    if out.edge is not None:
        out.proof = planner.explain(out.edge.from_, out.edge.to)
    out.audit = planner.audit().audit
    return out
