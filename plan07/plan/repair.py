"""Plan lint repairs (docs/rules.md "Plan lint"): what the lint finds and plan07 can repair
deterministically, repaired before the plan is ordered and handed out; each repair is one line
for the plan's revision history. Pure: obligations and evidence in, obligations out.

- `test_misplaced`: the new test moves into the test module of what it tests (its validate too);
- `top_unplanned`: the top-localized alternative becomes a followed modify;
- `weak_check`: an `import:`/`compile` check of a modify becomes its target's tests;
- `criterion_uncovered`: a test for the criterion, defined first (it fails), run once the
  modifies landed (it passes): red, then green;
- `no_regression_run`: a last `regression` validate after every other node.

A target that is no recon entity or a breaking change's unplanned consumer is not guessed at:
`plan07 lint` shows it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from plan07 import caps
from plan07.evidence.testmap import TestMap
from plan07.model import Evidence, Obligation, Violation
from plan07.order.planlint import LintInput
from plan07.vocab import REGRESSION, natural_key, normalize_test

REPAIRABLE = ("test_misplaced", "top_unplanned", "weak_check", "criterion_uncovered",
              "no_regression_run")


def repair(obligations: Sequence[Obligation], found: Sequence[Violation], evidence: Evidence,
           li: LintInput) -> tuple[list[Obligation], list[str]]:
    """The obligations with every repairable finding repaired, and one line per repair."""
    obs = [o.model_copy(deep=True) for o in obligations]
    tm = TestMap(evidence)
    lines: list[str] = []
    by_kind: dict[str, list[Violation]] = {}
    for f in found:
        by_kind.setdefault(f.kind, []).append(f)
    for f in by_kind.get("test_misplaced", []):
        if li.homes:
            lines += _move_test(obs, f.nodes[0], li.homes[0])
    for f in by_kind.get("top_unplanned", []):
        lines += _promote(obs, f.nodes[0])
    for f in by_kind.get("weak_check", []):
        lines += _strengthen(obs, f.nodes[0], tm)
    for f in by_kind.get("criterion_uncovered", []):
        lines += _anchor(obs, int(f.nodes[0][1:]), li, tm)
    if by_kind.get("no_regression_run"):
        lines += _regression(obs, tm)
    return obs, lines


def _fresh(obs: list[Obligation]) -> str:
    nums = [int(o.id[1:]) for o in obs if re.fullmatch(r"O\d+", o.id)]
    return f"O{max(nums, default=0) + 1}"


def _move_test(obs: list[Obligation], oid: str, home: str) -> list[str]:
    node = next((o for o in obs if o.id == oid), None)
    old = normalize_test(node.target_entity) if node else None
    if node is None or old is None:
        return []
    new = f"{home}::{old.split('::', 1)[1]}"
    for o in obs:
        if normalize_test(o.target_entity) == old:
            o.target_entity = new
        if o.validation.strip() == old:
            o.validation = new
    return [f"lint repair: {oid}'s new test {old} moved to {new}, the test module of what it "
            "tests"]


def _promote(obs: list[Obligation], entity: str) -> list[str]:
    alt = next((o for o in sorted(obs, key=lambda o: natural_key(o.id))
                if o.target_entity == entity and o.status == "alternative"), None)
    if alt is None:
        return []
    alt.status = "blocked" if alt.dependencies else "ready"
    alt.caused_by = _cut(f"lint repair: the entity localization ranks first is changed, not "
                         f"left an alternative; {alt.caused_by}")
    return [f"lint repair: {alt.id} ({entity}, ranked first by localization) is followed, no "
            "longer an alternative"]


def _strengthen(obs: list[Obligation], oid: str, tm: TestMap) -> list[str]:
    node = next((o for o in obs if o.id == oid), None)
    tests = tm.tests_for(node.target_entity) if node else []
    if node is None or not tests:
        return []
    # the file holding most of its tests, the one named after its module first (not the first
    # by name: jinja2.utils's 18 tests in tests/test_utils.py lost to tests/test_api.py's 2)
    counts = Counter(t.split("::", 1)[0] for t in tests)
    own = tm.file_of(node.target_entity)
    named = set(tm.named_tests(own)) if own else set()
    file = min(counts, key=lambda f: (f not in named, -counts[f], f))
    check = tests[0] if len(tests) == 1 and "::" in tests[0] else f"pytest:{file}"
    was, node.validation = node.validation, check
    return [f"lint repair: {oid} is checked by {check}, the tests of {node.target_entity}, not "
            f"{was} alone"]


def _anchor(obs: list[Obligation], n: int, li: LintInput, tm: TestMap) -> list[str]:
    reqs = li.requirement.acceptance_criteria
    if not 0 < n <= len(reqs) or not li.homes or len(obs) + 2 > caps.MAX_OBLIGATIONS:
        return []
    from plan07.decompose.evidence_index import slug

    text = reqs[n - 1]
    home = li.homes[0]
    taken = {t.rsplit("::", 1)[-1].removeprefix("test_") for t in tm.linked_ids(home)}
    taken |= {o.target_entity.rsplit("::", 1)[-1].removeprefix("test_") for o in obs}
    test = f"{home}::test_{slug(text, taken)}"
    if any(o.target_entity == test or o.validation == test for o in obs):
        return []
    define = Obligation(
        id=_fresh(obs), target_entity=test, obligation="modify", dependencies=[],
        caused_by=_cut(f"criterion {n} names a test that does not exist yet: define it early to "
                       "anchor success (§3.2; lint repair: no check that can fail covered it)"),
        evidence=f"lint: criterion_uncovered C{n}", status="ready", validation=test)
    obs.append(define)
    mods = [o.id for o in obs if o.obligation == "modify" and o.status != "alternative"
            and o.id != define.id and not normalize_test(o.target_entity)]
    deps = [define.id, *mods][-caps.MAX_DEPENDENCIES:]
    obs.append(Obligation(
        id=_fresh(obs), target_entity=test, obligation="validate", dependencies=deps,
        caused_by=_cut(f"criterion {n}: {text}"), evidence=f"lint: criterion_uncovered C{n}",
        status="blocked", validation=test))
    return [f"lint repair: criterion {n} gets a test, {test}, defined first (red) and run once "
            "the changes landed (green)"]


def _regression(obs: list[Obligation], tm: TestMap) -> list[str]:
    if any(o.validation == REGRESSION for o in obs) or len(obs) >= caps.MAX_OBLIGATIONS:
        return []
    used = {d for o in obs for d in o.dependencies}
    sinks = [o.id for o in obs if o.id not in used and o.status != "alternative"]
    mod = next((m for o in obs if o.obligation == "modify" and (m := tm.module(o.target_entity))),
               None)
    node = Obligation(
        id=_fresh(obs), target_entity=(mod or "repository").split(".")[0], obligation="validate",
        caused_by="lint repair: the plan ends with its regression run: the tests of every module "
                  "it changed pass as at CP0", dependencies=sinks[-caps.MAX_DEPENDENCIES:],
        evidence="lint: no_regression_run", status="blocked" if sinks else "ready",
        validation=REGRESSION)
    obs.append(node)
    return [f"lint repair: {node.id}, the regression run, ends the plan"]


def _cut(text: str) -> str:
    return text if len(text) <= caps.FIELD_MAX_CHARS else text[: caps.FIELD_MAX_CHARS - 1] + "…"
