"""The gate's verdict over one test run, against the baseline taken at CP0 (§3.5 step 1). Pure.

- The baseline: at CP0 the plan's tests are run once (every test file its checks name, every
  test path, the tests that reach a modify target through the recon graph) and each test's
  outcome is recorded (`Baseline`, kept in the state dir beside plan.json).
- green (a node validated by a named test): the node's own named test passes, and no test that
  passed at the baseline fails now (SWE-bench's PASS_TO_PASS semantics). A test that already
  failed at the baseline, or that did not exist then, is reported, never blamed on the node.
- suite (a `pytest:<path>` check, or the tests reaching a modify target): no test that passed
  at the baseline fails now, and at least one test ran.
- red (a node that defines a test): the test exists, is collected, and fails in its body (an
  assertion, or an exception the call raises), not at collection or setup (an import or syntax
  error). A test that already passes is refused, unless the change it pins has landed already.
- A blamed failure caused by a module the environment lacks (not the repo's own) makes the
  verdict an environment problem: never the node's failure (`Judgement.environment`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from plan07.gate.interpreter import Interpreter
from plan07.gate.outcomes import Outcome
from plan07.gate.runner import TIMED_OUT, TestRun, environment_problem

Mode = Literal["green", "suite", "red"]
FAILING = ("failed", "error")
LIST_MAX = 8  # ids named in a one-line summary


@dataclass(frozen=True)
class Baseline:
    """The outcome of every test the CP0 run reported (`outcomes`: node id -> status), or
    only its exit status when the test command reports no per-test results."""

    rc: int | None
    outcomes: Mapping[str, str] | None
    scope: tuple[str, ...] = ()

    def passed(self, test: str) -> bool:
        """True when `test` (a node id, or a file for a collection error) passed at CP0; a file
        counts as passing when it was collected (some test of it ran) with no error of its own."""
        if self.outcomes is None:
            return False
        s = self.outcomes.get(test)
        if s is not None:
            return s == "passed"
        if "::" not in test:  # a collection error now, on a file that collected at CP0
            return any(k.startswith(test + "::") for k in self.outcomes)
        return False

    def covers(self, test: str) -> bool:
        """True when the CP0 run ran `test`'s file (or a folder holding it): a test of such a
        file absent from the record did not exist then. False: its CP0 outcome is unknown."""
        path = test.split("::", 1)[0]
        return any(s in (".", "") or path == s.rstrip("/") or path.startswith(s.rstrip("/") + "/")
                   for s in self.scope)

    def failing(self) -> list[str]:
        if self.outcomes is None:
            return []
        return sorted(k for k, s in self.outcomes.items() if s in FAILING)

    def to_json(self) -> dict[str, object]:
        return {"rc": self.rc, "outcomes": dict(self.outcomes) if self.outcomes is not None
                else None, "scope": list(self.scope)}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Baseline:
        outcomes = data.get("outcomes")
        rc = data.get("rc")
        scope = data.get("scope") or []
        return cls(rc if isinstance(rc, int) else None,
                   {str(k): str(v) for k, v in outcomes.items()}
                   if isinstance(outcomes, dict) else None,
                   tuple(str(s) for s in scope) if isinstance(scope, list) else ())


@dataclass
class Judgement:
    """What one run proves for a node: passed, or an environment problem (not the node's
    failure), with the pre-existing failures reported and the blamed ones named."""

    passed: bool
    summary: str
    environment: str | None = None
    blamed: list[str] = field(default_factory=list)
    preexisting: list[str] = field(default_factory=list)
    ran: int = 0
    # passing now, not passing at CP0 (failing then, or written since): what proves a change
    fixed: list[str] = field(default_factory=list)
    # failing now, and the CP0 run never ran them: blamed, unless the CP0 content says they
    # failed then too (`resolve`)
    unknown: list[str] = field(default_factory=list)


def owns(test: str, nodeid: str) -> bool:
    """True when `nodeid` is `test` or one of its parametrizations / members."""
    return nodeid == test or nodeid.startswith((test + "::", test + "["))


def _names(ids: Iterable[str]) -> str:
    ids = list(ids)
    more = f" (+{len(ids) - LIST_MAX} more)" if len(ids) > LIST_MAX else ""
    return ", ".join(ids[:LIST_MAX]) + more


def timed_out_text(output: str) -> str:
    """The one line a check that ran out of time gets (the runner's last line says after how
    long): not judged, and how to give it more time."""
    last = next((ln.strip() for ln in reversed(output.splitlines()) if ln.strip()), "")
    when = last if last.startswith(TIMED_OUT) else "the check timed out"
    return (f"{when}, before the tests could judge the change: give it more time "
            "(`plan07 complete ID --timeout SECONDS`)")


def _first_line(message: str) -> str:
    return next((ln.strip() for ln in message.splitlines() if ln.strip()), "")[:160]


def judge(run: TestRun, *, mode: Mode, own: Sequence[str], baseline: Baseline | None,
          repo: Path, interp: Interpreter, landed: bool = False) -> Judgement:
    """The verdict of `run` for a node (see the module docstring). `own`: the node's named
    tests (green, red); `landed`: a change the red test pins has been validated already."""
    if run.timed_out:  # the clock, not the code: inconclusive, never the node's failure
        why = timed_out_text(run.output)
        return Judgement(False, why, environment=why)
    if run.outcomes is None:
        return _judge_exit(run, mode=mode, baseline=baseline, repo=repo, interp=interp,
                           landed=landed)
    outcomes = run.outcomes
    ran = sum(1 for k in outcomes if "::" in k)  # tests, not a file's collection error
    mine = {k: o for k, o in outcomes.items() if any(owns(t, k) for t in own)}
    missing = [t for t in own if not any(owns(t, k) for k in mine)]
    if mode == "red":
        return _judge_red(run, mine, missing, repo=repo, interp=interp, landed=landed)
    blamed: list[str] = [f"{t} (not collected)" for t in missing]
    texts: list[str] = []
    pre: list[str] = []
    unknown: list[str] = []
    for k, o in sorted(outcomes.items()):
        if o.status not in FAILING:
            continue
        if k in mine or (baseline is None or baseline.passed(k)):
            blamed.append(k)
            texts.append(o.message)
        elif "::" in k and not baseline.covers(k):
            unknown.append(k)  # blamed until the CP0 content says otherwise (`resolve`)
            blamed.append(k)
            texts.append(o.message)
        else:
            pre.append(k)
    fixed = sorted(k for k, o in outcomes.items() if o.status == "passed" and "::" in k
                   and baseline is not None and not baseline.passed(k)
                   and (baseline.covers(k) or any(owns(t, k) for t in own)))
    if missing and not outcomes:
        texts.append(run.output)
    env = environment_problem(run, repo, interp, texts) if (blamed or run.rc not in (0, 1)) \
        else None
    if env and (texts or not outcomes):
        return Judgement(False, env, environment=env, blamed=blamed, preexisting=pre, ran=ran)
    return _summed(outcomes, blamed, pre, ran, fixed, unknown, run.rc)


def _summed(outcomes: Mapping[str, Outcome], blamed: list[str], pre: list[str], ran: int,
            fixed: list[str], unknown: list[str], rc: int | None) -> Judgement:
    note = f"; pre-existing failures, not blamed: {_names(pre)}" if pre else ""
    if unknown:
        note += f"; not run at CP0, so blamed: {_names(unknown)}"
    if blamed:
        first = next((_first_line(outcomes[k].message) for k in blamed if k in outcomes), "")
        why = f" ({first})" if first else ""
        return Judgement(False, f"failed: {_names(blamed)}{why}{note}", blamed=blamed,
                         preexisting=pre, ran=ran, fixed=fixed, unknown=unknown)
    if not outcomes:
        return Judgement(False, f"no test ran (exit {rc})", ran=0)
    passed = sum(1 for o in outcomes.values() if o.status == "passed")
    return Judgement(True, f"{passed} passed{note}", preexisting=pre, ran=ran, fixed=fixed)


def resolve(j: Judgement, run: TestRun, at_cp0: Mapping[str, str]) -> Judgement:
    """`j` once the CP0 content ran its `unknown` tests (`at_cp0`: id -> status there): one
    that passed then is blamed, one that failed then (or did not exist) is pre-existing."""
    if not j.unknown or run.outcomes is None:
        return j
    late = [t for t in j.unknown if at_cp0.get(t) != "passed"]
    blamed = [b for b in j.blamed if b not in late]
    return _summed(run.outcomes, blamed, sorted({*j.preexisting, *late}), j.ran, j.fixed, [],
                   run.rc)


def _judge_red(run: TestRun, mine: Mapping[str, Outcome], missing: Sequence[str], *,
               repo: Path, interp: Interpreter, landed: bool) -> Judgement:
    if missing:
        env = environment_problem(run, repo, interp, [run.output])
        if env:
            return Judgement(False, env, environment=env)
        return Judgement(False, f"red: {_names(missing)} is not collected: write the test "
                         "first (it must exist and fail for an assertion)", blamed=list(missing))
    errors = {k: o for k, o in mine.items() if o.status == "error"}
    # a body that fails: an assertion, an exception the call raises, or a body that fails
    # under a non-strict xfail marker (an anchor test, defined early, docs/plan.md)
    failed = {k: o for k, o in mine.items() if o.status in ("failed", "xfailed")}
    if errors or failed:
        env = environment_problem(run, repo, interp,
                                  [o.message for o in (*errors.values(), *failed.values())])
        if env:
            return Judgement(False, env, environment=env)
    if errors:
        k, o = next(iter(sorted(errors.items())))
        return Judgement(False, f"red: {k} errors at collection or setup "
                         f"({_first_line(o.message)}), not in its body: an import or syntax "
                         "error proves nothing; make it fail for an assertion",
                         blamed=sorted(errors))
    if failed:
        k, o = next(iter(sorted(failed.items())))
        how = "fails under its xfail marker" if o.status == "xfailed" else "fails"
        return Judgement(True, f"red as it should be: {k} {how} ({_first_line(o.message)})",
                         ran=len(mine))
    if landed:
        return Judgement(True, f"green already: {_names(mine)} passes and the change it pins "
                         "was validated before it", ran=len(mine))
    return Judgement(False, f"red: {_names(mine)} passes before the change: a test defined "
                     "first must fail for an assertion until the fix lands",
                     blamed=sorted(mine))


def _judge_exit(run: TestRun, *, mode: Mode, baseline: Baseline | None, repo: Path,
                interp: Interpreter, landed: bool) -> Judgement:
    """A command that reports no per-test results: its exit status alone."""
    env = environment_problem(run, repo, interp)
    if env:
        return Judgement(False, env, environment=env)
    tail = _first_line(run.output.strip().splitlines()[-1]) if run.output.strip() else ""
    if mode == "red":
        if run.rc == 0:
            if landed:
                return Judgement(True, "green already: the change it pins was validated "
                                 "before it", ran=1)
            return Judgement(False, "red: the test passes before the change; a test defined "
                             "first must fail until the fix lands")
        if any(w in run.output for w in ("SyntaxError", "ImportError", "ModuleNotFoundError")):
            return Judgement(False, f"red: the test command failed on an import or syntax "
                             f"error ({tail}), not for an assertion")
        return Judgement(True, f"red as it should be: exit {run.rc}", ran=1)
    if run.rc == 0:
        return Judgement(True, "the test command passed", ran=1)
    note = ("; it failed at the baseline too, and without per-test results ({junitxml}) "
            "plan07 cannot tell a new failure from an old one"
            if baseline is not None and baseline.rc not in (0, None) else "")
    return Judgement(False, f"the test command failed (exit {run.rc}): {tail}{note}")
