"""`plan07 order`, `plan07 explain`, `plan07 rules test|lint`: the rules seen from the command
line. A thin skin over the public API (plan07: the order stage, the engine's authoring tools;
I/O only)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from plan07.cli._common import EngineOpt, JsonOpt, RulesOpt, print_json
from plan07.errors import InputError


def order(
    obligations: Annotated[Path, typer.Option("--obligations", help="O.json: a decomposition "
                                              "or a bare list of obligations.")],
    evidence: Annotated[Path | None, typer.Option("--evidence", help="E.json bundle.")] = None,
    engine: EngineOpt = "pydatalog",
    rules: RulesOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The ordering rules alone: the derived edges {from, to, rule} and the violations."""
    from plan07 import derive_order, load_evidence, load_obligations
    from plan07.model import Evidence

    obs = load_obligations(obligations)
    ev = load_evidence(evidence) if evidence else Evidence()
    result = derive_order(obs, ev, engine=engine, rules_path=rules)
    if as_json:
        print_json(result)
        return
    from plan07 import display

    result = display(result)  # docs/safety.md: one record per line
    typer.echo(f"{len(result.edges)} edge(s), {len(result.violations)} violation(s), "
               f"{len(result.cycles)} cycle(s) [{engine}]")
    for e in result.edges:
        typer.echo(f"  {e.from_} -> {e.to}  {e.rule}")
    for v in result.violations:
        typer.echo(f"  violation {v.kind} {' '.join(v.nodes)}: {v.detail}")
    for c in result.cycles:
        typer.echo(f"  cycle {' '.join(c)}: they require each other; the scheduler collapses "
                   f"them into one step ({c[0]}_cycle, validated as one unit)")


def explain(
    src: Annotated[str, typer.Argument(help="Edge source (or the violation's first node).")],
    dst: Annotated[str | None, typer.Argument(help="Edge target (or the second node).")] = None,
    violation: Annotated[str | None, typer.Option("--violation", help="Explain violation KIND "
                         "over SRC (and DST) instead of an edge.")] = None,
    finding: Annotated[str | None, typer.Option("--finding", help="Explain the plan lint's "
                       "finding KIND over SRC (and DST) (with --state).")] = None,
    obligations: Annotated[Path | None, typer.Option("--obligations")] = None,
    evidence: Annotated[Path | None, typer.Option("--evidence")] = None,
    facts: Annotated[Path | None, typer.Option("--facts", help="Raw input facts (a facts.dl of "
                     "a rule fixture) instead of obligations + evidence.")] = None,
    state: Annotated[Path | None, typer.Option("--state", help="Plan state dir (reads "
                     "DIR/plan.json).")] = None,
    depth: Annotated[int | None, typer.Option("--depth", help="Cut the tree at N levels.")] = None,
    engine: Annotated[str | None, typer.Option("--engine")] = None,
    rules: RulesOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Why the edge SRC -> DST exists (proof tree), or why not (exit 1)."""
    from plan07 import PlanReader, load_evidence, render_proof

    if violation is None and finding is None and dst is None:
        raise InputError("explain an edge needs SRC and DST (or --violation KIND, --finding "
                         "KIND)", field="DST")
    if finding is not None and (facts is not None or obligations is not None):
        raise InputError("--finding explains a plan's lint finding: give --state, not "
                         "--facts or --obligations", field="--finding")
    if finding is not None:
        from plan07.vocab import FINDING_KINDS

        if finding not in FINDING_KINDS:
            raise InputError(f"unknown finding kind {finding!r}; one of "
                             f"{', '.join(FINDING_KINDS)}", field="--finding")
    if violation is not None:
        check_violation_kind(violation, rules)
    ev = load_evidence(evidence) if evidence else None
    if facts is not None:
        proof = _explain_facts(facts, src, dst, violation, depth, rules)
    elif obligations is not None:
        from plan07 import explain as explain_edge
        from plan07 import explain_violation, load_obligations
        from plan07.model import Evidence

        obs, eng = load_obligations(obligations), engine or "pydatalog"
        if violation:
            proof = explain_violation(obs, ev or Evidence(), violation,
                                      [src] + ([dst] if dst else []), engine=eng, depth=depth,
                                      rules_path=rules)
        else:
            assert dst is not None
            proof = explain_edge(obs, ev or Evidence(), src, dst, engine=eng, depth=depth,
                                 rules_path=rules)
    else:
        proof = PlanReader.at(state).explain(src, dst, violation=violation, depth=depth,
                                             evidence=ev, engine=engine, rules=rules,
                                             finding=finding)
    from plan07 import display

    if as_json:
        print_json(proof)
    elif (proof := display(proof)).holds and proof.tree is not None:
        typer.echo(f"{proof.goal} holds (proof height {proof.height})")
        typer.echo("\n".join(render_proof(proof.tree)))
    else:
        typer.echo(f"{proof.goal} does not hold")
        for line in proof.why_not:
            typer.echo(f"  {line}")
    if not proof.holds:
        raise typer.Exit(1)


def check_violation_kind(kind: str, rules: Path | None = None) -> None:
    """An unknown kind is bad input (exit 2), not a violation that does not hold (exit 1)."""
    from plan07 import violation_kinds

    kinds = violation_kinds(rules)
    if kinds is not None and kind not in kinds:
        raise InputError(f"unknown violation kind {kind!r}; known kinds: {', '.join(kinds)}",
                         field="--violation")


def _explain_facts(path: Path, src: str, dst: str | None, violation: str | None,
                   depth: int | None, rules: Path | None) -> Any:
    from plan07 import explain_facts, load_facts, load_program

    if depth is not None and depth < 0:
        raise InputError(f"depth must be >= 0, got {depth}", field="--depth")
    facts, sources = load_facts(path)
    pattern: tuple[str | None, ...] = (src, dst or src, violation)
    rel = "violation" if violation else "precedes"
    if not violation:
        pattern = (src, dst, None)
    return explain_facts(load_program(rules), facts, sources, rel, pattern, depth)


rules_app = typer.Typer(help="Rule authoring: run per-rule fixtures, lint a rule file.",
                        no_args_is_help=True)


@rules_app.command("test")
def rules_test(
    rule: Annotated[str | None, typer.Argument(help="Only this rule's fixtures.")] = None,
    engine: Annotated[str, typer.Option("--engine", help="pydatalog, clingo or both (both: "
                                        "the installed ones).")] = "both",
    accept: Annotated[bool, typer.Option("--accept", help="Rewrite expected/*.csv from the "
                                         "model (deliberately).")] = False,
    fixtures: Annotated[Path | None, typer.Option("--fixtures", help="Fixture root, one "
                        "<rule>/<case>/ folder per case (default: the fixtures shipped with "
                        "plan07).")] = None,
    rules: RulesOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the per-rule fixtures (<rule>/<case>/ folders with inputs and expected/*.csv) on the
    engine(s); exit 1 if any case fails, exit 2 if there is no case to run."""
    from plan07 import ENGINES, check_engine, discover_fixtures, extras, run_fixtures
    from plan07.cli import bundled

    root = fixtures if fixtures is not None else bundled.fixtures()
    cases = discover_fixtures(root, rule)
    if not cases:
        raise InputError("no rule fixtures here: a case is a folder <rule>/<case>/ holding its "
                         "inputs and expected/*.csv; pass --fixtures DIR", field="--fixtures",
                         source=str(root))
    if engine == "both":
        engines = [e for e in ENGINES if e != "clingo" or extras.available("clingo")]
        if len(engines) < len(ENGINES) and not as_json:
            typer.echo(f"note: clingo is not installed, running on pydatalog only "
                       f"({extras.install_hint('clingo')} for both)", err=True)
    else:
        engines = [check_engine(engine)]
        if engine == "clingo" and not extras.available("clingo"):
            raise extras.missing("clingo", "--engine clingo")
    if accept and len(engines) > 1:
        engines = engines[:1]
    results = run_fixtures(cases, engines, rules, accept=accept)
    failed = [r for r in results if not r.ok]
    if as_json:
        print_json({"cases": len(results), "engines": engines, "failed": [
            {"case": r.case.id, "engine": r.engine,
             "missing": {k: [list(t) for t in v] for k, v in r.missing.items()},
             "unexpected": {k: [list(t) for t in v] for k, v in r.unexpected.items()}}
            for r in failed]})
    else:
        for r in results:
            if not r.ok or accept:
                typer.echo(r.describe() if not accept else f"accepted {r.case.id}")
        typer.echo(f"{len(results) - len(failed)}/{len(results)} case runs passed "
                   f"({', '.join(engines)})")
    if failed:
        raise typer.Exit(1)


def default_fixtures(path: Path) -> Path | None:
    """The fixtures of the rule file at `path` (plan07.cli.bundled.fixtures_beside): the
    rule-without-fixture check's root."""
    from plan07.cli import bundled

    return bundled.fixtures_beside(path)


@rules_app.command("lint")
def rules_lint(
    file: Annotated[Path | None, typer.Argument(help="Rule file (default "
                                                "rules/ordering.dl).")] = None,
    fixtures: Annotated[Path | None, typer.Option("--fixtures", help="Fixture root for the "
                        "rule-without-fixture check (default: the rule file's own fixtures).")]
    = None,
    as_json: JsonOpt = False,
) -> None:
    """Lint a rule file: errors exit 2 (with file:line), warnings exit 0."""
    from plan07 import lint_file, rules_path

    path = rules_path(file)
    if not path.is_file():
        raise InputError("rule file not found" if not path.exists() else "not a rule file",
                         field="FILE", source=str(path))
    if fixtures is not None and not fixtures.is_dir():
        raise InputError("fixtures folder not found", field="--fixtures", source=str(fixtures))
    findings = lint_file(path, fixtures=fixtures if fixtures is not None
                         else default_fixtures(path))
    if as_json:
        print_json([f.__dict__ for f in findings])
    else:
        from plan07 import printable

        for f in findings:
            typer.echo(printable(str(f)))
        errors = sum(f.severity == "error" for f in findings)
        typer.echo(f"{path}: {errors} error(s), {len(findings) - errors} warning(s)")
    if any(f.severity == "error" for f in findings):
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    app.command("order")(order)
    app.command("explain")(explain)
    app.add_typer(rules_app, name="rules")
