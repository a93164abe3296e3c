"""The offline `builtin` decomposer: obligations derived from the requirement and the evidence by
fixed rules, no model. Pure and deterministic. It occupies the §4 L slot (design.md), answering
the same prompt a model would (plan07.decompose.builtin_client). The roles go to the rules as data,
beside the text (`derive_with_roles`, docs/rules.md "Role facts"): what each step is (a widen is
`compatible`), and what the request's text it cites and the test it checks say.

The rules in order (the table: docs/decompose.md): localized entities -> modify (a sig_change
source is a widen); impacted consumers of a modified entity -> modify depending on it (rebind; not,
for a compatible change, a caller guessed by name); a default criterion or a default_change edge ->
preserve of the old default before what relies on the new one, and the old-default test re-run;
criteria naming tests -> validate (after the modify that defines a test that does not exist yet,
defined early); other unanchored criteria -> a derived test, defined then validated; constraints ->
preserve; a last `compile` validate; lower-ranked candidates -> `alternative` modifies.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plan07 import caps
from plan07.decompose.drafts import Draft, modify_ancestors, number_drafts
from plan07.decompose.evidence_index import (
    BY_NAME_RELATION,
    REBIND_CAUSES,
    EvidenceIndex,
    best_tests,
    edge_line,
    named,
    names,
    slug,
    words,
)
from plan07.decompose.prompt import TestsLine
from plan07.evidence.softrank import tokens
from plan07.model import Evidence, Localization, Obligation, RoleWord
from plan07.vocab import NODE_ID_IN_TEXT, REGRESSION_CRITERION, mentioned

COMMAND_CRITERION = re.compile(r"^`[^`]+` succeeds$")  # plan07 never runs it: the user confirms
DEFAULT_WORDS = re.compile(r"default|\bold\b|backwards?[- ]compat|unchanged|as before", re.I)
# What the request says of the interface (design.md "compatible vs breaking"): a change to a
# signature is planned as one only when the request speaks of one; a body-only fix (most bug
# reports) modifies the located entity and leaves its callers alone. A word of the interface
# ("argument", "option") speaks of a change only beside a word that changes it, in one sentence:
# "add a file mode parameter", not "uniq modifies list argument" nor "objects with no args".
SIGNATURE_CHANGE = re.compile(
    r"\b(?:no longer takes?|takes? (?:a|an|the|no)\b|accepts? (?:a|an|the)\b|rename[sd]?|"
    r"gains?)\b", re.I)
SIGNATURE_NOUNS = re.compile(
    r"\b(?:param(?:eter)?s?|arguments?|args?|kwargs?|keywords?|signatures?|flags?|options?|"
    r"positional)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.;:!?])\s+|\n+")
BREAKING_WORDS = re.compile(
    r"\b(?:drop(?:s|ped)?|remov(?:e|es|ed)|delet(?:e|es|ed)|renam(?:e|es|ed)|required|"
    r"mandatory|positional|no longer takes?)\b", re.I)
CHANGE_WORDS = re.compile(  # a word that changes an interface: adds to it, or breaks it
    r"\b(?:add(?:s|ed|ing)?|new|accept(?:s|ed|ing)?|support(?:s|ed|ing)?|allow(?:s|ed|ing)?|"
    r"takes?|expose[sd]?|introduc(?:e|es|ed|ing)|extra|optional|deprecat(?:e|es|ed))\b|"
    + BREAKING_WORDS.pattern,
    re.I)


@dataclass
class _Derivation:
    """The state the steps of `derive` share."""

    ix: EvidenceIndex
    evidence: Evidence
    goal: str
    criteria: list[str]
    constraints: list[str]
    interface: str = "body"  # "body" | "compatible" | "breaking": what the request implies
    ranked: list[Localization] = field(default_factory=list)
    primary: list[Localization] = field(default_factory=list)
    named: set[str] = field(default_factory=set)  # primaries the request names, not localized
    mods: dict[str, Draft] = field(default_factory=dict)  # entity -> its modify
    order: list[str] = field(default_factory=list)  # modified entities, primaries first
    widened: list[str] = field(default_factory=list)
    extra: dict[str, Draft] = field(default_factory=dict)  # preserve_default, recheck
    defines: dict[str, Draft] = field(default_factory=dict)  # test id -> its defining modify
    regression: list[tuple[int, str]] = field(default_factory=list)  # the run settles these
    validates: dict[str, Draft] = field(default_factory=dict)
    preserves: list[Draft] = field(default_factory=list)

    @property
    def top(self) -> float:
        return self.ranked[0].score if self.ranked else 0.0


def derive(requirement: dict[str, Any], evidence: Evidence) -> list[Obligation]:
    """The builtin decomposition of `requirement` over `evidence` (see the module docstring)."""
    return derive_with_roles(requirement, evidence)[0]


def derive_with_roles(requirement: dict[str, Any], evidence: Evidence,
                      tests: Mapping[str, TestsLine] | None = None,
                      named: Mapping[str, list[str]] | None = None,
                      ) -> tuple[list[Obligation], dict[str, list[RoleWord]]]:
    """`derive`, with each obligation's role words (docs/rules.md "Role facts"): the rules read
    these, not the obligations' prose. `tests`: the prompt's tests lines (entity -> its tests and
    test home); `named`: its tests.named lines (code name -> the test files named after it)."""
    d = _Derivation(EvidenceIndex(evidence, tests, named), evidence,
                    str(requirement.get("goal", "")),
                    [str(c) for c in requirement.get("acceptance_criteria", [])],
                    [str(c) for c in requirement.get("constraints", [])])
    d.interface = interface_change(" ".join([d.goal, *d.criteria]))  # not "no breaking change"
    _targets(d)
    _modifies(d)
    _criteria(d)
    _constraints(d)
    obligations = number_drafts(_assemble(d))
    return [o for o, _ in obligations], {o.id: w for o, w in obligations}


def interface_change(text: str) -> str:
    """What the request implies for the changed entities' signatures: "breaking" (a parameter
    dropped, renamed, made required: widen, then rebind the consumers, onward through theirs),
    "compatible" (one added, a flag gained: widen, then rebind its direct consumers, design.md
    "a compatible change lands before its consumers' rebinds"), else "body" (no widen, no
    rebind)."""
    if not SIGNATURE_CHANGE.search(text) and not any(
            SIGNATURE_NOUNS.search(x) and CHANGE_WORDS.search(x) for x in _SENTENCE.split(text)):
        return "body"
    return "breaking" if BREAKING_WORDS.search(text) else "compatible"


def _targets(d: _Derivation) -> None:
    """05 localization: the candidates the request names, and the top-ranked ones the ranker puts
    above all of them (score >= ratio x top), at most BUILTIN_MAX_PRIMARY of the latter."""
    text = " ".join([d.goal, *d.criteria])
    d.ranked = sorted(d.evidence.localization, key=lambda x: (-x.score, x.entity))
    # a name the text writes as code (backticked, dotted) is a target; a plain word that
    # happens to be an entity's name ("session", "name", "text") is only a ranked candidate
    written = mentioned(text)
    code = {r for r in map(d.ix.resolve, written) if r}
    ratio = caps.BUILTIN_PRIMARY_SCORE_RATIO
    names = [x for x in d.ranked
             if x.entity in code or any(named(m, x.entity) for m in written)]
    bar = max((x.score for x in names), default=-1.0)
    strong = [x for x in d.ranked if x.score >= ratio * d.top
              and x.score > bar and x not in names][: caps.BUILTIN_MAX_PRIMARY]
    d.primary = [x for x in d.ranked if x in names or x in strong]
    # The entities the request names in code (backticked or dotted), resolved against recon:
    # seeds as if localized, so a bundle without localization still modifies what is asked.
    ranked = {x.entity for x in d.ranked}
    for e in dict.fromkeys(r for r in map(d.ix.resolve, mentioned(text)) if r):
        if e not in ranked:
            d.primary.append(Localization(entity=e, score=0.0))
            d.named.add(e)
    if not d.ranked:  # no localization: also the sources of the changes the impact DAG projects
        srcs = sorted({i.src for i in d.evidence.impact.edges
                       if i.cause in d.ix.breaking_causes})
        d.primary += [Localization(entity=s, score=0.0) for s in srcs if s not in d.named]


def _modifies(d: _Derivation) -> None:
    """Modifies: the primary targets, then the consumers the impact DAG says must follow (§3.2).
    A primary's consumers by any rebind cause; past them only a breaking cause propagates (a
    rebind keeps its own signature, but the rules flag a sig_change consumer left unplanned)."""
    ix = d.ix
    for loc in d.primary:
        d.mods[loc.entity] = Draft("modify", loc.entity, [],
                                   f"03 recon {loc.entity}: named by the requirement"
                                   if loc.entity in d.named else
                                   f"05 localization {loc.entity} score {loc.score:.2f}", "")
        d.order.append(loc.entity)
    first, queue = set(d.order), list(d.order)
    deps: dict[str, list[str]] = defaultdict(list)
    if d.interface == "body":
        queue = []  # a body fix changes no signature: its callers are not touched
    while queue:
        src = queue.pop(0)
        causes = REBIND_CAUSES if src in first else ix.breaking_causes
        for i in ix.out.get(src, []):
            if (i.cause not in causes or not ix.consumer(i.dst) or i.dst == src
                    or d.interface == "compatible" and i.relation == BY_NAME_RELATION):
                continue
            if i.dst not in d.mods:
                d.mods[i.dst] = Draft("modify", i.dst, [], edge_line(i), "")
                d.order.append(i.dst)
                if d.interface == "breaking":  # a compatible widening stops at its callers
                    queue.append(i.dst)
                else:  # whose own interface stays: its callers need no rebind
                    d.mods[i.dst].says.add("behaviour")
                    d.mods[i.dst].why.append("its interface stays: only its calls change")
            if src not in deps[i.dst]:
                deps[i.dst].append(src)
                d.mods[i.dst].why.append(f"06 {i.cause}: consumer of {src}, rebind it to the "
                                         f"new form after {src} is widened")
    for b in d.order:  # §3.2 "shared types precede consumers": B uses A (recon) -> A first
        for a in d.order:
            if a != b and a not in deps[b] and b not in deps[a] and ix.uses(b, a):
                deps[b].append(a)
                d.mods[b].why.append(f"03 recon: {b} uses {a}, so {a} changes first")
    d.widened = [e for e in d.order if d.interface != "body"
                 and any(i.cause in ix.breaking_causes for i in ix.out.get(e, []))]
    for e in d.order:
        m = d.mods[e]
        if e in d.widened:
            breaking = [i for i in ix.out[e] if i.cause in ix.breaking_causes]
            m.why.append(f"06 sig_change on {e}: widen it (add the new parameter with a default, "
                         "keep the old form) so its consumers keep working")
            m.validation = ix.check([*(i.dst for i in breaking), e])
            m.evidence = edge_line(breaking[0])
            m.says.add("compatible")  # a widen keeps the old form
        else:
            m.validation = ix.check([e])
            if d.interface == "compatible" and e in first:  # its old calls still bind
                m.says.add("compatible")
                m.why.append("a compatible change: every old call of it still binds")
        if d.interface == "body":  # a bug fix: the body changes, its callers are left alone
            m.says.add("behaviour")
            m.why.append(f"a body change: the interface of {e} stays as it is")
        if not deps.get(e) and not any(w.startswith(("criterion", "requirement")) for w in m.why):
            m.why.insert(0, f"requirement: {d.goal}")
            m.cites.append(d.goal)
        m.deps = [f"modify:{s}" for s in deps.get(e, [])]


def _criteria(d: _Derivation) -> None:
    """Criteria: cited by the modifies they name; a default one -> preserve of the old default;
    a named test -> validate; an unanchored one -> a derived test (defined early, then run)."""
    named_tests: list[tuple[int, str]] = []
    derived: list[tuple[int, str]] = []
    cites: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for n, c in enumerate(d.criteria, 1):
        tests = NODE_ID_IN_TEXT.findall(c)
        resolved = {d.ix.resolve(x) for x in mentioned(c)}
        hit = [e for e in d.order if named(c, e) or e in resolved]
        for e in hit:
            cites[e].append((n, c))
        if tests:
            named_tests += [(n, t) for t in tests]
        elif REGRESSION_CRITERION.search(c):
            d.regression.append((n, c))  # settled by the regression run alone
        elif DEFAULT_WORDS.search(c) and d.order:
            _preserve_default(d, n, c, tests)
        elif not COMMAND_CRITERION.match(c) and len(derived) < caps.BUILTIN_MAX_DERIVED_TESTS:
            derived.append((n, c))  # a test that fails now and passes once it holds
    for e, cs in cites.items():
        d.mods[e].why[:0] = [f"criterion {n}: {c}" for n, c in cs]
        d.mods[e].cites[:0] = [c for _, c in cs]
    also: dict[str, list[tuple[int, str]]] = defaultdict(list)  # a criterion a named test checks
    for n, c in list(derived):
        t = next((t for _, t in named_tests if words(t.split("::")[-1]) <= words(c)), None)
        if t is not None:
            also[t].append((n, c))
            derived.remove((n, c))
    first = {x.entity for x in d.primary}
    if "preserve_default" not in d.extra and any(
            i.cause == "default_change" and i.src in first for i in d.evidence.impact.edges):
        _preserve_default(d, 0, "", [])
    impl = [f"modify:{e}" for e in d.order] + _recheck(d)

    taken = {t.rsplit("::", 1)[-1].removeprefix("test_") for t in d.ix.test_ids}
    wanted = named_tests[:]
    for n, c in derived:  # each named from its criterion, whole words, never twice, in the
        # test module of what it names (else of the first change): README "Tests where the
        # repository keeps them"
        about = sorted((e for e, cs in cites.items() if any(m == n for m, _ in cs)),
                       key=lambda e: (_where(c, e), _is_method(d.ix, e)))  # the subject, named
        # first; a bare name (`concat`) reads as the function before a method of that name
        test_file = d.ix.test_file([*about, *sorted(d.order, key=lambda e: -_fit(c, e))], c)
        name = slug(c, taken)
        taken.add(name)
        wanted.append((n, f"{test_file}::test_{name}"))
    for n, t in wanted:  # §3.2 "tests are defined early to anchor success"
        if t not in d.ix.test_ids and t not in d.defines:
            # Its check is the test itself: a test not written fails "not found", so the step
            # cannot pass without defining it (an anchor added under a non-strict xfail marker
            # counts as passing, docs/plan.md). `compile` would pass with no test written.
            d.defines[t] = Draft("modify", t, [f"criterion {n} names a test that does not "
                                               "exist yet: define it early to anchor success "
                                               "(§3.2)"],
                                 f"03 recon: not in the repository; requirement criterion {n}",
                                 t)
    for n, t in wanted:
        exercised = [f"modify:{e}" for e in d.order if t in d.ix.exercised.get(e, set())]
        before = ([f"define:{t}"] if t in d.defines else []) + (exercised or impl)
        said = [(n, d.criteria[n - 1]), *also.get(t, [])]
        d.validates.setdefault(t, Draft(
            "validate", d.ix.test_entity(t, t), [f"criterion {m}: {c}" for m, c in said],
            f"requirement criterion {n}", t, deps=before, cites=[c for _, c in said]))


def _fit(text: str, entity: str) -> int:
    """How many words of `entity`'s own name `text` speaks of, a word counting for its longer
    forms ("a malformed configuration" speaks of `SessionConfig`): the change whose tests a
    criterion naming no entity belongs with."""
    said = tokens(text)
    return sum(1 for a in tokens(".".join(entity.split(".")[-2:]))
               if any(a == b or len(os.path.commonprefix([a, b])) >= 5 for b in said))


def _is_method(ix: EvidenceIndex, entity: str) -> bool:
    node = ix.nodes.get(entity)
    return node is not None and node.kind == "method"


def _where(text: str, entity: str) -> int:
    """Where `text` first names `entity` (len(text) when it does not)."""
    hits = [m.start() for n in names(entity) for m in re.finditer(
        rf"(?<![\w.-]){re.escape(n)}(?![\w-])", text)]
    return min(hits, default=len(text))


def _preserve_default(d: _Derivation, n: int, c: str, tests: list[str]) -> None:
    """The preserve of the old default (§3.2 ladder rule 2), one per plan, after the modify that
    introduces the new default. Its validation: the named test, else the existing tests the
    default_change edges point at, else the existing tests nearby that speak of it."""
    if "preserve_default" in d.extra:
        if c:
            d.extra["preserve_default"].why.insert(0, f"criterion {n}: {c}")
            d.extra["preserve_default"].cites.insert(0, c)
        return
    edges = [i for i in d.evidence.impact.edges
             if i.cause == "default_change" and i.src in d.order]
    target = edges[0].src if edges else (d.widened or d.order)[0]
    pinned = tests or sorted({d.ix.tests[i.dst] for i in edges if i.dst in d.ix.tests}
                             | {i.dst for i in edges if "::" in i.dst})
    if not pinned:
        near = {t for e in [target, *d.order] for t in d.ix.exercised.get(e, ())}
        pinned = best_tests(c or "old default", near)
    why = [f"criterion {n}: {c}"] if c else []
    why.append(f"preserve the old default of {target} before anything relies on the new default")
    d.extra["preserve_default"] = Draft(
        "preserve", target, why, edge_line(edges[0]) if edges else f"requirement criterion {n}",
        pinned[0] if len(pinned) == 1 else d.ix.check([target]), deps=[f"modify:{target}"],
        says={"default", "old_default"}, cites=[c] if c else [])


def _recheck(d: _Derivation) -> list[str]:
    """What relies on the new default waits for the preserve; the old-default test re-runs once
    those modifies landed (§3.2: preserve default -> old-default re-run -> new-default test)."""
    pd = d.extra.get("preserve_default")
    if pd is None:
        return []
    before = modify_ancestors(d.mods, pd.target)
    rebinds = [f"modify:{e}" for e in d.order if e not in before and e not in d.widened]
    for k in rebinds:
        d.mods[k.split(":", 1)[1]].deps.append("preserve_default")
    if not rebinds or not ("::" in pd.validation or pd.validation.startswith("pytest:")):
        return []
    d.extra["recheck"] = Draft(
        "validate", d.ix.test_entity(pd.validation, pd.target),
        [f"the old-default test re-runs once the consumers are rebound ({pd.why[0]})"],
        pd.evidence, pd.validation, deps=["preserve_default", *rebinds], says={"old_default"},
        cites=pd.cites[:1])
    return ["recheck"]


def _constraints(d: _Derivation) -> None:
    """Constraints -> preserve of what they name (else the widened entity), checked once the
    changes it guards have landed."""
    for n, c in enumerate(d.constraints, 1):
        hit = [e for e in d.order if named(c, e)] or d.widened or d.order[:1]
        if not hit:
            continue
        t = hit[0]
        guarded = [t, *[i.dst for i in d.ix.out.get(t, []) if i.dst in d.mods]]
        d.preserves.append(Draft("preserve", t, [f"constraint {n}: {c}"],
                                 f"requirement constraint {n}", d.ix.check(guarded),
                                 deps=[f"modify:{e}" for e in guarded if e in d.mods], cites=[c]))


def _assemble(d: _Derivation) -> dict[str, Draft]:
    """Every draft in insertion order (the tie-break of the numbering), the final compile check
    after every sink, and the alternatives."""
    out: dict[str, Draft] = {f"define:{t}": x for t, x in d.defines.items()}
    out.update({f"modify:{e}": d.mods[e] for e in d.order})
    out.update(d.extra)
    out.update({f"validate:{t}": x for t, x in d.validates.items()})
    out.update({f"preserve:{i}": x for i, x in enumerate(d.preserves)})
    if out:
        used = {k for x in out.values() for k in x.deps}
        root = d.order[0].split(".")[0] if d.order else "repository"
        out["compile"] = Draft(
            "validate", root, [*(f"criterion {n}: {c}" for n, c in d.regression),
                               "the plan ends with its regression run: the tests of every "
                               "module it changed pass as at CP0, and it compiles (§3.2: widen, "
                               "rebind, then compile)"], "§3.2 ordering ladder", "regression",
            deps=[k for k in out if k not in used], cites=[c for _, c in d.regression])
    # An alternative is a sibling of the main hypothesis: same verb, same predecessors, so the
    # scheduler sees what it could substitute for (§3.3 P4). The main one is the top-scored
    # primary with the most predecessors (among equal scores, the one that changes last), so a
    # rule-derived edge into an alternative (it uses an earlier primary) keeps it in the group.
    tops = [x.entity for x in d.primary if x.entity in d.mods and x.score == d.primary[0].score]
    main = max(tops, key=lambda e: (len(d.mods[e].deps), -tops.index(e))) if tops else None
    ratio = caps.BUILTIN_PRIMARY_SCORE_RATIO
    for x in [x for x in d.ranked if x.entity not in d.mods][: caps.BUILTIN_MAX_ALTERNATIVES]:
        rank = (f"lower-ranked candidate (score {x.score:.2f} < {ratio} x top {d.top:.2f})"
                if x.score < ratio * d.top else
                f"candidate the request does not name (score {x.score:.2f}, top {d.top:.2f})")
        instead = f" for {main}" if main else ""
        out[f"alt:{x.entity}"] = Draft(
            "modify", x.entity, [f"05 localization: {rank}; substitute{instead} only if the main "
                                 "hypothesis is falsified"],
            f"05 localization {x.entity} score {x.score:.2f}", d.ix.check([x.entity]),
            deps=list(d.mods[main].deps) if main else [], alternative=True,
            says={"behaviour"} if d.interface == "body" else set())
    return out
