"""The check runner in the repository's own world (§3.5 step 1): which interpreter runs a check,
which argv (the repo's test command), and what the run says test by test. I/O: subprocesses
(never a shell), one temporary folder per run (a JUnit file, or the outcome plugin and its record).

- The interpreter and its environment: plan07.gate.interpreter (`find_python`, `run_env`).
- The test command (`TestCommand`, plan07.gate.testcommand): `[tool.plan07] test-command` in the
  repo's pyproject.toml (or `--test-command`), an argv template; `run_tests` runs it.
- A run's per-test outcomes: for the default pytest command, the record of plan07.gate.outcomes'
  plugin (what a JUnit report would hold, without the XML); for a configured command with
  `{junitxml}`, the JUnit XML it writes (`parse_junit`); both read by the same rules. A run that
  failed because the environment lacks a module, or because the repo's pytest configuration asks
  for a plugin option the interpreter lacks, is an environment problem (`environment_problem`):
  never the node's failure.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from plan07.gate.interpreter import Interpreter, run_env
from plan07.gate.outcomes import Outcome
from plan07.gate.supervised import Capture

if TYPE_CHECKING:
    from plan07.gate.testcommand import TestCommand


# ---------------------------------------------------------------------------------------------
# running


def run_argv(argv: list[str], cwd: Path, timeout: float,
             env: Mapping[str, str]) -> tuple[int | None, str]:
    """Run argv in `cwd` (never a shell); (returncode, output). The check and every process it
    started are ended when it ends (plan07.gate.supervisor); on timeout too, and then the
    returncode is None; a program that cannot start gives (127, why). The output kept is
    bounded (`Capture`)."""

    # docs/safety.md: the check ends with plan07, no credential of plan07's readable from it,
    # its output redacted
    from plan07.gate import supervised
    from plan07.sandbox import redact, shield, undumpable

    shield()
    out = Capture()
    with undumpable():
        try:
            rc = supervised.run(argv, cwd, timeout, dict(env), drain_fd, out)
        except supervised.CannotStart as exc:
            return 127, redact(str(exc))
    text = out.text()
    if rc is None:
        return None, redact(f"{text}\n{TIMED_OUT} after {timeout:g}s")
    return rc, redact(text)


TIMED_OUT = "check timed out"  # the last line of a run's output that ran out of time


def timed_out(output: str) -> bool:
    """The run whose output this is ran out of time (its last line says so)."""
    return output.rstrip().rsplit("\n", 1)[-1].startswith(TIMED_OUT)


_PIPE_BYTES = 1 << 20  # the check's output pipe, where Linux allows it (its default maximum)


def drain_fd(fd: int, timeout: float, chunks: Capture) -> None:
    """Read the pipe `fd` into `chunks` until every writer closed it; as `communicate`, but
    after a short read it sleeps a little instead of waking at every write (pytest writes each
    progress dot on its own: 600 tests were 600 wake-ups, ~50 ms of this process's CPU). A big
    pipe keeps the writer from waiting meanwhile. Raises TimeoutExpired after `timeout`
    seconds (what was read stays in `chunks`)."""
    import fcntl
    import select
    import time

    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    deadline = time.monotonic() + timeout
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired("check", timeout)
        if not poller.poll(min(left, 3600.0) * 1000):
            continue
        data = os.read(fd, _PIPE_BYTES)
        if not data:
            break
        chunks.append(data)
        if len(data) < 1 << 16:
            time.sleep(min(0.02, max(0.0, deadline - time.monotonic())))


@dataclass
class TestRun:
    """One run of the test command: its exit status, output, and per-test outcomes (None when
    the command reports none: no JUnit file)."""

    __test__ = False

    rc: int | None
    output: str
    outcomes: dict[str, Outcome] | None = None
    argv: list[str] = field(default_factory=list)

    @property
    def timed_out(self) -> bool:
        return self.rc is None


def run_tests(cmd: TestCommand, interp: Interpreter, repo: Path, tests: Sequence[str], *,
              timeout: float, env: Mapping[str, str]) -> TestRun:
    """Run the repo's test command on `tests` (ids/paths already checked by the grammar)."""
    with tempfile.TemporaryDirectory(prefix="plan07-junit-") as tmp:
        junit = str(Path(tmp) / "junit.xml")
        argv = cmd.argv_for(interp.path, tests, junit)
        renv = run_env(interp, env)
        if not cmd.is_pytest:
            rc, out = run_argv(argv, repo, timeout, renv)
            return TestRun(rc, out, parse_junit(Path(junit)) if cmd.per_test else None, argv)
        from plan07.gate import outcomes  # the default command: no JUnit file

        argv = outcomes.pytest_argv(argv)
        outcomes.install(Path(tmp))
        try:
            rc, out = _run_pytest(argv, repo, timeout, outcomes.plugin_env(renv, Path(tmp)),
                                  Path(tmp))
            return TestRun(rc, out, outcomes.read_outcomes(Path(tmp)), argv)
        finally:
            outcomes.drop_bytecode(renv, Path(tmp))


def _run_pytest(argv: list[str], repo: Path, timeout: float, env: dict[str, str],
                plugin_dir: Path) -> tuple[int | None, str]:
    """The default command's run: forked from a warm check server where one serves it
    (plan07.gate.warmcheck: from a process's second check on), else a fresh process."""
    from plan07.gate import warmcheck

    if argv[1:3] == ["-m", "pytest"]:
        srv = warmcheck.server_for(argv[0], env, str(plugin_dir), str(repo))
        if srv is not None:
            try:
                return warmcheck.run(srv, argv, str(repo), timeout, env, drain_fd)
            except OSError:  # the server died: this check, and the next, run fresh
                srv.ok = False
    return run_argv(argv, repo, timeout, env)


def parse_junit(path: Path) -> dict[str, Outcome] | None:
    """Per-test outcomes of a JUnit XML file (None when absent or unreadable: the run crashed
    before writing it), by plan07.gate.outcomes' rules: each testcase's first failure, error or
    skipped tag."""
    import xml.etree.ElementTree as ET  # noqa: S405 - parses the JUnit file our own run wrote

    from plan07 import caps
    from plan07.gate.outcomes import Case, outcomes_of

    try:
        if path.stat().st_size > caps.INPUT_MAX_BYTES:  # no per-test outcomes: the exit status
            return None
        root = ET.parse(path).getroot()  # noqa: S314 - our own run's file
    except (OSError, ET.ParseError):
        return None
    cases: list[Case] = []
    for case in root.iter("testcase"):
        tag = next((c for c in case if c.tag in ("failure", "error", "skipped")), None)
        cases.append((case.get("file", ""), case.get("classname", ""), case.get("name", ""),
                      None if tag is None else str(tag.tag),
                      None if tag is None else tag.get("type"),
                      "" if tag is None else f"{tag.get('message') or ''}\n{tag.text or ''}"))
    return outcomes_of(cases)


# ---------------------------------------------------------------------------------------------
# environment problems: never the node's failure

_NO_MODULE = re.compile(r"No module named '?([A-Za-z_][\w.]*)'?")
_USAGE = re.compile(r"^[^\n]*?\berror: (unrecognized arguments: [^\n]*)$", re.M)


def repo_local(top: str, repo: Path) -> bool:
    """True when the top-level module `top` is the repo's own (REPO/top, REPO/top.py,
    REPO/src/top, or one folder down): a missing repo module is the node's business."""
    root = Path(repo)
    for base in (root, root / "src", root / "lib"):
        if (base / top).is_dir() or (base / f"{top}.py").is_file():
            return True
    try:
        return any((d / top).is_dir() for d in root.iterdir() if d.is_dir()
                   and not d.name.startswith("."))
    except OSError:
        return False


def _repo_has_module(name: str, repo: Path) -> bool:
    """True when the repo holds module `name` (dotted) as a file, package or folder."""
    rel = name.replace(".", "/")
    root = Path(repo)
    return any((base / f"{rel}.py").is_file() or (base / rel).is_dir()
               for base in (root, root / "src", root / "lib"))


def missing_module(text: str, repo: Path) -> str | None:
    """The first module `text` says cannot be imported that the environment should provide:
    one that is not the repo's own, or one of the repo's own that is there in the repo and
    still not importable (a src/ layout not installed in that environment). A repo module
    that does not exist (`pkg.newmod` not written yet) is the node's business."""
    for m in _NO_MODULE.finditer(text):
        name = m.group(1).rstrip(".")
        top = name.split(".")[0]
        if not repo_local(top, repo) or _repo_has_module(name, repo):
            return top if not repo_local(top, repo) else name
    return None


def environment_problem(run: TestRun, repo: Path, interp: Interpreter,
                        texts: Sequence[str] | None = None) -> str | None:
    """One line when the run could not judge the code because of the environment: the
    interpreter lacks a module that is not the repo's (in `texts`, the blamed failures' messages,
    or the output of a run that reported no tests), or the repo's pytest configuration asks for
    an option the interpreter's pytest lacks (a plugin such as pytest-cov not installed)."""
    if run.rc == 0 or run.timed_out:
        return None
    where = f"the repo's interpreter ({interp.path}, from {interp.source})"
    if run.rc == 127 and run.output.startswith("could not start"):
        return f"{where} cannot start the test command: {run.output[:120]}; pass --python"
    pool = list(texts or [])
    if run.outcomes is None or not run.outcomes or run.rc in (3, 4):
        pool.append(run.output)
    for text in pool:
        mod = missing_module(text, repo)
        if mod:
            return f"{where} cannot import {mod}; pass --python (an environment with the " \
                   "repo's dependencies)"
    if run.rc == 4:
        m = _USAGE.search(run.output)
        if m:
            return (f"{where}: its pytest refuses the repo's configuration ({m.group(1)[:80]}): "
                    "a plugin is missing; pass --python")
    return None


# ---------------------------------------------------------------------------------------------
# the build check: compile what changed, in the repo's interpreter, writing no bytecode

_COMPILE = (
    "import sys\n"
    "bad = 0\n"
    "for f in sys.argv[1:]:\n"
    "    try:\n"
    "        with open(f, 'rb') as fh:\n"
    "            compile(fh.read(), f, 'exec', dont_inherit=True)\n"
    "    except (SyntaxError, ValueError) as e:\n"
    "        bad += 1\n"
    "        print(f'{f}:{getattr(e, \"lineno\", 0) or 0}: {type(e).__name__}: {e}')\n"
    "    except OSError:\n"
    "        pass\n"
    "print('plan07-compiled')\n"
    "sys.exit(1 if bad else 0)\n"
)
_COMPILED = "plan07-compiled\n"  # the script's last line: an interpreter that did not run it


COMPILE_HERE_MAX_BYTES = 4 * 1024 * 1024  # a bigger file is compiled in the repo's process


def same_binary(interp: Interpreter) -> bool:
    """True when the repo's interpreter is plan07's own executable (a venv's `python` links to
    it): its compiler is this process's `compile`."""
    try:
        return os.path.realpath(interp.path) == os.path.realpath(sys.executable)
    except (OSError, ValueError):
        return False


def _compile_here(repo: Path, files: Sequence[str]) -> tuple[list[str], list[str]]:
    """`_COMPILE` in this process: (its output lines, the files left to the repo's process:
    too big, or not a regular file, which is never opened here)."""
    import stat

    lines, rest = [], []
    for f in files:
        try:
            fd = os.open(Path(repo) / f, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue  # gone, as the script skips it
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > COMPILE_HERE_MAX_BYTES:
                rest.append(f)
                continue
            with os.fdopen(os.dup(fd), "rb") as fh:
                source = fh.read()
        finally:
            os.close(fd)
        try:
            compile(source, f, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            lines.append(f"{f}:{getattr(e, 'lineno', 0) or 0}: {type(e).__name__}: {e}\n")
    return lines, rest


def compile_files(interp: Interpreter, repo: Path, files: Sequence[str], *, timeout: float,
                  env: Mapping[str, str]) -> tuple[bool, str]:
    """Compile `files` (repo-relative .py paths) with the repo's interpreter; nothing written.
    No files: passes without starting a process; with plan07's own executable, in this process
    (`same_binary`: the same compiler, one process start less per check)."""
    if not files:
        return True, "no Python file changed since the last checkpoint"
    ok_all, outs = True, list[str]()
    if same_binary(interp):
        outs, files = _compile_here(repo, files)
        ok_all = not outs
        if not files:
            return ok_all, "".join(outs)
    for i in range(0, len(files), 500):  # keep each argv well under the OS limit
        rc, out = run_argv([interp.path, "-c", _COMPILE, *files[i:i + 500]], repo, timeout,
                           run_env(interp, env))
        if rc is not None and _COMPILED not in out:  # it never ran the script: not the node's
            from plan07.errors import InputError

            raise InputError(f"the plan's interpreter {interp.path} did not run ("
                             f"{' '.join(out.split())[:120] or f'exit {rc}, no output'}); "
                             "re-run `plan07 plan --python PATH` with a working Python",
                             field="--python")
        ok_all &= rc == 0
        outs.append(out.replace(_COMPILED, ""))
    return ok_all, "".join(outs)
