"""The A/B mechanics: faults off -> every strategy resolves with zero
retry tokens; a fault forced at a known obligation -> each strategy re-spends exactly what its
recovery rule says; skipping ordering shows broken intermediate states on a widening task.

A strategy's run is deterministic (a seeded executor, the same task, faults and ablation), so a
run that several tests read is made once per module (`runs`) and only read; its executor
records every context it was shown."""

from __future__ import annotations

import functools
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from plan07.ab.checker import Checker
from plan07.ab.executors import ScriptedExecutor
from plan07.ab.faults import FaultConfig
from plan07.ab.generator import generate_task
from plan07.ab.run import Ablation, RunResult
from plan07.ab.strategies import run_monolithic, run_plan07, run_static
from plan07.ab.tasks import Task, write_repo

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")


@functools.cache
def widen_task(size: int = 5) -> Task:
    for i in range(40):
        t = generate_task(8, i, size=size)
        if t.shape == "widen":
            return t
    raise AssertionError("no widen task")


@functools.cache
def validate_task() -> Task:
    return next(t for t in (generate_task(2, i, size=3) for i in range(40))
                if any(s.obligation.obligation == "validate" for s in t.steps))


class _Recording(ScriptedExecutor):
    def __init__(self, seed: int, faults: FaultConfig) -> None:
        super().__init__(seed, faults)
        self.contexts: list[str] = []

    def call(self, context: str, asked: list[str]):  # type: ignore[no-untyped-def]
        self.contexts.append(context)
        return super().call(context, asked)


@dataclass(frozen=True)
class Run:
    result: RunResult
    contexts: list[str]  # what the executor was shown, call by call
    state: Path  # the plan07 strategy's state dir


Runs = Callable[..., Run]


def run(name: str, task: Task, tmp: Path, checker: Checker, faults: FaultConfig,
        ablation: Ablation | None = None) -> Run:
    repo = write_repo(task, tmp / name / "repo")
    ex = _Recording(3, faults)
    if name == "monolithic":
        r = run_monolithic(task, repo, ex, checker, 2)
    elif name == "static":
        r = run_static(task, repo, ex, checker, 2)
    else:
        r = run_plan07(task, repo, ex, checker, 2, state_dir=tmp / name / "state",
                       ablation=ablation, engine="clingo")
    return Run(r, ex.contexts, tmp / name / "state")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, checker: Checker) -> Runs:
    """`runs(name, task, faults, ablation=None)`: that run, made the first time a test asks."""
    made: dict[tuple[object, ...], Run] = {}

    def get(name: str, task: Task, faults: FaultConfig, ablation: Ablation | None = None) -> Run:
        key = (name, task.digest(), faults, ablation or Ablation())
        if key not in made:
            made[key] = run(name, task, tmp_path_factory.mktemp(name), checker, faults, ablation)
        return made[key]

    return get


OFF = FaultConfig(enabled=False)


def _callee_fault(task: Task) -> tuple[str, FaultConfig]:
    callee = next(s for s in task.steps if s.obligation.target_entity.endswith(".fmt_w0"))
    return callee.id, FaultConfig(force=((callee.id, "wrong_arg_name", 1),))


@pytest.mark.parametrize("name", ["monolithic", "static", "plan07"])
def test_faults_off_everything_resolves_with_zero_retry_tokens(runs: Runs, name: str) -> None:
    for task in (widen_task(), generate_task(2, 5, size=3)):
        r = runs(name, task, OFF).result
        assert r.resolved, (task.id, r.note)
        assert r.retry_tokens == 0
        assert r.retry_calls == 0
        assert r.faults_hit == []
        assert r.tokens > 0


@pytest.mark.parametrize("force", [False, True])
def test_gate_off_shows_the_executor_what_the_full_plan07_shows(runs: Runs, force: bool) -> None:
    """§7.5 isolation: gate off changes what is checked after each node (`compile`), not what
    the executor reads -- the same check, required validation and criteria as the full plan07,
    so a difference in the numbers is the gate's, not a shorter prompt's. With a fault forced at
    the callee (a merged node after its failure), the first prompts agree up to the failure. The
    gate's own note on a check (it passed at CP0, README "No false done") is the gate's output,
    ablated with it: not compared."""
    task = widen_task()
    faults = _callee_fault(task)[1] if force else OFF

    def unnoted(contexts: list[str]) -> list[str]:
        return [re.sub(r"^check_note: .*\n", "", c, flags=re.M) for c in contexts]

    full = unnoted(runs("plan07", task, faults, Ablation()).contexts)
    nogate = unnoted(runs("plan07", task, faults, Ablation(gate=False)).contexts)
    assert "compile" not in full[0]
    if force:  # the faulty first attempt is shown the same prompt; what follows differs
        assert nogate[0] == full[0]
        assert "check: pytest" in nogate[0]
    else:
        assert nogate == full


def test_a_slip_in_the_callees_own_body_is_retried_alone(runs: Runs) -> None:
    """The callee's slip (a misspelt name in its own body) fails its own test: the failure is
    the node's, so it is offered again alone with its digest; no other work is merged into it
    (plan07.plan.backstop merges only when the failing tests exercise other pending work)."""
    task = widen_task()
    callee, faults = _callee_fault(task)
    r = runs("plan07", task, faults).result
    assert r.resolved, r.note
    asked = [c["asked"] for c in r.call_log]
    assert asked[:2] == [[callee], [callee]]
    assert r.call_log[1]["retry"]


def _forced(task: Task) -> tuple[str, FaultConfig]:
    rebind = next(s for s in task.steps if s.obligation.target_entity.split(".")[-1]
                  .startswith("show_"))
    return rebind.id, FaultConfig(force=((rebind.id, "wrong_arg_name", 1),))


def test_forced_fault_monolithic_reruns_the_whole_prompt_once(runs: Runs) -> None:
    task = widen_task()
    oid, faults = _forced(task)
    r = runs("monolithic", task, faults).result
    assert r.resolved
    assert r.faults_hit == [f"{oid}:wrong_arg_name"]
    assert len(r.call_log) == 2
    first, again = r.call_log
    assert again["asked"] == [s.id for s in task.steps]  # the whole prompt, every obligation
    assert again["retry"]
    assert r.retry_tokens == again["tokens"]
    assert r.retry_calls == 1


def test_forced_fault_static_reruns_step_k_and_everything_after(runs: Runs) -> None:
    task = widen_task()
    oid, faults = _forced(task)
    # With no runtime state, static localizes the failure at the first listed step whose check
    # fails at the end: the faulty step's own check, or an earlier-listed check that runs it.
    test = task.step(oid).obligation.validation
    k = next(j for j, s in enumerate(task.steps) if s.obligation.validation == test
             or (s.obligation.validation.startswith("pytest:")
                 and test.startswith(s.obligation.validation.removeprefix("pytest:"))))
    assert k <= [s.id for s in task.steps].index(oid)
    r = runs("static", task, faults).result
    assert r.resolved
    retried = [c for c in r.call_log if c["retry"]]
    assert [c["asked"] for c in retried] == [[s.id] for s in task.steps[k:]]
    assert r.retry_tokens == sum(c["tokens"] for c in retried)
    first_pass = r.call_log[: len(task.steps)]
    assert not any(c["retry"] for c in first_pass)


def test_forced_fault_plan07_reruns_only_the_failed_node(runs: Runs) -> None:
    from plan07 import Planner

    task = widen_task()
    oid, faults = _forced(task)
    done = runs("plan07", task, faults)
    r = done.result
    assert r.resolved
    retried = [c for c in r.call_log if c["retry"]]
    assert [c["asked"] for c in retried] == [[oid]]  # its true dependents had not run yet
    usage = Planner.open(done.state / "plan1").usage
    replans = sum(u.prompt_tokens + u.completion_tokens for u in usage[1:])
    assert r.retry_plan_tokens == replans
    assert r.retry_tokens == retried[0]["tokens"] + replans
    assert r.plan_tokens == sum(u.prompt_tokens + u.completion_tokens for u in usage)


def test_skipping_ordering_breaks_intermediate_states_on_a_widening_task(runs: Runs) -> None:
    task = widen_task(7)
    ordered = runs("plan07", task, OFF).result
    assert ordered.steps
    assert all(ordered.steps), "plan07 with ordering keeps every step valid"
    listed = runs("static", task, OFF).result
    assert not all(listed.steps), "the listed order narrows before the consumers are rebound"
    assert listed.resolved  # the end state is fine: only the middle was broken
    unordered = runs("plan07", task, OFF, Ablation(ordering=False)).result
    assert not all(unordered.steps)


@pytest.mark.parametrize(("broken", "fed"), [(set(), 0), ({"tests/w0/test_a.py::test_x"}, 1)])
def test_revision_trigger_feeds_broken_tests_as_impact_feedback(
        tmp_path: Path, checker: Checker, broken: set[str], fed: int) -> None:
    from plan07.ab.planned import _Drive
    from plan07.ab.run import Session
    from plan07.model import Evidence
    from plan07.vocab import dotted_test as _test_entity

    task = widen_task()
    s = Session("plan07", task, write_repo(task, tmp_path / "r"), ScriptedExecutor(0), checker, 2)
    d = _Drive(s, tmp_path / "state", Ablation(), "clingo")
    p = d.plan(list(task.obligations), Evidence(), retry=False)  # no recon: any end is known
    view = p.next()
    seen: list[object] = []
    real = p.feedback
    p.feedback = lambda fb: (seen.append(fb), real(fb))[1]  # type: ignore[method-assign]
    d._feedback(p, view, broken)
    assert len(seen) == fed
    assert s.result.feedbacks == fed
    if fed:
        (fb,) = seen
        assert fb.caused_by == view.node_id  # type: ignore[attr-defined]
        (edge,) = fb.impact_edges  # type: ignore[attr-defined]
        assert (edge.src, edge.dst) == (view.target_entity, "tests.w0.test_a.test_x")
    assert _test_entity("tests/a/test_b.py::test_c[1]") == "tests.a.test_b.test_c"


@pytest.mark.parametrize("name", ["static", "plan07"])
def test_a_validate_step_with_nothing_to_fix_makes_no_model_call(runs: Runs, name: str) -> None:
    task = validate_task()
    validate = {s.id for s in task.steps if s.obligation.obligation == "validate"}
    r = runs(name, task, OFF).result
    assert r.resolved, r.note
    called = [c for c in r.call_log if not c.get("check_only")]
    checked = [c for c in r.call_log if c.get("check_only")]
    assert {o for c in checked for o in c["asked"]} == validate
    assert all(c["tokens"] == 0 for c in checked)
    assert not validate & {o for c in called for o in c["asked"]}
    assert r.calls == len(called) == len(task.steps) - len(validate)


def test_a_set_aside_edit_comes_back_by_the_views_command_without_a_model_call(
        tmp_path: Path) -> None:
    """The A/B harness does what a set-aside node's view says (`saved_edit`): the edit is back,
    as whole-file edits a failed check can revert; anything but `git stash apply` is refused."""
    from plan07.ab.edits import bring_back, revert_all

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True,
                              capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    (tmp_path / "m.py").write_text("def f(a, b=0):\n    return a\n")
    git("add", "-A")
    git("-c", "user.name=U", "-c", "user.email=u@example.com", "commit", "-q", "-m", "init")
    (tmp_path / "m.py").write_text("def f(a):\n    return a\n")
    ref = git("stash", "create")
    git("checkout", "--", "m.py")
    applied = bring_back(tmp_path, f"git stash apply --index {ref}", ["m.py"])
    assert applied is not None
    assert (tmp_path / "m.py").read_text() == "def f(a):\n    return a\n"
    revert_all(tmp_path, applied)
    assert (tmp_path / "m.py").read_text() == "def f(a, b=0):\n    return a\n"
    assert bring_back(tmp_path, "rm -rf .", ["m.py"]) is None


def test_the_entities_of_a_node_folded_into_a_step_after_its_pass_are_its_steps() -> None:
    """Impact feedback given after a node passed can fold it into a cycle with what it adds
    (jinja be83e7e06c, packaging 1277904652 crashed the A/B unit with StopIteration)."""
    from types import SimpleNamespace

    from plan07.ab.feedback import changed_entities

    step = SimpleNamespace(id="O2_cycle", members=["O2", "O5"], cycle_collapsed=True,
                           target_entity="a.f + b.g")
    obligations = [SimpleNamespace(id="O2", target_entity="a.f"),
                   SimpleNamespace(id="O5", target_entity="b.g")]
    art = SimpleNamespace(nodes=[step])
    assert changed_entities(art, obligations, "O2") == ["a.f", "b.g"]  # type: ignore[arg-type]
    assert changed_entities(art, obligations, "O9") == []  # type: ignore[arg-type]
