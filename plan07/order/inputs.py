"""The rules' input facts (§3.2 step 1): obligations + evidence + what the gate observed ->
facts, each with its source (for explain), under the §3.2 caps. The fact vocabulary is
docs/rules.md. Only the recon/impact neighbourhood of the obligations' targets is loaded (the
entity set of plan07.evidence.neighbourhood, via its `reach`), so a large repository does not
load every fact. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from plan07 import caps
from plan07.engine.ir import Facts, Program, Tuple_
from plan07.errors import InputError
from plan07.evidence.testmap import TestMap
from plan07.model import (
    Evidence,
    Obligation,
    ObservedChange,
    RoleFacts,
    RoleWord,
)
from plan07.order.roles import words_of
from plan07.vocab import classify, normalize_test

# Keyword facts mentions(O, W): input preparation only; the ordering logic stays in Datalog. An
# obligation plan07 wrote itself brings its own (role facts, plan07.order.roles): no prose is read.
Roles = Mapping[str, RoleFacts] | None
# What the gate observed each obligation's edit change (the plan's `observed`), by obligation id.
Observed = Mapping[str, Sequence[ObservedChange]] | None
KEYWORDS: dict[RoleWord, re.Pattern[str]] = {
    "default": re.compile(r"default", re.I),
    "old_default": re.compile(
        r"old[\s_-]*default|(existing|previous)[\s_-]*default|preserv\w*[\s_-]+(the[\s_-]+)?default"
        r"|default[\s_-]*(behaviou?r|value)?[\s_-]*(is[\s_-]+)?(preserved|unchanged|kept)", re.I),
    "new_default": re.compile(r"custom|new[\s_-]*default|non[\s_-]*default|override|configured",
                              re.I),
    # The kind of interface change a modify makes (docs/rules.md "Interface changes").
    "compatible": re.compile(
        r"(?<![\w-])compatible[\s_-]+(interface[\s_-]+)?change|backwards?[\s_-]*compatible"
        r"|optional[\s_-]+(keyword[\s_-]+)?(parameter|argument|keyword|field)"
        r"|(parameter|argument|keyword|field)s?[\s_-]+with[\s_-]+(a[\s_-]+)?default"
        r"|keep(s|ing)?[\s_-]+the[\s_-]+old[\s_-]+(form|signature|name)", re.I),
    "breaking": re.compile(
        r"breaking[\s_-]+(interface[\s_-]+)?change|backwards?[\s_-]*incompatible"
        r"|incompatible[\s_-]+(interface[\s_-]+)?change"
        r"|(remov|renam|drop)\w*[\s_-]+(the[\s_-]+|a[\s_-]+|its[\s_-]+)?(required[\s_-]+)?"
        r"(parameter|argument|keyword|field|method|function|class|attribute)"
        r"|(made|make[sn]?)[\s_-]+(\w+[\s_-]+){0,2}required|no[\s_-]+longer[\s_-]+accept", re.I),
    # a change of the body only: the interface stays (its callers need no rebind)
    "behaviour": re.compile(
        r"body[\s_-]+(only|change)|behaviou?r[\s_-]+change[\s_-]+only|(its|the)[\s_-]+"
        r"(interface|signature)[\s_-]+(stays|is[\s_-]+kept|does[\s_-]+not[\s_-]+change)"
        r"|no[\s_-]+(interface|signature)[\s_-]+change", re.I),
}


@dataclass
class FactSet:
    """Input facts and, for each, where it came from (for explain)."""

    facts: Facts = field(default_factory=dict)
    sources: dict[tuple[str, Tuple_], list[str]] = field(default_factory=dict)

    def add(self, relation: str, args: Tuple_, source: str) -> None:
        self.facts.setdefault(relation, set()).add(args)
        self.sources.setdefault((relation, args), []).append(source)  # explain de-duplicates


def check_caps(obligations: Sequence[Obligation]) -> None:
    """§3.2 caps: refuse (never truncate) with the cap named."""
    if len(obligations) > caps.MAX_OBLIGATIONS:
        raise InputError(f"{len(obligations)} obligations; re-scope the request",
                         field="obligations", cap=f"MAX_OBLIGATIONS={caps.MAX_OBLIGATIONS}")
    seen: set[str] = set()
    for i, o in enumerate(obligations):
        if o.id in seen:
            raise InputError(f"duplicate obligation id {o.id!r}", field=f"obligations[{i}].id")
        seen.add(o.id)
        if len(o.dependencies) > caps.MAX_DEPENDENCIES:
            raise InputError(f"{len(o.dependencies)} dependencies",
                             field=f"obligations[{i}].dependencies",
                             cap=f"MAX_DEPENDENCIES={caps.MAX_DEPENDENCIES}")
        if len(o.evidence) > caps.EVIDENCE_MAX_CHARS:
            raise InputError(f"evidence is {len(o.evidence)} chars",
                             field=f"obligations[{i}].evidence",
                             cap=f"EVIDENCE_MAX_CHARS={caps.EVIDENCE_MAX_CHARS}")


EVIDENCE_RELATIONS = ("entity", "edge", "impact")


Extra = Mapping[str, Sequence[tuple[Tuple_, str]]] | None  # more input facts, with sources


def prepare_facts(obligations: Sequence[Obligation], evidence: Evidence, *,
                  program: Program | None = None, role_facts: Roles = None,
                  observed: Observed = None, extra: Extra = None) -> FactSet:
    """The input facts of docs/rules.md, each remembering its source (indices are positions in
    the evidence bundle as given). Of the evidence, only the facts some rule of `program` (the
    rule file by default) can use for its `.output` relations are loaded
    (`plan07.engine.relevance.prune`): those (precedes, violation, role: all plan07 reads) are
    the ones all the evidence gives, from a few of its facts."""
    from plan07.engine import load_program
    from plan07.engine.relevance import prune

    own = FactSet()
    _obligations(own, obligations, evidence, role_facts, observed)
    for rel, given in (extra or {}).items():  # the plan lint's (plan07.order.planlint)
        for args, src in given:
            own.add(rel, args, src)
    rows: dict[str, list[Tuple_]] = {
        "entity": [(n.id, n.kind) for n in evidence.recon.nodes],
        "edge": [(e.src, e.dst, e.kind) for e in evidence.recon.edges],
        "impact": [(ie.src, ie.dst, ie.cause) for ie in evidence.impact.edges],
    }
    candidates: Facts = {rel: set(ts) for rel, ts in rows.items()}
    candidates.update(own.facts)
    prog = program or load_program()
    keep = prune(prog, candidates, min_size=0, relations=(*EVIDENCE_RELATIONS, "part_of"),
                 outputs=prog.outputs)
    fs = FactSet()
    impacts = evidence.impact.edges
    for rel in EVIDENCE_RELATIONS:  # in bundle order, each fact with every position it has
        kept = keep[rel]
        if not kept:
            continue
        if len(candidates[rel]) == len(rows[rel]):  # no duplicates: one position per fact
            where = {t: i for i, t in enumerate(rows[rel]) if t in kept}
            found = sorted((i, t) for t, i in where.items())
        else:
            found = [(i, t) for i, t in enumerate(rows[rel]) if t in kept]
        for i, t in found:
            if rel == "entity":
                fs.add(rel, t, f"evidence recon node #{i}")
            elif rel == "edge":
                fs.add(rel, t, f"evidence recon edge #{i}")
            else:
                fs.add(rel, t, f"evidence impact edge #{i} ({impacts[i].relation}, "
                               f"{impacts[i].cause})")
    for rel, ts in own.facts.items():  # part_of: of a package, the members no rule reads
        fs.facts.setdefault(rel, set()).update(ts if keep[rel] is ts else keep[rel])
    for k, srcs in own.sources.items():
        if k[1] in fs.facts[k[0]]:
            fs.sources.setdefault(k, []).extend(srcs)
    return fs


def all_facts(obligations: Sequence[Obligation], evidence: Evidence, *,
              role_facts: Roles = None, observed: Observed = None) -> FactSet:
    """Every input fact of docs/rules.md, the whole evidence included: what `prepare_facts`
    selects from (the benchmarks and the equality tests compare the two)."""
    fs = FactSet()
    for i, n in enumerate(evidence.recon.nodes):
        fs.add("entity", (n.id, n.kind), f"evidence recon node #{i}")
    for i, e in enumerate(evidence.recon.edges):
        fs.add("edge", (e.src, e.dst, e.kind), f"evidence recon edge #{i}")
    for i, ie in enumerate(evidence.impact.edges):
        fs.add("impact", (ie.src, ie.dst, ie.cause),
               f"evidence impact edge #{i} ({ie.relation}, {ie.cause})")
    _obligations(fs, obligations, evidence, role_facts, observed)
    return fs


def _obligations(fs: FactSet, obligations: Sequence[Obligation], evidence: Evidence,
                 role_facts: Roles, observed: Observed = None) -> None:
    """The facts of the obligations themselves, and of how they sit in the bundle: every test
    (test_exists(T), not only the loaded ones), part_of for the planned targets and the
    observed entities, and what the gate observed each one's edit change."""
    test_nodes: dict[str, str] = {}  # normalized test id -> source
    test_files: dict[str, str] = {}  # recon test node id -> its file (the pytest path)
    for i, n in enumerate(evidence.recon.nodes):
        if n.kind == "test":
            if n.file:
                test_files.setdefault(n.id, n.file)
            t = normalize_test(n.id, n.file)
            if t:
                test_nodes.setdefault(t, f"evidence recon node #{i} ({n.id})")
    known = {o.id for o in obligations}
    seen = [(oid, c) for oid, cs in sorted((observed or {}).items()) if oid in known
            for c in cs]
    for oid, c in seen:
        fs.add("observed_change", (oid, c.entity, c.kind),
               f"observed: the gate read {oid}'s edit of {c.file or 'its files'}: {c.what}")
        for x in c.consumers:
            fs.add("observed_consumer", (c.entity, x), f"observed: {x} no longer binds to "
                   f"{c.entity} as {oid}'s edit left it (a call, or an override)")
    _part_of(fs, [o.target_entity for o in obligations] + [c.entity for _, c in seen], evidence)
    for o in obligations:
        words = words_of(o, role_facts)  # its role facts (plan07 wrote it), else None: its prose
        _obligation_facts(fs, o, classify(o.validation), test_nodes, test_files, words)
    behaviour = [c.entity for _, c in seen if c.kind == "behaviour"]
    # with a behaviour change observed, the planned modifies' targets too: the tests landing
    # with it bring the pending changes they exercise (rule tests_land_with_all_they_exercise)
    _tested_through_imports(fs, obligations, behaviour + [
        o.target_entity for o in obligations if behaviour and o.obligation == "modify"],
        evidence)


def _tested_through_imports(fs: FactSet, obligations: Sequence[Obligation],
                            changed: Sequence[str], evidence: Evidence) -> None:
    """imports_tested(E, T) for an entity E whose behaviour an edit was observed to change (or,
    once one was, a planned modify's target) and a
    modify obligation's target T in a test module that imports E's module, or imports a module
    that does (one step, through modules, as the regression run's scope reads it): its tests
    run E's new behaviour though recon links none of them to E (packaging's
    tests/test_requirements.py reaches _parser through requirements.py)."""
    targets = [o.target_entity for o in obligations if o.obligation == "modify"]
    if not changed or not targets:
        return
    tm = TestMap(evidence)
    files = {t: tm.file_of(t) for t in targets}
    for e in sorted(set(changed)):
        mod = tm.module(e)
        if mod is None:
            continue
        reach = set(tm.importing(mod, None))
        for user in tm.importers(mod):
            reach |= set(tm.importing(user, None))
        for t in targets:
            if files[t] in reach:
                fs.add("imports_tested", (e, t), f"recon: {files[t]} imports {mod}, or a "
                       "module that does")


def _part_of(fs: FactSet, entities: Sequence[str], evidence: Evidence) -> None:
    """part_of(X, E) for each planned target or observed entity E that is a recon node: E
    itself, every recon node defined inside it (dotted prefix), and for a constructor
    `C.__init__` its class C (calling C calls it)."""
    from bisect import bisect_left

    ids = sorted({n.id for n in evidence.recon.nodes})
    known = set(ids)
    for e in sorted(set(entities)):
        if e not in known:
            continue
        fs.add("part_of", (e, e), f"recon node {e} (a planned target or an observed change)")
        for x in ids[bisect_left(ids, e + "."):bisect_left(ids, e + "/")]:  # "/" follows "."
            fs.add("part_of", (x, e), f"recon node {x} (defined inside {e})")
        cls, _, last = e.rpartition(".")
        if last in ("__init__", "__new__") and cls in known:
            fs.add("part_of", (cls, e), f"recon node {cls} (calling it calls {e})")


def _obligation_facts(fs: FactSet, o: Obligation, kind: str, tests: dict[str, str],
                      test_files: dict[str, str], words: Sequence[str] | None) -> None:
    src = f"obligation {o.id}"
    fs.add("obligation", (o.id, o.obligation), f"{src} .obligation")
    fs.add("status", (o.id, o.status), f"{src} .status")
    fs.add("targets", (o.id, o.target_entity), f"{src} .target_entity")
    for d in o.dependencies:
        fs.add("declared_dep", (o.id, d), f"{src} .dependencies")
    if o.caused_by.strip():
        fs.add("has_cause", (o.id,), f"{src} .caused_by")
    fs.add("check_kind", (o.id, kind), f"{src} .validation")
    named = normalize_test(o.validation) if kind == "pytest_node" else None
    if named:
        fs.add("names_test", (o.id, named), f"{src} .validation")
        if named in tests:
            fs.add("test_exists", (named,), tests[named])
    if o.obligation == "modify":
        as_test = normalize_test(o.target_entity, test_files.get(o.target_entity.strip()))
        if as_test:
            fs.add("defines_test", (o.id, as_test), f"{src} .target_entity")
            if as_test in tests:  # a rewrite of a test the repository has, no new test
                fs.add("test_exists", (as_test,), tests[as_test])
        elif named and _is_module_of(o.target_entity, named):
            fs.add("defines_test", (o.id, named), f"{src} .target_entity + .validation")
    if words is not None:  # plan07 wrote it: its role facts, never its prose
        for word in words:
            fs.add("mentions", (o.id, word), f"{src} role fact (plan07 wrote it)")
        return
    for word, rx in KEYWORDS.items():
        for fld in ("caused_by", "evidence", "validation"):
            if rx.search(getattr(o, fld)):
                fs.add("mentions", (o.id, word), f"{src} .{fld}")


def _is_module_of(target: str, test: str) -> bool:
    path = test.partition("::")[0]
    mod = path[:-3].replace("/", ".")
    # recon names `src/pkg/m.py` module `pkg.m` (`src/` is a source root, not a package)
    return target.strip() in (path, mod, mod.removeprefix("src."))
