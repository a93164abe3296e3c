"""plan07 as a tool people run: `--version`, help in plain words that survives the formatter, a
one-line error for a missing extra, `rules test` wherever it is installed, `plan` that keeps a plan
in progress unless told to replace it, and a progress line on a terminal only."""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from plan07.cli import main
from plan07.cli import progressline as pl

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "session_timeout"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    assert run(capsys, "--version") == (0, f"plan07 {version('plan07')}\n", "")


def _commands() -> list[tuple[list[str], Any]]:
    import typer

    from plan07.cli import app

    out = []

    def walk(cmd: Any, path: list[str]) -> None:
        out.append((path, cmd))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return out


def test_help_is_plain_words_and_survives_the_formatter(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No spec section (they belong in docs/), and every option's help is printed whole: rich
    markup would eat a `[tool.plan07]` or a `[DST]` silently."""
    monkeypatch.setenv("COLUMNS", "200")
    for path, cmd in _commands():
        texts = [cmd.help or ""] + [p.help for p in cmd.params if getattr(p, "help", None)]
        for text in texts:
            assert "§" not in text, (path, text)
            assert "design.md" not in text, (path, text)
        rc, out, _ = run(capsys, *path, "--help")
        assert rc == 0, path
        shown = " ".join(re.sub(r"[│╭╮╰╯─]", " ", out).split())
        for p in cmd.params:
            if getattr(p, "help", None):
                assert " ".join(p.help.split()) in shown, (path, p.name)


def test_a_groups_command_list_reads_each_summary_as_one_paragraph(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A docstring's wrapped lines do not break a command's line in `plan07 --help`: each
    command's row continues its words where the column ends, not where the source line did."""
    monkeypatch.setenv("COLUMNS", "400")
    for path, cmd in _commands():
        subs = getattr(cmd, "commands", {})
        if not subs:
            continue
        rc, out, _ = run(capsys, *path, "--help")
        assert rc == 0
        rows = [" ".join(re.sub(r"[│╭╮╰╯─]", " ", line).split()) for line in out.splitlines()]
        for name, sub in subs.items():
            first = " ".join((sub.help or "").split("\n\n")[0].split())
            assert f"{name} {first}" in rows, (path, name)


def test_mcp_tool_descriptions_are_plain_words() -> None:
    import inspect

    from plan07.mcp.server import INSTRUCTIONS, TOOLS

    for name, (fn, _, _) in TOOLS.items():
        text = inspect.getdoc(fn) or ""
        params = json.dumps({k: str(v.annotation) for k, v in
                             inspect.signature(fn).parameters.items()})
        for blob in (text, params):
            assert "§" not in blob, name
            assert "plan07 schema" not in blob, name  # no CLI command to type
    assert "§" not in INSTRUCTIONS


@pytest.mark.parametrize(("line", "told"), [
    ("obligation 'O3' was not handed out (x); run `plan07 next` first",
     "obligation 'O3' was not handed out (x); call the `next` tool first"),
    ("complete those first (`plan07 next` shows the ready one)",
     "complete those first (the `next` tool shows the ready one)"),
    ("no plan here; run `plan07 plan REQUEST --repo DIR` first (or pass --state DIR)",
     "no plan here; call the `plan` tool with `repo` first (or pass the `state` argument)"),
    ("nothing was changed: pass --replace to start over",
     "nothing was changed: pass the `replace` argument to start over"),
    ("confirm it with `plan07 confirm 3` (or `--all`)",
     "confirm it with the `confirm` tool with `criteria` [3] (or the `all` argument)"),
    ("see `plan07 explain O2 O1`", "see the `explain` tool with `src` O2, `dst` O1"),
    ("run `plan07 rules test --engine both`", "run `plan07 rules test --engine both`"),
    ("`git update-ref -d refs/plan07/x/CP1`", "`git update-ref -d refs/plan07/x/CP1`"),
])
def test_an_mcp_error_says_what_to_call(line: str, told: str) -> None:
    from plan07.mcp.server import for_agent

    assert for_agent(line) == told


# ---------------------------------------------------------------------------------------------
# extras


def test_a_missing_extra_is_one_line_naming_the_install(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    obligations = tmp_path / "o.json"
    obligations.write_text(json.dumps([{
        "id": "O1", "target_entity": "m.f", "obligation": "modify", "caused_by": "requirement",
        "dependencies": [], "evidence": "03 recon", "status": "ready",
        "validation": "compile"}]))
    monkeypatch.setitem(sys.modules, "clingo", None)  # as if the extra were not installed
    rc, out, err = run(capsys, "order", "--obligations", str(obligations), "--engine", "clingo")
    assert (rc, out) == (2, "")
    assert err == ("error: --engine clingo needs the clingo extra, which is not installed; "
                   "install it with pip install 'clingo>=5.7,<6'\n")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    rc, out, err = run(capsys, "ab", "--tasks", "1", "--out", str(tmp_path / "ab"))
    assert (rc, out) == (2, "")
    assert "install it with pip install 'matplotlib>=3.8'" in err
    assert not (tmp_path / "ab").exists()


# ---------------------------------------------------------------------------------------------
# rules test: the shipped fixtures, a fixture root of one's own, none at all


def test_rules_test_without_clingo_runs_what_is_installed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "clingo", None)
    rc, out, err = run(capsys, "rules", "test", "has_dep")
    assert rc == 0
    assert re.fullmatch(r"(\d+)/\1 case runs passed \(pydatalog\)\n", out)
    assert err.startswith("note: clingo is not installed, running on pydatalog only")


def test_rules_test_with_no_cases_is_exit_2(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    rc, out, err = run(capsys, "rules", "test", "--fixtures", str(tmp_path))
    assert (rc, out) == (2, "")
    assert err.startswith(f"error: {tmp_path}: --fixtures: no rule fixtures here")


def test_rules_test_fails_a_wrong_case(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    root = tmp_path / "fixtures"
    shutil.copytree(ROOT / "tests" / "rules" / "has_dep", root / "has_dep")
    case = sorted((root / "has_dep").iterdir())[0] / "expected"
    first = sorted(case.glob("*.csv"))[0]
    first.write_text(first.read_text() + "X,Y,not_a_rule\n")
    rc, out, _ = run(capsys, "rules", "test", "--fixtures", str(root), "--engine", "pydatalog")
    assert rc == 1
    assert "FAIL has_dep/" in out


# ---------------------------------------------------------------------------------------------
# plan over a plan in progress


def _example(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", "edits.json"))
    return repo


def test_plan_keeps_a_plan_in_progress_unless_replace(capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    repo, st = _example(tmp_path), str(tmp_path / "state")
    plan = ["plan", str(repo / "request.md"), "--repo", str(repo), "--state", st, "--json"]
    assert run(capsys, *plan)[0] == 0
    assert run(capsys, "next", "--state", st, "--json")[0] == 0
    assert run(capsys, *plan)[0] == 0  # a hand-out alone is no progress: replaced
    node = json.loads(run(capsys, "next", "--state", st, "--json")[1])["node_id"]
    assert run(capsys, "complete", node, "--state", st)[0] == 1  # a failed check is progress
    before = {p.name: p.read_bytes() for p in Path(st).iterdir() if p.is_file()}
    rc, out, err = run(capsys, *plan)
    assert (rc, out) == (2, "")
    assert re.fullmatch(r"error: the plan in .* has progress: 0 of \d+ obligations complete, "
                        r"\d+ recorded step\(s\); nothing was changed: pass --replace to "
                        r"start over \(its checkpoints are dropped\), or --state DIR to plan "
                        r"beside it\n", err)
    assert {p.name: p.read_bytes() for p in Path(st).iterdir() if p.is_file()} == before
    rc, out, _ = run(capsys, *plan, "--replace")
    assert rc == 0
    assert [r["event"] for r in json.loads(out)["audit"]] == ["planned", "checkpoint"]


# ---------------------------------------------------------------------------------------------
# progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_shows_long_steps_on_a_terminal_only() -> None:
    from plan07 import progress

    assert not pl.wanted(io.StringIO(), quiet=False)  # piped
    assert not pl.wanted(_Tty(), quiet=True)
    assert pl.wanted(_Tty(), quiet=False)
    out = _Tty()
    line = pl.Line(out, show_after_s=0.0)
    with progress.listening(line):
        with progress.step("recon of x"):
            pass
        with pytest.raises(KeyError), progress.step("check of O1"):
            raise KeyError("boom")
    line.close()
    text = out.getvalue()
    assert re.search(r"\rrecon of x: \d+\.\ds\n", text)
    assert re.search(r"\rcheck of O1: \d+\.\ds \(stopped\)\n", text)
    quiet = _Tty()
    with pl.shown(quiet=False, stream=io.StringIO()), progress.step("piped"):
        pass
    with pl.shown(quiet=True, stream=quiet), progress.step("quiet"):
        pass
    assert quiet.getvalue() == ""


def test_plan_shows_its_steps(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    """What `plan` announces on a terminal (every step shown: the threshold set to 0 here)."""
    monkeypatch.setattr(pl, "SHOW_AFTER_S", 0.0)
    monkeypatch.setattr(pl, "wanted", lambda _stream, quiet: not quiet)
    repo = _example(tmp_path)
    plan = ["plan", str(repo / "request.md"), "--repo", str(repo), "--state",
            str(tmp_path / "state"), "--json"]
    rc, _, err = run(capsys, *plan)
    assert rc == 0
    steps = re.findall(r"\r([^\r\n]+?): \d+\.\ds\n", err)
    assert steps == ["recon of repo", "decomposition (builtin)", "plan lint",
                     "ordering (pydatalog)",
                     "baseline: the plan's tests on the unchanged repository"]
    rc, _, err = run(capsys, *plan, "--quiet")
    assert rc == 0
    assert "recon" not in err
