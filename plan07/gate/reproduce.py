"""Running an issue's reproduction in the repository's own interpreter (docs/evidence.md
"Running the reproduction"; opt-in: `plan07 plan --reproduce`, `Planner.create(reproduce=True)`).
I/O: one subprocess, one temporary folder. What the run means for localization is pure and lives
in plan07.evidence.repro.

The snippets are the issue's own code: they run as a check does (docs/safety.md): the
allowlisted environment without credentials, under the supervisor (ended with plan07, its whole
process group on timeout), output redacted and bounded, in a temporary working folder (a file the
snippet writes lands there, not in the repository), stdin closed, matplotlib without a screen.
"""

from __future__ import annotations

import json
import tempfile
from importlib import resources
from pathlib import Path

from plan07 import caps
from plan07.errors import InputError
from plan07.evidence.repro import Reproduction, parse_record, snippets
from plan07.gate.interpreter import find_python, run_env
from plan07.gate.testcommand import config_table


def reproduce(repo: Path, request: str, *, python: str | Path | None = None,
              preamble: str | None = None,
              budget: float = caps.REPRO_BUDGET_S) -> Reproduction | None:
    """Run the issue's snippets (plan07.evidence.repro.snippets) with the repository's
    interpreter (`python`, else as the checks find it); None when the issue has none.
    `preamble`: code run first, the session the project's issues are written in (default:
    `[tool.plan07] reproduce-preamble` of the repo's pyproject.toml). Never raises for what the
    run does: a run that fails to start, dies or leaves no record is a Reproduction with a
    `problem`. A bad `python` path or preamble is an InputError (one line, exit 2)."""
    from plan07.gate.runner import run_argv
    from plan07.sandbox import check_env

    code = snippets(request)
    if not code:
        return None
    preamble = check_preamble(preamble, "--reproduce-preamble") if preamble is not None \
        else configured_preamble(Path(repo))
    interp = find_python(Path(repo), python)
    env = run_env(interp, check_env(repo=Path(repo)))
    env["MPLBACKEND"] = "Agg"  # a plot the snippet shows opens no window
    child = resources.files("plan07.gate").joinpath("repro_child.py").read_text("utf-8")
    with tempfile.TemporaryDirectory(prefix="plan07-repro-") as tmp:
        src, dst = Path(tmp) / "snippets.json", Path(tmp) / "record.json"
        src.write_text(json.dumps({"snippets": code, "preamble": preamble}), encoding="utf-8")
        work = Path(tmp) / "cwd"
        work.mkdir()
        rc, output = run_argv([interp.path, "-c", child, str(Path(repo).resolve()), str(src),
                               str(dst), f"{budget:g}"], work, budget + caps.REPRO_GRACE_S, env)
        try:
            data = json.loads(dst.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            why = ("it ran out of time" if rc is None else
                   f"{interp.path} exited {rc}: {_last_line(output)}")
            return Reproduction(snippets=len(code), problem=f"no record ({why})")
    return parse_record(data, len(code))


def _last_line(output: str) -> str:
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    return lines[-1][:160] if lines else "no output"


def check_preamble(code: object, where: str) -> str:
    """A preamble is Python source that compiles (it is never run here)."""
    if not isinstance(code, str):
        raise InputError("reproduce-preamble must be a string of Python code", field=where)
    try:
        compile(code, "<preamble>", "exec")
    except SyntaxError as exc:
        raise InputError(f"reproduce-preamble is not Python: {exc.msg} (line {exc.lineno})",
                         field=where) from None
    except ValueError as exc:  # a NUL byte
        raise InputError(f"reproduce-preamble is not Python: {exc}", field=where) from None
    return code


def configured_preamble(repo: Path) -> str | None:
    """`[tool.plan07] reproduce-preamble` of REPO/pyproject.toml, checked (the rest of the
    table is plan07.gate.testcommand's to check)."""
    conf = config_table(repo)
    if not isinstance(conf, dict) or "reproduce-preamble" not in conf:
        return None
    return check_preamble(conf["reproduce-preamble"], f"{repo / 'pyproject.toml'}: [tool.plan07]")
