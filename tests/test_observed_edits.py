"""Observed edits end to end on a small git repo the test writes: a terse decomposition (a target
per change, no word of compatible or breaking), and plan07 reading each edit before its check.
A planned callee goes before its planned caller (definition before use); a breaking edit of it
becomes one step with its caller before any check runs; a compatible one is checked alone; a
breaking edit with a consumer the plan does not hold adds its rebind (§3.6); an edit observed to
change behaviour lands with the planned rewrite of its tests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from _observed import CART, PRICING, REQUEST, make_repo, ob, plan

from plan07 import Planner

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")

# the caller listed first, and neither says how the callee's interface changes
TERSE = [ob("O1", "pkg.cart.Cart.checkout", "requirement: checkout applies the tax rate"),
         ob("O2", "pkg.pricing.total", "requirement: total takes a tax rate")]


def test_before_any_edit_the_planned_callee_goes_before_its_caller(tmp_path: Path) -> None:
    planner, _ = plan(tmp_path, TERSE)
    assert [(e.from_, e.to, e.rule) for e in planner.artifact.edges] == [
        ("O2", "O1", "definition_before_use")]
    proof = planner.explain("O2", "O1")
    assert proof.holds
    assert proof.goal == 'precedes("O2", "O1", "definition_before_use")'
    view = planner.next()
    assert view is not None
    assert view.node_id == "O2"


def test_a_breaking_edit_lands_with_its_planned_caller_before_any_check(tmp_path: Path) -> None:
    planner, repo = plan(tmp_path, TERSE)
    assert planner.next().node_id == "O2"  # type: ignore[union-attr]
    (repo / "pkg" / "pricing.py").write_text(
        "def total(items, tax_rate, discount=0):\n"
        "    return sum(items) * (1 + tax_rate) - discount\n")
    verdict = planner.complete("O2")
    # the planned caller, and the test whose positional call now lands in tax_rate (added)
    tested = [o.id for o in planner.obligations()
              if o.target_entity == "tests.test_pricing.test_total"]
    assert (verdict.passed, verdict.merged_into, verdict.merged) == (
        False, "O1_atomic", ["O1", *tested])
    assert len(tested) == 1
    assert verdict.test_calls == 0  # nothing ran: the change cannot be valid alone
    assert any("adds required parameter tax_rate" in line for line in verdict.observed)
    events = [r.event for r in planner.artifact.audit]
    assert "failed" not in events
    assert events[-3:] == ["observed", "feedback", "merged"]  # the test's rebind: §3.6
    art = planner.artifact
    assert art.observed is not None
    assert [(c.entity, c.kind) for c in art.observed["O2"]] == [("pkg.pricing.total",
                                                                 "breaking")]
    view = planner.next()
    assert view is not None
    assert view.node_id == "O1_atomic"
    (repo / "pkg" / "cart.py").write_text(CART.replace("total(self.items)",
                                                       "total(self.items, 0.0)"))
    (repo / "tests" / "test_pricing.py").write_text(
        "from pkg.pricing import total\n\n\ndef test_total():\n"
        "    assert total([1, 2], 0, 1) == 2\n")
    assert planner.complete("O1_atomic").passed
    assert planner.next() is None


def test_a_compatible_edit_is_checked_alone_and_its_caller_follows(tmp_path: Path) -> None:
    planner, repo = plan(tmp_path, TERSE)
    assert planner.next().node_id == "O2"  # type: ignore[union-attr]
    (repo / "pkg" / "pricing.py").write_text(
        "def total(items, discount=0, tax_rate=0.0):\n"
        "    return sum(items) * (1 + tax_rate) - discount\n")
    verdict = planner.complete("O2")
    assert verdict.passed
    assert verdict.merged_into is None
    assert any(line.startswith("compatible: pkg.pricing.total: adds optional parameter")
               for line in verdict.observed)
    # recorded with the verdict, no re-walk before the check (a compatible change merges
    # nothing): the rules read it from the plan, `explain` shows the ladder's edge
    art = planner.artifact
    assert [(c.entity, c.kind) for c in (art.observed or {})["O2"]] == [
        ("pkg.pricing.total", "compatible")]
    assert [r.event for r in art.audit][-3:-1] == ["observed", "passed"]
    proof = planner.explain("O2", "O1")
    assert proof.holds
    assert proof.goal == 'precedes("O2", "O1", "widen_before_rebind")'
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]


# the closing regression run (plan07 lint's repair) targets the whole package: it runs the
# package's tests and rewrites none of its code, so it holds no consumer
REGRESSION_RUN = {**ob("O2", "pkg", "lint repair: the plan ends with its regression run"),
                  "obligation": "validate", "validation": "regression", "dependencies": ["O1"],
                  "status": "blocked"}


@pytest.mark.parametrize("closing", [[], [REGRESSION_RUN]], ids=["alone", "with_regression_run"])
def test_a_breaking_edit_adds_the_rebind_of_a_consumer_the_plan_does_not_hold(
        tmp_path: Path, closing: list[dict[str, object]]) -> None:
    planner, repo = plan(tmp_path, [ob("O1", "pkg.pricing.total", "requirement"), *closing])
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "pkg" / "pricing.py").write_text(
        "def total(items, tax_rate, discount=0):\n"
        "    return sum(items) * (1 + tax_rate) - discount\n")
    verdict = planner.complete("O1")
    assert verdict.merged_into is not None
    assert not verdict.passed
    art = planner.artifact
    added = {o.target_entity: o for o in planner.obligations()
             if o.id != "O1" and o.obligation == "modify"}
    assert sorted(added) == ["pkg.cart.Cart.checkout", "tests.test_pricing.test_total"]
    cart = added["pkg.cart.Cart.checkout"]
    assert "observed change, recon calls" in cart.caused_by
    assert any(r.change.startswith(f"added {cart.id} (pkg.cart.Cart.checkout)")
               for r in art.revision_history)
    assert verdict.merged == sorted(o.id for o in added.values())
    (repo / "pkg" / "cart.py").write_text(CART.replace("total(self.items)",
                                                       "total(self.items, 0.0)"))
    (repo / "tests" / "test_pricing.py").write_text(
        "from pkg.pricing import total\n\n\ndef test_total():\n"
        "    assert total([1, 2], 0, 1) == 2\n")
    assert planner.next().node_id == verdict.merged_into  # type: ignore[union-attr]
    assert planner.complete(verdict.merged_into).passed


def test_only_the_consumers_whose_calls_no_longer_bind_are_added(tmp_path: Path) -> None:
    """`discount` removed: Cart.checkout calls `total(self.items)`, which still binds; the test
    passes it positionally, which does not: only the test gets a rebind, and it goes first (an
    optional parameter removed narrows: the test can stop passing it against the old form)."""
    planner, repo = plan(tmp_path, [ob("O1", "pkg.pricing.total", "requirement")])
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "pkg" / "pricing.py").write_text("def total(items):\n    return sum(items)\n")
    verdict = planner.complete("O1")
    art = planner.artifact
    assert art.observed is not None
    [change] = art.observed["O1"]
    assert (change.kind, change.consumers) == ("narrowing", ["tests.test_pricing.test_total"])
    added = [o for o in planner.obligations() if o.id != "O1"]
    assert [o.target_entity for o in added] == ["tests.test_pricing.test_total"]
    assert (verdict.merged_into, verdict.set_aside_for) == (None, [added[0].id])


def test_a_behaviour_change_lands_with_the_planned_rewrite_of_its_tests(tmp_path: Path) -> None:
    planner, repo = plan(tmp_path, [ob("O1", "pkg.pricing.total", "requirement"),
                                    ob("O2", "tests.test_pricing", "requirement")])
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "pkg" / "pricing.py").write_text(  # the same interface, another result
        "def total(items, discount=0):\n    return max(sum(items) - discount, 0)\n")
    verdict = planner.complete("O1")
    assert (verdict.merged_into, verdict.merged) == ("O1_atomic", ["O2"])
    assert any(line.startswith("behaviour:") for line in verdict.observed)


CART_TEST = ("from pkg.fmt import money\nfrom pkg.pricing import total\n\n\n"
             "def test_checkout():\n    assert money(total([1, 2])) == '3.00'\n")


@pytest.mark.parametrize("test", [
    CART_TEST,
    # it reaches money through the module alone: recon links no test to it, the import does
    CART_TEST.replace("from pkg.fmt import money", "from pkg import fmt").replace(
        "money(total", "getattr(fmt, 'mo' + 'ney')(total")], ids=["calls", "imports"])
def test_the_rewritten_tests_bring_every_pending_change_they_exercise(
        tmp_path: Path, test: str) -> None:
    """The planned rewrite of tests/test_cart.py lands with the observed behaviour change of
    total; those tests exercise pkg.fmt.money too, whose planned change has not landed (no edge
    links it to total): the rewritten tests cannot pass without it, so it joins the step (jinja
    cc792d8c91: tests/test_imports.py with environment.py, runtime.py, compiler.py)."""
    planner, repo = plan(
        tmp_path, [ob("O1", "pkg.pricing.total"), ob("O2", "pkg.fmt.money"),
                   ob("O3", "tests.test_cart")],
        {"pkg/__init__.py": "", "pkg/pricing.py": PRICING,
         "pkg/fmt.py": "def money(x):\n    return f'{x:.2f}'\n", "tests/test_cart.py": test,
         ".gitignore": "__pycache__/\n"})
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "pkg" / "pricing.py").write_text(
        "def total(items, discount=0):\n    return max(sum(items) - discount, 0)\n")
    verdict = planner.complete("O1")
    assert (verdict.merged_into, verdict.merged) == ("O1_atomic", ["O2", "O3"])
    proof = planner.explain("O2", "O3", violation="behaviour_change")
    assert proof.holds


def test_a_merged_step_that_grows_at_its_complete_is_not_checked_half_done(
        tmp_path: Path) -> None:
    """O1's behaviour change joins the rewrite of its tests (O1_atomic); the step's own edit
    then breaks the planned caller O3: O3 joins the same step, which keeps its id, and nothing
    is checked or completed until O3's edit is in."""
    planner, repo = plan(tmp_path, [ob("O1", "pkg.pricing.total", "requirement"),
                                    ob("O2", "tests.test_pricing", "requirement"),
                                    ob("O3", "pkg.cart.Cart.checkout", "requirement")])
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "pkg" / "pricing.py").write_text(
        "def total(items, discount=0):\n    return max(sum(items) - discount, 0)\n")
    first = planner.complete("O1")
    assert (first.merged_into, first.merged) == ("O1_atomic", ["O2"])
    assert planner.next().node_id == "O1_atomic"  # type: ignore[union-attr]
    (repo / "pkg" / "pricing.py").write_text(
        "def total(items, tax_rate, discount=0):\n"
        "    return max(sum(items) * (1 + tax_rate) - discount, 0)\n")
    (repo / "tests" / "test_pricing.py").write_text(
        "from pkg.pricing import total\n\n\ndef test_total():\n"
        "    assert total([1, 2], 0, 1) == 2\n")
    grown = planner.complete("O1_atomic")
    assert (grown.passed, grown.merged_into, grown.merged) == (False, "O1_atomic", ["O3"])
    assert grown.test_calls == 0
    states = {n.id: n.state for n in planner.artifact.nodes}
    assert states["O1_atomic"] != "complete"
    view = planner.next()
    assert view is not None
    assert view.node_id == "O1_atomic"
    (repo / "pkg" / "cart.py").write_text(CART.replace("total(self.items)",
                                                       "total(self.items, 0.0)"))
    assert planner.complete("O1_atomic").passed
    assert planner.next() is None


def test_a_merged_step_whose_change_binds_once_its_caller_landed_stays_one_step(
        tmp_path: Path) -> None:
    """Read again at the merged step's complete, the breaking change binds (its caller landed
    with it: compatible now). The step is checked as the one it was handed out as; it is not
    split back into its members (packaging f4463e2e: plan.json had been left naming a hand-out
    that no longer existed, and every later command refused it)."""
    files = {"pkg/__init__.py": "", "pkg/tok.py": "def enclosing(a):\n    return a\n",
             "pkg/parse.py": "from pkg.tok import enclosing\n\n\ndef parse(x):\n"
                             "    return enclosing(x)\n",
             "tests/test_parse.py": "from pkg.parse import parse\n\n\ndef test_parse():\n"
                                    "    assert parse('a')\n"}
    planner, repo = plan(tmp_path, [ob("O1", "pkg.parse.parse"), ob("O2", "pkg.tok.enclosing")],
                         files)
    assert planner.next().node_id == "O2"  # type: ignore[union-attr]
    (repo / "pkg" / "tok.py").write_text("def enclosing(a, around):\n    return around + a\n")
    assert planner.complete("O2").merged_into == "O1_atomic"
    assert planner.next().node_id == "O1_atomic"  # type: ignore[union-attr]
    (repo / "pkg" / "parse.py").write_text(files["pkg/parse.py"].replace(
        "enclosing(x)", "enclosing(x, '(')"))
    verdict = planner.complete("O1_atomic")
    assert verdict.passed, verdict.output_tail
    assert verdict.merged_into is None
    done = {n.id: n.state for n in Planner.at(tmp_path / "state").artifact.nodes}
    assert done["O1_atomic"] == "complete"


def test_a_behaviour_change_lands_with_tests_that_reach_it_through_imports(
        tmp_path: Path) -> None:
    """No test calls the changed function: the planned test module imports a module that imports
    it (packaging's tests/test_requirements.py reaches _parser through requirements.py). Its
    tests run the new behaviour all the same: the change and their rewrite land as one step."""
    planner, repo = plan(tmp_path, [ob("O1", "pkg.pricing.total", "requirement"),
                                    ob("O2", "tests.test_cart", "requirement")])
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "pkg" / "pricing.py").write_text(
        "def total(items, discount=0):\n    return max(sum(items) - discount, 0) * 2\n")
    verdict = planner.complete("O1")
    assert (verdict.merged_into, verdict.merged) == ("O1_atomic", ["O2"])
    proof = planner.explain("O1", "O2", violation="behaviour_change")
    assert proof.holds
    assert "tests/test_cart.py imports pkg.pricing, or a module that does" in \
        proof.model_dump_json()


APP = ("class App:\n    def log(self, exc):\n        return f'error: {exc}'\n\n"
       "    def handle(self, exc):\n        return self.log(exc)\n")
SUB_TEST = ("from pkg.app import App\n\n\ndef test_logging():\n    class Quiet(App):\n"
            "        def log(self, exc):\n            return 'quiet'\n\n"
            "    assert Quiet().handle('x') == 'quiet'\n")


def _override_repo(tmp_path: Path, obligations: list[dict[str, object]],
                   test: str = SUB_TEST) -> tuple[Planner, Path]:
    return plan(tmp_path, obligations, {"pkg/__init__.py": "", "pkg/app.py": APP,
                                        "tests/test_sub.py": test,
                                        ".gitignore": "__pycache__/\n"})


def _pass_the_context(repo: Path) -> None:
    """App.log takes the context first; its one call in the repository passes it."""
    (repo / "pkg" / "app.py").write_text(
        "class App:\n    def log(self, ctx, exc):\n        return f'{ctx}: {exc}'\n\n"
        "    def handle(self, exc, ctx='request'):\n        return self.log(ctx, exc)\n")


def test_a_breaking_edit_lands_with_the_planned_test_that_overrides_it(tmp_path: Path) -> None:
    """Every call of App.log binds after the edit, but a test makes a subclass overriding it in
    the old form (flask's test_suppressed_exception_logging): App.handle now calls that override
    with two arguments. Recon links no call from the test to App.log; the observed edit does."""
    planner, repo = _override_repo(tmp_path, [
        ob("O1", "pkg.app.App.log", "requirement"),
        ob("O2", "tests.test_sub.test_logging", "requirement")])
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    _pass_the_context(repo)
    verdict = planner.complete("O1")
    assert (verdict.merged_into, verdict.merged) == ("O1_atomic", ["O2"])
    art = planner.artifact
    assert art.observed is not None
    (change,) = [c for c in art.observed["O1"] if c.entity == "pkg.app.App.log"]
    assert (change.kind, change.consumers) == ("breaking", ["tests.test_sub.test_logging"])
    proof = planner.explain("O1", "O2", violation="breaking_change")
    assert proof.holds
    assert "no longer binds to pkg.app.App.log" in proof.model_dump_json()


def test_an_override_the_plan_does_not_hold_gets_its_rebind(tmp_path: Path) -> None:
    planner, repo = _override_repo(tmp_path, [ob("O1", "pkg.app.App.log", "requirement")])
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    _pass_the_context(repo)
    planner.complete("O1")
    added = [o for o in planner.obligations() if o.id != "O1"]
    assert [o.target_entity for o in added] == ["tests.test_sub.test_logging"]
    assert "an override" in added[0].caused_by + added[0].evidence


def test_an_override_already_in_the_new_form_is_no_consumer(tmp_path: Path) -> None:
    test = SUB_TEST.replace("def log(self, exc)", "def log(self, *args, **kw)")
    planner, repo = _override_repo(tmp_path, [ob("O1", "pkg.app.App.log", "requirement")], test)
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    _pass_the_context(repo)
    verdict = planner.complete("O1")
    assert verdict.merged_into is None
    assert any(line.startswith("compatible: pkg.app.App.log") for line in verdict.observed)


def test_the_plan_lint_leaves_a_rewrite_of_an_existing_test_where_it_is(tmp_path: Path) -> None:
    """The tests of pkg.app live in tests/test_app.py; a planned rewrite of the test in
    tests/test_sub.py (flask's test_subclassing.py) is no new test to move there."""
    replay = tmp_path / "completion.json"
    replay.write_text(json.dumps({"obligations": [
        ob("O1", "pkg.app.App.log", "requirement"),
        ob("O2", "tests.test_sub.test_logging", "requirement")]}))
    repo = make_repo(tmp_path, {
        "pkg/__init__.py": "", "pkg/app.py": APP, "tests/test_sub.py": SUB_TEST,
        "tests/test_app.py": "from pkg.app import App\n\n\ndef test_handle():\n"
                             "    assert App().handle('x') == 'error: x'\n",
        ".gitignore": "__pycache__/\n"})
    planner = Planner.create(REQUEST, repo=repo, llm=f"replay:{replay}",
                             state_dir=tmp_path / "state")
    (o2,) = [o for o in planner.obligations() if o.id == "O2"]
    assert o2.target_entity == "tests.test_sub.test_logging"
    assert not any("moved to" in r.change for r in planner.artifact.revision_history)


BASE = ("class Group:\n    name = None\n\n\nclass Base:\n    def __init__(self, name):\n"
        "        self.name = name\n        self.cli = Group()\n        self.cli.name = name\n")
WEB = ("from pkg.base import Base\n\n\nclass Web(Base):\n    def command(self):\n"
       "        return self.cli.name\n")
OTHER = ("from pkg.base import Base\n\n\nclass Other(Base):\n    def __init__(self, name):\n"
         "        super().__init__(name)\n        self.cli = object()\n")


def _field_repo(tmp_path: Path, obligations: list[dict[str, object]],
                web: str = WEB) -> tuple[Planner, Path]:
    return plan(tmp_path, obligations, {"pkg/__init__.py": "", "pkg/base.py": BASE,
                                        "pkg/web.py": web, "pkg/other.py": OTHER,
                                        ".gitignore": "__pycache__/\n"})


def _stop_setting_cli(repo: Path) -> None:
    """Base no longer sets `cli` on its instances (flask 5fdce4c331: the sansio Scaffold leaves
    it to Flask and Blueprint); Web reads it, Other sets its own."""
    (repo / "pkg" / "base.py").write_text(BASE.split("        self.cli = ")[0])


def test_a_class_that_stops_setting_a_field_waits_for_its_planned_subclass(
        tmp_path: Path) -> None:
    """No signature changes, no word of the kind: the edit narrows Base's field shape, so the
    planned subclass that does not set the field itself goes first (it sets it, against the old
    Base), and Base's edit comes again after it (flask 5fdce4c331)."""
    planner, repo = _field_repo(tmp_path, [ob("O1", "pkg.web.Web", "requirement"),
                                           ob("O2", "pkg.base.Base", "requirement")])
    assert planner.next().node_id == "O2"  # type: ignore[union-attr]
    _stop_setting_cli(repo)
    verdict = planner.complete("O2")
    assert (verdict.merged_into, verdict.set_aside_for) == (None, ["O1"])
    (change,) = [c for c in (planner.artifact.observed or {})["O2"] if c.fields]
    assert (change.entity, change.kind, change.fields, change.consumers) == (
        "pkg.base.Base", "narrowing", ["cli"], ["pkg.web.Web"])  # Other sets its own
    assert (repo / "pkg" / "base.py").read_text() == BASE  # put back, the edit saved
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "pkg" / "web.py").write_text(WEB.replace(
        "    def command", "    def __init__(self, name):\n        super().__init__(name)\n"
        "        self.cli = type('G', (), {'name': name})()\n\n    def command"))
    assert planner.complete("O1").passed
    assert planner.next().node_id == "O2"  # type: ignore[union-attr]
    _stop_setting_cli(repo)
    assert planner.complete("O2").passed  # Web sets it now: a behaviour change alone


def test_a_subclass_left_without_a_field_the_plan_does_not_hold_gets_its_rebind(
        tmp_path: Path) -> None:
    planner, repo = _field_repo(tmp_path, [ob("O1", "pkg.base.Base", "requirement")])
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    _stop_setting_cli(repo)
    planner.complete("O1")
    added = [o for o in planner.obligations() if o.id != "O1"]
    assert [o.target_entity for o in added] == ["pkg.web.Web"]
    assert "a subclass left without .cli" in added[0].caused_by + added[0].evidence


def test_a_field_every_subclass_sets_itself_is_no_breaking_change(tmp_path: Path) -> None:
    web = WEB.replace("    def command", "    def __init__(self, name):\n"
                      "        super().__init__(name)\n"
                      "        self.cli = type('G', (), {'name': name})()\n\n    def command")
    planner, repo = _field_repo(tmp_path, [ob("O1", "pkg.base.Base", "requirement")], web)
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    _stop_setting_cli(repo)
    verdict = planner.complete("O1")
    assert verdict.merged_into is None
    assert [o.id for o in planner.obligations()] == ["O1"]
    assert any(line.startswith("behaviour: pkg.base.Base no longer sets .cli")
               and "every subclass in the repository sets it itself" in line
               for line in verdict.observed)


def test_a_removed_or_renamed_test_is_no_breaking_change(tmp_path: Path) -> None:
    """Nothing calls a test: its removal (or rename) breaks no consumer, so it asks for no
    re-walk and merges nothing (jinja be83e7e06c renames a test method of test_filters)."""
    planner, repo = plan(tmp_path, [ob("O1", "tests.test_pricing", "requirement")])
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    (repo / "tests" / "test_pricing.py").write_text(
        "from pkg.pricing import total\n\n\ndef test_total_with_discount():\n"
        "    assert total([1, 2], 1) == 2\n")
    verdict = planner.complete("O1")
    assert verdict.merged_into is None
    assert "behaviour: renames function tests.test_pricing.test_total to " \
           "test_total_with_discount (a test: no code calls it)" in verdict.observed


def test_a_merged_step_that_waits_for_pending_work_takes_its_edit_along(
        tmp_path: Path) -> None:
    """O1's breaking edit merges it with its planned caller O2, which waits for O3 (declared):
    O3 goes first, and O1's edit does not stay in the tree under O3's hand-out (O3's check would
    run on a half-made change, and O3's reading of its edit would take O1's for its own). The
    edit is saved, the files go back, and the merged step's view brings the edit back."""
    files = {"pkg/__init__.py": "", "pkg/pricing.py": PRICING, "pkg/cart.py": CART,
             "pkg/other.py": "def f():\n    return 1\n",
             "tests/test_cart.py": "from pkg.cart import Cart\n\n\ndef test_checkout():\n"
                                   "    assert Cart([1, 2]).checkout() == 3\n",
             ".gitignore": "__pycache__/\n"}
    waits = {**ob("O2", "pkg.cart.Cart.checkout"), "dependencies": ["O3"], "status": "blocked"}
    planner, repo = plan(tmp_path, [ob("O1", "pkg.pricing.total"), waits,
                                    ob("O3", "pkg.other.f")], files)
    assert planner.next().node_id == "O1"  # type: ignore[union-attr]
    taxed = ("def total(items, tax_rate, discount=0):\n"
             "    return sum(items) * (1 + tax_rate) - discount\n")
    (repo / "pkg" / "pricing.py").write_text(taxed)
    verdict = planner.complete("O1")
    assert (verdict.passed, verdict.merged_into, verdict.merged, verdict.set_aside_for) == (
        False, None, ["O2"], ["O3"])
    assert "O1_atomic" in verdict.output_tail
    assert (repo / "pkg" / "pricing.py").read_text() == PRICING  # back at the checkpoint
    view = planner.next()
    assert view is not None
    assert (view.node_id, view.saved_edit) == ("O3", None)
    (repo / "pkg" / "other.py").write_text("def f():\n    return 2\n")
    done = planner.complete("O3")
    assert done.passed
    assert not any("pkg.pricing" in line for line in done.observed)  # its own edit alone
    view = planner.next()
    assert view is not None
    assert view.node_id == "O1_atomic"
    assert view.saved_edit is not None
    assert view.saved_edit.startswith("git stash apply --index ")
    for command in view.saved_edit.split(" && "):
        subprocess.run(command.split()[:1] + ["-C", str(repo), *command.split()[1:]],
                       check=True, capture_output=True)
    assert (repo / "pkg" / "pricing.py").read_text() == taxed
    (repo / "pkg" / "cart.py").write_text(CART.replace("total(self.items)",
                                                       "total(self.items, 0.0)"))
    assert planner.complete("O1_atomic").passed
    assert planner.artifact.set_aside in (None, {})
    assert planner.next() is None
