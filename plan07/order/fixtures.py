"""The per-rule fixture runner: tests/rules/<rule>/<case>/ with inputs and expected/<rel>.csv.
Used by `plan07 rules test` and by pytest (tests/test_engine_fixtures.py). I/O: reads (and with
accept, writes) fixture files.

A case's inputs are either `obligations.json` (+ optional `evidence.json`, and `observed.json`:
what the gate observed each obligation's edit change), prepared into facts
exactly as `plan07 order` does, or `facts.dl` (ground facts in the rule language). Matching is
strict: each expected relation must equal the derived one, tuple for tuple.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from plan07.engine.ir import Facts, Tuple_
from plan07.errors import InputError

DEFAULT_RELATIONS = ("precedes", "violation")


@dataclass(frozen=True)
class Case:
    rule: str
    name: str
    path: Path

    @property
    def id(self) -> str:
        return f"{self.rule}/{self.name}"


@dataclass
class CaseResult:
    case: Case
    engine: str
    missing: dict[str, list[Tuple_]] = field(default_factory=dict)
    unexpected: dict[str, list[Tuple_]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.unexpected

    def describe(self) -> str:
        if self.ok:
            return f"ok   {self.case.id} [{self.engine}]"
        lines = [f"FAIL {self.case.id} [{self.engine}]"]
        for rel, ts in sorted(self.missing.items()):
            lines += [f"  missing    {rel}{t}" for t in ts]
        for rel, ts in sorted(self.unexpected.items()):
            lines += [f"  unexpected {rel}{t}" for t in ts]
        return "\n".join(lines)


def default_root() -> Path:
    from plan07.engine import DEFAULT_RULES

    return DEFAULT_RULES.parents[1] / "tests" / "rules"


def discover(root: Path | None = None, rule: str | None = None) -> list[Case]:
    """Every case folder (one holding `expected/`), sorted; `rule` filters by folder name."""
    base = root or default_root()
    cases = [Case(p.parent.parent.name, p.parent.name, p.parent)
             for p in sorted(base.glob("*/*/expected")) if p.is_dir()]
    if rule is not None:
        cases = [c for c in cases if c.rule == rule]
        if not cases:
            raise InputError(f"no fixture for rule {rule!r} under {base}", field="RULE")
    return cases


def case_facts(case: Case) -> Facts:
    """The input facts of a case."""
    if (case.path / "obligations.json").exists():
        from plan07.evidence import load_evidence
        from plan07.model import Evidence, ObservedChange
        from plan07.order.inputs import prepare_facts
        from plan07.order.load import load_obligations
        from plan07.store.schema import read_json

        obligations = load_obligations(case.path / "obligations.json")
        ev_path, obs_path = case.path / "evidence.json", case.path / "observed.json"
        evidence = load_evidence(ev_path) if ev_path.exists() else Evidence()
        observed = {o: [ObservedChange.model_validate(c) for c in cs]
                    for o, cs in read_json(obs_path, what="observed changes").items()
                    } if obs_path.exists() else None
        return prepare_facts(obligations, evidence, observed=observed).facts
    if (case.path / "facts.dl").exists():
        return load_facts(case.path / "facts.dl")[0]
    raise InputError("a fixture case needs obligations.json or facts.dl", source=str(case.path))


def load_facts(path: Path) -> tuple[Facts, dict[tuple[str, Tuple_], list[str]]]:
    """Ground facts from a .dl file, each with its source `FILE:LINE` (for explain)."""
    from plan07.engine.parser import parse_file

    prog = parse_file(path)
    facts: Facts = {}
    sources: dict[tuple[str, Tuple_], list[str]] = {}
    for r in prog.rules:
        if not r.is_fact:
            raise InputError("a facts file holds ground facts only", source=f"{prog.file}:{r.line}")
        t = tuple(a.value for a in r.head.args)  # type: ignore[union-attr]
        facts.setdefault(r.head.relation, set()).add(t)
        sources.setdefault((r.head.relation, t), []).append(f"{prog.file}:{r.line}")
    return facts, sources


def read_expected(case: Case) -> dict[str, set[Tuple_]]:
    out: dict[str, set[Tuple_]] = {}
    for f in sorted((case.path / "expected").glob("*.csv")):
        with f.open(newline="", encoding="utf-8") as fh:
            out[f.stem] = {tuple(row) for row in csv.reader(fh) if row}
    return out


def render_csv(tuples: set[Tuple_]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for t in sorted(tuples, key=lambda t: tuple(str(v) for v in t)):
        w.writerow([str(v) for v in t])
    return buf.getvalue()


def run_case(case: Case, engine: str, rules_path: Path | None = None,
             *, accept: bool = False) -> CaseResult:
    """Evaluate the case on `engine` and compare strictly with its expected relations. With
    `accept`, rewrite the expected files from the model instead (deliberately)."""
    from plan07.engine import evaluate, load_program

    model = evaluate(load_program(rules_path), case_facts(case), engine)
    expected = read_expected(case)
    if accept:
        rels = sorted(expected) or list(DEFAULT_RELATIONS)
        for rel in rels:
            (case.path / "expected" / f"{rel}.csv").write_text(
                render_csv(model.get(rel, set())), "utf-8")
        return CaseResult(case, engine)
    result = CaseResult(case, engine)
    for rel, want in sorted(expected.items()):
        got = {tuple(str(v) for v in t) for t in model.get(rel, set())}
        if rel not in model:
            raise InputError(f"expected/{rel}.csv names a relation the rules do not have",
                             source=str(case.path))
        if want - got:
            result.missing[rel] = sorted(want - got)
        if got - want:
            result.unexpected[rel] = sorted(got - want)
    return result


def run_all(cases: list[Case], engines: list[str], rules_path: Path | None = None,
            *, accept: bool = False) -> list[CaseResult]:
    return [run_case(c, e, rules_path, accept=accept) for c in cases for e in engines]
