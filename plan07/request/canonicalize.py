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
* Criteria, by priority class: (1) pytest node ids named anywhere outside code, each as the
  node id itself ("this test passes"); (2) backticked commands said to pass/succeed, as
  "`cmd` succeeds"; (3) items under an "Acceptance criteria" / "Expected behaviour" / "Definition
  of done" heading; (4) should/must/expected sentences of observable behaviour, only from a
  document without such a heading. None of these -> up to MAX_DERIVED_CRITERIA candidates
  derived from the request's own verbs, with needs_confirmation=True (a plan may start on them,
  never terminate on them). Neither -> InputError.
* Constraints: items under a "Constraints"/"Non-goals"/"Out of scope"/"Compatibility" heading;
  "without breaking X" (-> "do not break X"); a prohibition ("must not", "avoid", a sentence
  opening "Do not") + a change verb (break, change, remove, add, ...); "keep ... compatible";
  "backward compatible"; "no new dependency"; "no breaking change". "X must not raise" is
  behaviour, so a criterion; "X does not remove Y" is a symptom, not a constraint.
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
from dataclasses import dataclass, field

from plan07 import caps
from plan07.errors import InputError
from plan07.model import Requirement
from plan07.request.derive import derive
from plan07.request.text import (
    SLOT,
    TITLE_PREFIX,
    WISH,
    WITHOUT,
    Doc,
    dedupe,
    finish,
    key,
    read_request,
    sentences,
    unframe,
)
from plan07.vocab import NODE_ID_IN_TEXT

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
# §3.1 step 2: acceptance-criterion extraction

_NODE_ID = NODE_ID_IN_TEXT
_COMMAND = re.compile(
    r"^(?:pytest|py\.test|python3?|tox|nox|make|npm|yarn|pnpm|pip|mypy|ruff|flake8|black|isort|"
    r"pylint|pyright|cargo|go|uv|poetry|hatch|pre-commit|coverage|sphinx-build|django-admin|"
    r"bash|sh|\./[\w./-]+)(?:\s|$)"
)
_SUCCESS = re.compile(
    r"\b(?:pass(?:es|ing)?|succeed(?:s|ed)?|successfully|exits? (?:with )?(?:0|zero|status 0|"
    r"code 0)|green|runs? clean(?:ly)?|without (?:errors?|failures?|warnings?)|is clean)\b",
    re.I,
)
_MODAL = re.compile(
    r"\b(?:should|must|shall|needs? to|has to|have to|ought to|is expected to|are expected to|"
    r"expected to|i(?:'d| would)? expect(?:ed)?|expected:)",
    re.I,
)
_NOT_BEHAVIOUR = re.compile(
    r"\b(?:should|must) (?:be )?(?:easy|simple|trivial|straightforward)\b|"
    r"\b(?:i|you|we|one) (?:should|must|need to|have to|ought to)\b|\bshould(?:'ve| have been)\b|"
    r"^(?:today|currently|right now|at the moment|at present|as of now)\b|"  # the status quo
    r"\bit (?:will|would)(?: also)? be (?:good|nice|great|useful|helpful|cool) to\b|"  # a wish
    r"\bnot sure\b|\bi (?:guess|think|wonder)\b.*\bbut (?:i|we)\b|"  # hedged musing
    r"\b(?:imho|imo|in my opinion)\b|^\(.*\)$",  # an opinion, an aside in parentheses
    re.I,
)
_URL = re.compile(r"\b(?:https?://|www\.)\S+")
_DANGLING_REF = re.compile(r"[\s,;(]*\b(?:as (?:documented|described|explained|noted|shown) "
                           r"(?:in|at|on)|see(?: also)?|cf\.?|per|at|in)[\s:(]*$", re.I)


def _unlink(text: str) -> str:
    """A criterion without its URLs (and the "as documented in" they leave dangling)."""
    if not _URL.search(text):
        return text
    rest = _DANGLING_REF.sub("", _URL.sub("", text).rstrip(" .)")).strip()
    # the link was the object ("It should point to <url>"): nothing checkable is left
    return "" if re.search(r"\b(?:to|into|from|via|with|of|for)$", rest, re.I) else rest

_CHANGE_VERB = (  # stems: "breaking", "changes", "removed" … ("address" is not "add")
    r"(?:break|chang|alter|modif|remov|touch|affect|regress|introduc|add(?!ress)|renam|drop|"
    r"requir|depend|increas|slow|delet|replac|bump|pull(?:ing)? in)\w*"
)
# A prohibition, not a description: "X does not remove Y" is a symptom, "Do not remove Y" and
# "X must not remove Y" are constraints.
_CONSTRAINT = re.compile(
    rf"\b(?:must|should|shall|may) ?(?:not|never)\b[^.]{{0,40}}?\b{_CHANGE_VERB}|"
    rf"\b(?:mustn't|shouldn't|shan't|avoid(?:ing)?|(?:we|you) (?:can't|cannot|can not)|"
    rf"(?:i|we)(?:'d| would) rather not)\b[^.]{{0,40}}?\b{_CHANGE_VERB}|"
    rf"^(?:do not|don't|never)\b[^.]{{0,40}}?\b{_CHANGE_VERB}|"
    r"\bkeep(?:s|ing)?\b[^.]{0,100}?\b(?:compatib\w*|working|unchanged|intact|stable|the same|"
    r"as (?:it )?is)\b|"
    r"\bbackwards?[- ]compatib\w*|\bremains? compatible\b|"
    r"\bno (?:new )?(?:runtime |third[- ]party |extra )?(?:dependenc(?:y|ies)|packages?)\b|"
    r"\bno (?:new )?(?:breaking|backwards?[- ]incompatible) changes?\b|"
    r"\bno (?:public )?api changes?\b",
    re.I,
)
_GERUND_BASE = {
    "breaking": "break", "changing": "change", "affecting": "affect", "removing": "remove",
    "touching": "touch", "altering": "alter", "modifying": "modify", "adding": "add",
    "introducing": "introduce", "dropping": "drop", "requiring": "require",
    "regressing": "regress", "renaming": "rename", "deleting": "delete",
}


@dataclass
class _Found:
    tests: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)  # under an acceptance heading
    prose: list[str] = field(default_factory=list)  # should/must sentences
    constraints_named: list[str] = field(default_factory=list)  # under a constraints heading
    constraints: list[str] = field(default_factory=list)  # found in sentences
    intents: list[str] = field(default_factory=list)  # unframed intent sentences, for goal/derive
    first_para: int = 0  # how many of `intents` the first paragraph with any gave


def _constraints_in(sentence: str) -> tuple[list[str], str]:
    """Constraints a sentence states, and the sentence with any 'without ...' clause removed."""
    found = [
        finish(f"do not {_GERUND_BASE[m.group(1).lower()]}{m.group(2)}")
        for m in WITHOUT.finditer(sentence)
    ]
    rest = WITHOUT.sub("", sentence)
    if _CONSTRAINT.search(rest):
        found.append(finish(rest))
        rest = ""
    return found, rest


def _extract(doc: Doc, found: _Found) -> None:
    has_accept = any(s.kind == "accept" for s in doc.sections)
    if doc.title:
        found.tests.extend(m.group(1) for m in _NODE_ID.finditer(doc.title))
        _extract_unit(doc, "intent", doc.title, found, has_accept)
    for section in doc.sections:
        listed = any(p.item for p in section.paras)
        for para in section.paras:
            found.tests.extend(m.group(1) for m in _NODE_ID.finditer(doc.restore(para.text)))
            kind = section.kind
            if kind == "noise" or (para.checkbox and kind == "intent"):
                continue  # task lists and template checklists are not intent
            if kind == "accept" and listed and not para.item:
                kind = "intent"  # a heading with a list: its items are the criteria
            before = len(found.intents)
            for unit in [para.text] if para.item else sentences(para.text):
                _extract_unit(doc, kind, unit, found, has_accept)
            if not found.first_para:
                found.first_para = len(found.intents) - before


_CLAUSE_SPLIT = re.compile(r",?\s+(?:and|but)\s+(?=\S)|;\s+")
_TRAILING_QUESTION = re.compile(r"(?:\s[—–-]+\s|,\s*but\s|;\s*)[^—–;]*\?$")


def _extract_unit(doc: Doc, kind: str, unit: str, found: _Found, has_accept: bool) -> None:
    """One sentence (or list item): criteria, constraints and intent it states."""
    if unit.rstrip().endswith(":"):
        return  # introduces what follows (often code): not a statement itself
    text = unframe(unit)
    if not text:
        return
    if kind == "constraint":
        found.constraints_named.append(finish(doc.restore(text)))
        return
    cons, rest = _constraints_in(text)
    found.constraints.extend(finish(doc.restore(c)) for c in cons)
    if kind == "intent":
        found.intents.append(doc.restore(text))
    rest = _TRAILING_QUESTION.sub("", rest.strip())
    if kind == "accept":  # the item is the criterion; a test id in it is criterion (1) already
        rest = SLOT.sub(lambda m: "" if _NODE_ID.fullmatch(doc.spans[int(m.group(1))])
                         else m.group(0), rest)
        rest = _unlink(rest)  # a link is never a criterion
        if re.search(r"[A-Za-z]{2}", SLOT.sub("", rest)) and not rest.endswith("?"):
            found.items.append(finish(doc.restore(rest)))
        return
    clauses = _CLAUSE_SPLIT.split(rest)
    named = [_named_in(doc, clause, found) for clause in clauses]
    for clause in clauses if any(named) else [rest]:
        bare = SLOT.sub("", clause)
        if (any(named) and _named_in(doc, clause, None)) or has_accept or clause.endswith("?"):
            continue
        if _MODAL.search(bare) and not _NOT_BEHAVIOUR.search(bare) and re.search(r"[A-Za-z]", bare):
            text = _unlink(_EXPECTED_PREFIX.sub("", doc.restore(clause)))
            if re.search(r"[A-Za-z]{2}\S*\s+\S*[A-Za-z]{2}", SLOT.sub("", text)):
                found.prose.append(finish(text))  # never a bare URL


_EXPECTED_PREFIX = re.compile(r"^expected(?: behaviou?r| result| output)?:\s*", re.I)


def _named_in(doc: Doc, clause: str, found: _Found | None) -> bool:
    """Does the clause name a test id or a command said to succeed? Collect commands."""
    named = False
    for i in map(int, SLOT.findall(clause)):
        code = doc.spans[i]
        if _NODE_ID.fullmatch(code):
            named = True  # criterion (1), collected from the whole paragraph
        elif _COMMAND.match(code) and _SUCCESS.search(SLOT.sub("", clause)):
            named = True
            arg = code.split(None, 1)[1:] if code.startswith(("pytest ", "py.test ")) else []
            if found is not None and not (arg and _NODE_ID.fullmatch(arg[0].strip())):
                found.commands.append(f"`{code}` succeeds")
    return named


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


def _goal(doc: Doc, found: _Found) -> str | None:
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
    founds = []
    for doc in docs:
        found = _Found()
        _extract(doc, found)
        founds.append(found)
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
