"""A small real repo, a scripted decomposition and a CLI runner in a separate process, shared by the
crash, concurrency, secrets, user-data and hostile-input tests (issue 15)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REQUEST = """Make f configurable.

## Acceptance criteria

- `tests/test_core.py::test_f` passes
"""


def ob(i: str, target: str, verb: str, deps: list[str], validation: str) -> dict[str, object]:
    return {"id": i, "target_entity": target, "obligation": verb, "caused_by": "requirement",
            "dependencies": deps, "evidence": "03 recon", "status": "ready",
            "validation": validation}


# three steps in a line, so every node reaches a checkpoint (CP1..CP3)
OBLIGATIONS = [
    ob("O1", "pkg.core.f", "modify", [], "compile"),
    ob("O2", "pkg.core.g", "modify", ["O1"], "import:pkg.core"),
    ob("O3", "tests/test_core.py::test_f", "validate", ["O2"], "tests/test_core.py::test_f"),
]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def make_repo(root: Path, *, files: dict[str, str] | None = None, use_git: bool = True) -> Path:
    repo = root / "repo"
    body = {"pkg/__init__.py": "", "pkg/core.py": "def f(x):\n    return x\n",
            "tests/test_core.py": "from pkg.core import f\n\n\ndef test_f():\n"
                                  "    assert f(1) == 1\n",
            ".gitignore": "__pycache__/\n", **(files or {})}
    for rel, text in body.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    if use_git:
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=U", "-c", "user.email=u@example.com", "commit", "-q", "-m",
            "init")
    return repo


def write_replay(root: Path, obligations: list[dict[str, object]] | None = None) -> Path:
    replay = root / "completion.json"
    replay.write_text(json.dumps({"obligations": obligations or OBLIGATIONS}))
    (root / "request.md").write_text(REQUEST)
    return replay


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without plan07's settings (a model URL, a state dir, ...), but
    with its cache folder: the session's private one (conftest), never the user's ~/.cache."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PLAN07_") or k == "PLAN07_CACHE_DIR"}
    env.update({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1",
                **(extra or {})})
    return env


CLI = [sys.executable, "-c", "from plan07.cli import run; run()"]


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        timeout: float = 120, prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """`plan07 ARGS` in a fresh process (a real pid, a real environment block)."""
    return subprocess.run([*(prefix or []), *CLI, *args], capture_output=True, text=True,
                          env=env or cli_env(), cwd=cwd, timeout=timeout, check=False)


def cli_here(*args: str) -> subprocess.CompletedProcess[str]:
    """`plan07 ARGS` in this process (plan07.cli.main, its output captured): for a test's setup,
    where the process boundary is not what the test is about. A CLI process costs ~0.5-1 s of
    CPU to start (its imports); the tests about a real pid, environment block or kill use
    `cli`."""
    import contextlib
    import io

    from plan07.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    return subprocess.CompletedProcess(list(args), rc, out.getvalue(), err.getvalue())


def plan_here(root: Path, state: Path, repo: Path, *extra: str,
              env: dict[str, str] | None = None, process: bool = True
              ) -> subprocess.CompletedProcess[str]:
    """`plan07 plan` of the replayed decomposition: in a fresh process (`cli`), or with
    `process=False` in this one (`cli_here`, for a setup; `env` is then not used)."""
    replay = write_replay(root) if not (root / "completion.json").exists() \
        else root / "completion.json"
    args = ("plan", str(root / "request.md"), "--repo", str(repo), "--evidence",
            str(empty_evidence(root)), "--llm", f"replay:{replay}", "--state", str(state), *extra)
    if not process:
        assert env is None, "an in-process plan runs with this process's environment"
        return cli_here(*args)
    return cli(*args, env=env)


def empty_evidence(root: Path) -> Path:
    p = root / "evidence.json"
    if not p.exists():
        p.write_text("{}")
    return p


def load_json(path: Path) -> Any:
    return json.loads(path.read_text())
