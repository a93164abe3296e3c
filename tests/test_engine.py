"""The engine: parser (errors at file:line:col), IR, stratification, both backends and the
reference evaluator, pyDatalog's measured quirks, thread isolation, and differential testing."""

from __future__ import annotations

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan07.engine import ENGINES, evaluate, load_program, naive
from plan07.engine.ir import Compare, Const, Var
from plan07.engine.parser import parse
from plan07.engine.strata import stratify
from plan07.errors import InputError, RuleError

PARSE_OK = [
    ("nothing(X) :- q(X, _), not notes(X).", "nothing", 2),
    ('p("a").', "p", 0),
    ('p(X) :- q(X, _), !r(X), X != "b".', "p", 3),
    ("p(X) :- q(X), not r(X).", "p", 2),
    ('p(X) :- q(X, Y), Y = "x.y::z/w".', "p", 2),
    ("p(1).", "p", 0),
]


@pytest.mark.parametrize(("text", "head", "nbody"), PARSE_OK)
def test_parse_ok(text: str, head: str, nbody: int) -> None:
    prog = parse(".decl q(a: symbol, b: symbol)\n.input q\n" + text, "t.dl")
    assert all(not lit.negated or lit.atom for lit in prog.rules[0].body)
    r = prog.rules[0]
    assert (r.head.relation, len(r.body)) == (head, nbody)


def test_parse_details() -> None:
    prog = parse('// @rule my_rule\n// @allow cross_product\np(X) :- q(X), !r(X), X != "a\\"b".\n',
                 "f.dl")
    r = prog.rules[0]
    assert (r.rule_id, r.allows, r.line) == ("my_rule", frozenset({"cross_product"}), 3)
    assert r.body[1].negated
    assert r.body[2].item == Compare("!=", Var("X"), Const('a"b'))


PARSE_BAD = [
    ("p(X) :- q(X)", 1, 12),          # missing final dot (reported at the last token)
    ("p(X) :- q(X) r(X).", 1, 14),    # missing comma
    ("\n\nP(X) :- q(X).", 3, 1),       # relation names are lower case
    ('p("open) :- q(X).', 1, 3),      # unterminated string
]


@pytest.mark.parametrize(("text", "line", "col"), PARSE_BAD)
def test_parse_error_names_file_line_col(text: str, line: int, col: int) -> None:
    with pytest.raises(RuleError) as exc:
        parse(text, "bad.dl")
    assert (exc.value.file, exc.value.line, exc.value.col) == ("bad.dl", line, col)
    assert str(exc.value).startswith(f"bad.dl:{line}:{col}: syntax error")


def test_unstratifiable_negation_names_the_cycle() -> None:
    text = ".decl a(x: symbol)\n.input a\np(X) :- a(X), q(X).\nq(X) :- a(X), !p(X).\n"
    prog = parse(text, "c.dl")
    with pytest.raises(RuleError, match=r"c.dl:4:1: unstratifiable negation: p -> q -> p"):
        stratify(prog)


def test_stratification_orders_negation_after_its_relation() -> None:
    prog = load_program()
    strata = stratify(prog)
    pos = {r.head.relation: i for i, s in enumerate(strata) for r in s}
    assert pos["beaten"] < pos["precedes"] < pos["violation"]


SMALL = """
.decl a(x: symbol)
.input a
.decl b(x: symbol)
.input b
bad(X) :- !b(X), a(X).
good(X) :- a(X), !b(X).
proj(X) :- a(X), !c(X, _).
c("2", "z").
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_negation_first_body_is_reordered(engine: str) -> None:
    # design.md: pyDatalog answers `bad(X) <= ~b(X) & a(X)` with nothing; the translator
    # puts positive atoms first, so both orders give {1}.
    m = evaluate(parse(SMALL, "s.dl"), {"a": {("1",), ("2",)}, "b": {("3",)}}, engine)
    assert m["bad"] == m["good"] == {("1",), ("2",)}
    assert m["proj"] == {("1",)}


@pytest.mark.parametrize("engine", ENGINES)
def test_empty_input_relation_does_not_raise(engine: str) -> None:
    m = evaluate(load_program(), {}, engine)
    assert m["precedes"] == set()
    assert m["violation"] == set()
    # the ladder's transitive order, from the file: a chain, so every pair once
    assert len(m["outranks"]) == 14 * 13 // 2  # 14 rungs, a total order


def test_unknown_engine_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown engine 'souffle'; known: pydatalog, clingo"):
        evaluate(load_program(), {}, "souffle")


def test_pydatalog_is_isolated_across_threads() -> None:
    prog = load_program()
    results: dict[int, set] = {}  # type: ignore[type-arg]

    def run(i: int) -> None:
        facts = {"obligation": {(f"O{i}", "modify")}, "targets": {(f"O{i}", "e")}}
        results[i] = evaluate(prog, facts, "pydatalog")["violation"]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(6)]  # parse is locked
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(6):  # each saw only its own obligation: no state leaked between Logic()s
        assert results[i] == {(f"O{i}", f"O{i}", "ungrounded")}


@pytest.mark.parametrize("enabled", [True, False])
def test_pydatalog_leaves_the_collector_as_it_found_it_and_no_cycles(enabled: bool) -> None:
    import gc

    prog = load_program()
    facts = {"obligation": {("O1", "modify"), ("O2", "validate")},
             "targets": {("O1", "e"), ("O2", "e")}, "declared_dep": {("O2", "O1")},
             "has_cause": {("O1",)}, "check_kind": {("O2", "compile")}}
    want = evaluate(prog, facts, "pydatalog")
    assert ("O1", "O2", "declared") in want["precedes"]
    gc.collect()
    was = gc.isenabled()
    try:
        if not enabled:
            gc.disable()
        got = evaluate(prog, facts, "pydatalog")
        assert gc.isenabled() is enabled
        assert gc.get_freeze_count() == 0  # the caller's objects are back in the collector's view
        if enabled:  # pyDatalog's cycles were freed or collected by the evaluation itself
            assert gc.collect() == 0
    finally:
        if was:
            gc.enable()
    assert got == want


def test_pydatalog_rules_loaded_once_evaluate_as_a_fresh_load(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """pyDatalog's clauses of a program are loaded once per program and thread and kept without
    facts: an evaluation after a cache hit equals one on a fresh load, no fact of an earlier
    evaluation reaches a later one, an error mid-way drops the entry, and a changed rule file
    is another program (a miss)."""
    from plan07.engine import pydatalog_backend as pb

    prog = load_program()
    one = {"obligation": {("O1", "modify"), ("O2", "validate")},
           "targets": {("O1", "e"), ("O2", "e")}, "declared_dep": {("O2", "O1")},
           "has_cause": {("O1",)}, "check_kind": {("O2", "compile")}}
    two = {"obligation": {("O7", "modify")}, "targets": {("O7", "f")}}

    def fresh(facts: dict) -> dict:  # type: ignore[type-arg]
        pb._local.__dict__.pop("rules", None)
        return evaluate(prog, facts, "pydatalog")

    want_one, want_two = fresh(one), fresh(two)
    assert ("O1", "O2", "declared") in want_one["precedes"]
    assert want_two["violation"] == {("O7", "O7", "ungrounded")}
    assert want_one == evaluate(prog, one, "clingo")
    cached = pb._local.rules
    assert len(cached) == 1
    for facts, want in ((one, want_one), (two, want_two), (one, want_one), (two, want_two)):
        assert evaluate(prog, facts, "pydatalog") == want  # hits: nothing carried over
    assert pb._local.rules is cached
    assert len(cached) == 1

    entry = next(iter(cached.values()))
    with pytest.raises(TypeError):  # a fact that is not a tuple: the evaluation fails mid-way
        evaluate(prog, {**two, "targets": {("O7", "f"), 5}}, "pydatalog")  # type: ignore[arg-type]
    assert entry not in cached.values()  # never reused with what it may still hold
    assert evaluate(prog, two, "pydatalog") == want_two

    rules = tmp_path / "small.dl"
    rules.write_text(SMALL)
    facts = {"a": {("1",), ("2",)}, "b": {("3",)}}
    assert evaluate(load_program(rules), facts, "pydatalog")["good"] == {("1",), ("2",)}
    rules.write_text(SMALL.replace("good(X) :- a(X), !b(X).", 'good(X) :- a(X), X != "1".'))
    changed = evaluate(load_program(rules), facts, "pydatalog")
    assert changed["good"] == {("2",)}
    assert changed == evaluate(load_program(rules), facts, "clingo")


# ---- differential: random small fact sets, every relation, all three evaluators -------------

IDS = ["O1", "O2", "O3", "O4", "O9"]
ENTS = ["e1", "e2", "e3", "e4"]
TESTS = ["t1", "t2"]


def _facts() -> st.SearchStrategy[dict[str, set[tuple[str, ...]]]]:
    def rel(*doms: list[str]) -> st.SearchStrategy[set[tuple[str, ...]]]:
        return st.sets(st.tuples(*(st.sampled_from(d) for d in doms)), max_size=6)

    return st.fixed_dictionaries({
        "obligation": rel(IDS[:4], ["modify", "preserve", "validate"]),
        "status": rel(IDS[:4], ["ready", "blocked", "alternative"]),
        "targets": rel(IDS[:4], ENTS),
        "declared_dep": rel(IDS[:4], IDS),
        "has_cause": rel(IDS[:4]),
        "check_kind": rel(IDS[:4], ["compile", "import", "pytest_node", "unverifiable"]),
        "names_test": rel(IDS[:4], TESTS),
        "defines_test": rel(IDS[:4], TESTS),
        "mentions": rel(IDS[:4], ["default", "old_default", "new_default"]),
        "entity": rel(ENTS, ["class", "migration", "function", "schema"]),
        "edge": rel(ENTS, ENTS, ["calls", "uses_type", "inherits", "reads", "writes"]),
        "impact": rel(ENTS, ENTS, ["sig_change", "schema_change", "consumer_rebind",
                                   "migration", "test_anchor"]),
        "test_exists": rel(TESTS),
    })


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_facts())
def test_backends_agree_on_random_facts(facts: dict[str, set[tuple[str, ...]]]) -> None:
    prog = load_program()
    py = evaluate(prog, facts, "pydatalog")
    cl = evaluate(prog, facts, "clingo")
    ref, _ = naive.evaluate(prog, facts)
    assert py == cl
    assert {r: ref.get(r, set()) for r in py} == py


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_facts())
def test_a_slice_derives_what_it_wants_as_the_whole_program(
        facts: dict[str, set[tuple[str, ...]]]) -> None:
    """The re-walk of an observed edit loads only the rules `precedes` and `violation` read."""
    from plan07.engine import sliced

    prog = load_program()
    part = sliced(prog, ("precedes", "violation"))
    assert sliced(prog, ("precedes", "violation")) is part  # once per program
    assert len(part.rules) < len(prog.rules)
    assert "finding" not in part.relations()  # the plan lint's rules are not in it
    whole = evaluate(prog, facts, "pydatalog")
    got = evaluate(part, facts, "pydatalog")
    assert {r: got[r] for r in ("precedes", "violation")} == {
        r: whole[r] for r in ("precedes", "violation")}
