"""Nothing hostile reaches a terminal (docs/safety.md): a replayed model output whose target ends
in an OSC 52 clipboard write and whose `caused_by` and `validation` hold newlines (forged lines of
plan07's own), and a test whose output does the same, are printed by every verb with their
control characters escaped, one record per line. Also: `check-env` in the repo's pyproject.toml
works as docs/safety.md shows it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _smallplan import cli_here, make_repo, ob, plan_here, write_replay

from plan07 import block, display, json_text, printable, scrub

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")

OSC52 = "\x1b]52;c;aGVsbG8=\x07"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_printable_escapes_every_control_character() -> None:
    assert printable("a\x1b]52;c;x\x07b\nc\r\td\x9b\u202e") == \
        "a\\x1b]52;c;x\\x07b\\nc\\r\\td\\x9b\\u202e"
    assert printable("plain text, ünïcode") == "plain text, ünïcode"
    assert block("ok\nO1 passed\x1b[2K\r\n") == "  ok\n  O1 passed\\x1b[2K\n"


def test_json_text_stays_json_and_the_same_data() -> None:
    value = {"t": "x\x7f\x9b\u202ey\x1b"}
    text = json_text(json.dumps(value, ensure_ascii=False))
    assert not RAW.search(text)
    assert json.loads(text) == value


def test_the_stream_keeps_only_what_rich_writes_and_only_on_a_terminal() -> None:
    rich = "\x1b[1mbold\x1b[0m\r\n"
    assert scrub(rich, tty=True) == rich
    assert scrub(rich, tty=False) == "\\u001b[1mbold\\u001b[0m\r\n"
    assert scrub(OSC52, tty=True) == "\\u001b]52;c;aGVsbG8=\\u0007"


def test_display_copies_a_model_with_every_string_printable() -> None:
    from plan07.model import Obligation

    o = Obligation.model_validate(ob("O1", "a" + OSC52, "modify", [], "compile"))
    shown = display(o)
    assert shown.target_entity == "a\\x1b]52;c;aGVsbG8=\\x07"
    assert o.target_entity == "a" + OSC52  # the original is untouched


HOSTILE_TEST = """def test_f():
    print("\\x1b]52;c;aGVsbG8=\\x07")
    print("O1 passed: forged by the test")
    assert False
"""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    make_repo(root, files={"tests/test_core.py": HOSTILE_TEST})
    first = ob("O1", "pkg.core.f" + OSC52, "modify", [], "tests/test_core.py::test_f")
    first["caused_by"] = "requirement\nO2 passed: forged \x9b31m \u202e"
    second = ob("O2", "pkg.core.g", "modify", ["O1"], "compile\nO2 passed")
    write_replay(root, [first, second])
    return root


def clean(text: str) -> None:
    assert not RAW.search(text), repr(RAW.search(text))
    lines = text.splitlines()
    assert not any(line.startswith(("O1 passed", "O2 passed")) for line in lines), text


def test_no_verb_prints_a_control_character_or_a_forged_line(hostile: Path) -> None:
    state = hostile / "state"
    planned = plan_here(hostile, state, hostile / "repo", process=False)
    assert planned.returncode == 0, planned.stderr
    clean(planned.stdout + planned.stderr)
    s = str(state)
    for args in (["next"], ["next", "--json"], ["status"], ["status", "--json"],
                 ["show", "--format", "mermaid"], ["show", "--format", "dot"], ["show"],
                 ["audit"], ["audit", "--json"], ["explain", "O1", "O2"]):
        res = cli_here(*args, "--state", s)
        assert res.returncode in (0, 1), (args, res.stderr)
        clean(res.stdout + res.stderr)
        if "--json" in args or args == ["show"]:
            json.loads(res.stdout)  # still JSON, the same data
    done = cli_here("complete", "O1", "--state", s)
    assert done.returncode == 1
    clean(done.stdout + done.stderr)
    assert done.stdout.startswith("O1 FAILED: tests/test_core.py::test_f (")
    assert "  O1 passed: forged by the test" in done.stdout  # the test's output, indented


CHECK_ENV_TEST = """import os


def test_env():
    assert os.environ.get("MYAPP_MODE") == "on"
    assert "MYAPP_API_KEY" not in os.environ  # a credential's name never passes
"""


def test_check_env_in_pyproject_reaches_the_check(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path, files={
        "tests/test_env.py": CHECK_ENV_TEST,
        "pyproject.toml": '[tool.plan07]\ncheck-env = ["DJANGO_SETTINGS_MODULE", "MYAPP_*"]\n'})
    write_replay(tmp_path, [ob("O1", "tests/test_env.py::test_env", "validate", [],
                               "tests/test_env.py::test_env")])
    monkeypatch.setenv("MYAPP_MODE", "on")
    monkeypatch.setenv("MYAPP_API_KEY", "sk-" + "k" * 30)
    state = tmp_path / "state"
    res = plan_here(tmp_path, state, repo, process=False)
    assert res.returncode == 0, res.stderr
    assert cli_here("next", "--state", str(state)).returncode == 0
    done = cli_here("complete", "O1", "--state", str(state))
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize("value", ['"MYAPP_*"', '["MY APP"]', "[1]"])
def test_a_check_env_that_is_not_a_list_of_names_is_one_error_line(tmp_path: Path,
                                                                   value: str) -> None:
    repo = make_repo(tmp_path, files={"pyproject.toml": f"[tool.plan07]\ncheck-env = {value}\n"})
    res = plan_here(tmp_path, tmp_path / "state", repo, process=False)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1
    assert "check-env must be a list of variable names" in res.stderr
    assert not (tmp_path / "state").exists()
