"""Observed edits that reach other code through a string, end to end on a small git repository:
a settings key renamed where it is defined or where it is read, and a parameter renamed that a
test calls from inside a template string. No recon edge links them; plan07 reads the strings
(plan07.gate.stringrefs) and lands them as one step before any check."""

from __future__ import annotations

from pathlib import Path

import pytest
from _observed import ob, plan

from plan07 import Planner

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")

SETTINGS = 'DEFAULTS = {\n    "mail.host_name": "localhost",\n    "mail.port_number": 25,\n}\n'
MAILER = ("from pkg.settings import DEFAULTS\n\n\ndef host(policies=None):\n"
          "    return (policies or DEFAULTS)[\"mail.host_name\"]\n")
MAIL_REPO = {"pkg/__init__.py": "", "pkg/settings.py": SETTINGS, "pkg/mailer.py": MAILER,
             "tests/test_mailer.py": "from pkg.mailer import host\n\n\ndef test_host():\n"
                                     "    assert host() == 'localhost'\n",
             ".gitignore": "__pycache__/\n"}


def _rename_in(repo: Path, rel: str) -> None:
    path = repo / rel
    path.write_text(path.read_text().replace("mail.host_name", "mail.smtp_host"))


def _changes(planner: Planner, node: str) -> list[tuple[str, str, list[str]]]:
    return [(c.entity, c.kind, c.consumers)
            for c in (planner.artifact.observed or {}).get(node, []) if c.keys]


def test_a_key_the_settings_stop_defining_lands_with_its_planned_reader(tmp_path: Path) -> None:
    reader = {**ob("O1", "pkg.mailer.host"), "dependencies": ["O2"]}  # the settings first
    planner, repo = plan(tmp_path, [reader, ob("O2", "pkg.settings")], MAIL_REPO)
    assert planner.next().node_id == "O2"  # type: ignore[union-attr]
    _rename_in(repo, "pkg/settings.py")
    verdict = planner.complete("O2")
    assert (verdict.merged_into, verdict.merged, verdict.test_calls) == ("O1_atomic", ["O1"], 0)
    assert _changes(planner, "O2") == [("pkg.settings.DEFAULTS", "breaking", ["pkg.mailer.host"])]
    (change,) = [c for c in (planner.artifact.observed or {})["O2"] if c.keys]
    assert change.keys == ["mail.host_name"]
    _rename_in(repo, "pkg/mailer.py")
    assert planner.complete("O1_atomic").passed


def test_a_read_of_a_key_nothing_holds_yet_lands_with_the_planned_settings(
        tmp_path: Path) -> None:
    """The reader edited first (listed alone first, the settings after it): the new key is held
    nowhere outside the edit, and the settings that still define the old one land with it."""
    planner, repo = plan(tmp_path, [ob("O1", "pkg.mailer.host"), ob("O2", "pkg.settings")],
                         {**MAIL_REPO, "pkg/mailer.py": MAILER.replace(
                             "from pkg.settings import DEFAULTS\n", "DEFAULTS = {}\n")})
    view = planner.next()
    assert view is not None
    _rename_in(repo, "pkg/mailer.py" if view.node_id == "O1" else "pkg/settings.py")
    verdict = planner.complete(view.node_id)
    assert verdict.merged_into is not None
    assert verdict.test_calls == 0
    assert {view.node_id, *verdict.merged} == {"O1", "O2"}


def test_a_key_dropped_that_nothing_else_holds_is_no_breaking_change(tmp_path: Path) -> None:
    planner, repo = plan(tmp_path, [ob("O1", "pkg.settings")], MAIL_REPO)
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "pkg" / "settings.py").write_text(SETTINGS.replace('    "mail.port_number": 25,\n',
                                                               ""))
    verdict = planner.complete("O1")
    assert verdict.passed
    assert verdict.merged_into is None
    assert _changes(planner, "O1") == []


RENDER = ("def link(text, new_tab=False):\n"
          "    return f'<a{\" target=_blank\" if new_tab else \"\"}>{text}</a>'\n\n\n"
          "def render(template):\n    return eval(template, {'link': link})\n")
RENDER_REPO = {"pkg/__init__.py": "", "pkg/render.py": RENDER,
               "tests/test_render.py": "from pkg.render import render\n\n\ndef test_link():\n"
                                       "    assert render(\"link('a', new_tab=True)\") == "
                                       "'<a target=_blank>a</a>'\n",
               ".gitignore": "__pycache__/\n"}


def test_a_parameter_a_test_writes_inside_a_template_lands_with_that_test(
        tmp_path: Path) -> None:
    """No code calls `link` by name (the template string does): the rename of its keyword is
    breaking for the test that writes it, which the plan holds."""
    planner, repo = plan(tmp_path, [ob("O1", "pkg.render.link"),
                                    ob("O2", "tests.test_render.test_link")], RENDER_REPO)
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "pkg" / "render.py").write_text(RENDER.replace("new_tab", "open_new"))
    verdict = planner.complete("O1")
    # the test, and the rebind of render, which passes `link` on by name (no call to read)
    assert (verdict.merged_into, verdict.merged, verdict.test_calls) == (
        "O1_atomic", ["O2", "O3"], 0)
    (change,) = (planner.artifact.observed or {})["O1"]
    assert (change.kind, change.consumers) == (
        "breaking", ["pkg.render.render", "tests.test_render.test_link"])
    assert [o.target_entity for o in planner.obligations() if o.id == "O3"] == [
        "pkg.render.render"]
    test = repo / "tests" / "test_render.py"
    test.write_text(test.read_text().replace("new_tab", "open_new"))
    assert planner.complete("O1_atomic").passed
