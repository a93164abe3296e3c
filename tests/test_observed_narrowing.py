"""An edit observed to narrow an interface (it removes what its consumers can stop using first:
an optional parameter, a definition, an attribute a class stops setting, a settings key) is set
aside: its files go back to the last checkpoint, the edit saved stash-like, and the planned
consumers rebind first against the old form (the ladder's rebind before narrow); then the node
comes again and lands alone. Each step is checked on its own, none merged."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from _observed import PRICING, ob, plan

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")

NARROWED = "def total(items):\n    return sum(items)\n"
TEST = ("from pkg.pricing import total\n\n\ndef test_total():\n"
        "    assert total([1, 2]) == 3\n")


def test_a_narrowing_edit_waits_for_its_planned_consumer_then_lands_alone(
        tmp_path: Path) -> None:
    planner, repo = plan(tmp_path, [ob("O1", "pkg.pricing.total", "requirement: drop discount"),
                                    ob("O2", "tests.test_pricing.test_total", "requirement")])
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    pricing = repo / "pkg" / "pricing.py"
    pricing.write_text(NARROWED)
    verdict = planner.complete("O1")
    assert (verdict.passed, verdict.set_aside_for, verdict.merged_into, verdict.test_calls) == (
        False, ["O2"], None, 0)
    assert any(line.startswith("narrowing: pkg.pricing.total: removes parameter discount")
               for line in verdict.observed)
    # the files are back as the last checkpoint had them, the edit saved where it says
    assert pricing.read_text() == PRICING
    ref = verdict.output_tail.split("saved in ")[1].split(" ")[0]
    assert subprocess.run(["git", "-C", str(repo), "show", f"{ref}:pkg/pricing.py"],
                          capture_output=True, text=True, check=True).stdout == NARROWED
    assert [(e.from_, e.to, e.rule) for e in planner.artifact.edges] == [
        ("O2", "O1", "rebind_before_narrow")]
    assert planner.explain("O2", "O1").holds
    events = [r.event for r in planner.artifact.audit]
    assert events[-2:] == ["observed", "set_aside"]
    assert "failed" not in events

    assert planner.next().node_id == "O2"  # type: ignore[union-attr]
    (repo / "tests" / "test_pricing.py").write_text(TEST)
    assert planner.complete("O2").passed  # against the old form: discount is still optional

    back = planner.next()
    assert back is not None
    assert back.node_id == "O1"
    assert back.saved_edit is not None
    assert back.saved_edit == f"git stash apply --index {ref}"
    subprocess.run(["git", "-C", str(repo), "stash", "apply", "--index", ref], check=True,
                   capture_output=True)  # the saved edit, brought back as the view says
    assert pricing.read_text() == NARROWED
    again = planner.complete("O1")
    assert again.passed
    assert again.set_aside_for == []
    assert not planner.artifact.set_aside
    assert planner.next() is None


def test_a_rename_is_breaking_and_lands_with_its_consumer_as_one_step(tmp_path: Path) -> None:
    """The caller needs the new name: it cannot rebind first, so the two are one step."""
    planner, repo = plan(tmp_path, [ob("O1", "pkg.pricing.total", "requirement"),
                                    ob("O2", "tests.test_pricing.test_total", "requirement")])
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "pkg" / "pricing.py").write_text(PRICING.replace("discount", "rebate"))
    verdict = planner.complete("O1")
    assert verdict.set_aside_for == []
    assert verdict.merged_into == "O1_atomic"
    assert any(line.startswith("breaking: pkg.pricing.total") for line in verdict.observed)


def test_a_removed_definition_waits_for_the_planned_caller_that_stops_calling_it(
        tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", ".gitignore": "__pycache__/\n",
             "pkg/util.py": "def legacy(x):\n    return x\n\n\ndef fresh(x):\n    return x\n",
             "pkg/app.py": "from pkg import util\n\n\ndef run(x):\n    return util.legacy(x)\n",
             "tests/test_app.py": "from pkg.app import run\n\n\ndef test_run():\n"
                                  "    assert run(2) == 2\n"}
    planner, repo = plan(tmp_path, [ob("O1", "pkg.util", "requirement: drop legacy"),
                                    ob("O2", "pkg.app.run", "requirement: use fresh")], files)
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "pkg" / "util.py").write_text("def fresh(x):\n    return x\n")
    verdict = planner.complete("O1")
    assert verdict.set_aside_for == ["O2"]
    assert planner.next().node_id == "O2"  # type: ignore[union-attr]
    app = repo / "pkg" / "app.py"
    app.write_text(app.read_text().replace("legacy", "fresh"))
    assert planner.complete("O2").passed
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "pkg" / "util.py").write_text("def fresh(x):\n    return x\n")
    assert planner.complete("O1").passed
