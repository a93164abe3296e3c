"""The repository's test command (§3.5 step 1): an argv template, never a shell line.
I/O: reads the repo's pyproject.toml only.

`[tool.plan07] test-command` in the target repo's pyproject.toml (or `plan07 plan
--test-command`), with `{python}`, `{tests}` (the test labels, as separate arguments) and
`{junitxml}` (a file the command may write JUnit XML to, for per-test results); default: the
repo's pytest with its own configuration. Model-written validations stay data: only ids the
check grammar accepts are ever substituted (§3.5). Bad configuration is one InputError line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plan07.errors import InputError

TestIds = Literal["pytest", "dotted"]

# The default test command: the repo's pytest, its configuration (pytest.ini, pyproject, tox.ini,
# setup.cfg, conftest.py) as the repo has it; only the per-test report, no .pytest_cache written
# into the repo, and running the other files when one has a collection error (a pre-existing
# broken file must not hide every other test) are ours. Spelled with a JUnit XML report (xunit1:
# it names each test's file), which a user's copy of it gets; plan07's own runs of it load
# plan07.gate.outcomes' plugin in the report's place (runner.run_tests), read by the same rules.
PYTEST_COMMAND = ("{python}", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                  "--continue-on-collection-errors", "-o", "junit_family=xunit1",
                  "--junitxml={junitxml}", "{tests}")
PLACEHOLDERS = ("{python}", "{tests}", "{junitxml}")
CONFIG_KEYS = ("test-command", "test-ids", "test-root", "regression", "check-env",
               "reproduce-preamble")
CHECK_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\*?")  # a name, or a `PREFIX_*` glob


@dataclass(frozen=True)
class TestCommand:
    """An argv template (never a shell) and how `{tests}` spells a test id: `pytest` node ids
    as they are, or `dotted` labels (`tests/app/tests.py::T::test_x` -> `app.tests.T.test_x`
    with `test-root = "tests"`, as Django's runtests.py takes them)."""

    __test__ = False  # not a pytest test class

    argv: tuple[str, ...] = PYTEST_COMMAND
    test_ids: TestIds = "pytest"
    test_root: str = ""
    source: str = "default"

    @property
    def is_pytest(self) -> bool:
        return self.argv == PYTEST_COMMAND

    @property
    def per_test(self) -> bool:
        """True when a run reports each test's outcome (the command writes {junitxml})."""
        return any("{junitxml}" in a for a in self.argv)

    def label(self, test: str) -> str:
        """How the command names the test id or path `test` (pytest grammar)."""
        if self.test_ids == "pytest":
            return test
        path, _, rest = test.partition("::")
        root = self.test_root.strip("/")
        if root and (path == root or path.startswith(root + "/")):
            path = path[len(root):].lstrip("/")
        mod = path.removesuffix(".py").strip("/").replace("/", ".")
        parts = [mod] if mod else []
        if rest:
            parts += [p.split("[", 1)[0] for p in rest.split("::")]
        return ".".join(parts)

    def argv_for(self, python: str, tests: Sequence[str], junitxml: str) -> list[str]:
        """The argv of one run. `{tests}` expands to one argument per label."""
        out: list[str] = []
        for a in self.argv:
            if a == "{tests}":
                out += [self.label(t) for t in tests]
            else:
                out.append(a.replace("{python}", python).replace("{junitxml}", junitxml))
        return out

    def record(self) -> dict[str, object]:
        """What plan.json keeps (only a configured command; the default is implied)."""
        return {"argv": list(self.argv), "test_ids": self.test_ids, "test_root": self.test_root,
                "source": self.source}


def parse_command(value: object, *, where: str, test_ids: object = "pytest",
                  test_root: object = "") -> TestCommand:
    """A test-command template checked: a non-empty list of strings, `{tests}` one whole
    argument, no placeholder but {python} {tests} {junitxml}. InputError naming `where`."""
    if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value):
        raise InputError('test-command must be a non-empty list of strings, e.g. ["{python}", '
                         '"tests/runtests.py", "{tests}"] (an argv, never a shell line)',
                         field=where)
    for a in value:
        for ph in re.findall(r"\{[^{}]*\}", a):
            if ph not in PLACEHOLDERS:
                raise InputError(f"test-command: unknown placeholder {ph}; use "
                                 f"{', '.join(PLACEHOLDERS)}", field=where)
        if "{tests}" in a and a != "{tests}":
            raise InputError("test-command: {tests} must be an argument of its own",
                             field=where)
    if "{tests}" not in value:
        raise InputError("test-command has no {tests} argument: plan07 must name the tests a "
                         "check runs", field=where)
    if not value[0].strip():
        raise InputError("test-command: the program (first argument) is empty", field=where)
    if test_ids not in ("pytest", "dotted"):
        raise InputError(f"test-ids {test_ids!r}: use \"pytest\" or \"dotted\"", field=where)
    if not isinstance(test_root, str):
        raise InputError("test-root must be a string (a folder of the repo)", field=where)
    ids: TestIds = "dotted" if test_ids == "dotted" else "pytest"
    return TestCommand(tuple(value), ids, test_root, where)


def config_table(repo: Path) -> object:
    """`[tool.plan07]` of REPO/pyproject.toml as read (None when there is none); a file that is
    not TOML is an InputError."""
    path = Path(repo) / "pyproject.toml"
    if not path.is_file():
        return None
    import tomllib

    from plan07.store.boundedio import read_text
    try:
        data = tomllib.loads(read_text(path, what="pyproject.toml"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"cannot read [tool.plan07]: {' '.join(str(exc).split())}",
                         source=str(path)) from None
    tool = data.get("tool", {})
    return tool.get("plan07") if isinstance(tool, dict) else None


def load_command(repo: Path, flag: str | None = None) -> TestCommand:
    """The plan's test command: `--test-command` (a JSON list) when given, else `[tool.plan07]`
    of REPO/pyproject.toml, else the repo's pytest. Bad configuration: InputError, one line."""
    if flag is not None:
        import json

        try:
            value = json.loads(flag)
        except json.JSONDecodeError as exc:
            raise InputError(f"not a JSON list of strings ({exc.msg}); e.g. "
                             "'[\"{python}\", \"tests/runtests.py\", \"{tests}\"]'",
                             field="--test-command") from None
        return parse_command(value, where="--test-command")
    path = Path(repo) / "pyproject.toml"
    conf = config_table(repo)
    if conf is None:
        return TestCommand()
    where = f"{path}: [tool.plan07]"
    if not isinstance(conf, dict):
        raise InputError("must be a table", field=where)
    unknown = sorted(set(conf) - set(CONFIG_KEYS))
    if unknown:
        raise InputError(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(CONFIG_KEYS)}",
                         field=where)
    names = conf.get("check-env", [])  # read by plan07.sandbox.check_env (docs/safety.md)
    if not isinstance(names, list) or not all(
            isinstance(n, str) and CHECK_ENV_NAME.fullmatch(n) for n in names):
        raise InputError("check-env must be a list of variable names or `PREFIX_*` globs, e.g. "
                         '["DJANGO_SETTINGS_MODULE", "MYAPP_*"]', field=where)
    if "test-command" not in conf:  # `regression` is plan07.gate.regression's
        if set(conf) & {"test-ids", "test-root"}:
            raise InputError("test-ids/test-root without a test-command", field=where)
        return TestCommand()
    return parse_command(conf["test-command"], where=where,
                         test_ids=conf.get("test-ids", "pytest"),
                         test_root=conf.get("test-root", ""))
