"""Criterion and constraint extraction from a read request (§3.1 step 2), and its intent
sentences for the goal. Pure: `re` over a plan07.request.text Doc, no model, no I/O.

* Criteria, by priority class: (1) pytest node ids named anywhere outside code, each as the
  node id itself ("this test passes"); (2) backticked commands said to pass/succeed, as
  "`cmd` succeeds"; (3) items under an "Acceptance criteria" / "Expected behaviour" / "Definition
  of done" heading; (4) should/must/expected sentences of observable behaviour, only from a
  document without such a heading.
* Constraints: items under a "Constraints"/"Non-goals"/"Out of scope"/"Compatibility" heading;
  "without breaking X" (-> "do not break X"); a prohibition ("must not", "avoid", a sentence
  opening "Do not") + a change verb (break, change, remove, add, ...); "keep ... compatible";
  "backward compatible"; "no new dependency"; "no breaking change". "X must not raise" is
  behaviour, so a criterion; "X does not remove Y" is a symptom, not a constraint.

The long version: docs/canonicalize.md §3-§4. plan07.request.canonicalize picks the goal, derives
candidates when none of these is found, and applies the caps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from plan07.request.text import SLOT, WITHOUT, Doc, finish, sentences, unframe
from plan07.vocab import NODE_ID_IN_TEXT

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
class Statements:
    """What one document states, by priority class (the module docstring)."""

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


def extract_statements(doc: Doc) -> Statements:
    """Every test id, command, criterion, constraint and intent sentence the document states,
    in order of appearance."""
    found = Statements()
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
    return found


_CLAUSE_SPLIT = re.compile(r",?\s+(?:and|but)\s+(?=\S)|;\s+")
_TRAILING_QUESTION = re.compile(r"(?:\s[—–-]+\s|,\s*but\s|;\s*)[^—–;]*\?$")


def _extract_unit(doc: Doc, kind: str, unit: str, found: Statements, has_accept: bool) -> None:
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


def _named_in(doc: Doc, clause: str, found: Statements | None) -> bool:
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
