"""Lint: each deliberately bad rule file in tests/rules_lint/ yields its expected finding; the
shipped rules/ordering.dl is clean; errors exit 2, warnings exit 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from plan07.cli import main
from plan07.engine.lint import lint_file

LINT_DIR = Path(__file__).parent / "rules_lint"
FIXTURES = Path(__file__).parent / "rules"
FILES = sorted(LINT_DIR.glob("*.dl"))


def _expect(path: Path) -> tuple[str, ...]:
    head = path.read_text().splitlines()[0]
    assert head.startswith("// expect: "), path
    return tuple(head.removeprefix("// expect: ").split(" ", 3))


def test_each_lint_kind_has_a_bad_file() -> None:
    kinds = {_expect(p)[1] for p in FILES if _expect(p)[0] != "clean"}
    assert kinds >= {"unsafe_variable", "unstratifiable", "undefined_relation", "arity_mismatch",
                     "singleton_variable", "cross_product", "missing_rule_id", "missing_fixture",
                     "parse_error"}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_lint_fixture(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    findings = lint_file(path, fixtures=FIXTURES)
    exp = _expect(path)
    code = main(["rules", "lint", str(path), "--fixtures", str(FIXTURES)])
    if exp[0] == "clean":
        assert findings == []
        assert code == 0
        return
    sev, kind, line, fragment = exp
    hits = [f for f in findings if (f.severity, f.kind, f.line) == (sev, kind, int(line))]
    assert hits, findings
    assert fragment in hits[0].message
    out = capsys.readouterr().out
    assert f"{path}:{line}: {sev}: {kind}" in out
    assert code == (2 if any(f.severity == "error" for f in findings) else 0)


def test_shipped_rules_are_clean(repo_root: Path) -> None:
    rules = repo_root / "rules" / "ordering.dl"
    assert lint_file(rules, fixtures=repo_root / "tests" / "rules") == []
    assert main(["rules", "lint"]) == 0


@pytest.mark.parametrize(("args", "message"), [
    (["/nonexist.dl"], "error: /nonexist.dl: FILE: rule file not found\n"),
    (["{tmp}"], "error: {tmp}: FILE: not a rule file\n"),
    (["rules/ordering.dl", "--fixtures", "{tmp}/nope"],
     "error: {tmp}/nope: --fixtures: fixtures folder not found\n"),
])
def test_lint_bad_input_is_one_line_exit_2(args: list[str], message: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str],
                                           repo_root: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    monkeypatch.chdir(repo_root)
    assert main(["rules", "lint", *[a.format(tmp=tmp_path) for a in args]]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", message.format(tmp=tmp_path))


def test_default_fixtures_root_is_guarded(tmp_path: Path, repo_root: Path) -> None:
    from plan07.cli.rules import default_fixtures

    assert default_fixtures(Path("/ordering.dl")) is None  # at the root: no parents[1]
    assert default_fixtures(tmp_path / "rules" / "x.dl") is None  # no tests/rules beside
    assert default_fixtures(repo_root / "rules" / "ordering.dl") == repo_root / "tests" / "rules"


def test_shipped_rules_declare_every_relation_and_output_what_plan07_reads() -> None:
    from plan07.engine import constants, load_program

    prog = load_program()
    assert prog.relations() <= set(prog.decls)  # Soufflé-style: no relation undeclared
    assert {"precedes", "violation", "role", "breaking_cause", "consume_kind"} <= prog.outputs
    assert set(prog.outputs) <= set(prog.decls)
    # the constants plan07's Python uses are the program's own facts, not a copy
    assert constants("breaking_cause") == ("sig_change", "schema_change")
    assert constants("consume_kind") == ("calls", "imports", "inherits", "uses_type", "reads",
                                         "by_name", "references")
