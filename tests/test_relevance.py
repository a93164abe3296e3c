"""plan07.engine.relevance: pruning the input facts never changes the derived model, on every
rule fixture and on generated evidence, on both backends; pruned for the outputs only, the
outputs are unchanged; prepare_facts (what the rules can use for the outputs) gives the answer
all the evidence gives."""

from __future__ import annotations

import random

import pytest

from plan07.engine import ENGINES, evaluate, load_program
from plan07.engine.relevance import prune
from plan07.model import Evidence, ImpactEdge, Obligation, Recon, ReconEdge, ReconNode
from plan07.order.derive import derive_order
from plan07.order.fixtures import case_facts, discover
from plan07.order.inputs import all_facts, prepare_facts

PROGRAM = load_program()
DERIVED = sorted(PROGRAM.derived())
OUTPUTS = sorted(PROGRAM.outputs)


def _derived(model):  # type: ignore[no-untyped-def]
    return {rel: model[rel] for rel in DERIVED}


def _outputs(model):  # type: ignore[no-untyped-def]
    return {rel: model[rel] for rel in OUTPUTS}


@pytest.mark.parametrize("engine", ENGINES)
def test_every_fixture_same_model_when_everything_prunable_is_pruned(engine: str) -> None:
    cases = discover()
    assert len(cases) > 50
    if engine == "pydatalog":  # the slow backend on every 8th case (clingo runs them all)
        cases = cases[::8]
    dropped = more = 0
    for case in cases:
        facts = case_facts(case)
        small = prune(PROGRAM, facts, min_size=0)
        dropped += sum(len(facts[r]) - len(small[r]) for r in facts)
        full = evaluate(PROGRAM, facts, engine)
        assert _derived(evaluate(PROGRAM, small, engine)) == _derived(full), case.id
        fewer = prune(PROGRAM, facts, min_size=0, outputs=PROGRAM.outputs)
        assert all(fewer[r] <= small[r] for r in facts), case.id
        more += sum(len(small[r]) - len(fewer[r]) for r in facts)
        assert _outputs(evaluate(PROGRAM, fewer, engine)) == _outputs(full), case.id
    assert dropped > 0  # the fixtures do hold facts no rule can use
    assert more > 0 or engine == "pydatalog"  # and facts only a non-output relation can use


def test_negated_and_derived_relations_are_never_pruned() -> None:
    facts = {"test_exists": {(f"t{i}",) for i in range(500)},
             "mentions": {(f"O{i}", "default") for i in range(500)},
             "edge": {(f"a{i}", f"b{i}", "calls") for i in range(500)}}
    out = prune(PROGRAM, facts)
    assert out["test_exists"] is facts["test_exists"]
    assert out["mentions"] is facts["mentions"]
    assert out["edge"] == set()  # nothing is planned: no rule can use an edge


def _random_case(seed: int) -> tuple[list[Obligation], Evidence]:
    rnd = random.Random(seed)
    # members nested in modules (part_of, consumes_member and its negations get work to do)
    mods = [f"pkg.m{i}" for i in range(8)]
    ents = mods + [f"pkg.m{i % 8}.f{i}" for i in range(40)]
    kinds = ["function", "class", "schema", "migration", "config", "module"]
    nodes = [ReconNode(id=e, kind="module" if e in mods else rnd.choice(kinds)) for e in ents]
    nodes += [ReconNode(id=f"tests.test_m{i}.test_{i}", kind="test", file=f"tests/test_m{i}.py")
              for i in range(5)]
    ekinds = ["calls", "imports", "uses_type", "reads", "writes", "inherits", "defines", "tests"]
    seen, edges = set(), []
    for _ in range(150):
        e = (rnd.choice(ents), rnd.choice(ents), rnd.choice(ekinds))
        if e[0] != e[1] and e not in seen:
            seen.add(e)
            edges.append(ReconEdge(src=e[0], dst=e[1], kind=e[2]))
    causes = ["sig_change", "schema_change", "consumer_rebind", "migration", "default_change"]
    impact = [ImpactEdge(src=rnd.choice(ents), dst=rnd.choice(ents), relation="CalledBy",
                         cause=rnd.choice(causes), confidence=0.5) for _ in range(30)]
    obs = []
    for i in range(rnd.randint(2, 9)):
        verb = rnd.choice(["modify", "modify", "preserve", "validate"])
        target = rnd.choice(ents)
        validation = rnd.choice(["compile", f"tests/test_m{i % 7}.py::test_{i % 7}", "import:pkg"])
        caused = rnd.choice(["impact06", "", "keep the old default", "custom value",
                             "a breaking change", "a compatible change (optional parameter)"])
        deps = [f"O{j}" for j in range(i) if rnd.random() < 0.2]
        obs.append(Obligation(id=f"O{i}", target_entity=target, obligation=verb,
                              caused_by=caused, dependencies=deps, evidence="e",
                              status="ready", validation=validation))
    return obs, Evidence(recon=Recon(nodes=nodes, edges=edges), impact={"edges": impact})


@pytest.mark.parametrize("seed", range(12))
def test_prepare_facts_gives_the_model_of_all_the_evidence(seed: int) -> None:
    obs, ev = _random_case(seed)
    loaded = prepare_facts(obs, ev).facts
    everything = all_facts(obs, ev).facts
    assert sum(map(len, loaded.values())) <= sum(map(len, everything.values()))
    for engine in ENGINES if seed < 2 else ("clingo",):
        assert _outputs(evaluate(PROGRAM, loaded, engine)) == _outputs(
            evaluate(PROGRAM, everything, engine))


def _member_case(validate_pkg: bool) -> tuple[list[Obligation], Evidence]:
    """pkg.a.f (a member of module pkg.a) calls pkg.b.g; O1 makes a breaking change to pkg.b.g,
    and O2 targets module pkg.a with `validate` (or `modify`)."""
    nodes = [ReconNode(id=i, kind=k) for i, k in (
        ("pkg.a", "module"), ("pkg.a.f", "function"), ("pkg.b", "module"),
        ("pkg.b.g", "function"))]
    edges = [ReconEdge(src="pkg.a.f", dst="pkg.b.g", kind="calls")]
    obs = [Obligation(id="O1", target_entity="pkg.b.g", obligation="modify",
                      caused_by="a breaking change: remove the parameter", dependencies=[],
                      evidence="e", status="ready", validation="compile"),
           Obligation(id="O2", target_entity="pkg.a",
                      obligation="validate" if validate_pkg else "modify", caused_by="",
                      dependencies=[], evidence="e", status="ready", validation="compile")]
    return obs, Evidence(recon=Recon(nodes=nodes, edges=edges))


def test_prepare_facts_loads_no_edge_only_a_non_output_relation_can_use() -> None:
    # consumes(pkg.a, pkg.b.g) holds (a module consumes what its members call), but only a
    # modify target's consumes reaches precedes / violation / role: validated, pkg.a.f's call
    # is not loaded (the value sets alone keep it); modified, it is, and O2 rebinds
    obs, ev = _member_case(validate_pkg=True)
    call = ("pkg.a.f", "pkg.b.g", "calls")
    loaded = prepare_facts(obs, ev)
    assert call not in loaded.facts.get("edge", set())
    # nor is pkg.a.f's part_of(pkg.a) (a negated relation, pruned for the outputs: kept only
    # where a negation can read it), nor its source
    assert ("pkg.a.f", "pkg.a") not in loaded.facts["part_of"]
    assert ("part_of", ("pkg.a.f", "pkg.a")) not in loaded.sources
    everything = all_facts(obs, ev).facts
    assert call in prune(PROGRAM, everything, min_size=0)["edge"]
    assert ("pkg.a", "pkg.b.g") in evaluate(PROGRAM, everything)["consumes"]
    obs, ev = _member_case(validate_pkg=False)
    assert call in prepare_facts(obs, ev).facts["edge"]
    assert ("pkg.a.f", "pkg.a") in prepare_facts(obs, ev).facts["part_of"]
    assert ("O2", "rebind") in evaluate(PROGRAM, prepare_facts(obs, ev).facts)["role"]


def test_prepare_facts_keeps_each_loaded_fact_source() -> None:
    obs, ev = _random_case(3)
    fs, full = prepare_facts(obs, ev), all_facts(obs, ev)
    for rel, ts in fs.facts.items():
        for t in ts:
            assert fs.sources[(rel, t)] == full.sources[(rel, t)]
    assert derive_order(obs, ev) == derive_order(obs, ev, engine="clingo")


# -- random stratified programs: the pruning is exact for any rule file, not only the ladder ----

_INPUTS = {"a": 2, "b": 2, "c": 1, "d": 2}


def _random_program(rnd: random.Random) -> tuple[str, list[str]]:
    """Layers of derived relations over four inputs and the layers below: positive atoms with
    shared variables and constants, now and then a negated atom (its variables bound)."""
    arity, lines, derived = dict(_INPUTS), [], []
    for k in range(rnd.randint(3, 6)):
        head, pool = f"r{k}", list(arity)  # the layers below (no recursion, no cycle)
        for _ in range(rnd.randint(1, 2)):
            body: list[str] = []
            names: list[str] = []
            for _ in range(rnd.randint(1, 3)):
                rel = rnd.choice(pool)
                args = []
                for _ in range(arity[rel]):
                    if names and rnd.random() < 0.5:
                        args.append(rnd.choice(names))
                    elif rnd.random() < 0.15:
                        args.append(f'"k{rnd.randint(0, 4)}"')
                    else:
                        names.append(f"V{len(names)}")
                        args.append(names[-1])
                body.append(f"{rel}({', '.join(args)})")
            if not names:
                continue
            if rnd.random() < 0.6:
                rel = rnd.choice(pool)
                args = [rnd.choice(names) if rnd.random() < 0.8 else f'"k{rnd.randint(0, 4)}"'
                        for _ in range(arity[rel])]
                body.append(f"!{rel}({', '.join(args)})")
            width = arity.get(head) or rnd.choice([1, 2])
            lines.append(f"{head}({', '.join(rnd.choice(names) for _ in range(width))}) :- "
                         f"{', '.join(body)}.")
            arity[head] = width
        if head in arity:
            derived.append(head)
    outs = [d for d in derived if rnd.random() < 0.4] or derived[-1:]
    decls = [f".decl {r}({', '.join(f'x{i}: symbol' for i in range(n))})"
             for r, n in arity.items()]
    decls += [f".input {r}" for r in _INPUTS] + [f".output {r}" for r in outs]
    return "\n".join(decls + lines) + "\n", outs


def test_random_programs_prune_exactly() -> None:
    from plan07.engine.naive import evaluate as naive
    from plan07.engine.parser import parse

    checked = 0
    for seed in range(300):
        rnd = random.Random(seed)
        text, outs = _random_program(rnd)
        prog = parse(text)
        facts = {r: {tuple(f"k{rnd.randint(0, 4)}" for _ in range(n))
                     for _ in range(rnd.randint(0, 12))} for r, n in _INPUTS.items()}
        full, _ = naive(prog, facts)
        whole, _ = naive(prog, prune(prog, facts, min_size=0))
        assert all(whole.get(r) == full.get(r) for r in prog.derived()), text
        fewer, _ = naive(prog, prune(prog, facts, min_size=0, outputs=outs))
        assert all(fewer.get(r, set()) == full.get(r, set()) for r in outs), text
        checked += 1
    assert checked == 300
