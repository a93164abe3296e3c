"""The README's layout table is true: every path it names exists, and every module and package
of plan07 is named; the README and docs send no user outside the project (no ../shared)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _layout() -> list[str]:
    text = (ROOT / "README.md").read_text("utf-8")
    start = text.index("\nplan07/caps.py")
    block = text[start:text.index("```", start)]
    return [line.split()[0] for line in block.splitlines() if line[:1].strip()]


def test_every_path_in_the_layout_table_exists() -> None:
    paths = _layout()
    assert "plan07/api.py" in paths
    missing = [p for p in paths if not (ROOT / p.split("<")[0]).exists()]
    assert missing == []


def test_every_plan07_module_is_in_the_layout_table() -> None:
    named = {p.rstrip("/").removeprefix("plan07/").removesuffix(".py") for p in _layout()
             if p.startswith("plan07/")}
    have = {p.stem if p.is_file() else p.name for p in (ROOT / "plan07").iterdir()
            if p.name not in ("__init__.py", "__pycache__", "schemas")
            and (p.suffix == ".py" or p.is_dir())}
    assert sorted(have - named) == []


def test_readme_and_docs_stand_on_their_own() -> None:
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text("utf-8")
        assert "../shared" not in text, page.name
        assert "design.md" not in text, page.name
