"""Plan lint (docs/rules.md "Plan lint"): before a plan is handed out, the lint rules of
rules/ordering.dl check it, over facts this module prepares from the requirement, the plan and
the evidence; the findings are a relation like the violations, and `explain --finding` proves
them the same way. Pure.

The rules find: a criterion no check that can fail covers (`criterion_uncovered`), a target that
is no recon entity (`target_unknown`), a planned breaking change's consumer left unplanned
(`consumer_unplanned`), a new test outside the test module of what it tests (`test_misplaced`),
the localized top entity left an alternative (`top_unplanned`), no regression run
(`no_regression_run`), a modify checked by `import:`/`compile` alone while its target has
tests (`weak_check`). plan07.plan.repair repairs what it can deterministically.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from plan07.evidence.testmap import TestMap
from plan07.model import Evidence, Obligation, Requirement, Violation
from plan07.model.proof import Proof
from plan07.order.derive import explain_atom, run_rules
from plan07.order.inputs import Observed, Roles
from plan07.vocab import (
    FINDING_KINDS,
    NODE_ID_IN_TEXT,
    REGRESSION_CRITERION,
    normalize_test,
    runs,
    subject,
)

KINDS = FINDING_KINDS
PLAN = "plan"  # the one plan_root fact: what a finding of the plan as a whole names
_COMMAND = re.compile(r"^`[^`]+` succeeds$")
Extra = dict[str, list[tuple[tuple[str, ...], str]]]


@dataclass
class LintInput:
    """What the lint reads besides the obligations and the evidence."""

    requirement: Requirement
    passed_at_cp0: Sequence[str] = ()  # nodes whose check passed on the untouched tree
    requested: Sequence[str] = ()  # entities the request names in code
    homes: list[str] = field(default_factory=list)  # where the plan's new tests belong


def criterion_id(n: int) -> str:
    return f"C{n}"


def homes(obligations: Sequence[Obligation], tm: TestMap,
          criteria: Sequence[str] = ()) -> list[str]:
    """The test files the plan's new tests belong in: the home of each followed modify target
    (plan07.evidence.testmap), else a new file beside the first one's module; and the files
    holding the tests named after what a criterion writes in code (`TestMap.named_for`)."""
    mods = [o.target_entity for o in obligations if o.obligation == "modify"
            and o.status != "alternative" and not tm.is_test_module(o.target_entity)
            and "::" not in o.target_entity and tm.module(o.target_entity)]
    out = [h for e in mods if (h := tm.home(e))]
    if not out and mods:
        out = [tm.new_home(mods[0])]
    out += [f for c in criteria if (s := subject(c)) for f in tm.named_for(s)]
    return list(dict.fromkeys(out))


def serves(o: Obligation, n: int, text: str) -> bool:
    """Obligation `o` addresses criterion `n`: its caused_by cites it, or the criterion names
    the test its validation runs."""
    if re.search(rf"\bcriterion {n}\b", o.caused_by) or text.strip()[:60] in o.caused_by:
        return True
    return any(runs(o.validation, t) for t in NODE_ID_IN_TEXT.findall(text))


def lint_facts(obligations: Sequence[Obligation], evidence: Evidence, li: LintInput,
               tm: TestMap | None = None) -> Extra:
    """The lint rules' input facts, each with its source (module docstring)."""
    tm = tm or TestMap(evidence)
    out: Extra = {}

    def add(rel: str, args: tuple[str, ...], src: str) -> None:
        out.setdefault(rel, []).append((args, src))

    add("plan_root", (PLAN,), "the plan")
    for n, text in enumerate(li.requirement.acceptance_criteria, 1):
        c, src = criterion_id(n), f"requirement criterion {n}"
        add("criterion", (c,), src)
        if _COMMAND.match(text.strip()):
            add("confirm_only", (c,), f"{src}: a command plan07 never runs")
        if REGRESSION_CRITERION.search(text):
            add("regression_only", (c,), f"{src}: the regression run settles it")
        for o in obligations:
            if serves(o, n, text):
                add("serves", (o.id, c), f"obligation {o.id} .caused_by / .validation")
    for nid in li.passed_at_cp0:
        add("passed_at_cp0", (nid,), f"the CP0 baseline: {nid}'s check passed on the untouched "
                                     "tree")
    for o in obligations:
        if o.obligation == "modify" and tm.tests_for(o.target_entity):
            add("target_tested", (o.id,), f"evidence: tests of {o.target_entity} "
                                          "(plan07.evidence.testmap)")
        t = normalize_test(o.target_entity) if o.obligation == "modify" else None
        if t:
            add("test_in", (t, t.split("::", 1)[0]), f"obligation {o.id} .target_entity")
    for f in li.homes:
        add("test_home", (f,), "evidence: the test module of a planned target")
    ranked = sorted(evidence.localization, key=lambda x: (-x.score, x.entity))
    if ranked:
        add("top_localized", (ranked[0].entity,), "evidence localization rank 1")
    for e in li.requested:
        add("requested", (e,), "the request names it in code")
    return out


def findings(obligations: Sequence[Obligation], evidence: Evidence, li: LintInput, *,
             engine: str = "pydatalog", role_facts: Roles = None, observed: Observed = None,
             rules_path: Path | None = None) -> list[Violation]:
    """What the lint rules find in the plan (`finding(A, B, Kind)`), sorted by kind."""
    model = run_rules(obligations, evidence, engine=engine, rules_path=rules_path,
                      role_facts=role_facts, observed=observed,
                      extra=lint_facts(obligations, evidence, li))
    out = []
    for a, b, kind in sorted(model.get("finding", set()), key=lambda t: (t[2], t[0], t[1])):
        nodes = [str(a)] if a == b else [str(a), str(b)]
        out.append(Violation(kind=str(kind), nodes=nodes,
                             detail=detail(str(kind), str(a), str(b), li.requirement)))
    return out


def detail(kind: str, a: str, b: str, req: Requirement) -> str:
    """One line on what a finding means and what to do."""
    if kind == "criterion_uncovered":
        n = int(a[1:])
        text = req.acceptance_criteria[n - 1] if 0 < n <= len(req.acceptance_criteria) else a
        return (f"criterion {n} {text[:80]!r} is covered by no check that can fail (a test the "
                "plan writes, or one that did not pass at CP0): plan one, or confirm it by hand")
    return {
        "target_unknown": f"{a} targets {b}, which is no entity of the repository's recon",
        "consumer_unplanned": f"{a} makes a breaking change {b} consumes, and no obligation "
                              f"rebinds {b}",
        "test_misplaced": f"{a} writes its test in {b}, not in the test module of what it tests",
        "top_unplanned": f"{a}, the entity localization ranks first, is only an alternative: "
                         "no obligation that is handed out changes it",
        "no_regression_run": "the plan has no `regression` check: it could terminate without "
                             "the changed modules' tests running against CP0",
        "weak_check": f"{a} is checked by `import:`/`compile` alone while its target has tests",
    }.get(kind, "")


def explain_finding(obligations: Sequence[Obligation], evidence: Evidence, li: LintInput,
                    kind: str, nodes: Sequence[str], *, engine: str = "pydatalog",
                    depth: int | None = None, role_facts: Roles = None,
                    observed: Observed = None) -> Proof:
    """Why `finding(A, B, kind)` holds (a one-node finding has A == B), or why not."""
    from plan07.errors import InputError

    if not 1 <= len(nodes) <= 2:
        raise InputError("a finding names one or two nodes", field="NODES")
    return explain_atom(obligations, evidence, "finding", (nodes[0], nodes[-1], kind),
                        engine=engine, depth=depth, role_facts=role_facts, observed=observed,
                        extra=lint_facts(obligations, evidence, li))


def lint_input(requirement: Requirement, passed: Sequence[str], requested: Sequence[str],
               obligations: Sequence[Obligation], evidence: Evidence) -> LintInput:
    """The LintInput of a plan (its homes worked out from the evidence)."""
    return LintInput(requirement, list(passed), list(requested),
                     homes(obligations, TestMap(evidence), requirement.acceptance_criteria))


