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
import textwrap
from dataclasses import dataclass, field

from plan07 import caps
from plan07.errors import InputError
from plan07.model import Requirement
from plan07.vocab import NODE_ID_IN_TEXT

# ---------------------------------------------------------------------------------------------
# §3.1 step 1: text normalization

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b\ufeff]")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_HTML_TAG = re.compile(  # known HTML tags only: `<slug>` in a URL pattern is not a tag
    r"</?(?:details|summary|br|p|div|span|img|a|sub|sup|kbd|b|i|em|strong|code|pre|hr|ul|ol|li|"
    r"table|thead|tbody|tr|td|th|h[1-6]|blockquote|input|picture|source|video|dl|dt|dd)"
    r"(?:\s[^<>]*)?/?>",
    re.I,
)
_IMAGE = re.compile(r"!\[([^\]\n]{0,300})\]\([^)\n]{0,1000}\)")  # bounded: linear time
_LINK = re.compile(r"\[([^\]\n]{1,300})\]\([^)\n]{0,1000}\)")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_EMPHASIS = re.compile(r"(\*\*|__|~~)(?=\S)(.{1,300}?)(?<=\S)\1")
_SHORTCODE = re.compile(r"(?<!\w):[a-z0-9_+-]{2,30}:(?!\w)")
_CODE_SPAN = re.compile(r"(`+)(.{1,1000}?)\1")
_SLOT = re.compile(r"\x00(\d+)\x00")

_FENCE = re.compile(r"^(`{3,}|~{3,})")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_BOLD_HEADING = re.compile(r"^(?:\*\*|__)([^*_\n]{1,80}?)(?:\*\*|__)\s*:?\s*$")
_COLON_HEADING = re.compile(r"^([A-Za-z][A-Za-z /'-]{2,40}):\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|[a-z]\))\s+(?:\[([ xX])\]\s+)?(.*)$")
_CODE_LINE = re.compile(
    r"^(?:>>>|\.\.\.\s|\$ |In \[\d+\]:|Out\[\d+\]:|E\s{2,}|File \"|\|)|"
    r"^(?:During handling of the above exception|The above exception was the direct cause)"
)
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\)")
_RULE = re.compile(r"^(?:-{3,}|\*{3,}|_{3,}|={3,})$")

# Section kinds by heading text (lower-cased, "behavior" spelled "behaviour").
_ACCEPT_HEADING = re.compile(
    r"acceptance|expected|definition of done|done when|success criteria|what should happen"
)
_CONSTRAINT_HEADING = re.compile(r"constraints?|non-?goals?|out of scope|compatibility")
_NOISE_HEADING = re.compile(
    r"environment|versions?|system info|platform|trace ?back|stack ?trace|\blogs?\b|output|"
    r"actual|current behaviour|reproduc|minimal|mcve|screenshot|checklist|workaround|"
    r"alternatives?|prior art|related|code sample|example code|what happened|checks?\b|"
    r"prerequisites|before (?:submitting|you)|questions|discussion|faq"
)
_TEMPLATE_HEADING = re.compile(
    r"^(summary|description|describe the (bug|problem|issue|solution)\b.*|bug report|bug|"
    r"feature request|feature|problem|motivation|proposal|context|background|overview|details|"
    r"use case|is your feature request related.*|describe the solution.*|request|issue|task)$"
)

_GREETING = (
    r"(?:hi|hello|hey|hiya|greetings|dear [\w .-]{1,40}|good (?:morning|afternoon|evening)|"
    r"hope (?:you(?:'re| are) )?(?:all )?(?:well|doing well|having a good \w+))"
    r"(?: (?:all|team|folks|everyone|there|maintainers|guys|y'?all|devs?|friends))?"
)
_SIGNOFF = (
    r"(?:many |thanks|thank you|thx|ty|cheers|best|regards|best regards|kind regards|"
    r"warm regards|sincerely|as always|much appreciated|appreciate(?:d)? (?:it|your help|any help)|"
    r"hope this helps|let me know(?: if [^.!?]*)?|any (?:help|pointers|feedback) (?:is|would be) "
    r"(?:appreciated|welcome|great)|tia)"
    r"(?: (?:so much|a lot|in advance|again|for (?:your|the) (?:help|work|time|great work)|"
    r"everyone|all))*"
)
_BOILERPLATE_SENTENCE = re.compile(  # ... optionally signed with a capitalized name
    rf"(?:(?:{_GREETING}|{_SIGNOFF}|please|ok(?:ay)?|so)[\s,!.;:-]*)+"
    r"(?:[-—]+\s*)?(?-i:[A-Z][a-z]+(?: [A-Z][a-z]+)?)?[\s!.]*",
    re.I,
)
_LEAD_FRAMING = re.compile(
    r"^(?:(?:so|ok(?:ay)?|also|and|hi|hello|hey),?\s+|as always,?\s+|please,?\s+|kindly\s+|"
    r"(?:could|can|would|will) (?:you|someone|somebody|we)(?: please)?(?: kindly)?\s+|"
    r"quick (?:one|question|request)[:,]?\s+|"
    r"would you mind\s+|(?:i|we)(?:'d| would) (?:like|love) (?:you|someone) to\s+|"
    r"(?:i|we) want you to\s+|(?:i|we) need you to\s+|just\s+)+",
    re.I,
)
_TAIL_FRAMING = re.compile(  # not every sign-off word: "works best" keeps its "best"
    r"(?:[\s,;:-]*\b(?:please|as always|thanks|thank you|thx|cheers|tia)"
    r"(?: (?:so much|a lot|in advance|again))*\b)+[\s!.?]*$",
    re.I,
)
_INNER_PLEASE = re.compile(r",?\s*\bplease\b,?", re.I)
_TITLE_PREFIX = re.compile(
    r"^(?:\[[^\]]{1,30}\]\s*|(?:title|bug|feature(?: request)?|enhancement|proposal|rfc|"
    r"request|fix|feat|docs?|chore|question|subject|issue|ticket)\s*(?:#?\d+)?\s*"
    r"(?:\([^)]{0,30}\))?\s*:\s*)+",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Za-z\x00\"'(\[*])")  # chat is lower-case too
_ABBREV = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|approx|resp|incl|Mr|Ms|Dr|No)\.$", re.I)


@dataclass
class _Para:
    text: str  # one paragraph or list item, whitespace collapsed, code spans as \x00k\x00 slots
    item: bool = False
    checkbox: bool = False


@dataclass
class _Section:
    heading: str | None
    kind: str  # "intent" | "accept" | "constraint" | "noise"
    paras: list[_Para] = field(default_factory=list)


@dataclass
class _Doc:
    title: str | None
    sections: list[_Section]
    spans: list[str]  # code-span contents, indexed by slot

    def restore(self, text: str, *, ticks: bool = True) -> str:
        def put(m: re.Match[str]) -> str:
            code = self.spans[int(m.group(1))]
            return f"`{code}`" if ticks else code

        return _SLOT.sub(put, text)


def _clean_inline(text: str) -> str:
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    return _SHORTCODE.sub("", text)


def _heading_kind(heading: str) -> str:
    h = heading.lower().replace("behavior", "behaviour").strip(" :*_#")
    if _NOISE_HEADING.search(h):
        return "noise"
    if _ACCEPT_HEADING.search(h):
        return "accept"
    if _CONSTRAINT_HEADING.search(h):
        return "constraint"
    return "intent"


def _is_template_heading(heading: str) -> bool:
    h = heading.lower().replace("behavior", "behaviour").strip(" :*_#?.")
    return bool(_TEMPLATE_HEADING.match(h)) or _heading_kind(heading) != "intent"


def _parse(text: str) -> _Doc:
    """Markdown-ish text -> sections of paragraphs/items, with code and tracebacks dropped."""
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = textwrap.dedent(text)  # a request pasted with a common indent is not a code block
    text = _HTML_COMMENT.sub("", text)
    text = _HTML_TAG.sub("", text)
    spans: list[str] = []
    sections = [_Section(None, "intent")]
    title: str | None = None
    seen_prose = False
    para: list[str] = []
    para_item = para_box = False
    fence: str | None = None
    in_tb = in_indented = in_repl = False

    title_line: str | None = None  # a lone first line taken as the title (slotted)

    def flush() -> None:
        nonlocal para, seen_prose, title, title_line
        joined = " ".join(" ".join(para).split())
        if joined:
            lone = len(para) == 1 and not para_item and not re.search(r"[.!?:,;]$", joined)
            if (not seen_prose and title is None and lone and len(joined) <= 200
                    and len(_sentences(joined)) == 1):
                title = unslot(joined)  # a GitHub-style title line above the body
                title_line = joined
            else:
                sections[-1].paras.append(_Para(joined, para_item, para_box))
            seen_prose = True
        para = []

    def unslot(text: str) -> str:
        return _SLOT.sub(lambda m: f"`{spans[int(m.group(1))]}`", text)

    def slot(m: re.Match[str]) -> str:
        spans.append(" ".join(m.group(2).split()))
        return f"\x00{len(spans) - 1}\x00"

    for raw in text.split("\n"):
        line = raw.rstrip()
        stripped = line.strip()
        if fence is not None:  # inside a fenced block: drop until the closing fence
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            continue
        if m := _FENCE.match(stripped):
            flush()
            fence = m.group(1)
            continue
        if in_tb:  # a traceback: indented frames until the unindented exception line
            if not stripped:
                in_tb = False
            elif not line[:1].isspace() and not _TRACEBACK.match(stripped):
                in_tb = _CODE_LINE.match(stripped) is not None
            continue
        if _TRACEBACK.match(stripped):
            flush()
            in_tb = True
            continue
        indented = line.startswith(("    ", "\t"))
        if in_indented and (indented or not stripped):
            continue
        in_indented = False
        if in_repl and stripped:
            continue  # the output of a REPL session, up to the next blank line
        in_repl = False
        if indented and not para and not (sections[-1].paras and sections[-1].paras[-1].item):
            in_indented = True  # an indented code block after a blank line, outside a list
            continue
        if not stripped:
            flush()
            continue
        if _CODE_LINE.match(stripped) or stripped.startswith(">"):
            flush()  # REPL, shell prompt, pytest "E" lines, tables, block quotes
            in_repl = stripped.startswith((">>>", "In ["))
            continue
        heading = None
        if (m := _HEADING.match(stripped)) or (m := _BOLD_HEADING.match(stripped)) or (
            (m := _COLON_HEADING.match(stripped)) and _heading_kind(m.group(1)) != "intent"
        ):
            heading = m.group(1)
        elif _RULE.match(stripped):
            if len(para) == 1 and not para_item and stripped[0] in "=-":
                heading, para = para[0], []  # setext heading: the line above is the heading
            else:
                flush()
                continue
        if heading is not None:
            flush()
            heading = unslot(_clean_inline(_CODE_SPAN.sub(slot, heading))).strip()
            if title is None and not seen_prose and not _is_template_heading(heading):
                title = heading
            sections.append(_Section(heading, _heading_kind(heading)))
            continue
        if m := _ITEM.match(line):
            flush()
            para_item, para_box = True, m.group(1) is not None
            body = m.group(2)
        elif para:
            body = stripped
        else:
            para_item = para_box = False
            body = stripped
        para.append(_clean_inline(_CODE_SPAN.sub(slot, body)))
    flush()
    if title_line is not None and not any(s.paras for s in sections):
        sections[0].paras.append(_Para(title_line))  # a lone line with no body is the body
        title = None
    return _Doc(title, sections, spans)


def _sentences(text: str) -> list[str]:
    """Split a paragraph into sentences, keeping abbreviations like 'e.g.' inside."""
    out: list[str] = []
    for piece in _SENTENCE_END.split(text):
        if out and _ABBREV.search(out[-1]):
            out[-1] += " " + piece
        else:
            out.append(piece)
    return [s.strip() for s in out if s.strip()]


# Placeholder text of GitHub issue templates, and apologies: never intent.
_TEMPLATE_SENTENCE = re.compile(
    r"(?:a clear and concise description of|if applicable,? add screenshots|add any other "
    r"context|steps to reproduce the behaviou?r|please complete the following information|"
    r"(?:i'?m|i am) new (?:here|to)|(?:so )?sorry(?: if| for)|apologies(?: if| for)|"
    r"first time (?:contributor|posting))\b.*",
    re.I,
)


def _is_boilerplate(sentence: str) -> bool:
    bare = _SLOT.sub("", sentence).strip()
    return (not re.search(r"\w", bare) or bool(_BOILERPLATE_SENTENCE.fullmatch(bare))
            or bool(_TEMPLATE_SENTENCE.fullmatch(bare)))


def _unframe(sentence: str) -> str:
    """Strip boilerplate framing from one sentence; '' when nothing is left."""
    if _is_boilerplate(sentence):
        return ""
    s = _LEAD_FRAMING.sub("", sentence)
    s = _TAIL_FRAMING.sub("", s)
    s = _INNER_PLEASE.sub("", s)
    s = " ".join(s.split()).strip(" ,;:-")
    return "" if _is_boilerplate(s) else s


def _finish(text: str, *, upper: bool = False) -> str:
    """A sentence as a predicate: no trailing stop or empty '()'; a goal starts upper-case."""
    text = re.sub(r"\s\(\s*\)", "", " ".join(text.split())).rstrip(" .!?;,:")
    text = " ".join(text.split())
    return text[:1].upper() + text[1:] if upper and text[:1].isalpha() else text


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
    r"^(?:today|currently|right now|at the moment|at present|as of now)\b",  # the status quo
    re.I,
)

_CHANGE_VERB = (  # stems: "breaking", "changes", "removed" … ("address" is not "add")
    r"(?:break|chang|alter|modif|remov|touch|affect|regress|introduc|add(?!ress)|renam|drop|"
    r"requir|depend|increas|slow|delet|replac|bump|pull(?:ing)? in)\w*"
)
_WITHOUT = re.compile(
    r"\bwithout (breaking|changing|affecting|removing|touching|altering|modifying|adding|"
    r"introducing|dropping|requiring|regressing|renaming|deleting)\b"
    r"([^,;.!?]*?)(?=\s+(?:if|when|unless|so|because|but|as|since|while)\b|[,;.!?]|$)",
    re.I,
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
        _finish(f"do not {_GERUND_BASE[m.group(1).lower()]}{m.group(2)}")
        for m in _WITHOUT.finditer(sentence)
    ]
    rest = _WITHOUT.sub("", sentence)
    if _CONSTRAINT.search(rest):
        found.append(_finish(rest))
        rest = ""
    return found, rest


def _extract(doc: _Doc, found: _Found) -> None:
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
            for unit in [para.text] if para.item else _sentences(para.text):
                _extract_unit(doc, kind, unit, found, has_accept)
            if not found.first_para:
                found.first_para = len(found.intents) - before


_CLAUSE_SPLIT = re.compile(r",?\s+(?:and|but)\s+(?=\S)|;\s+")
_TRAILING_QUESTION = re.compile(r"(?:\s[—–-]+\s|,\s*but\s|;\s*)[^—–;]*\?$")


def _extract_unit(doc: _Doc, kind: str, unit: str, found: _Found, has_accept: bool) -> None:
    """One sentence (or list item): criteria, constraints and intent it states."""
    if unit.rstrip().endswith(":"):
        return  # introduces what follows (often code): not a statement itself
    text = _unframe(unit)
    if not text:
        return
    if kind == "constraint":
        found.constraints_named.append(_finish(doc.restore(text)))
        return
    cons, rest = _constraints_in(text)
    found.constraints.extend(_finish(doc.restore(c)) for c in cons)
    if kind == "intent":
        found.intents.append(doc.restore(text))
    rest = _TRAILING_QUESTION.sub("", rest.strip())
    if kind == "accept":  # the item is the criterion; a test id in it is criterion (1) already
        rest = _SLOT.sub(lambda m: "" if _NODE_ID.fullmatch(doc.spans[int(m.group(1))])
                         else m.group(0), rest)
        if re.search(r"[A-Za-z]{2}", _SLOT.sub("", rest)) and not rest.endswith("?"):
            found.items.append(_finish(doc.restore(rest)))
        return
    clauses = _CLAUSE_SPLIT.split(rest)
    named = [_named_in(doc, clause, found) for clause in clauses]
    for clause in clauses if any(named) else [rest]:
        bare = _SLOT.sub("", clause)
        if (any(named) and _named_in(doc, clause, None)) or has_accept or clause.endswith("?"):
            continue
        if _MODAL.search(bare) and not _NOT_BEHAVIOUR.search(bare) and re.search(r"[A-Za-z]", bare):
            text = _EXPECTED_PREFIX.sub("", doc.restore(clause))
            found.prose.append(_finish(text))


_EXPECTED_PREFIX = re.compile(r"^expected(?: behaviou?r| result| output)?:\s*", re.I)


def _named_in(doc: _Doc, clause: str, found: _Found | None) -> bool:
    """Does the clause name a test id or a command said to succeed? Collect commands."""
    named = False
    for i in map(int, _SLOT.findall(clause)):
        code = doc.spans[i]
        if _NODE_ID.fullmatch(code):
            named = True  # criterion (1), collected from the whole paragraph
        elif _COMMAND.match(code) and _SUCCESS.search(_SLOT.sub("", clause)):
            named = True
            arg = code.split(None, 1)[1:] if code.startswith(("pytest ", "py.test ")) else []
            if found is not None and not (arg and _NODE_ID.fullmatch(arg[0].strip())):
                found.commands.append(f"`{code}` succeeds")
    return named


# ---------------------------------------------------------------------------------------------
# Goal: the headline, not the first 500 characters.

_INTENT_TIERS = [  # a request, then a symptom
    re.compile(
        r"^(?:add|allow|avoid|cache|change|clean up|create|debug|deprecate|document|drop|enable|"
        r"ensure|expose|extend|figure out|find out|fix|handle|implement|improve|introduce|"
        r"investigate|let|look into|make|migrate|move|optimi[sz]e|provide|refactor|remove|"
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


_WISH = re.compile(
    r"^(?:(?:i|we)(?:'d| would)? (?:like|love|want|need) to|it would be (?:nice|great|good|"
    r"useful|helpful|cool) (?:to|if (?:we|you|one) could))\s+(?=[a-z])",
    re.I,
)


def _goal(doc: _Doc, found: _Found) -> str | None:
    if doc.title:
        title = _unframe(_TITLE_PREFIX.sub("", doc.title))
        if title:
            return _finish(title, upper=True)
    stripped = [_GOAL_TAIL.sub("", _WISH.sub("", _TITLE_PREFIX.sub("", s)))
                for s in found.intents[:12]]
    candidates = [(i, s) for i, s in enumerate(stripped) if re.search(r"\w", s)]
    # a request among the first 12 sentences, else a symptom in the first paragraph, else the
    # first sentence
    for tier, reach in zip(_INTENT_TIERS, (12, found.first_para), strict=True):
        for i, sentence in candidates:
            if i < reach and tier.search(sentence):
                return _finish(sentence, upper=True)
    return _finish(candidates[0][1], upper=True) if candidates else None


# "…, and make sure `pytest` passes" is a criterion, not part of the headline
_GOAL_TAIL = re.compile(r",?\s+and (?:make sure|ensure|check|verify) (?:that )?\S.*$", re.I)


# ---------------------------------------------------------------------------------------------
# Derived candidates (§3.1 step 2): from the request's own verbs, marked for confirmation.

_PARTICIPLE = {
    "add": "added", "implement": "implemented", "introduce": "introduced", "create": "created",
    "expose": "exposed", "provide": "provided", "remove": "removed", "drop": "dropped",
    "delete": "deleted", "deprecate": "deprecated", "rename": "renamed", "update": "updated",
    "upgrade": "upgraded", "refactor": "refactored", "document": "documented",
    "replace": "replaced", "move": "moved", "change": "changed", "convert": "converted",
    "extend": "extended", "improve": "improved", "validate": "validated", "reject": "rejected",
    "migrate": "migrated", "restore": "restored", "revert": "reverted", "fix": "fixed",
    "resolve": "resolved", "correct": "corrected", "support": "supported", "handle": "handled",
    "honour": "honoured", "honor": "honored", "respect": "respected", "accept": "accepted",
    "expand": "expanded", "cache": "cached", "log": "logged", "split": "split",
    "switch": "switched", "simplify": "simplified", "optimise": "optimised",
    "optimize": "optimized", "parse": "parsed", "ignore": "ignored", "raise": "raised",
    "write": "written", "test": "tested", "speed up": "sped up", "clean up": "cleaned up",
    "set up": "set up", "tidy up": "tidied up",
}
_PREP = re.compile(r"\s(to|into|from|with|in|on|for|when|so that|instead of)\s")
_ADJ = re.compile(r"(?:able|ible|ful|less|ive|al|ic|ent|ant|ed|ous|ary|ory)$|^(?:optional|lazy)$")
_SYMPTOMS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(?P<s>.+?)\s+(?:raises|throws|raised|threw)\s+(?P<r>.+)$", re.I),
     "{s} does not raise {r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?P<v>crash|fail|hang|break|segfault|leak|error|drop|lose|"
                r"ignore|skip|omit)(?:s|es|ed)?\b"
                r"(?P<r>.*)$", re.I), "{s} does not {v}{r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?P<be>is|are) (?:broken|not working)(?P<r>.*)$", re.I),
     "{s} works{r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?P<be>is|are) (?:wrong|incorrect|invalid)(?P<r>.*)$", re.I),
     "{s} {be} correct{r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?P<be>is|are) (?:ignored|not respected|not honou?red)(?P<r>.*)$",
                re.I), "{s} {be} honoured{r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?:does not|doesn't|do not|don't|did not|didn't)\s+(?P<r>.+)$",
                re.I), "{s} does {r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?:cannot|can't|can not|is unable to|are unable to)\s+(?P<r>.+)$",
                re.I), "{s} can {r}"),
    (re.compile(r"^(?P<e>\w+(?:Error|Exception|Warning))\b(?P<r>.*)$"), "no {e}{r}"),
]


def _be(head: str) -> str:
    last = head.split()[-1].lower() if head.split() else ""
    plural = last.endswith("s") and not last.endswith(("ss", "us", "is", "'s"))
    return "are" if plural else "is"


_ASIDE = re.compile(
    r",\s+(?:like|as|e\.g\.|i\.e\.|similar to|which|so that|because|since|see)\b.*$", re.I
)


def _derive_one(sentence: str) -> str | None:
    s = _WISH.sub("", _WITHOUT.sub("", _TITLE_PREFIX.sub("", sentence)))
    s = _ASIDE.sub("", s)
    s = " ".join(s.split()).rstrip(" .!?:,")
    m = re.match(r"(\w+ up|\w+)\s+(.+)$", s)
    if m and m.group(1).lower() not in _PARTICIPLE:
        m = re.match(r"(\w+)\s+(.+)$", s)  # "up" was not part of a phrasal verb
    verb, obj = (m.group(1).lower(), m.group(2)) if m else ("", "")
    if verb == "make":
        words = obj.split()
        if w := re.search(r"\swork(?=\s|$)", obj):
            return f"{obj[: w.start()]} works{obj[w.end():]}"
        if w := re.match(r"(it|them|this|that|\S*`\S*`)\s+([a-z]+)\b(.*)$", obj):
            verb_s = w.group(2) + ("es" if w.group(2).endswith(("s", "sh", "ch", "x")) else "s")
            return f"{w.group(1)} {verb_s if w.group(1) != 'them' else w.group(2)}{w.group(3)}"
        if len(words) >= 2 and _ADJ.search(words[-1].lower()):
            head = " ".join(words[:-1])
            return f"{head} {_be(head)} {words[-1]}"
        return None
    if verb in ("allow", "let", "enable") and (a := re.match(r"(.+?)\s+(?:to\s+)?(\w+\s.+)$", obj)):
        if verb != "let" and " to " not in f" {obj} ":
            return f"{obj} is {'allowed' if verb == 'allow' else 'enabled'}"
        return f"{a.group(1)} can {a.group(2)}"
    if verb in _PARTICIPLE:
        if (p := _PREP.search(obj)) and p.start() > 0:
            head, tail = obj[: p.start()], obj[p.start():]
            return f"{head} {_be(head)} {_PARTICIPLE[verb]}{tail}"
        return f"{obj} {_be(obj)} {_PARTICIPLE[verb]}"
    for pattern, template in _SYMPTOMS:
        if sm := pattern.match(s):
            parts = {k: v or "" for k, v in sm.groupdict().items()}
            return template.format(**parts)
    return None


def _derive(intents: list[str]) -> list[str]:
    out: list[str] = []
    for sentence in intents:
        if len(out) >= caps.MAX_DERIVED_CRITERIA:
            break
        if (d := _derive_one(sentence)) and re.search(r"[A-Za-z]{2}", d):
            out = _dedupe([*out, _finish(d)])
    return out


# ---------------------------------------------------------------------------------------------
# Assembly: priority, dedupe, caps, schema validation (§3.1 step 3).


@dataclass(frozen=True)
class Canonicalized:
    """The artifact plus what canonicalization chose to leave out (shown by the CLI)."""

    requirement: Requirement
    notes: tuple[str, ...] = ()


def _key(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        if (k := _key(item)) and k not in seen:
            seen.add(k)
            out.append(item)
    return out


def _fit(named: list[str], extra: list[str], cap: int, *, what: str, cap_name: str,
         notes: list[str]) -> list[str]:
    """Named items are all kept (over the cap: refused); extra ones fill the free slots."""
    named = _dedupe(named)
    if len(named) > cap:
        raise InputError(
            f"the request names {len(named)} {what}, more than {cap}; it is over-scoped, "
            "split it into smaller requests",
            field=what, cap=f"{cap_name}={cap}",
        )
    keys = {_key(n) for n in named}
    extra = [e for e in _dedupe(extra) if _key(e) not in keys]
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
    docs = [_parse(request)] + ([_parse(task_text)] if task_text else [])
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
        intents = [goal] + [s for f in founds for s in f.intents]
        prose = short(_derive(intents), "acceptance_criteria", optional=True)
        if not prose:
            raise InputError(
                "no acceptance criterion is named (a test id, a command that must pass, a "
                "should/must statement, an 'Acceptance criteria' section) and none can be "
                "derived from the request's verbs; add one",
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
    from plan07.schema import parse

    data = {"goal": goal, "acceptance_criteria": criteria, "constraints": constraints,
            "needs_confirmation": needs_confirmation}
    requirement: Requirement = parse("requirement", data, source="requirement")
    return Canonicalized(requirement, tuple(notes))


def canonicalize(request: str, task_text: str | None = None) -> Requirement:
    """§3.1 task canonicalization: request (+ task text) -> Requirement; InputError if none."""
    return canonicalize_with_notes(request, task_text).requirement
