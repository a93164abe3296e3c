"""Per-test outcomes of the default pytest command without a JUnit file (for speed). I/O:
writes the plugin file into the run's temporary folder, reads the record it leaves there.

The default command (`PYTEST_COMMAND`, plan07.gate.testcommand) used to ask pytest for a JUnit XML
report and parse it (`runner.parse_junit`): on a file of 646 tests pytest's junitxml hooks,
naming every test anew at each of its reports, were a large part of the gate's overhead
(benchmarks/results/gate-click-options.md). The same run now
loads a tiny standalone plugin (`PLUGIN`, written beside the record and found through
`PYTHONPATH`; it imports nothing of plan07) that keeps, for every testcase the JUnit report
would hold, the same four facts (file, classname, name, the first outcome tag and its text),
and writes them as JSON lines when the session finishes, where the report was written. The
outcomes come from them through the very rules `parse_junit` applies (`outcomes_of`), so a CP0
baseline recorded from a JUnit report and a check read from the plugin give the same ids and
statuses (tests/test_outcomes.py runs both on every kind of outcome).

The plugin keeps the repo's run as the JUnit report did: the repo's configuration and plugins
load as they do; a `--junitxml` of the repo's own (in its addopts) writes nothing, as plan07's
own `--junitxml` overrode it before; `PYTHONPATH` is set back, in the run's environment, to
what it was, so the tests' own processes see the user's. A user-configured command keeps
`{junitxml}` and the JUnit report.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Status = Literal["passed", "failed", "error", "skipped", "xfailed"]
MESSAGE_CHARS = 200  # an outcome keeps 8x this of its message


@dataclass(frozen=True)
class Outcome:
    """One test's outcome in a run (plan07.gate.runner re-exports it)."""

    status: Status
    message: str = ""


MODULE = "_plan07_outcomes"  # the plugin's module name (`-p MODULE`)
RECORD = "outcomes.jsonl"  # beside the plugin file

# JUnit's own rules, in pytest's terms (LogXML.pytest_runtest_logreport, pytest_collectreport,
# pytest_internalerror): a testcase per open node; a call failure then a teardown error is two
# testcases; the first outcome tag a testcase gets is the one parse_junit reads. Messages are
# JUnit's message attribute and text, helpers imported from pytest's junitxml when it has them.
PLUGIN = '''"""plan07's per-test outcome record (PYTEST_DONT_REWRITE). Standalone: no plan07."""
import json
import os

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
_pp = os.environ.get("PYTHONPATH", "")
if _pp == _HERE:
    del os.environ["PYTHONPATH"]
elif _pp.startswith(_HERE + os.pathsep):
    os.environ["PYTHONPATH"] = _pp[len(_HERE) + 1:]

try:
    from _pytest.junitxml import mangle_test_address
except ImportError:  # pragma: no cover - every pytest plan07 supports has it
    mangle_test_address = None
try:
    from _pytest.junitxml import bin_xml_escape as _xml_escape
except ImportError:  # pragma: no cover
    def _xml_escape(arg):
        return str(arg)


def _esc(arg):
    # pytest < 5.4 returns a py.xml.raw wrapper: its text is `uniobj`
    value = _xml_escape(arg)
    return str(getattr(value, "uniobj", value))
try:
    from _pytest.junitxml import shorten_message as _short
except ImportError:
    def _short(msg):
        return msg


def _names(nodeid):
    if mangle_test_address is not None:
        return mangle_test_address(nodeid)
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".")
    if names[0].endswith(".py"):
        names[0] = names[0][:-3]
    names[-1] += bracket + params
    return names


_MAX = 8192  # of a message or its text: the outcome keeps the first 1600 characters


def _cut(x):
    x = str(x)
    return x if len(x) <= _MAX else x[:_MAX] + "..."


def _text(x):
    return _esc(x).replace("\\r\\n", "\\n").replace("\\r", "\\n")


def _crash(report):
    rc = getattr(report.longrepr, "reprcrash", None)
    return rc.message if rc is not None else str(report.longrepr)


class Outcomes:
    def __init__(self, config):
        self.prefix = getattr(config.option, "junitprefix", None)
        self.open = {}
        self.cases = []
        self.failed_calls = []

    def case(self, report):
        key = (report.nodeid, getattr(report, "node", None))
        rec = self.open.get(key)
        if rec is None:  # JUnit names it anew from every report: the same node, the same names
            names = _names(report.nodeid)
            classes = names[:-1]
            if self.prefix:
                classes.insert(0, self.prefix)
            rec = self.open[key] = {"tag": None, "message": "", "text": None,
                                    "classname": ".".join(classes), "name": _esc(names[-1]),
                                    "file": report.location[0]}
            self.cases.append(rec)
        return rec

    def add(self, rec, tag, message, text=None, type_=None):
        if rec["tag"] is None:
            rec.update(tag=tag, message=_esc(_cut(message)), text=None if text is None else
                       _text(_cut(text)), type=type_)

    def _same(self, a, b):
        return (a.nodeid == b.nodeid and getattr(a, "item_index", None) ==
                getattr(b, "item_index", None) and getattr(a, "worker_id", None) ==
                getattr(b, "worker_id", None))

    def pytest_runtest_logreport(self, report):
        if report.passed:
            if report.when == "call":
                self.case(report)
        elif report.failed:
            if report.when == "teardown":
                done = next((r for r in self.failed_calls if self._same(r, report)), None)
                if done is not None:
                    self.open.pop((done.nodeid, getattr(done, "node", None)), None)
            rec = self.case(report)
            if report.when == "call":
                if hasattr(report, "wasxfail"):
                    self.add(rec, "skipped", "xfail-marked test passes unexpectedly", "None")
                else:
                    self.add(rec, "failure", _short(_crash(report)), str(report.longrepr))
                self.failed_calls.append(report)
            else:
                how = "teardown" if report.when == "teardown" else "setup"
                self.add(rec, "error", _short(f'failed on {how} with "{_crash(report)}"'),
                         str(report.longrepr))
        elif report.skipped:
            rec = self.case(report)
            if hasattr(report, "wasxfail"):
                reason = report.wasxfail
                if reason.startswith("reason: "):
                    reason = reason[len("reason: "):]
                self.add(rec, "skipped", reason, None, "pytest.xfail")
            else:
                filename, lineno, reason = report.longrepr
                if reason.startswith("Skipped: "):
                    reason = reason[len("Skipped: "):]
                self.add(rec, "skipped", reason, f"{filename}:{lineno}: {reason}",
                         "pytest.skip")
        if report.when == "teardown":
            self.case(report)
            self.open.pop((report.nodeid, getattr(report, "node", None)), None)
            done = next((r for r in self.failed_calls if self._same(r, report)), None)
            if done is not None:
                self.failed_calls.remove(done)

    def pytest_collectreport(self, report):
        if not report.passed:
            rec = self.case(report)
            if report.failed:
                self.add(rec, "error", "collection failure", str(report.longrepr))
            else:
                self.add(rec, "skipped", "collection skipped", str(report.longrepr))

    def pytest_internalerror(self, excrepr):
        rec = {"tag": None, "message": "", "text": None, "classname": "pytest",
               "name": "internal", "file": ""}
        self.cases.append(rec)
        self.add(rec, "error", "internal error", str(excrepr))

    def pytest_sessionfinish(self):
        # every line made before the file is opened: a record that cannot be written leaves
        # none (the run reported nothing), never an empty one (a run of no test)
        lines = [json.dumps(rec) + "\\n" for rec in self.cases]
        with open(os.path.join(_HERE, "outcomes.jsonl"), "w", encoding="utf-8") as fh:
            fh.writelines(lines)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if hasattr(config, "workerinput"):  # an xdist worker: its controller records
        return
    if getattr(config.option, "xmlpath", None):  # the repo's own --junitxml: as before, unwritten
        config.option.xmlpath = None
    config.pluginmanager.register(Outcomes(config), "plan07-outcomes")
'''


def pytest_argv(argv: Iterable[str]) -> list[str]:
    """The default command's argv (`PYTEST_COMMAND` expanded) with the plugin in place of the
    JUnit report and its family."""
    args = list(argv)
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-o" and i + 1 < len(args) and args[i + 1] == "junit_family=xunit1":
            i += 2
            continue
        out += ["-p", MODULE] if a.startswith("--junitxml=") else [a]
        i += 1
    return out


def install(folder: Path) -> None:
    """Write the plugin into `folder` (the run's own temporary folder)."""
    (Path(folder) / f"{MODULE}.py").write_text(PLUGIN, encoding="utf-8")


def plugin_env(env: Mapping[str, str], folder: Path) -> dict[str, str]:
    """`env` with `folder` first on PYTHONPATH (the plugin sets it back in the run)."""
    out = dict(env)
    prev = out.get("PYTHONPATH", "")
    out["PYTHONPATH"] = str(folder) + (os.pathsep + prev if prev else "")
    return out


def read_outcomes(folder: Path) -> dict[str, Outcome] | None:
    """The run's per-test outcomes from the plugin's record, by `parse_junit`'s rules (None
    when the run wrote no record: it crashed or was stopped before the session's end)."""
    from plan07 import caps

    try:
        path = Path(folder) / RECORD
        if path.stat().st_size > caps.INPUT_MAX_BYTES:  # no per-test outcomes: the exit status
            return None
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    cases: list[Case] = []
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            return None
        if not isinstance(rec, dict):
            return None
        tag = rec.get("tag")
        cases.append((str(rec.get("file") or ""), str(rec.get("classname") or ""),
                      str(rec.get("name") or ""),
                      tag if tag in ("failure", "error", "skipped") else None,
                      rec.get("type") if isinstance(rec.get("type"), str) else None,
                      f"{rec.get('message') or ''}\n{rec.get('text') or ''}"))
    return outcomes_of(cases)


def drop_bytecode(env: Mapping[str, str], folder: Path) -> None:
    """The plugin's bytecode, where the run's PYTHONPYCACHEPREFIX put it (a folder of plan07's
    cache mirroring the run's temporary folder), goes with the folder."""
    import shutil

    prefix = env.get("PYTHONPYCACHEPREFIX")
    if not prefix:
        return
    for p in {Path(folder).absolute(), Path(folder).resolve()}:
        shutil.rmtree(Path(prefix).joinpath(*p.parts[1:]), ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# parse_junit's rules (plan07.gate.runner): a testcase's node id and outcome

Case = tuple[str, str, str, str | None, str | None, str]  # file, classname, name, tag, type,
# message (the tag's message attribute, a newline, its text)


def nodeid_of(file: str, classname: str, name: str) -> str:
    """The pytest node id of a JUnit testcase (xunit1: `file`, `classname`, `name`)."""
    if file.endswith(".py") and not classname:  # a collection error of that file
        return file.replace("\\", "/")
    if file.endswith(".py"):
        mod = file[:-3].replace("/", ".").replace("\\", ".")
        rest = classname[len(mod):].lstrip(".") if classname.startswith(mod) else ""
        return "::".join([file.replace("\\", "/"), *([*rest.split(".")] if rest else []),
                          name])
    if not classname:  # a collection error: `name` is the module path in dots
        return name.replace(".", "/") + ".py" if name else "?"
    parts = classname.split(".")
    return "/".join(parts) + ".py::" + name


_RANK = {"skipped": 0, "xfailed": 0, "passed": 1, "failed": 2, "error": 3}


def outcomes_of(cases: Iterable[Case]) -> dict[str, Outcome]:
    """Per-test outcomes of a run's testcases. failure = the test body failed; error =
    collection, setup or teardown; a test reported twice keeps its worse outcome."""
    out: dict[str, Outcome] = {}
    for file, classname, name, tag, type_, message in cases:
        nid = nodeid_of(file, classname, name)
        status: Status = "passed"
        if tag is None:
            message = ""
        else:
            status = "failed" if tag == "failure" else "error" if tag == "error" \
                else "xfailed" if type_ == "pytest.xfail" else "skipped"
        prev = out.get(nid)
        if prev is None or _RANK[status] > _RANK[prev.status]:
            out[nid] = Outcome(status, message.strip()[: MESSAGE_CHARS * 8])
    return out
