"""§3.1 step 2 / §3.5 when a plan may terminate: every acceptance criterion with how (and whether)
it is settled, and the blockers that keep a plan from terminating. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from plan07.model import GateRecord, PlanArtifact, PlanNode, Verdict
from plan07.vocab import NODE_ID_IN_TEXT, REGRESSION_CRITERION, classify, runs

# §3.1 step 2 / §3.5: when may a plan terminate? Every scheduled node validated by a runnable
# check, and every acceptance criterion settled:
#   check    - it names pytest node ids (or is "`pytest [PATHS]` succeeds"): settled when each is
#              run by the validation of a complete node (the same id, a class/function prefix of
#              it, or `pytest:<dir or file>` holding it), or when the user confirmed it;
#   command  - "`CMD` succeeds" for any other command: plan07 never runs commands, so only the
#              user can settle it (`plan07 confirm N`);
#   derived  - the request named no criterion and these were derived (needs_confirmation): the
#              user must confirm them, a plan may not terminate on an unconfirmed one;
#   named    - a behaviour the request named in prose: no check names it, the spec counts it a
#              legal terminal once every scheduled node's validation passed, and (no false
#              "done") an executed test proved a complete node that addresses it
#              (`proved_by_test`: a test that did not pass at CP0 passes now; a check that
#              passed on the untouched tree proves nothing); else the user confirms it;
#   regression - "existing tests keep passing" and its kin: settled by the plan's regression
#              run alone (README "No false done"), when it ran at least one test.
_COMMAND_CRITERION = re.compile(r"^`(?P<cmd>[^`]+)` succeeds$")
_PYTEST_QUIET_OPTS = {"-q", "-qq", "-x", "-v", "-vv", "--quiet", "--verbose", "-rA"}
CriterionKind = Literal["check", "command", "derived", "named", "regression"]


@dataclass(frozen=True)
class Criterion:
    """One acceptance criterion and how it is settled (see the rule above). Pure value."""

    index: int  # 1-based, as `plan07 confirm N` takes it
    text: str
    kind: CriterionKind
    checks: tuple[str, ...]  # the pytest ids / paths a `check` criterion names
    covered_by: tuple[str, ...]  # complete nodes whose validation runs every one of them
    confirmed: bool
    proved: bool = True  # named: an executed test proved a node addressing it

    @property
    def settled(self) -> bool:
        return (self.kind in ("named", "regression") and self.proved) or self.confirmed \
            or bool(self.covered_by)

    @property
    def confirmable(self) -> bool:
        """`plan07 confirm --all` confirms these (a `check` one only by its number)."""
        return self.kind in ("derived", "command") and not self.settled

    def blocker(self) -> str | None:
        if self.settled:
            return None
        quoted = f"criterion {self.index} {self.text[:80]!r}"
        if self.kind == "derived":
            return (f"{quoted} was derived, not named (requirement.needs_confirmation, §3.1): "
                    f"confirm it with `plan07 confirm {self.index}` (or `--all`)")
        if self.kind == "command":
            return (f"{quoted} is a command plan07 never runs: run it yourself, then "
                    f"`plan07 confirm {self.index}`")
        if self.kind == "named":
            return (f"{quoted} was proved by no test that failed at CP0 and passes now (a "
                    "check that passed on the untouched tree proves nothing): check it "
                    f"yourself, then `plan07 confirm {self.index}`")
        if self.kind == "regression":
            return (f"{quoted} is settled by the plan's regression run alone, and none ran a "
                    f"test yet: complete the `regression` node (or `plan07 confirm "
                    f"{self.index}` when no test can reach the change)")
        return (f"{quoted} names {', '.join(self.checks)}, which no complete node's "
                f"validation runs; plan a validate obligation for it, or check it yourself and "
                f"`plan07 confirm {self.index}`")


def _pytest_command(cmd: str) -> list[str] | None:
    """The test ids/paths `pytest ...` (or `python -m pytest ...`) runs; None for any other
    command or one with options that change what runs."""
    argv = cmd.split()
    if argv[:1] in (["pytest"], ["py.test"]):
        args = argv[1:]
    elif len(argv) >= 3 and argv[0] in ("python", "python3") and argv[1:3] == ["-m", "pytest"]:
        args = argv[3:]
    else:
        return None
    if any(a.startswith("-") and a not in _PYTEST_QUIET_OPTS for a in args):
        return None
    return [a.rstrip("/") or "." for a in args if not a.startswith("-")] or ["."]


def criteria_status(artifact: PlanArtifact) -> list[Criterion]:
    """Every acceptance criterion of the plan with how (and whether) it is settled. Pure."""
    done: list[tuple[str, str]] = []  # (node id, validation) of complete nodes, members too
    for n in artifact.nodes:
        if n.state != "complete":
            continue
        members = artifact.collapsed.get(n.id) or []
        done += [(n.id, m.validation) for m in members] or [(n.id, n.validation)]
    confirmed = set(artifact.confirmed_criteria or [])
    out = []
    for i, text in enumerate(artifact.requirement.acceptance_criteria, start=1):
        m = _COMMAND_CRITERION.match(text.strip())
        checks = _pytest_command(m["cmd"]) if m else None
        if checks is None:
            checks = NODE_ID_IN_TEXT.findall(text)
        kind: CriterionKind
        if checks:
            kind = "check"
        elif m:
            kind = "command"
        elif REGRESSION_CRITERION.search(text):
            kind = "regression"
        else:
            kind = "derived" if artifact.requirement.needs_confirmation else "named"
        covered = tuple(sorted({nid for c in checks for nid, v in done if runs(v, c)}))
        if checks and not all(any(runs(v, c) for _, v in done) for c in checks):
            covered = ()
        proved = (regression_ran(artifact) if kind == "regression" else
                  kind != "named" or proved_by_test(artifact, i, text))
        out.append(Criterion(i, text, kind, tuple(checks), covered, i in confirmed, proved))
    return out


def termination_blockers(artifact: PlanArtifact) -> list[str]:
    """Why the plan may not terminate (empty = it may). Pure.

    §3.1 step 2 / design.md: a checkable predicate is the only legal terminal, so a plan cannot
    terminate while a scheduled node's validation is unverifiable or not passed, nor while an
    acceptance criterion is unsettled (`criteria_status`: a derived one unconfirmed, a named
    test no complete validation runs, a command nobody confirmed), nor when its modify nodes
    changed no file (`gate_blockers`).
    """
    out: list[str] = [f"halted: {artifact.halted}"] if artifact.halted else []
    for n in artifact.nodes:
        if n.status == "alternative":
            continue
        checks = [m.validation for m in artifact.collapsed.get(n.id) or []] or [n.validation]
        bad = [c for c in checks if classify(c) == "unverifiable"]
        spent = artifact.bounds.get(n.id)
        if bad:
            out.append(f"{n.id}: validation {bad[0]!r} is unverifiable")
        elif n.state == "failed" and spent and spent.retries > artifact.max_retries:
            out.append(f"{n.id}: failed and its retries are spent (max_retries "
                       f"{artifact.max_retries}): `plan07 feedback` or `plan07 rollback`")
        elif n.state != "complete":
            out.append(f"{n.id}: not complete (state {n.state})")
    out += [b for c in criteria_status(artifact) if (b := c.blocker())]
    out += gate_blockers(artifact)  # no false "done": no modify changed any file
    return out


def can_terminate(artifact: PlanArtifact) -> bool:
    """True iff `termination_blockers(artifact)` is empty. Pure."""
    return not termination_blockers(artifact)


# ---------------------------------------------------------------------------------------------
# what the gate certified (§3.5): notes a pass leaves on the plan, and the rules that read them


def record_pass(art: PlanArtifact, node: PlanNode, verdict: Verdict, tree: str | None) -> None:
    """Note on the plan what a passing check ran on: the content, whether it changed since the
    previous validated state, whether an executed test proved it."""
    if art.gate is None:
        return
    prev = [r.tree for r in art.gate.validated.values() if r.tree]
    before = prev[-1] if prev else art.gate.cp0_tree
    # proved: a test that did not pass on the untouched tree passes now (red, then green); a
    # check that passed at CP0 proves nothing about the change
    art.gate.validated[node.id] = GateRecord(
        tree=tree, changed=tree != before, proved=bool(verdict.fixed),
        regression=verdict.kind == "regression", ran=verdict.ran)


def gate_blockers(art: PlanArtifact) -> list[str]:
    """Why the gate will not let the plan terminate (no false "done", docs/safety.md): modify nodes
    were planned and none of the validated ones changed any file."""
    if art.gate is None:
        return []
    mods = [n for n in art.nodes if n.obligation == "modify" and n.status != "alternative"]
    if not mods:
        return []
    recs = art.gate.validated
    if not any(recs[n.id].changed for n in mods if n.id in recs):
        if all(n.state == "complete" for n in mods):
            return ["no modify node changed any file: the plan's changes were never made "
                    "(every validated modify ran on the content of CP0 or of the step before "
                    "it)"]
        return []
    if not any(r.regression for r in recs.values()):
        return ["no regression run: the plan terminates only after the tests of every module "
                "it changed ran against CP0 (complete its `regression` node)"]
    return []


def regression_ran(art: PlanArtifact) -> bool:
    """The plan's regression run passed over at least one test (plan made before the gate
    recorded its world: True)."""
    if art.gate is None:
        return True
    return any(r.regression and r.ran > 0 for r in art.gate.validated.values())


def check_note(art: PlanArtifact, node: PlanNode) -> str | None:
    """What the driver view says of a node's check (README "No false done"): a check that
    passed at CP0 on the untouched tree proves nothing about the change; a baseline not taken
    yet is taken first. None: nothing to say."""
    gate = art.gate
    if gate is None:
        return None
    if gate.baseline_deferred:
        return ("the CP0 baseline is not taken yet: `plan07 complete` takes it first, on the "
                "CP0 content, with an interpreter that can run the tests (`--python PATH`)")
    if node.id in gate.passed_at_cp0:
        return ("this check passed at CP0 on the untouched tree: passing it proves nothing "
                "about the change, only that its tests still pass; a test that fails before "
                "the change and passes after it does, and the regression run ends the plan")
    return None


def proved_by_test(art: PlanArtifact, index: int, text: str) -> bool:
    """A named criterion is settled only when an executed test proved a node that addresses it
    (a complete node whose caused_by cites it; if none cites it, any complete node): a test
    that did not pass at CP0 passes now; or, for what a preserve guards (the old default), its
    tests passed again once the plan had changed the tree. True for a plan made before the gate
    recorded its world."""
    if art.gate is None:
        return True
    done = [n for n in art.nodes if n.state == "complete"]
    key = text.strip()[:60]
    cited = [n for n in done if re.search(rf"\bcriterion {index}\b", n.caused_by)
             or (key and key in n.caused_by)]
    recs, cp0 = art.gate.validated, art.gate.cp0_tree
    return any(recs[n.id].proved or (guards(art, n) and recs[n.id].ran > 0
                                     and recs[n.id].tree != cp0)
               for n in (cited or done) if n.id in recs)


def guards(art: PlanArtifact, node: PlanNode) -> bool:
    """A node that proves what it guards by passing after the change: a preserve, or the
    re-run of the old default's test (docs/rules.md role recheck_default)."""
    from plan07.order.inputs import KEYWORDS
    from plan07.order.roles import words_of

    if node.obligation == "preserve":
        return True
    words = words_of(node, art.roles)
    if words is not None:
        return "old_default" in words
    return bool(KEYWORDS["old_default"].search(node.caused_by))
