"""Recon on a real mid-size project: the click sources typer vendors (typer/_click), copied into a
temp dir. Each expected edge below was checked by hand against the source it names."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from plan07.evidence import build_evidence, load_evidence
from plan07.evidence.recon import recon
from plan07.evidence.resolve import ReconResult

CLICK = Path(typer.__file__).parent / "_click"


@pytest.fixture(scope="module")
def click_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (CLICK / "core.py").is_file():
        pytest.skip("typer no longer vendors click at typer/_click")
    root = tmp_path_factory.mktemp("real")
    shutil.copytree(CLICK, root / "click", ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture(scope="module")
def result(click_repo: Path) -> ReconResult:
    return recon(click_repo)


@pytest.mark.parametrize(("src", "dst", "kind", "why"), [
    # termui.py: `return echo(message, ...)` with `from .utils import echo`
    ("click.termui.secho", "click.utils.echo", "calls", "relative from-import"),
    # termui.py: `message = style(message, **styles)`, same module
    ("click.termui.secho", "click.termui.style", "calls", "same module"),
    # utils.py: `color = resolve_color_default(color)` with `from .globals import ...`
    ("click.utils.echo", "click.globals.resolve_color_default", "calls", "relative from-import"),
    # termui.py launch(): `from ._termui_impl import open_url` inside the function body
    ("click.termui.launch", "click._termui_impl.open_url", "calls", "function-local import"),
    # core.py Command.invoke(self, ctx: Context): `ctx.invoke(self.callback, ...)`
    ("click.core.Command.invoke", "click.core.Context.invoke", "calls", "annotated parameter"),
    # exceptions.py: `class UsageError(ClickException)`
    ("click.exceptions.UsageError", "click.exceptions.ClickException", "inherits", "same module"),
    ("click.exceptions.BadParameter", "click.exceptions.UsageError", "inherits", "same module"),
    ("click.termui", "click.utils", "imports", "from .utils import ..."),
    ("click.core", "click.core.Context", "defines", "top-level class"),
])
def test_edges_a_reader_expects(result: ReconResult, src: str, dst: str, kind: str,
                                why: str) -> None:
    assert (src, dst, kind) in {(e.src, e.dst, e.kind) for e in result.edges}, why


def test_names_and_signatures(result: ReconResult) -> None:
    by_id = {n.id: n for n in result.nodes}
    assert by_id["click.core.Context"].kind == "class"
    assert by_id["click.core.Context.invoke"].kind == "method"
    assert by_id["click.utils.echo"].signature is not None
    assert by_id["click.utils.echo"].signature.startswith("def echo(")
    assert by_id["click.utils.echo"].file == "click/utils.py"
    # a module-level variable is not a definition: a call to it is dropped, not guessed
    assert "click._compat._default_text_stderr" not in by_id
    assert not result.warnings
    assert len(result.nodes) > 250
    assert sum(e.kind == "calls" for e in result.edges) > 150


def test_parser_processes_give_the_same_graph(click_repo: Path) -> None:
    # In a fresh interpreter: recon never forks from a threaded process (as pytest-xdist's is).
    code = (
        "import sys; from pathlib import Path; from plan07.evidence.recon import recon\n"
        "a, b = recon(Path(sys.argv[1]), workers=1), recon(Path(sys.argv[1]), workers=3)\n"
        "assert (a.nodes, a.edges, a.passed, a.warnings) == (b.nodes, b.edges, b.passed, "
        "b.warnings)\nprint(len(a.edges))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(click_repo)], capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 500


def test_build_and_both_formats_agree(click_repo: Path, tmp_path: Path) -> None:
    from plan07.evidence import write_db

    ev = build_evidence(click_repo, request="echo a styled message with secho", depth=2)
    assert ev.localization
    assert ev.localization[0].entity in {"click.termui.secho",
                                                              "click.utils.echo"}
    assert any(i.src == "click.utils.echo" and i.relation == "CalledBy" for i in ev.impact.edges)
    path = tmp_path / "e.json"
    path.write_text(ev.model_dump_json(exclude_none=True))
    write_db(ev, tmp_path / "recon.db")
    assert load_evidence(path) == ev == load_evidence(tmp_path / "recon.db")
