"""The offline `builtin` decomposer: obligations derived from the requirement and the evidence by
fixed rules, no model. Pure and deterministic. It occupies the §4 L slot (design.md), answering
the same prompt a model would (plan07.llm.builtin), and its text follows the fact vocabulary of
docs/rules.md so the ordering rules recognise each role (widen, rebind, preserve_default, ...).

The rules, in order: localized entities -> modify (a sig_change source is a widen); impacted
consumers of a modified entity -> modify depending on it (rebind); a default criterion or a
default_change edge -> preserve of the old default before what relies on the new one, and the
old-default test re-run; criteria naming tests -> validate (after the modify that defines a test
that does not exist yet, defined early); other unanchored criteria -> a derived test, defined then
validated; constraints -> preserve; a final `compile` validate; lower-ranked localization
candidates -> `alternative` modifies.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from plan07 import caps
from plan07.model import Evidence, ImpactEdge, Localization, Obligation

REBIND_CAUSES = ("sig_change", "schema_change", "consumer_rebind", "migration")
BREAKING_CAUSES = ("sig_change", "schema_change")
CONSUME_KINDS = ("calls", "imports", "inherits", "uses_type", "reads")  # docs/rules.md consume_kind
TEST_ID = re.compile(r"[\w./-]+\.py::[\w\[\]:.-]*[\w\]]")
TEST_PATH = re.compile(r"(^|/)tests?(/|$)|(^|/)test_[^/]*$")
DEFAULT_WORDS = re.compile(r"default|\bold\b|backwards?[- ]compat|unchanged|as before", re.I)
_ARTICLES = {"a", "an", "the"}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pytest_id(entity: str, file: str | None) -> str:
    """A test entity as a pytest node id (docs/rules.md "Test ids")."""
    if "::" in entity:
        return entity
    if file and file.endswith(".py"):
        mod = file[:-3].replace("/", ".")
        if entity.startswith(mod + "."):
            return f"{file}::{entity[len(mod) + 1:].replace('.', '::')}"
    parts = entity.split(".")
    for i in range(len(parts) - 1, 0, -1):
        if parts[i - 1].startswith("test"):
            return "/".join(parts[:i]) + ".py::" + "::".join(parts[i:])
    return entity


@dataclass
class _Draft:
    verb: str
    target: str
    why: list[str]
    evidence: str
    validation: str
    deps: list[str] = field(default_factory=list)  # draft keys
    alternative: bool = False


class _Index:
    """Look-ups over the evidence."""

    def __init__(self, ev: Evidence) -> None:
        self.nodes = {n.id: n for n in ev.recon.nodes}
        self.tests = {n.id: pytest_id(n.id, n.file) for n in ev.recon.nodes if n.kind == "test"}
        self.test_ids = set(self.tests.values())
        self.exercised: dict[str, set[str]] = defaultdict(set)
        for e in ev.recon.edges:
            if e.src in self.tests and e.kind in ("tests", "calls"):
                self.exercised[e.dst].add(self.tests[e.src])
        self.used: dict[str, set[str]] = defaultdict(set)
        for e in ev.recon.edges:
            if e.kind in CONSUME_KINDS:
                self.used[e.src].add(e.dst)
        self.out: dict[str, list[ImpactEdge]] = defaultdict(list)
        for i in sorted(ev.impact.edges, key=lambda i: (-i.confidence, i.dst)):
            self.out[i.src].append(i)

    def is_test(self, e: str) -> bool:
        """A test, or anything inside a test module (never a modify target of a rebind)."""
        n = self.nodes.get(e)
        path = n.file if n is not None and n.file else e.replace(".", "/")
        return e in self.tests or "::" in e or bool(TEST_PATH.search(path))

    def consumer(self, e: str) -> bool:
        """An entity a changed definition can break: not a test, not a module (an import of a
        widened name keeps working)."""
        n = self.nodes.get(e)
        return not self.is_test(e) and not (n is not None and n.kind == "module")

    def uses(self, b: str, a: str) -> bool:
        """B (or a member of B) calls / imports / inherits / uses the type of / reads A."""
        return any(a in self.used.get(x, ()) for x in self.members(b))

    def members(self, b: str) -> list[str]:
        return [x for x in self.used if x == b or x.startswith(b + ".")]

    def module(self, e: str) -> str | None:
        n = self.nodes.get(e)
        if n is not None and n.file and n.file.endswith(".py"):
            mod = n.file[:-3].replace("/", ".")
            return mod[: -len(".__init__")] if mod.endswith(".__init__") else mod
        parts = e.split(".")
        for i in range(len(parts) - 1, 0, -1):
            m = ".".join(parts[:i])
            if m in self.nodes and self.nodes[m].kind == "module":
                return m
        return None

    def check(self, entities: list[str]) -> str:
        """The validation for a change to `entities`: their existing tests, else an import."""
        tests = sorted({t for e in entities for t in self.exercised.get(e, ())})
        if len(tests) == 1:
            return tests[0]
        if tests:
            files = sorted({t.split("::")[0] for t in tests})
            if len(files) == 1:
                return f"pytest:{files[0]}"
            common = files[0].rsplit("/", 1)[0] if "/" in files[0] else "."
            return f"pytest:{common}" if all(f.startswith(common + "/") for f in files) else \
                f"pytest:{files[0].split('/')[0]}"
        mod = next((m for m in (self.module(e) for e in entities) if m), None)
        return f"import:{mod}" if mod else "compile"


def _names(entity: str) -> set[str]:
    """The names by which a text can name an entity: each dotted suffix (`SessionManager.load`,
    `load`), the last part only when 3 chars or more."""
    parts = [p for p in re.split(r"[.:/]+", entity) if p]
    out = {".".join(parts[-k:]) for k in range(2, len(parts) + 1)}
    return out | ({parts[-1]} if parts and len(parts[-1]) >= 3 else set())


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - {"test", "tests", "py"}


def _best_tests(text: str, tests: set[str]) -> list[str]:
    """The tests whose names share the most words with `text` (none if no word is shared)."""
    scored = [(len(_words(text) & _words(t.split("::")[-1])), t) for t in tests]
    top = max((n for n, _ in scored), default=0)
    return sorted(t for n, t in scored if n == top and n > 0)


def _named(text: str, entity: str) -> bool:
    # not inside a longer dotted name: `plan07.schema.parse` does not name `decompose.parse`
    return any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w])", text) for n in _names(entity))


def _slug(text: str) -> str:
    words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _ARTICLES]
    return _cut("_".join(words), 40).rstrip("_…") or "criterion"


def derive(requirement: dict[str, Any], evidence: Evidence) -> list[Obligation]:
    """The builtin decomposition of `requirement` over `evidence` (see the module docstring)."""
    ix = _Index(evidence)
    goal = str(requirement.get("goal", ""))
    criteria = [str(c) for c in requirement.get("acceptance_criteria", [])]
    constraints = [str(c) for c in requirement.get("constraints", [])]
    text = " ".join([goal, *criteria])
    drafts: dict[str, _Draft] = {}

    # 05 localization: primary targets and lower-ranked alternatives.
    ranked = sorted(evidence.localization, key=lambda x: (-x.score, x.entity))
    top = ranked[0].score if ranked else 0.0
    # The candidates the request names, and the top-ranked ones the ranker puts above all of them
    # (score >= ratio x top), at most BUILTIN_MAX_PRIMARY of the latter.
    named = [x for x in ranked if _named(text, x.entity)]
    bar = max((x.score for x in named), default=-1.0)
    strong = [x for x in ranked if x.score >= caps.BUILTIN_PRIMARY_SCORE_RATIO * top
              and x.score > bar and x not in named][: caps.BUILTIN_MAX_PRIMARY]
    primary = [x for x in ranked if x in named or x in strong]
    if not ranked:  # no localization: the sources of the changes the impact DAG projects
        srcs = sorted({i.src for i in evidence.impact.edges if i.cause in BREAKING_CAUSES})
        primary = [Localization(entity=s, score=0.0) for s in srcs]

    # Modifies: primary targets, then the consumers the impact DAG says must follow (§3.2).
    mods: dict[str, _Draft] = {}
    order: list[str] = []
    for loc in primary:
        mods[loc.entity] = _Draft("modify", loc.entity, [],
                                  f"05 localization {loc.entity} score {loc.score:.2f}", "")
        order.append(loc.entity)
    # A primary's consumers by any rebind cause; past them only a breaking cause propagates (a
    # rebind keeps its own signature, but the rules flag a sig_change consumer left unplanned).
    queue = list(order)
    first = set(order)
    deps: dict[str, list[str]] = defaultdict(list)
    while queue:
        src = queue.pop(0)
        causes = REBIND_CAUSES if src in first else BREAKING_CAUSES
        for i in ix.out.get(src, []):
            if i.cause not in causes or not ix.consumer(i.dst) or i.dst == src:
                continue
            if i.dst not in mods:
                mods[i.dst] = _Draft("modify", i.dst, [], _edge(i), "")
                order.append(i.dst)
                queue.append(i.dst)
            if src not in deps[i.dst]:
                deps[i.dst].append(src)
                mods[i.dst].why.append(f"06 {i.cause}: consumer of {src}, rebind it to the "
                                       f"new form after {src} is widened")
    for b in order:  # §3.2 "shared types precede consumers": B uses A (recon) -> A first
        for a in order:
            if a != b and a not in deps[b] and b not in deps[a] and ix.uses(b, a):
                deps[b].append(a)
                mods[b].why.append(f"03 recon: {b} uses {a}, so {a} changes first")
    widened = [e for e in order if any(i.cause in BREAKING_CAUSES for i in ix.out.get(e, []))]
    for e in order:
        d = mods[e]
        if e in widened:
            consumers = [i.dst for i in ix.out[e] if i.cause in BREAKING_CAUSES]
            d.why.append(f"06 sig_change on {e}: widen it (add the new parameter with a default, "
                         "keep the old form) so its consumers keep working")
            d.validation = ix.check([*consumers, e])
            d.evidence = _edge(next(i for i in ix.out[e] if i.cause in BREAKING_CAUSES))
        else:
            d.validation = ix.check([e])
        if e not in deps and not d.why:
            d.why.append(f"requirement: {goal}")
        d.deps = [f"modify:{s}" for s in deps.get(e, [])]
    mod_keys = [f"modify:{e}" for e in order]

    # Criteria: cite them; default -> preserve; named tests -> validate; others -> a derived test.
    preserve_key = None
    named_tests: list[tuple[int, str]] = []
    derived: list[tuple[int, str]] = []
    cites: dict[str, list[str]] = defaultdict(list)
    for n, c in enumerate(criteria, 1):
        tests = [t.rstrip(".:") for t in TEST_ID.findall(c)]
        hit = [e for e in order if _named(c, e)]
        for e in hit:
            cites[e].append(f"criterion {n}: {c}")
        if DEFAULT_WORDS.search(c) and order:
            preserve_key = _preserve_default(drafts, ix, evidence, order, widened, n, c, tests)
        elif tests:
            named_tests += [(n, t) for t in tests]
        elif not hit:
            derived.append((n, c))
    for e, cs in cites.items():
        mods[e].why[:0] = cs
    also: dict[str, list[str]] = defaultdict(list)  # a criterion a named test already checks
    for n, c in list(derived):
        t = next((t for _, t in named_tests if _words(t.split("::")[-1]) <= _words(c)), None)
        if t is not None:
            also[t].append(f"criterion {n}: {c}")
            derived.remove((n, c))
    if preserve_key is None and any(i.cause == "default_change" and i.src in first
                                    for i in evidence.impact.edges):
        preserve_key = _preserve_default(drafts, ix, evidence, order, widened, 0, "", [])

    # Tests defined early (§3.2 "tests are defined early to anchor success").
    test_file = _test_file(ix, order, " ".join(c for _, c in derived))
    defines: dict[str, _Draft] = {}
    for n, t in named_tests + [(n, f"{test_file}::test_{_slug(c)}") for n, c in derived]:
        if t not in ix.test_ids and t not in defines:
            # The test id is the target only: its name may carry a docs/rules.md keyword
            # ("custom") that would make this early definition look like it relies on a default.
            defines[t] = _Draft("modify", t, [f"criterion {n} names a test that does not exist "
                                              "yet: define it early to anchor success (§3.2)"],
                                f"03 recon: not in the repository; requirement criterion {n}",
                                "compile")
    impl = mod_keys[:]
    if preserve_key is not None:
        pd = drafts[preserve_key]
        before_pd = _ancestors(mods, pd.target)
        rebinds = [f"modify:{e}" for e in order if e not in before_pd and e not in widened]
        for k in rebinds:
            mods[k.split(":", 1)[1]].deps.append(preserve_key)
        if rebinds and ("::" in pd.validation or pd.validation.startswith("pytest:")):
            drafts["recheck"] = _Draft(
                "validate", _test_entity(ix, pd.validation, pd.target),
                [f"the old-default test re-runs once the consumers are rebound ({pd.why[0]})"],
                pd.evidence, pd.validation, deps=[preserve_key, *rebinds])
            impl.append("recheck")
    validates: dict[str, _Draft] = {}
    for n, t in named_tests + [(n, f"{test_file}::test_{_slug(c)}") for n, c in derived]:
        exercised = [f"modify:{e}" for e in order if t in ix.exercised.get(e, set())]
        before = ([f"define:{t}"] if t in defines else []) + (exercised or impl)
        target = _test_entity(ix, t, t)
        validates.setdefault(t, _Draft("validate", target, [f"criterion {n}: {criteria[n - 1]}",
                                                            *also.get(t, [])],
                                       f"requirement criterion {n}", t, deps=before))

    # Constraints -> preserve, checked once the changes it guards have landed.
    preserves: list[_Draft] = []
    for n, c in enumerate(constraints, 1):
        hit = [e for e in order if _named(c, e)] or widened or order[:1]
        if not hit:
            continue
        t = hit[0]
        guarded = [t, *[i.dst for i in ix.out.get(t, []) if i.dst in mods]]
        preserves.append(_Draft("preserve", t, [f"constraint {n}: {c}"],
                                f"requirement constraint {n}", ix.check(guarded),
                                deps=[f"modify:{e}" for e in guarded if e in mods]))

    all_drafts: dict[str, _Draft] = {f"define:{t}": d for t, d in defines.items()}
    all_drafts.update({f"modify:{e}": mods[e] for e in order})
    all_drafts.update(drafts)
    all_drafts.update({f"validate:{t}": d for t, d in validates.items()})
    all_drafts.update({f"preserve:{i}": d for i, d in enumerate(preserves)})
    if all_drafts:
        used = {k for d in all_drafts.values() for k in d.deps}
        sinks = [k for k in all_drafts if k not in used]
        root = order[0].split(".")[0] if order else "repository"
        all_drafts["compile"] = _Draft(
            "validate", root, ["every step ends in a repository that compiles (§3.2: widen, "
                               "rebind, then compile)"], "§3.2 ordering ladder", "compile",
            deps=sinks)
    # An alternative is a sibling of the main hypothesis (the top-ranked primary target): same
    # verb, same predecessors, so the scheduler sees what it could substitute for (§3.3 P4).
    main = primary[0].entity if primary and primary[0].entity in mods else None
    alts = [x for x in ranked if x.entity not in mods][: caps.BUILTIN_MAX_ALTERNATIVES]
    for x in alts:
        instead = f" for {main}" if main else ""
        rank = (f"lower-ranked candidate (score {x.score:.2f} < "
                f"{caps.BUILTIN_PRIMARY_SCORE_RATIO} x top {top:.2f})"
                if x.score < caps.BUILTIN_PRIMARY_SCORE_RATIO * top else
                f"candidate the request does not name (score {x.score:.2f}, top {top:.2f})")
        all_drafts[f"alt:{x.entity}"] = _Draft(
            "modify", x.entity, [f"05 localization: {rank}; substitute{instead} only if the main "
                                 "hypothesis is falsified"],
            f"05 localization {x.entity} score {x.score:.2f}", ix.check([x.entity]),
            deps=list(mods[main].deps) if main else [], alternative=True)
    return _number(all_drafts)


def _test_entity(ix: _Index, test: str, default: str) -> str:
    """The evidence's own id for the test `test` (a pytest id), else `default`."""
    return next((k for k, v in ix.tests.items() if v == test), default if "::" not in test
                else test)


def _edge(i: ImpactEdge) -> str:
    return _cut(f"06 impact {i.src} -> {i.dst} {i.relation} {i.cause} {i.confidence:.2f}",
                caps.EVIDENCE_MAX_CHARS)


def _test_file(ix: _Index, order: list[str], text: str) -> str:
    """Where a derived test goes: the test file of the changed entities whose name the criteria
    speak of most (`test_config.py` for "configuration"), else the first one's."""
    files = [f for e in order for f in sorted({t.split("::")[0] for t in ix.exercised.get(e, ())})]
    words = _words(text)

    def score(f: str) -> int:
        stems = {w for w in _words(f.rsplit("/", 1)[-1][:-3]) if len(w) >= 4}
        return sum(1 for w in words if any(w.startswith(s) for s in stems))

    if files:
        return max(dict.fromkeys(files), key=lambda f: (score(f), -files.index(f)))
    mod = next((m for m in (ix.module(e) for e in order) if m), "module")
    return f"tests/test_{mod.rsplit('.', 1)[-1]}.py"


def _preserve_default(drafts: dict[str, _Draft], ix: _Index, ev: Evidence, order: list[str],
                      widened: list[str], n: int, c: str, tests: list[str]) -> str:
    """The preserve of the old default (§3.2 ladder rule 2), one per plan, after the widen that
    introduces the new default. Its validation: the named test, else the existing tests the
    default_change edges point at, else the existing tests of the target."""
    edges = [i for i in ev.impact.edges if i.cause == "default_change" and i.src in order]
    target = edges[0].src if edges else (widened or order)[0]
    if "preserve_default" in drafts:
        d = drafts["preserve_default"]
        if c:
            d.why.insert(0, f"criterion {n}: {c}")
        return "preserve_default"
    pinned = tests or sorted({ix.tests[i.dst] for i in edges if i.dst in ix.tests}
                             | {i.dst for i in edges if "::" in i.dst})
    if not pinned:  # the existing tests of the target (and what uses it) that speak of it
        near = {t for e in [target, *order] for t in ix.exercised.get(e, ())}
        pinned = _best_tests(c or "old default", near)
    validation = pinned[0] if len(pinned) == 1 else ix.check([target])
    why = [f"criterion {n}: {c}"] if c else []
    why.append(f"preserve the old default of {target} before anything relies on the new default")
    drafts["preserve_default"] = _Draft(
        "preserve", target, why, _edge(edges[0]) if edges else f"requirement criterion {n}",
        validation, deps=[f"modify:{target}"])
    return "preserve_default"


def _ancestors(mods: dict[str, _Draft], target: str) -> set[str]:
    """The entities whose modify must come before `target`'s (transitively), `target` included."""
    seen, stack = {target}, [target]
    while stack:
        for k in mods[stack.pop()].deps:
            e = k.split(":", 1)[1]
            if k.startswith("modify:") and e in mods and e not in seen:
                seen.add(e)
                stack.append(e)
    return seen


def _number(drafts: dict[str, _Draft]) -> list[Obligation]:
    """Ids O1..On in a topological order of the declared dependencies, ties by insertion order
    (so the ids read as the schedule); dependencies capped at MAX_DEPENDENCIES (the nearest)."""
    keys = list(drafts)
    pos = {k: i for i, k in enumerate(keys)}
    indeg = {k: len([d for d in drafts[k].deps if d in drafts]) for k in keys}
    users: dict[str, list[str]] = defaultdict(list)
    for k in keys:
        for d in drafts[k].deps:
            if d in drafts:
                users[d].append(k)
    done: list[str] = []
    ready = sorted((k for k in keys if indeg[k] == 0), key=pos.__getitem__)
    while len(done) < len(keys):
        if not ready:  # a cycle: break it at the earliest remaining draft (the planner collapses)
            ready = [min((k for k in keys if k not in done), key=pos.__getitem__)]
        k = ready.pop(0)
        if k in done:
            continue
        done.append(k)
        for u in users[k]:
            indeg[u] -= 1
            if indeg[u] == 0:
                ready.append(u)
        ready.sort(key=pos.__getitem__)
    ids = {k: f"O{i}" for i, k in enumerate(done, 1)}
    out = []
    for k in done:
        draft = drafts[k]
        dep_ids = sorted({ids[x] for x in draft.deps if x in ids and x != k},
                         key=lambda s: int(s[1:]))
        why = "; ".join(dict.fromkeys(draft.why))
        if len(dep_ids) > caps.MAX_DEPENDENCIES:
            why += f" (+{len(dep_ids) - caps.MAX_DEPENDENCIES} earlier predecessors via the rules)"
            dep_ids = dep_ids[-caps.MAX_DEPENDENCIES:]
        status = "alternative" if draft.alternative else ("blocked" if dep_ids else "ready")
        out.append(Obligation.model_validate({
            "id": ids[k], "target_entity": draft.target, "obligation": draft.verb,
            "caused_by": _cut(why, caps.FIELD_MAX_CHARS), "dependencies": dep_ids,
            "evidence": _cut(draft.evidence, caps.EVIDENCE_MAX_CHARS), "status": status,
            "validation": _cut(draft.validation, caps.FIELD_MAX_CHARS)}))
    return out


def derive_scoped(requirement: dict[str, Any], evidence: Evidence,
                  scope: dict[str, Any]) -> list[Obligation]:
    """A scoped re-decomposition (§3.5, §4 "Re-invocation on replan"): the subgraph's obligations
    kept as they are (same ids), plus a rebind modify, under a fresh id, for each consumer the
    evidence neighbourhood says a modified target breaks and no obligation covers. The offline
    builtin cannot rethink a failure; it adds only what the evidence demands."""
    sub = [Obligation.model_validate(r) for r in scope.get("obligations", [])]
    prefix = str(scope.get("fresh_id_prefix", "R"))
    failure = str(scope.get("failure") or "")
    ix = _Index(evidence)
    targeted = {o.target_entity for o in sub}
    out = [o.model_copy(deep=True) for o in sub]
    fresh: list[Obligation] = []
    for o in sub:
        if o.obligation != "modify" or o.status == "alternative":
            continue
        for i in ix.out.get(o.target_entity, []):
            if i.cause not in REBIND_CAUSES or ix.is_test(i.dst) or i.dst in targeted:
                continue
            targeted.add(i.dst)
            why = (f"scoped replan of {o.id}: 06 {i.cause}: {i.dst} consumes {o.target_entity} "
                   "and no obligation covers it; rebind it after the change")
            if failure:
                why += f" (failure: {_cut(failure, 160)})"
            fresh.append(Obligation(
                id=f"{prefix}{len(fresh) + 1}", target_entity=i.dst, obligation="modify",
                caused_by=_cut(why, caps.FIELD_MAX_CHARS), dependencies=[o.id], evidence=_edge(i),
                status="blocked", validation=ix.check([i.dst])))
    for o in out:
        if o.obligation == "validate" and o.validation == "compile":
            room = caps.MAX_DEPENDENCIES - len(o.dependencies)
            o.dependencies += [f.id for f in fresh][: max(room, 0)]
    return out + fresh
