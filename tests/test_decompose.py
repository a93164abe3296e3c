"""§4 decomposition through replay files and the builtin: the parse and its fallback, the prompt
(order, bounds, no bodies), the builtin goldens, the scoped re-invoke, the CLI. No network.

Rewrite the goldens deliberately with
`.venv/bin/pytest tests/test_decompose.py --update-goldens`, then review the diff.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from _decompose_cases import FIXTURE, GOLDEN, GOOD, HOSTILE, record

from plan07 import caps
from plan07.ab.tokens import count_tokens
from plan07.cli import main
from plan07.decompose import LLMClient, make_client
from plan07.decompose.call import (
    assemble,
    decompose,
    decompose_scoped,
    parse,
    requirement_fragment,
    scoped_messages,
)
from plan07.decompose.prompt import SYSTEM, failure_line, header_only, one_line, read
from plan07.decompose.scripted import ScriptedClient
from plan07.errors import InputError
from plan07.model import Evidence, Localization, Obligation, Requirement

CASES = {"session_timeout": FIXTURE, "example": GOLDEN / "example"}


def load(case: Path) -> tuple[Requirement, Evidence]:
    return (Requirement.model_validate_json((case / "requirement.json").read_text()),
            Evidence.model_validate_json((case / "evidence.json").read_text()))


def Counting(inner: LLMClient) -> ScriptedClient:  # noqa: N802
    """Wraps a client and records its calls (the model scripted, no internals patched)."""
    return ScriptedClient(inner, name=inner.name)


def replay(tmp_path: Path, text: str) -> ScriptedClient:
    p = tmp_path / "completion.txt"
    p.write_text(text, "utf-8")
    return Counting(make_client(f"replay:{p}"))


# --- the parse and the §4 fallback -------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_replayed_hostile_output_falls_back_once(name: str, tmp_path: Path) -> None:
    text, why, rescope = HOSTILE[name]
    c = replay(tmp_path, text)
    result = decompose(*load(FIXTURE), c)
    assert len(c.calls) == 1
    assert (result.obligations, result.re_decompose, result.rescope) == ([], True, rescope)
    assert why in (result.reason or "")
    assert result.raw == text
    assert result.client == c.name
    assert result.usage is not None


def test_replayed_good_output_is_used_verbatim(tmp_path: Path) -> None:
    c = replay(tmp_path, GOOD)
    result = decompose(*load(FIXTURE), c)
    assert [o.model_dump() for o in result.obligations] == json.loads(GOOD)["obligations"]
    assert len(c.calls) == 1
    call = c.calls[0]
    assert call["temperature"] == 0
    assert call["max_completion_tokens"] == 2048
    assert call["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("text", [
    f"```json\n{GOOD}\n```", f"```\n{GOOD}\n```", f"  \n```json\n{GOOD}\n```\n ", GOOD,
])
def test_a_json_fence_is_tolerated(text: str) -> None:
    assert len(parse(text).obligations) == 3


@pytest.mark.parametrize("text", [
    f"```python\n{GOOD}\n```", f"```json {GOOD}```", f"{GOOD}\n```", f"json\n{GOOD}",
    GOOD + "\nThat's the plan.",
])
def test_nothing_more_lenient_than_a_fence(text: str) -> None:
    assert parse(text).re_decompose


def test_exactly_64_records_pass() -> None:
    text = json.dumps({"obligations": [record(i) for i in range(1, 65)]})
    assert len(parse(text).obligations) == caps.MAX_OBLIGATIONS == 64


def test_scope_ids_must_stay_in_the_subgraph_or_be_fresh() -> None:
    text = json.dumps({"obligations": [record(3), record(7), {**record(8), "id": "O3.r1"}]})
    assert not parse(text, scope_ids=({"O3", "O7", "O8"}, "O3.r")).re_decompose
    text = json.dumps({"obligations": [record(3), record(8), {**record(9), "id": "O7.r1"}]})
    bad = parse(text, scope_ids=({"O3", "O7"}, "O3.r"))
    assert bad.re_decompose
    assert "id(s) O8, O7.r1 are outside the subgraph" in (bad.reason or "")


# --- the prompt ----------------------------------------------------------------------------------


def test_prompt_order_is_the_spec_order() -> None:
    user = assemble(*load(FIXTURE))[1]["content"]
    marks = ["## requirement", "## evidence", "\nimpact ", "\nlocalization ", "\ncontext ",
             "\nrecon.node ", "\nrecon.edge "]
    pos = [user.index(m) for m in marks]
    assert pos == sorted(pos)
    assert all(len(line) < 700 for line in user.splitlines())


def test_prompt_is_deterministic_under_input_order() -> None:
    req, ev = load(FIXTURE)
    shuffled = ev.model_copy(deep=True)
    rng = random.Random(7)
    rng.shuffle(shuffled.recon.nodes)
    rng.shuffle(shuffled.recon.edges)
    rng.shuffle(shuffled.impact.edges)
    rng.shuffle(shuffled.localization)
    assert assemble(req, ev) == assemble(req, shuffled)


def test_prompt_is_bounded_and_says_what_it_left_out() -> None:
    req, ev = load(FIXTURE)
    data = ev.model_dump()
    data["recon"]["nodes"] += [
        {"id": f"pkg.gen.f{i}", "kind": "function", "file": "pkg/gen.py",
         "signature": f"def f{i}(" + "x, " * 40 + "y): return x"} for i in range(2000)]
    big = Evidence.model_validate(data)
    user = assemble(req, big)[1]["content"]
    assert len(user) <= caps.PROMPT_MAX_CHARS
    payload = read([{"role": "user", "content": user}])
    assert payload.omitted > 1500
    assert "PROMPT_MAX_EVIDENCE_LINES" in user
    assert "return x" not in user
    # the 06/05/04 lines come first, so they survive the bound
    assert len(payload.evidence.impact.edges) == len(ev.impact.edges)


def test_a_wide_impact_dag_does_not_starve_the_other_kinds() -> None:
    req, ev = load(FIXTURE)
    data = ev.model_dump()
    data["impact"]["edges"] += [
        {"src": "pkg.auth.SessionConfig", "dst": f"pkg.gen.consumer_{i}", "relation": "CalledBy",
         "cause": "sig_change", "confidence": 0.95} for i in range(500)]
    payload = read(assemble(req, Evidence.model_validate(data)))
    assert len(payload.evidence.impact.edges) == caps.PROMPT_MAX_IMPACT_LINES
    assert len(payload.evidence.localization) == len(ev.localization)
    assert len(payload.evidence.context) == len(ev.context)
    # the localized entities' own recon nodes come before the other recon lines
    assert {"pkg.auth.SessionConfig", "pkg.auth.SessionManager.load", "pkg.auth"} <= {
        n.id for n in payload.evidence.recon.nodes}


@pytest.mark.parametrize(("sig", "header"), [
    ("def f(x): return x", "def f(x)"),
    ("def f(x: dict[str, int] = {'a': 1}) -> int: return 1",
     "def f(x: dict[str, int] = {'a': 1}) -> int"),
    ("async def g(a, b=':'):\n    pass", "async def g(a, b=':')"),
    ("class A(B, metaclass=M): x = 1", "class A(B, metaclass=M)"),
    ("def h(cb=lambda: 0) -> None", "def h(cb=lambda: 0) -> None"),
    ("SESSION_TIMEOUT = 30", "SESSION_TIMEOUT = 30"),
    ("def load(self)\n    return self.x", "def load(self)"),
])
def test_signatures_lose_their_bodies(sig: str, header: str) -> None:
    assert header_only(sig) == header


def test_one_line_bounds() -> None:
    assert one_line("\n\n  a \t b\nsecond") == "a b"
    assert len(one_line("x" * 1000)) == caps.PROMPT_FIELD_MAX_CHARS


# --- the builtin -----------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(CASES))
def test_builtin_golden(case: str, update_goldens: bool) -> None:
    result = decompose(*load(CASES[case]), make_client("builtin"))
    got = json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    golden = CASES[case] / "builtin.json"
    if update_goldens:
        golden.write_text(got, "utf-8")
    assert golden.exists(), "no golden; run pytest with --update-goldens"
    assert got == golden.read_text("utf-8")


@pytest.mark.parametrize("case", sorted(CASES))
def test_builtin_plan_is_sensible(case: str) -> None:
    """What a user expects of the session-timeout plan, independent of the exact golden."""
    req, ev = load(CASES[case])
    obs = decompose(req, ev, make_client("builtin")).obligations
    by = {o.id: o for o in obs}
    pos = {o.id: i for i, o in enumerate(obs)}
    mods = {o.target_entity.rsplit(".", 1)[-1]: o for o in obs
            if o.obligation == "modify" and o.status != "alternative"}
    assert "SessionConfig" in mods
    assert any(k.startswith("SessionManager") or k == "load" for k in mods)
    cfg = mods["SessionConfig"]
    consumer = next(o for k, o in mods.items() if k in ("SessionManager", "load"))
    assert cfg.id in consumer.dependencies  # the config changes before its consumer
    pd = next(o for o in obs if o.obligation == "preserve" and "default" in o.caused_by)
    assert pd.dependencies == [cfg.id]
    assert pd.id in consumer.dependencies
    custom = next(o for o in obs if o.obligation == "validate"
                  and o.validation == "tests/test_session.py::test_custom_timeout")
    define = next(o for o in obs if o.obligation == "modify"
                  and o.target_entity == "tests/test_session.py::test_custom_timeout")
    assert define.id in custom.dependencies
    assert consumer.id in custom.dependencies
    assert define.status == "ready"
    assert pos[define.id] < pos[cfg.id]
    assert any(o.obligation == "preserve" and "breaking" in o.caused_by for o in obs)
    last = [o for o in obs if o.status != "alternative"][-1]
    assert last.validation == "regression"  # the plan ends with its regression run
    assert last.obligation == "validate"
    assert any(o.status == "alternative" for o in obs)
    assert all(d in by and pos[d] < pos[o.id] for o in obs for d in o.dependencies)
    assert all(o.status == ("blocked" if o.dependencies else "ready")
               for o in obs if o.status != "alternative")


@pytest.mark.parametrize("case", sorted(CASES))
def test_builtin_plan_passes_the_rules(case: str) -> None:
    """The builtin speaks docs/rules.md: no violation, and the ladder sees its roles."""
    from plan07.order.derive import derive_order

    req, ev = load(CASES[case])
    obs = decompose(req, ev, make_client("builtin")).obligations
    order = derive_order(obs, ev)
    assert order.violations == []
    rules = {e.rule for e in order.edges}
    assert {"define_test_before_validate", "preserve_before_recheck",
            "recheck_before_rely"} <= rules


def test_builtin_is_deterministic_under_input_order() -> None:
    req, ev = load(GOLDEN / "example")
    shuffled = ev.model_copy(deep=True)
    rng = random.Random(3)
    for xs in (shuffled.recon.nodes, shuffled.recon.edges, shuffled.impact.edges,
               shuffled.localization):
        rng.shuffle(xs)  # type: ignore[arg-type]
    a = decompose(req, ev, make_client("builtin"))
    b = decompose(req, shuffled, make_client("builtin"))
    assert a.obligations == b.obligations


def test_builtin_with_no_evidence_still_anchors_the_criteria() -> None:
    req = Requirement(goal="Add a --verbose flag",
                      acceptance_criteria=["tests/test_cli.py::test_verbose passes"])
    obs = decompose(req, Evidence(), make_client("builtin")).obligations
    assert [(o.obligation, o.validation) for o in obs] == [
        ("modify", "tests/test_cli.py::test_verbose"),
        ("validate", "tests/test_cli.py::test_verbose"), ("validate", "regression")]


def test_builtin_define_step_fails_until_the_test_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The modify defining a new test is checked by that test (not `compile`): with the test
    not written it fails; with it written under a non-strict xfail anchor it passes."""
    from plan07.gate.checks import run_check
    from plan07.model import PlanNode

    req = Requirement(goal="Add a --verbose flag",
                      acceptance_criteria=["tests/test_cli.py::test_verbose passes"])
    obs = decompose(req, Evidence(), make_client("builtin")).obligations
    define = next(o for o in obs if o.obligation == "modify")
    assert define.target_entity == "tests/test_cli.py::test_verbose"
    (tmp_path / "tests").mkdir()
    test_file = tmp_path / "tests" / "test_cli.py"
    test_file.write_text("def test_other() -> None:\n    pass\n")
    node = PlanNode.model_validate(define.model_dump())
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # speed only
    assert run_check(node, tmp_path, timeout=60).passed is False
    test_file.write_text(test_file.read_text() + "\n\nimport pytest\n\n\n"
                         "@pytest.mark.xfail(strict=False)\ndef test_verbose() -> None:\n"
                         "    raise AssertionError('not yet')\n")
    assert run_check(node, tmp_path, timeout=60).passed is True


def test_builtin_keeps_the_src_root_of_a_test_file() -> None:
    """A src-layout repo: recon names `src/pkg/tests/test_core.py` module `pkg.tests.test_core`
    and keeps the file whole; the test id and the import check follow the file."""
    from plan07.decompose.builtin import derive
    from plan07.decompose.evidence_index import EvidenceIndex

    ev = Evidence.model_validate({"recon": {
        "nodes": [{"id": "pkg.core.parse", "kind": "function", "file": "src/pkg/core.py"},
                  {"id": "pkg.core.Loader", "kind": "class", "file": "src/pkg/core.py"},
                  {"id": "pkg.tests.test_core.test_parse", "kind": "test",
                   "file": "src/pkg/tests/test_core.py"},
                  {"id": "pkg", "kind": "module", "file": "src/pkg/__init__.py"}],
        "edges": [{"src": "pkg.tests.test_core.test_parse", "dst": "pkg.core.parse",
                   "kind": "tests"}]},
        "localization": [{"entity": "pkg.core.parse", "score": 0.9}]})
    ix = EvidenceIndex(ev)
    test = "src/pkg/tests/test_core.py::test_parse"
    assert ix.tests == {"pkg.tests.test_core.test_parse": test}
    assert ix.check(["pkg.core.parse"]) == test
    assert ix.check(["pkg.core.Loader"]) == "import:pkg.core"
    assert ix.module("pkg") == "pkg"
    obs = derive({"goal": "Speed up `parse`", "acceptance_criteria": [], "constraints": []}, ev)
    mod = next(o for o in obs if o.target_entity == "pkg.core.parse")
    assert mod.validation == test


def test_a_bare_name_files_the_derived_test_with_the_function_before_a_method() -> None:
    """"`concat` should take an option" names both `pkg.concat.concat` and the higher-ranked
    method `pkg.variable.Variable.concat`: the bare name reads as the function, so the test the
    criterion derives goes where the function's tests are (xarray 3364)."""
    from plan07.decompose.builtin import derive

    def test(mod: str, name: str, dst: str) -> tuple[dict[str, str], dict[str, str]]:
        return ({"id": f"tests.test_{mod}.{name}", "kind": "test", "file": f"tests/test_{mod}.py"},
                {"src": f"tests.test_{mod}.{name}", "dst": dst, "kind": "tests"})

    pairs = [test("concat", "test_join", "pkg.concat.concat"),
             test("variable", "test_stack", "pkg.variable.Variable.concat")]
    ev = Evidence.model_validate({
        "recon": {"nodes": [{"id": "pkg.concat", "kind": "module", "file": "pkg/concat.py"},
                            {"id": "pkg.concat.concat", "kind": "function",
                             "file": "pkg/concat.py"},
                            {"id": "pkg.variable", "kind": "module", "file": "pkg/variable.py"},
                            {"id": "pkg.variable.Variable", "kind": "class",
                             "file": "pkg/variable.py"},
                            {"id": "pkg.variable.Variable.concat", "kind": "method",
                             "file": "pkg/variable.py"},
                            *(n for n, _ in pairs)],
                  "edges": [e for _, e in pairs]},
        "localization": [{"entity": "pkg.variable.Variable.concat", "score": 0.9},
                         {"entity": "pkg.concat.concat", "score": 0.85}]})
    obs = derive({"goal": "Concatenating datasets with different variables",
                  "acceptance_criteria": ["`concat` should take an option to fill missing ones"],
                  "constraints": []}, ev)
    new = [o.target_entity for o in obs if o.obligation == "modify" and "::" in o.target_entity]
    assert [t.split("::")[0] for t in new] == ["tests/test_concat.py"]


def test_a_derived_test_joins_the_tests_named_after_the_code_name_its_criterion_writes() -> None:
    """"`SI._collect_factor_and_dimension()` detects a dimensionless exponent": the method's
    module's tests (test_dimensions.py) are not where the repository tests it; its tests are
    named after it in test_quantities.py (`test_factor_and_dimension`, sympy 24066), and the new
    test goes there. A criterion whose subject names no test keeps the module's home."""
    from plan07.decompose.builtin import derive
    from plan07.evidence.testmap import TestMap
    from plan07.order.planlint import homes

    def test(mod: str, name: str, dst: str) -> tuple[dict[str, str], dict[str, str]]:
        return ({"id": f"tests.test_{mod}.{name}", "kind": "test", "file": f"tests/test_{mod}.py"},
                {"src": f"tests.test_{mod}.{name}", "dst": dst, "kind": "tests"})

    method = "pkg.dimensions.UnitSystem._collect_factor_and_dimension"
    pairs = [test("dimensions", "test_dimensionless", method),
             test("dimensions", "test_si_system", method),
             test("quantities", "test_factor_and_dimension", "pkg.dimensions"),
             test("quantities", "test_factor_and_dimension_with_abs", "pkg.dimensions")]
    ev = Evidence.model_validate({
        "recon": {"nodes": [{"id": "pkg.dimensions", "kind": "module", "file": "pkg/dimensions.py"},
                            {"id": "pkg.dimensions.UnitSystem", "kind": "class",
                             "file": "pkg/dimensions.py"},
                            {"id": method, "kind": "method", "file": "pkg/dimensions.py"},
                            *(n for n, _ in pairs)],
                  "edges": [e for _, e in pairs]},
        "localization": [{"entity": method, "score": 0.9}]})

    def placed(criterion: str) -> list[str]:
        obs = derive({"goal": "Detect a dimensionless exponent", "constraints": [],
                      "acceptance_criteria": [criterion]}, ev)
        return [o.target_entity.split("::")[0] for o in obs
                if o.obligation == "modify" and "::" in o.target_entity]

    criterion = "`SI._collect_factor_and_dimension()` can detect that the exponent is dimensionless"
    assert placed(criterion) == ["tests/test_quantities.py"]
    # the plan lint agrees: the tests named after it are a home of the plan's new tests
    obs = derive({"goal": "x", "constraints": [], "acceptance_criteria": [criterion]}, ev)
    assert "tests/test_quantities.py" in homes(obs, TestMap(ev), [criterion])
    assert "tests/test_quantities.py" not in homes(obs, TestMap(ev), [])
    # what a model sees: the prompt names those files for the criterion's subject, and the
    # builtin, reading only the prompt, places the test there too
    req = Requirement(goal="Detect a dimensionless exponent", acceptance_criteria=[criterion])
    messages = assemble(req, ev)
    assert read(messages).named == {"SI._collect_factor_and_dimension": [
        "tests/test_quantities.py"]}
    result = decompose(req, ev, make_client("builtin"))
    assert [o.target_entity.split("::")[0] for o in result.obligations
            if o.obligation == "modify" and "::" in o.target_entity] == ["tests/test_quantities.py"]
    assert placed("`UnitSystem` detects that the exponent is dimensionless") == [
        "tests/test_dimensions.py"]


def _recon_only(n_filler: int) -> Evidence:
    """A recon-only bundle (no localization, no impact) rooted inside the package, as
    `plan07 recon pkg/` makes: `rich/table.py` is module `table`; `n_filler` modules sort first."""
    nodes = [{"id": f"aaa{i:03}", "kind": "module", "file": f"aaa{i:03}.py"}
             for i in range(n_filler)]
    nodes += [{"id": "__init__", "kind": "module", "file": "__init__.py"},
              {"id": "table", "kind": "module", "file": "table.py"},
              {"id": "table.Table", "kind": "class", "file": "table.py"},
              {"id": "table.Table.__init__", "kind": "method", "file": "table.py"},
              {"id": "table.Column", "kind": "class", "file": "table.py"},
              {"id": "box.Box", "kind": "class", "file": "box.py"},
              {"id": "layout.Box", "kind": "class", "file": "layout.py"},
              {"id": "tests.test_table.test_min_width", "kind": "test",
               "file": "tests/test_table.py"}]
    return Evidence.model_validate({"recon": {"nodes": nodes, "edges": []}})


@pytest.mark.parametrize(("name", "entity"), [
    ("table.Table", "table.Table"),  # exact
    ("Table.__init__", "table.Table.__init__"),  # the one id ending in it
    ("Column", "table.Column"),
    ("rich.table.Table.__init__", "table.Table.__init__"),  # the recon root was inside rich/
    ("rich.table", "table"),
    ("Box", None),  # ambiguous: box.Box and layout.Box
    ("rich.__init__", None),  # a bare dunder is no seed
    ("test_min_width", None),  # tests are named by node id, never seeds
    ("min_width_total", None),
])
def test_evidence_index_resolves_a_named_entity(name: str, entity: str | None) -> None:
    from plan07.decompose.evidence_index import EvidenceIndex

    assert EvidenceIndex(_recon_only(0)).resolve(name) == entity


def test_builtin_modifies_the_entity_the_request_names_without_localization() -> None:
    """No localization and a recon too large for the prompt: the backticked name is resolved
    against recon node ids and becomes the 05 seed, so the prompt shows it and it is modified."""
    ev = _recon_only(caps.PROMPT_MAX_EVIDENCE_LINES + 10)
    req = Requirement(goal="Make `rich.table.Table.__init__` accept a `min_width_total` argument",
                      acceptance_criteria=["`Table.__init__` accepts `min_width_total`"])
    user = assemble(req, ev)[1]["content"]
    assert 'localization {"entity": "table.Table.__init__", "score": 1.0}' in user
    obs = decompose(req, ev, make_client("builtin")).obligations
    mods = [o for o in obs if o.obligation == "modify" and "::" not in o.target_entity]
    assert [o.target_entity for o in mods] == ["table.Table.__init__"]
    assert "criterion 1" in mods[0].caused_by  # the criterion cites it
    # and a test that can fail proves it: defined first (red), run after the change (green)
    define, run = [o for o in obs if "::" in o.target_entity]
    assert (define.obligation, run.obligation) == ("modify", "validate")
    assert define.validation == run.validation == define.target_entity
    assert define.target_entity.endswith("::test_table_init_accepts_min_width_total")
    assert mods[0].id in run.dependencies
    assert define.id in run.dependencies


def test_named_seeds_leave_a_localized_bundle_alone() -> None:
    ev = _recon_only(0)
    ev.localization = [Localization(entity="table.Column", score=0.8)]
    req = Requirement(goal="Fix `Table.__init__`", acceptance_criteria=["it works"])
    user = assemble(req, ev)[1]["content"]
    assert user.count("\nlocalization ") == 1
    obs = decompose(req, ev, make_client("builtin")).obligations
    # the builtin still modifies what the request names, beside the localized candidate
    assert "table.Table.__init__" in {o.target_entity for o in obs if o.obligation == "modify"}


def test_builtin_refuses_a_prompt_it_did_not_make() -> None:
    with pytest.raises(InputError, match="not a plan07 decomposition prompt"):
        make_client("builtin").complete([{"role": "user", "content": "hello"}], temperature=0,
                                        max_completion_tokens=10, response_format=None)


# --- the scoped re-invoke ------------------------------------------------------------------------


def test_scoped_builtin_adds_the_uncovered_consumer_under_a_fresh_id() -> None:
    req, ev = load(FIXTURE)
    full = decompose(req, ev, make_client("builtin")).obligations
    widen = next(o for o in full if o.target_entity == "pkg.auth.SessionConfig"
                 and o.obligation == "modify")
    login = next(o for o in full if o.target_entity == "pkg.api.login")
    # a plan that forgot the consumer pkg.api.login: the replan of the widen must add it
    after = {widen.id}
    for o in full:  # ids are a topological order: one pass collects the true dependents
        if after & set(o.dependencies):
            after.add(o.id)
    subgraph = [o for o in full if o.id in after and o is not login]
    subgraph = [o.model_copy(update={"dependencies": [d for d in o.dependencies if d != login.id]})
                for o in subgraph]
    c = Counting(make_client("builtin"))
    result = decompose_scoped(req, ev, c, subgraph=subgraph, failure="TypeError in login")
    assert len(c.calls) == 1
    assert not result.re_decompose, result.reason
    fresh = [o for o in result.obligations if o.id not in {s.id for s in subgraph}]
    assert [(o.id, o.target_entity, o.dependencies) for o in fresh] == [
        (f"{widen.id}.r1", "pkg.api.login", [widen.id])]
    assert "TypeError in login" in fresh[0].caused_by
    compile_ = next(o for o in result.obligations if o.validation == "regression"
                    and o.obligation == "validate")
    assert fresh[0].id in compile_.dependencies


def test_scoped_requires_a_subgraph() -> None:
    with pytest.raises(InputError, match="non-empty subgraph"):
        decompose_scoped(*load(FIXTURE), make_client("builtin"), subgraph=[])


def test_scoped_reply_outside_the_id_space_falls_back(tmp_path: Path) -> None:
    req, ev = load(FIXTURE)
    sub = [Obligation.model_validate(record(3)), Obligation.model_validate(record(7))]
    c = replay(tmp_path, json.dumps({"obligations": [record(3), record(9)]}))
    result = decompose_scoped(req, ev, c, subgraph=sub, fresh_prefix="R2.")
    assert result.re_decompose
    assert "O9" in (result.reason or "")
    assert len(c.calls) == 1


def test_requirement_fragment_is_what_the_subgraph_names() -> None:
    req, _ = load(FIXTURE)
    sub = [Obligation.model_validate(record(
        5, validation="tests/test_session.py::test_custom_timeout",
        caused_by="criterion 5: a malformed configuration is rejected"))]
    frag = requirement_fragment(req, sub)
    assert frag["goal"] == req.goal
    assert frag["acceptance_criteria"] == [req.acceptance_criteria[3], req.acceptance_criteria[4]]
    assert frag["constraints"] == []


def dependents(full: list[Obligation], failed: str) -> list[Obligation]:
    """The failed obligation and its true (transitive) dependents, as §3.5 re-plans them."""
    after, grew = {failed}, True
    while grew:
        more = {o.id for o in full if after & set(o.dependencies)} - after
        after |= more
        grew = bool(more)
    return [o for o in full if o.id in after]


def prompt_tokens(messages: list[dict[str, str]]) -> int:
    return sum(count_tokens(m["content"]) for m in messages)


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_scoped_prompt_is_smaller_than_the_initial_one(case: str) -> None:
    """§4 "only that subgraph's requirement fragment and evidence": whichever node fails, the
    scoped call (failed node + true dependents) sends fewer tokens besides the obligations it
    revises than the initial call sends in all; on the bundled example it is smaller in all, the
    obligations included. (On the small hand-written fixture, a failure near the root puts 10 of
    12 records in scope, ~1.8k tokens of records against a 2.1k-token initial prompt.)"""
    req, ev = load(CASES[case])
    first = Counting(make_client("builtin"))
    full = decompose(req, ev, first).obligations
    initial = prompt_tokens(first.calls[0]["messages"])
    failure = "tests/test_session.py::test_old_default_timeout failed (test): " + "x" * 400
    for o in full:
        c = Counting(make_client("builtin"))
        result = decompose_scoped(req, ev, c, subgraph=dependents(full, o.id),
                                  failure=failure + "\nE   TypeError: load() got an unexpected")
        assert not result.re_decompose, result.reason
        messages = c.calls[0]["messages"]
        records = count_tokens(json.dumps(read(messages).scope["obligations"]))  # type: ignore[index]
        assert prompt_tokens(messages) - records < initial, (o.id, prompt_tokens(messages))
        if case == "example":
            assert prompt_tokens(messages) < initial, (o.id, prompt_tokens(messages), initial)
        assert messages[0]["content"] != SYSTEM
        scope = read(messages).scope or {}
        assert len(scope["failure"]) <= caps.PROMPT_FAILURE_MAX_CHARS
        assert scope["failure"].endswith("E TypeError: load() got an unexpected")


def test_scoped_evidence_is_only_what_touches_the_targets() -> None:
    req, ev = load(FIXTURE)
    full = decompose(req, ev, make_client("builtin")).obligations
    widen = next(o for o in full if o.target_entity == "pkg.auth.SessionConfig"
                 and o.obligation == "modify")
    messages = scoped_messages(req, ev, [widen], failure=None, prefix="R.")
    sent = read(messages).evidence
    assert sent.impact.edges
    assert all("pkg.auth.SessionConfig" in (i.src, i.dst) for i in sent.impact.edges)
    assert all("pkg.auth.SessionConfig" in (e.src, e.dst) for e in sent.recon.edges)
    assert not sent.localization
    ends = {x for i in sent.impact.edges for x in (i.src, i.dst)}
    assert {n.id for n in sent.recon.nodes} <= ends | {"pkg.auth.SessionConfig"}
    assert len(sent.recon.nodes) + len(sent.recon.edges) + len(sent.impact.edges) < len(
        ev.recon.nodes) + len(ev.recon.edges) + len(ev.impact.edges)
    # a sig_change in scope: the widen -> rebind reminder rides along; a test definition: not
    assert "widen -> rebind" in messages[0]["content"]
    define = next(o for o in full if "::" in o.target_entity and o.obligation == "modify")
    plain = scoped_messages(req, ev, [define], failure=None, prefix="R.")
    assert "widen -> rebind" not in plain[0]["content"]


def test_scoped_evidence_is_bounded_and_says_what_it_left_out() -> None:
    req, _ = load(FIXTURE)
    hub = "pkg.core.hub"
    ev = Evidence.model_validate({
        "recon": {"nodes": [{"id": hub, "kind": "function"}]
                  + [{"id": f"pkg.m.f{i}", "kind": "function"} for i in range(60)],
                  "edges": [{"src": f"pkg.m.f{i}", "dst": hub, "kind": "calls"}
                            for i in range(60)]}})
    sub = [Obligation.model_validate(record(1, target_entity=hub))]
    messages = scoped_messages(req, ev, sub, failure=None, prefix="R.")
    payload = read(messages)
    sent = len(payload.evidence.recon.nodes) + len(payload.evidence.recon.edges)
    assert sent == caps.SCOPED_MAX_EVIDENCE_LINES
    assert payload.omitted == 61 - caps.SCOPED_MAX_EVIDENCE_LINES
    assert "SCOPED_MAX_EVIDENCE_LINES" in messages[1]["content"]


@pytest.mark.parametrize(("text", "expected"), [
    ("ImportError: cannot import name 'SessionConfig'",
     "ImportError: cannot import name 'SessionConfig'"),
    ("tests/t.py::test_a failed (test): ...\nE   NameError: name 'x'\n1 failed in 0.1s",
     "tests/t.py::test_a failed (test): … E NameError: name 'x'"),
    ("compile failed (build):\n  File \"a.py\", line 3\n1 failed",
     "compile failed (build): … 1 failed"),
    ("a  b\n\n   \nno cause here", "a b"),
    ("", ""),
])
def test_failure_line_is_one_short_line(text: str, expected: str) -> None:
    assert failure_line(text) == expected


def test_failure_line_keeps_the_cause_of_a_long_failure() -> None:
    line = failure_line("check failed (test): " + "y" * 500 + "\nE   AssertionError: assert 1 == 2")
    assert len(line) <= caps.PROMPT_FAILURE_MAX_CHARS
    assert "\n" not in line
    assert line.startswith("check failed (test): … ")
    assert line.endswith("… E AssertionError: assert 1 == 2")


# --- clients and the CLI -------------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "match"), [
    ("gpt", "unknown model client 'gpt'; known: builtin"),
    ("replay:", "needs an argument"),
    ("replay:/no/such/file.txt", "replay file not found"),
    ("builtin:x", "takes no argument"),
])
def test_make_client_fails_loudly(spec: str, match: str) -> None:
    with pytest.raises(InputError, match=match):
        make_client(spec)


def test_make_client_kinds(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text("x")
    assert make_client("builtin").name == "builtin"
    assert make_client(f"replay:{tmp_path / 'c.txt'}").name == f"replay:{tmp_path / 'c.txt'}"


def cli(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_builtin_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = cli("decompose", str(FIXTURE / "requirement.json"), "--evidence",
                       str(FIXTURE / "evidence.json"), "--json", capsys=capsys)
    assert rc == 0, err
    assert json.loads(out) == json.loads((FIXTURE / "builtin.json").read_text())


def test_cli_canonicalizes_a_request(capsys: pytest.CaptureFixture[str], repo_root: Path) -> None:
    ex = GOLDEN / "example"
    rc, out, err = cli("decompose", str(repo_root / "examples/session_timeout/request.md"),
                       "--evidence", str(ex / "evidence.json"), capsys=capsys)
    assert rc == 0, err
    assert "tests/test_session.py::test_custom_timeout" in out
    assert "obligations (builtin" in out


def test_cli_fallback_exits_1_and_prints_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "bad.txt").write_text("not json")
    rc, out, _ = cli("decompose", str(FIXTURE / "requirement.json"), "--evidence",
                     str(FIXTURE / "evidence.json"), "--llm", f"replay:{tmp_path / 'bad.txt'}",
                     "--json", capsys=capsys)
    assert rc == 1
    data = json.loads(out)
    assert data["re_decompose"] is True
    assert data["obligations"] == []
    assert data["raw"] == "not json"


@pytest.mark.parametrize(("args", "match"), [
    (["--llm", "nope"], "unknown model client"),
    (["--evidence", "/no/such/evidence.json"], "evidence"),
])
def test_cli_bad_input_exits_2(args: list[str], match: str,
                               capsys: pytest.CaptureFixture[str]) -> None:
    base = ["decompose", str(FIXTURE / "requirement.json"), "--evidence",
            str(FIXTURE / "evidence.json")]
    rc, out, err = cli(*(base + args), capsys=capsys)
    assert rc == 2
    assert out == ""
    assert err.startswith("error: ")
    assert match in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(("criterion", "primary"), [
    ("`pkg.a.parse` rejects a bare array", ["pkg.a.parse"]),
    ("`a.parse` rejects a bare array", ["pkg.a.parse"]),
    ("parse rejects a bare array", ["pkg.a.parse", "pkg.b.parse"]),
    ("`Loader` is faster", ["pkg.a.parse", "pkg.b.Loader", "pkg.b.parse"]),
    ("`run` is faster", ["pkg.a.parse", "pkg.b.parse", "pkg.c.run"]),
])
def test_builtin_primary_targets_are_the_named_or_the_top_ranked(
    criterion: str, primary: list[str],
) -> None:
    from plan07.decompose.builtin import derive

    ev = Evidence.model_validate({"localization": [
        {"entity": e, "score": s} for e, s in [("pkg.a.parse", 0.3), ("pkg.b.parse", 0.3),
                                               ("pkg.b.Loader", 0.2), ("pkg.c.run", 0.1)]]})
    obs = derive({"goal": "g", "acceptance_criteria": [criterion], "constraints": []}, ev)
    followed = sorted(o.target_entity for o in obs
                      if o.obligation == "modify" and o.status != "alternative"
                      and not o.target_entity.startswith("tests/"))
    assert followed == primary
