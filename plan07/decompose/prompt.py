"""The §4 prompt format: the instructions, the output JSON schema, one-line evidence summaries, and
the reader that turns a prompt back into values (the `builtin` client answers from it). Pure.

The user message is line-oriented: `## requirement` then one JSON line; `## evidence` then one line
per item, `<tag> <compact JSON>`, in the spec's order (06 impact, 05 localization, 04 context, 03
recon: signatures, never bodies); an `## omitted` line when a bound (caps.PROMPT_*) left lines out;
and for a scoped re-invoke (§3.5) a `## scope` JSON line. Every line is one line: strings are cut to
their first line, whitespace collapsed, and bounded. A scoped re-invoke gets its own short system
message (`scoped_system`), not the initial decomposition's instructions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from plan07 import caps
from plan07.decompose.evidence_index import is_test_file
from plan07.errors import InputError
from plan07.evidence.testmap import TestMap
from plan07.model import (
    ContextItem,
    Evidence,
    Impact,
    ImpactEdge,
    Localization,
    Recon,
    ReconEdge,
    ReconNode,
)
from plan07.vocab import subject

SYSTEM = f"""\
You are the semantic-decomposition step of a coding agent's planner. From the requirement and the
evidence below, emit the initial set of typed obligations that, discharged in order, satisfy the
requirement while keeping the repository valid (it builds and its tests run) after every step.

Answer with ONE JSON object and nothing else (no prose, no code fence):
{{"obligations": [{{"id": "O1", "target_entity": "...", "obligation": "modify", "caused_by": "...",
"dependencies": [], "evidence": "...", "status": "ready", "validation": "..."}}]}}
Each record has exactly these 8 fields:
- id: unique, short (letters, digits, . _ : -).
- target_entity: the dotted entity (or test id) the obligation is about, as named in the evidence.
- obligation: "modify" (change code), "preserve" (a behaviour that must not change) or "validate"
  (a check that must pass).
- caused_by: the acceptance criterion, constraint or evidence line that demands it (never empty).
- dependencies: ids that must be discharged first (at most {caps.MAX_DEPENDENCIES}).
- evidence: the 03/05/06 evidence line that justifies it (at most {caps.EVIDENCE_MAX_CHARS} chars).
- status: "ready" (no dependencies), "blocked" (has dependencies) or "alternative" (a lower-ranked
  candidate that substitutes only if the main hypothesis is falsified).
- validation: how the node is proven done: a pytest node id (path/to/test_x.py::test_name) or a
  named check: "compile", "import:<module>", "pytest:<path>", "regression". Nothing else; never a
  shell command.
Rules:
- Express a signature change as widen -> rebind (-> optional narrow): first modify the definition
  to accept the new form while keeping the old one (a parameter with a default, the old name as an
  alias), validated by its consumers' existing tests; then one modify per consumer that rebinds to
  the new form, depending on the widen; a narrow that removes the old form, if any, comes last.
- Say in a modify's caused_by which kind of interface change it makes: "compatible change" (a new
  optional parameter with a default, the old form kept: its consumers rebind after it) or
  "breaking change" (a parameter removed, renamed or made required: with no widen before it, it
  and its consumers' rebinds are validated together as one step).
- Preserve the old default behaviour before anything that relies on the new default.
- A test the requirement names that does not exist yet is defined by a modify (target: the test
  id) before the validate that runs it. A new test goes into a file of the `tests.named` line of
  the code name its criterion is about, else into the `home` of the `tests` line of what it tests.
- Shared types before their consumers; migrations before their usage.
- End with a validate whose validation is "regression" (the tests of every module the plan
  changed, against the baseline).
- At most {caps.MAX_OBLIGATIONS} obligations.
"""

# §4 "Re-invocation on replan": the system message of a scoped call says only what revising one
# failed subgraph needs; the ladder reminder rides along only when the scope is about a signature
# or schema change (scoped_system(ladder=True)).
_SCOPED = f"""\
Revise the failed part of a coding plan. `## scope`: the failure, the obligations to revise (the
failed one and its dependents), the ids done upstream, a fresh-id prefix.
Reply with ONE JSON object only: {{"obligations": [...]}}, the revised part; each record has the 8
fields of the scope's records (obligation: modify|preserve|validate; status:
ready|blocked|alternative; at most {caps.MAX_DEPENDENCIES} dependencies).
Ids: keep one to revise it, omit one to drop it, new ones are <fresh_id_prefix>1, 2, ...;
dependencies name these or upstream_done ids.
validation: a pytest id (path/test_x.py::test_name), "compile", "import:<module>",
"pytest:<path>" or "regression"; never a shell command.
"""
_LADDER = ("A signature change is widen -> rebind: the definition keeps the old form, each "
           "consumer rebinds after it, a narrow comes last.\n")


def scoped_system(*, ladder: bool) -> str:
    """The system message of a scoped re-invoke (§3.5, §4): the revision contract, plus the
    widen -> rebind reminder when the scope touches a signature or schema change."""
    return _SCOPED + (_LADDER if ladder else "")


_ITEM = {"obligation": {"type": "string", "enum": ["modify", "preserve", "validate"]},
         "status": {"type": "string", "enum": ["ready", "blocked", "alternative"]},
         "dependencies": {"type": "array", "items": {"type": "string"}}}
_FIELDS = ("id", "target_entity", "obligation", "caused_by", "dependencies", "evidence", "status",
           "validation")
# The §4 output schema for structured output (OpenAI strict mode: every field required, no extras).
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"obligations": {"type": "array", "items": {
        "type": "object",
        "properties": {f: _ITEM.get(f, {"type": "string"}) for f in _FIELDS},
        "required": list(_FIELDS),
        "additionalProperties": False,
    }}},
    "required": ["obligations"],
    "additionalProperties": False,
}
RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "decomposition", "strict": True, "schema": OUTPUT_SCHEMA},
}

class TestsLine(BaseModel):
    """The tests of a localized entity (plan07.evidence.testmap): what proves a change of it
    (the tests recon links to it, else the test modules importing its module) and `home`, the
    test module a new test of it goes into (README "Tests where the repository keeps them")."""

    __test__ = False  # not a pytest test class
    model_config = ConfigDict(extra="forbid")

    entity: str
    tests: list[str] = []
    home: str = ""


class NamedTests(BaseModel):
    """The test files holding the most tests named after a code name a criterion is about
    (plan07.evidence.testmap `subject`, `TestMap.named_for`): where a new test of it goes."""

    __test__ = False  # not a pytest test class
    model_config = ConfigDict(extra="forbid")

    name: str
    files: list[str] = []


_TAGS: dict[str, type[BaseModel]] = {
    "impact": ImpactEdge, "localization": Localization, "tests": TestsLine,
    "tests.named": NamedTests,
    "context": ContextItem, "recon.node": ReconNode, "recon.edge": ReconEdge,
}


def one_line(text: str, limit: int = caps.PROMPT_FIELD_MAX_CHARS) -> str:
    """The first non-blank line, whitespace collapsed, cut to `limit` chars (marked with …)."""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    s = " ".join(first.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


# What names a failure's cause in a later line, strongest first: an exception or assertion, else a
# pytest summary line.
_ERROR_LINES = (re.compile(r"\w(Error|Exception)\b|\bassert"), re.compile(r"\b(FAILED|failed)\b"))


def failure_line(text: str, limit: int = caps.PROMPT_FAILURE_MAX_CHARS) -> str:
    """A failure as one short line: its first line, cut to `limit` chars. When a later line names
    the cause (the last such line: pytest prints the cause last), the first line's lead-in (up to
    its first ': ', what failed) then ` … ` and that line: the output between is a tail window
    that starts anywhere."""
    lines = [" ".join(ln.split()) for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    cause = next((ln for rx in _ERROR_LINES for ln in reversed(lines[1:]) if rx.search(ln)), "")
    if not cause or cause == lines[0]:
        return one_line(lines[0], limit)
    head = lines[0].split(": ", 1)[0] + (":" if ": " in lines[0] else "")
    cause = one_line(cause, max(limit // 2, limit - len(head) - 3))
    return one_line(f"{one_line(head, limit - len(cause) - 3)} … {cause}", limit)


def header_only(signature: str) -> str:
    """A `def`/`class` signature without any body: cut at the first ':' outside brackets and
    strings (a one-line `def f(x): return x` keeps `def f(x)`)."""
    s = one_line(signature, limit=10_000)
    if not re.match(r"\s*(async\s+def|def|class)\b", s):
        return one_line(s)
    depth, quote = 0, ""
    for i, ch in enumerate(s):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == ":" and depth == 0:
            return one_line(s[:i])
    return one_line(s)


def evidence_lines(evidence: Evidence,
                   criteria: Sequence[str] = ()) -> list[tuple[str, dict[str, Any]]]:
    """Every evidence item as a (tag, record) line, in the spec's order (§4 prompt inputs):
    06 impact (highest confidence first), 05 localization (ranked) with the tests of the top
    ones and the tests named after what each of `criteria` is about, 04 context (as retrieved),
    03 recon in tiers of relevance (each tier's nodes, then its edges, sorted)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for i in sorted(evidence.impact.edges, key=lambda e: (-e.confidence, e.src, e.dst, e.cause)):
        out.append(("impact", i.model_dump()))
    ranked = sorted(evidence.localization, key=lambda x: (-x.score, x.entity))
    for loc in ranked:
        out.append(("localization", loc.model_dump()))
    subjects = list(dict.fromkeys(s for c in criteria if (s := subject(c))))
    if ranked or subjects:  # one test map for both kinds of lines
        tm = TestMap(evidence)
        out.extend(("tests", t.model_dump()) for t in tests_lines(tm, ranked))
        out.extend(("tests.named", t.model_dump()) for t in named_lines(tm, subjects))
    for c in evidence.context:
        out.append(("context", {"entity": c.entity, "summary": one_line(c.summary)}))
    # 03 recon, most telling first: the localized entities and what encloses them (module,
    # class), then the other entities above and theirs, then their recon neighbours, then the rest.
    located = {x.entity for x in evidence.localization}
    focus = located | {e for i in evidence.impact.edges for e in (i.src, i.dst)}
    focus |= {c.entity for c in evidence.context}
    tier: dict[str, int] = {}
    for rank, group in enumerate((located, focus)):
        for f in sorted(group):
            parts = f.split(".")
            for k in range(1, len(parts) + 1):
                tier.setdefault(".".join(parts[:k]), rank)
    for e in evidence.recon.edges:
        if e.src in focus or e.dst in focus:
            tier.setdefault(e.src, 2)
            tier.setdefault(e.dst, 2)
    # the repository's test layout (where a new test goes): its test modules first, one line
    # each, before the tiers (a bounded prompt keeps them)
    layout = sorted((n for n in evidence.recon.nodes
                     if n.kind == "module" and is_test_file(n.file or "")),
                    key=lambda n: n.id)[:caps.PROMPT_MAX_TEST_MODULES]
    out.extend(("recon.node", n.model_dump(exclude_none=True)) for n in layout)
    shown = {n.id for n in layout}

    def edge_tier(e: ReconEdge) -> int:
        return min(tier.get(e.src, 3), tier.get(e.dst, 3))

    for t in range(4):  # each tier's nodes, then the edges that reach that tier
        for n in sorted((n for n in evidence.recon.nodes
                         if tier.get(n.id, 3) == t and n.id not in shown), key=lambda n: n.id):
            rec = n.model_dump(exclude_none=True)
            if n.signature is not None:
                rec["signature"] = header_only(n.signature)
            out.append(("recon.node", rec))
        out.extend(("recon.edge", e.model_dump()) for e in sorted(
            (e for e in evidence.recon.edges if edge_tier(e) == t),
            key=lambda e: (e.src, e.dst, e.kind)))
    return out


def tests_lines(tm: TestMap, ranked: Sequence[Localization]) -> list[TestsLine]:
    """A `tests` line for each of the top-ranked localized entities (PROMPT_MAX_TESTS_LINES)."""
    out = []
    for loc in ranked[: caps.PROMPT_MAX_TESTS_LINES]:
        if tm.module(loc.entity) is None or tm.is_test_module(loc.entity):
            continue
        home = tm.home(loc.entity) or tm.new_home(loc.entity)
        out.append(TestsLine(entity=loc.entity, tests=tm.tests_for(loc.entity)[:3], home=home))
    return out


def named_lines(tm: TestMap, subjects: Sequence[str]) -> list[NamedTests]:
    """For each criterion's subject (plan07.vocab `subject`), the test files holding
    the most tests named after it, when there are any (at most 3 files)."""
    return [NamedTests(name=n, files=files[:3]) for n in subjects if (files := tm.named_for(n))]


_PER_KIND = {"impact": caps.PROMPT_MAX_IMPACT_LINES,
             "localization": caps.PROMPT_MAX_LOCALIZATION_LINES,
             "context": caps.PROMPT_MAX_CONTEXT_LINES}


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


def render(
    requirement: dict[str, Any],
    lines: Iterable[tuple[str, dict[str, Any]]],
    *,
    scope: dict[str, Any] | None = None,
    system: str = SYSTEM,
    max_lines: tuple[str, int] = ("PROMPT_MAX_EVIDENCE_LINES", caps.PROMPT_MAX_EVIDENCE_LINES),
) -> tuple[list[dict[str, str]], int]:
    """The two messages (system, user) and how many evidence lines the bounds left out.
    `max_lines` = (the cap's name, its value): the bound on evidence lines."""
    head = ["## requirement", _dumps(requirement)]
    tail = ["## scope", _dumps(scope)] if scope is not None else []
    budget = caps.PROMPT_MAX_CHARS - sum(len(x) + 1 for x in head + tail) - 300
    body: list[str] = ["## evidence"]
    kept: dict[str, int] = {}
    left_out: dict[str, int] = {}
    for tag, rec in lines:
        line = f"{tag} {_dumps(rec)}"
        if (len(body) > max_lines[1] or len(line) + 1 > budget
                or kept.get(tag, 0) >= _PER_KIND.get(tag, caps.PROMPT_MAX_EVIDENCE_LINES)):
            left_out[tag] = left_out.get(tag, 0) + 1
            continue
        kept[tag] = kept.get(tag, 0) + 1
        body.append(line)
        budget -= len(line) + 1
    omitted = sum(left_out.values())
    if omitted:
        body += ["## omitted", _dumps({"evidence_lines": omitted, "by_kind": left_out, "caps": [
            max_lines[0], "PROMPT_MAX_CHARS", "PROMPT_MAX_IMPACT_LINES",
            "PROMPT_MAX_LOCALIZATION_LINES", "PROMPT_MAX_CONTEXT_LINES"]})]
    user = "\n".join(head + body + tail) + "\n"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}], omitted


@dataclass
class Payload:
    """A prompt read back into values."""

    requirement: dict[str, Any]
    evidence: Evidence
    scope: dict[str, Any] | None = None
    omitted: int = 0
    unknown: list[str] = field(default_factory=list)
    tests: dict[str, TestsLine] = field(default_factory=dict)  # entity -> its tests line
    named: dict[str, list[str]] = field(default_factory=dict)  # code name -> tests named after it


def read(messages: Sequence[dict[str, str]]) -> Payload:
    """Parse a prompt made by `render` (the user message); InputError if it is not one."""
    user = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
    section, requirement, scope, omitted = "", None, None, 0
    items: dict[str, list[Any]] = {t: [] for t in _TAGS}
    try:
        for line in user.splitlines():
            if line.startswith("## "):
                section = line[3:].strip()
            elif section == "requirement" and line.strip():
                requirement = json.loads(line)
            elif section == "scope" and line.strip():
                scope = json.loads(line)
            elif section == "omitted" and line.strip():
                omitted = int(json.loads(line)["evidence_lines"])
            elif section == "evidence" and line.strip():
                tag, _, rec = line.partition(" ")
                items[tag].append(_TAGS[tag].model_validate(json.loads(rec)))
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"not a plan07 decomposition prompt: {exc}", field="messages") from None
    if not isinstance(requirement, dict):
        raise InputError("not a plan07 decomposition prompt: no '## requirement' line",
                         field="messages")
    evidence = Evidence(recon=Recon(nodes=items["recon.node"], edges=items["recon.edge"]),
                        impact=Impact(edges=items["impact"]), localization=items["localization"],
                        context=items["context"])
    return Payload(requirement=requirement, evidence=evidence, scope=scope, omitted=omitted,
                   tests={t.entity: t for t in items["tests"]},
                   named={t.name: t.files for t in items["tests.named"]})
