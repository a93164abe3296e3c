"""(a) Task canonicalization, §3.1: a free-text request (+ optional task text) -> a Requirement.
Pure and deterministic: `re`-based normalization and extraction, no model, no I/O, no clock.

How it decides (docs/canonicalize.md has the long version and examples):

* Normalization: CRLF -> LF, control characters, HTML comments and tags, images and link
  targets are removed; fenced and indented code blocks, tracebacks, REPL/shell-prompt lines,
  tables and block quotes are dropped (never a criterion, never the goal); list markers and
  checkboxes are stripped; whitespace is collapsed; boilerplate framing (greetings, sign-offs,
  "please", "thanks", "as always", "could you", ...) is removed from every sentence.
* Goal: the request's headline: its title (a heading or a lone first line above a body), else
  the first of 12 sentences that asks for something (an imperative verb, "I want", "it would be
  great to"), else the first-paragraph sentence that states a symptom, else the first sentence.
  A request that only says "fix this" takes its goal from the task text.
* Criteria and constraints: plan07.request.extract (by priority class: test ids, commands said
  to succeed, items under an acceptance heading, should/must sentences). None of these -> up to
  MAX_DERIVED_CRITERIA candidates derived from the request's own verbs, with
  needs_confirmation=True (a plan may start on them, never terminate on them). Neither ->
  InputError.
* Caps: a prose goal or predicate longer than its cap is shortened at the last clause boundary
  (", ; : — (") in the cap's final two thirds, else at the last word boundary there, with "…".
  Text that cannot be cut so (a word over two thirds of the cap), and a test id or command over
  PREDICATE_MAX_CHARS, is refused (InputError naming the cap) when it is the goal, a test id, a
  command or a heading item; a class-4 sentence, derived candidate or prose constraint is left
  out instead. More than 16 criteria of classes 1-3 (or 16 constraints from headings) is
  refused as over-scoped; class-4 sentences and prose constraints only fill the slots left, in
  order of appearance. Whatever is left out is reported in `notes`, never dropped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from plan07 import caps
from plan07.errors import InputError
from plan07.model import Requirement
from plan07.request.derive import derive
from plan07.request.extract import Statements, extract_statements
from plan07.request.text import (
    TITLE_PREFIX,
    WISH,
    Doc,
    dedupe,
    finish,
    key,
    read_request,
    unframe,
)

# ---------------------------------------------------------------------------------------------
# Caps: shortening at a clause or word boundary, or refusal with the cap named.

_CLAUSE_BREAK = re.compile(r"[,;:](?=\s)|\s[—–-]\s|\s(?=\()")


def shorten(text: str, cap: int, *, what: str, cap_name: str) -> str:
    """`text` if it fits `cap`; else cut at the last clause boundary in the cap's final two
    thirds, else at the last word boundary followed by '…'. A word longer than the cap is
    refused: InputError naming the cap (never a mid-word cut)."""
    if len(text) <= cap:
        return text
    cuts = [m.start() for m in _CLAUSE_BREAK.finditer(text, 0, cap + 1) if m.start() >= cap // 3]
    if cuts:
        return text[: cuts[-1]].rstrip(" ,;:—–-")
    space = text.rfind(" ", 0, cap)
    if space < cap // 3:
        raise InputError(
            f"{what} has a word of more than {cap - cap // 3} characters; shorten it",
            field=what, cap=f"{cap_name}={cap}",
        )
    return text[:space].rstrip(" ,;:—–-") + "…"



# ---------------------------------------------------------------------------------------------
# Goal: the headline, not the first 500 characters.

_INTENT_TIERS = [  # a request, then a symptom
    re.compile(
        r"^(?:add|allow|avoid|cache|catch|change|clean up|create|debug|deprecate|document|drop|"
        r"enable|ensure|expose|extend|figure out|find out|fix|handle|implement|improve|introduce|"
        r"investigate|let|look into|make|migrate|move|optimi[sz]e|pass|provide|raise|refactor|"
        r"reject|remove|"
        r"rename|replace|restore|return|speed up|split|support|switch|update|upgrade|use|"
        r"validate|write)\b|"
        r"\b(?:i|we)(?:'d| would)? (?:want|like|need)\b|\bit would be (?:nice|great|useful|good)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:raises?|throws?|crash(?:es)?|fails?|failing|errors?|exception|broken|wrong|"
        r"incorrect|regression|doesn't|does not|cannot|can't|unable|hangs?|ignor\w*|drops|loses|"
        r"flaky)\b",
        re.I,
    ),
]
_DEICTIC = re.compile(
    r"^(?:fix|do|handle|resolve|address|implement|solve|look at|take care of|work on)\s+"
    r"(?:this|it|that|the (?:issue|task|bug|problem|ticket|above|following))"
    r"(?:\s+(?:issue|bug|problem|task|one|please))?$",
    re.I,
)



def _headline(text: str) -> str:
    """A goal as written, less a trailing aside question ("(ConnectionError perhaps?)"); its
    first letter raised only when it is an English verb ("fix the bug" -> "Fix the bug"), never
    an identifier ("method = builtin_str(method) problem", "varnames gains a flag")."""
    text = _ASIDE_QUESTION.sub("", text).strip()
    return finish(text, upper=bool(_INTENT_TIERS[0].match(text)))


_ASIDE_QUESTION = re.compile(r"\s*\([^()]{0,80}\?\)\s*$")


def _goal(doc: Doc, found: Statements) -> str | None:
    if doc.title:
        title = unframe(TITLE_PREFIX.sub("", doc.title))
        if title:
            return _headline(title)
    stripped = [_GOAL_TAIL.sub("", WISH.sub("", TITLE_PREFIX.sub("", s)))
                for s in found.intents[:12]]
    candidates = [(i, s) for i, s in enumerate(stripped) if re.search(r"\w", s)]
    # a request among the first 12 sentences, else a symptom in the first paragraph, else the
    # first sentence
    for tier, reach in zip(_INTENT_TIERS, (12, found.first_para), strict=True):
        for i, sentence in candidates:
            if i < reach and tier.search(sentence):
                return _headline(sentence)
    return _headline(candidates[0][1]) if candidates else None


# "…, and make sure `pytest` passes" is a criterion, not part of the headline
_GOAL_TAIL = re.compile(r",?\s+and (?:make sure|ensure|check|verify) (?:that )?\S.*$", re.I)


# ---------------------------------------------------------------------------------------------
# Assembly: priority, dedupe, caps, schema validation (§3.1 step 3).


@dataclass(frozen=True)
class Canonicalized:
    """The artifact plus what canonicalization chose to leave out (shown by the CLI)."""

    requirement: Requirement
    notes: tuple[str, ...] = ()


def _fit(named: list[str], extra: list[str], cap: int, *, what: str, cap_name: str,
         notes: list[str]) -> list[str]:
    """Named items are all kept (over the cap: refused); extra ones fill the free slots."""
    named = dedupe(named)
    if len(named) > cap:
        raise InputError(
            f"the request names {len(named)} {what}, more than {cap}; it is over-scoped, "
            "split it into smaller requests",
            field=what, cap=f"{cap_name}={cap}",
        )
    keys = {key(n) for n in named}
    extra = [e for e in dedupe(extra) if key(e) not in keys]
    room = cap - len(named)
    if len(extra) > room:
        notes.append(f"{len(extra) - room} {what} statement(s) past the cap of {cap} left out "
                     f"({cap_name}); kept the first in order of appearance")
    return named + extra[:room]


def _check_exact(items: list[str], what: str) -> None:
    for item in items:  # a test id or a command cannot be shortened without changing it
        if len(item) > caps.PREDICATE_MAX_CHARS:
            raise InputError(
                f"{what} {item[:60]!r}… is {len(item)} characters long",
                field="acceptance_criteria",
                cap=f"PREDICATE_MAX_CHARS={caps.PREDICATE_MAX_CHARS}",
            )


def canonicalize_with_notes(request: str, task_text: str | None = None) -> Canonicalized:
    """§3.1: the requirement artifact plus notes on anything left out past a cap."""
    docs = [read_request(request)] + ([read_request(task_text)] if task_text else [])
    founds = [extract_statements(doc) for doc in docs]
    goal = _goal(docs[0], founds[0])
    if (goal is None or _DEICTIC.match(goal)) and len(docs) > 1:
        goal = _goal(docs[1], founds[1]) or goal
    if not goal:
        raise InputError(
            "the request is empty once boilerplate, code blocks and tracebacks are removed; "
            "say what should change", field="goal",
        )
    notes: list[str] = []
    goal = shorten(goal, caps.GOAL_MAX_CHARS, what="goal", cap_name="GOAL_MAX_CHARS")
    tests = [t for f in founds for t in f.tests]
    commands = [c for f in founds for c in f.commands]
    _check_exact(tests, "test id")
    _check_exact(commands, "command")

    def short(items: list[str], what: str, *, optional: bool = False) -> list[str]:
        """Fit each to PREDICATE_MAX_CHARS; one that cannot be cut is refused, or, when it is
        an optional (prose) statement, left out with a note."""
        out = []
        for item in items:
            try:
                out.append(shorten(item, caps.PREDICATE_MAX_CHARS, what=what,
                                   cap_name="PREDICATE_MAX_CHARS"))
            except InputError:
                if not optional:
                    raise
                notes.append(f"a {what} statement with a word too long to shorten was left out "
                             f"(PREDICATE_MAX_CHARS={caps.PREDICATE_MAX_CHARS}): {item[:60]!r}…")
        return out

    named = tests + commands + short([i for f in founds for i in f.items], "acceptance_criteria")
    prose = short([p for f in founds for p in f.prose], "acceptance_criteria", optional=True)
    needs_confirmation = not (named or prose)
    if needs_confirmation:
        intents = [s for f in founds for s in f.intents]
        prose = short(derive(goal, intents), "acceptance_criteria", optional=True)
        if not prose:  # a request with a goal is never refused for want of a criterion (§3.1)
            prose = short([f"the request is met: {goal}"], "acceptance_criteria", optional=True)
            notes.append("no criterion is named and none follows from the request's verbs: "
                         "the goal itself is the criterion to confirm (`plan07 confirm`)")
        if not prose:
            raise InputError(
                "no acceptance criterion is named (a test id, a command that must pass, a "
                "should/must statement, an 'Acceptance criteria' section) and none can be "
                "derived from the request; add one",
                field="acceptance_criteria",
            )
    criteria = _fit(named, prose, caps.MAX_ACCEPTANCE_CRITERIA, what="acceptance_criteria",
                    cap_name="MAX_ACCEPTANCE_CRITERIA", notes=notes)
    constraints = _fit(
        short([c for f in founds for c in f.constraints_named], "constraints"),
        short([c for f in founds for c in f.constraints], "constraints", optional=True),
        caps.MAX_CONSTRAINTS, what="constraints", cap_name="MAX_CONSTRAINTS", notes=notes,
    )
    # §3.1 step 3: JSON Schema validation of the artifact, then the model (never a half artifact)
    from plan07.store.schema import parse

    data = {"goal": goal, "acceptance_criteria": criteria, "constraints": constraints,
            "needs_confirmation": needs_confirmation}
    requirement: Requirement = parse("requirement", data, source="requirement")
    return Canonicalized(requirement, tuple(notes))


def canonicalize(request: str, task_text: str | None = None) -> Requirement:
    """§3.1 task canonicalization: request (+ task text) -> Requirement; InputError if none."""
    return canonicalize_with_notes(request, task_text).requirement
