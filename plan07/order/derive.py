"""§3.2 dependency graph over obligations: the input facts (plan07.order.inputs) ->
rules/ordering.dl on a backend -> derived edges and violations; and explain. Pure (apart from
reading the rule file once).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from plan07 import caps
from plan07.engine.ir import Facts
from plan07.errors import InputError
from plan07.model import DerivedEdge, Evidence, Obligation, OrderResult, Violation
from plan07.model.proof import Proof
from plan07.order.inputs import Extra, FactSet, Observed, Roles, check_caps, prepare_facts


def _evaluate(obligations: Sequence[Obligation], evidence: Evidence, engine: str,
              rules_path: Path | None, role_facts: Roles = None,
              observed: Observed = None, extra: Extra = None,
              wanted: tuple[str, ...] = ()) -> tuple[Facts, FactSet]:
    """The model of the rules (only what derives `wanted`, when given) over the facts. The engine's
    name is checked where `evaluate` picks its backend."""
    from plan07.engine import evaluate, load_program, sliced

    check_caps(obligations)
    fs = prepare_facts(obligations, evidence, role_facts=role_facts, observed=observed,
                       extra=extra)
    program = load_program(rules_path)
    return evaluate(sliced(program, wanted) if wanted else program, fs.facts, engine), fs


def run_rules(obligations: Sequence[Obligation], evidence: Evidence, *, engine: str,
              rules_path: Path | None = None, role_facts: Roles = None,
              observed: Observed = None, extra: Extra = None) -> Facts:
    """The rules' whole model over the obligations, the evidence and `extra` facts."""
    return _evaluate(obligations, evidence, engine, rules_path, role_facts, observed, extra)[0]


def _detail(kind: str, a: str, b: str, model: Facts) -> str:
    if kind == "contradicts_ladder":
        rule = next((r for x, y, r in sorted(model.get("precedes", ())) if (x, y) == (b, a)), "?")
        return (f"{b} declares a dependency on {a}, but rule {rule} orders {b} before {a}; "
                "the declared edge is not followed")
    return {
        "unknown_dependency": f"{a} depends on {b}, which is not an obligation in this plan",
        "ungrounded": f"{a} has empty caused_by and dependencies and is not an alternative: "
                      "rejected as ungrounded (§3.2)",
        "unplanned_consumer": f"{a} changes a signature {b} consumes, and no obligation "
                              f"targets {b}: the repo would break at that step",
        "breaking_change": f"{a} makes a breaking change with no widening step and {b} rebinds "
                           "to it: the scheduler runs them as one atomic step",
        "behaviour_change": f"{b} rewrites tests that exercise what {a} changes (its edit "
                            "observed to change their behaviour, or landing with one that was): "
                            "the scheduler runs them as one atomic step",
    }.get(kind, "")


def derive_order(obligations: Sequence[Obligation], evidence: Evidence, *,
                 engine: str = "pydatalog", rules_path: Path | None = None,
                 role_facts: Roles = None, observed: Observed = None) -> OrderResult:
    """The edges the scheduler must follow (`precedes`) and the violations (§3.2 steps 1-2).
    `role_facts`: those plan07 gave the obligations it wrote (the plan's `roles`); `observed`:
    what the gate read off their edits so far (the plan's `observed`)."""
    model, _ = _evaluate(obligations, evidence, engine, rules_path, role_facts, observed,
                         wanted=("precedes", "violation"))
    edges = [DerivedEdge.model_validate({"from": a, "to": b, "rule": r})
             for a, b, r in sorted(model.get("precedes", set()))]
    violations = []
    for a, b, kind in sorted(model.get("violation", set()), key=lambda t: (t[2], t[0], t[1])):
        nodes = [str(a)] if a == b else [str(a), str(b)]
        violations.append(Violation(kind=str(kind), nodes=nodes,
                                    detail=_detail(str(kind), str(a), str(b), model)))
    return OrderResult(edges=edges, violations=violations, cycles=cycles_of(edges))


def cycles_of(edges: Sequence[DerivedEdge]) -> list[list[str]]:
    """The dependency cycles among `edges`: each strongly connected component of two or more
    obligations, members in natural id order (the scheduler collapses each into one step)."""
    from plan07.engine.graphs import sccs
    from plan07.vocab import natural_key, sort_ids

    succ: dict[str, list[str]] = {}
    for e in edges:
        succ.setdefault(e.from_, []).append(e.to)
        succ.setdefault(e.to, [])
    comps = [sort_ids(c) for c in sccs(sort_ids(succ), succ) if len(c) > 1]
    return sorted(comps, key=lambda c: natural_key(c[0]))


def roles(obligations: Sequence[Obligation], evidence: Evidence, *,
          engine: str = "pydatalog", rules_path: Path | None = None,
          role_facts: Roles = None) -> dict[str, list[str]]:
    """Each obligation's derived roles (role/2), sorted."""
    model, _ = _evaluate(obligations, evidence, engine, rules_path, role_facts)
    out: dict[str, list[str]] = {o.id: [] for o in obligations}
    for o, r in sorted(model.get("role", set())):
        out.setdefault(str(o), []).append(str(r))
    return out


def explain_atom(obligations: Sequence[Obligation], evidence: Evidence, relation: str,
                 pattern: tuple[str | None, ...], *, engine: str = "pydatalog",
                 depth: int | None = None, rules_path: Path | None = None,
                 role_facts: Roles = None, observed: Observed = None,
                 extra: Extra = None) -> Proof:
    """A proof of the first (sorted) tuple of `relation` matching `pattern` (None = any), with
    the minimal height; or, when none holds, why not."""
    from plan07.engine import load_program, provenance

    if depth is not None and not 0 <= depth <= caps.DEPTH_MAX:
        raise InputError(f"depth must be in 0..{caps.DEPTH_MAX}, got {depth}", field="--depth")
    backend_model, fs = _evaluate(obligations, evidence, engine, rules_path, role_facts,
                                  observed, extra)
    proof = provenance.explain_facts(load_program(rules_path), fs.facts, fs.sources, relation,
                                     pattern, depth)
    if proof.holds != bool(provenance.find(backend_model, relation, pattern)):
        raise InputError(f"{engine} and the reference evaluator disagree on "
                         f"{relation}{pattern}; run `plan07 rules test --engine both`")
    return proof


def explain(obligations: Sequence[Obligation], evidence: Evidence, src: str, dst: str, *,
            engine: str = "pydatalog", depth: int | None = None,
            rules_path: Path | None = None, role_facts: Roles = None,
            observed: Observed = None) -> Proof:
    """Why the edge src -> dst exists (`precedes(src, dst, Rule)`), or why not."""
    proof = explain_atom(obligations, evidence, "precedes", (src, dst, None), engine=engine,
                         depth=depth, rules_path=rules_path, role_facts=role_facts,
                         observed=observed)
    if not proof.holds:
        order = derive_order(obligations, evidence, engine=engine, rules_path=rules_path,
                             role_facts=role_facts, observed=observed)
        rev = [e for e in order.edges if (e.from_, e.to) == (dst, src)]
        if rev:
            proof.why_not.insert(0, f"the reverse edge {dst} -> {src} holds by rule {rev[0].rule}"
                                    f" (see `plan07 explain {dst} {src}`)")
    return proof


def explain_violation(obligations: Sequence[Obligation], evidence: Evidence, kind: str,
                      nodes: Sequence[str], *, engine: str = "pydatalog", depth: int | None = None,
                      rules_path: Path | None = None, role_facts: Roles = None,
                      observed: Observed = None) -> Proof:
    """Why `violation(A, B, kind)` holds (a one-node violation has A == B), or why not."""
    if not 1 <= len(nodes) <= 2:
        raise InputError("a violation names one or two nodes", field="NODES")
    a, b = nodes[0], nodes[-1]
    return explain_atom(obligations, evidence, "violation", (a, b, kind), engine=engine,
                        depth=depth, rules_path=rules_path, role_facts=role_facts,
                        observed=observed)
