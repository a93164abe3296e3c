"""Reading a request, §3.1 step 1: markdown-ish text -> a Doc of sections, paragraphs and
sentences, with code, tracebacks, template and boilerplate text removed. Pure (`re` only).

plan07.request.extract finds the criteria and constraints in the Doc and
plan07.request.canonicalize the goal; docs/canonicalize.md §1 lists what is removed and why.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

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
SLOT = re.compile(r"\x00(\d+)\x00")

_FENCE = re.compile(r"^(`{3,}|~{3,})")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_BOLD_HEADING = re.compile(r"^(?:\*\*|__)([^*_\n]{1,80}?)(?:\*\*|__)\s*:?\s*$")
_COLON_HEADING = re.compile(r"^([A-Za-z][A-Za-z /'-]{2,40}):\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|[a-z]\))\s+(?:\[([ xX])\]\s+)?(.*)$")
_CODE_LINE = re.compile(
    r"^(?:>>>|\.\.\.\s|\$ |In \[\d+\]:|Out\[\d+\]:|E\s{2,}|File \"|\|)|"
    r"^(?:File \S+\.py:\d+, in |\S+\.py in [\w.<>]+\(|-+>\s*\d+)|"  # IPython's frames
    r"^(?:During handling of the above exception|The above exception was the direct cause)"
)
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\)")
# Tracker and template filler lines: Trac's "(last modified by X)", "Replying to [comment:3 X]:",
# GitHub forms' "_No response_" for a field left empty.
_FILLER = re.compile(
    r"^(?:\(last modified by [^)]{1,80}\)|replying to \[[^\]]{1,80}\]:?|_?no response_?|"
    r"\(?(?:reported|opened|created) by [^,]{1,80}\)?)$",
    re.I,
)
# A title line glued onto its body (SWE-bench's `title + "\n" + body`, Trac/Jira exports): the
# first line is a title when the next one opens a new sentence, or is Trac's "Description".
UNWRAPPED_LINE = 100  # a line this long is not hard-wrapped
_GLUED_END = re.compile(
    r"[.:;,]$|\b(?:so|the|a|an|to|of|and|or|in|on|for|with|is|are|was|be|that|which|when|if|"
    r"but|as|at|by|from|than|then|not|it|its|this|we|you|i)$",
    re.I,
)
_MARKUP_START = re.compile(r"^(?:[#>|*+-]|`{3}|~{3}|\d{1,3}[.)]\s|<|\s)")


def _split_glued_title(text: str) -> str:
    lines = text.split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None or first + 1 >= len(lines):
        return text
    head, nxt = lines[first], lines[first + 1]
    if not nxt.strip() or len(head) > 200 or _MARKUP_START.match(head):
        return text
    trac = nxt.strip().lower() in ("description", "description:")
    # a short sentence above a line longer than any hard wrap: the author broke the line there
    unwrapped = head.strip().endswith(".") and len(nxt) > max(UNWRAPPED_LINE, 2 * len(head))
    if not trac and ((_GLUED_END.search(head.strip()) and not unwrapped)
                     or not re.match(r"[A-Z`\"'(*_]", nxt)
                     or len(sentences(head.strip())) != 1):
        return text
    if unwrapped:  # a title's full stop: the title line is read without it
        lines[first] = head.rstrip().removesuffix(".")
    return "\n".join([*lines[: first + 1], "", *lines[first + 1:]])
_RULE = re.compile(r"^(?:-{3,}|\*{3,}|_{3,}|={3,})$")
# A tracker export's section names on a line of their own (Trac, Jira): headings
_LONE_HEADING = re.compile(r"^(Description|Summary|Steps to reproduce|Expected results?|"
                           r"Actual results?|Environment|Attachments?)\s*:?$")

# Section kinds by heading text (lower-cased, "behavior" spelled "behaviour").
_ACCEPT_HEADING = re.compile(
    r"acceptance|expected|definition of done|done when|success criteria|what should happen"
)
_CONSTRAINT_HEADING = re.compile(r"constraints?|non-?goals?|out of scope|compatibility")
_NOISE_HEADING = re.compile(
    r"environment|versions?|system info|platform|trace ?back|stack ?trace|\blogs?\b|output|"
    r"actual|current behaviour|reproduc|minimal|mcve|screenshot|checklist|workaround|"
    r"alternatives?|prior art|related|code sample|example code|what happened|checks?\b|"
    r"prerequisites|before (?:submitting|you)|questions|discussion|faq|\blinks?\b|"
    r"installation|operating system|your project|attachments?"
)
_KINDS = (("noise", _NOISE_HEADING), ("accept", _ACCEPT_HEADING),
          ("constraint", _CONSTRAINT_HEADING))
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
TITLE_PREFIX = re.compile(
    r"^(?:\[[^\]]{1,30}\]\s*|(?:title|bug|feature(?: request)?|enhancement|proposal|rfc|"
    r"request|fix|feat|docs?|chore|question|subject|issue|ticket)\s*(?:#?\d+)?\s*"
    r"(?:\([^)]{0,30}\))?\s*:\s*)+",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Za-z\x00\"'(\[*])")  # chat is lower-case too
_ABBREV = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|approx|resp|incl|Mr|Ms|Dr|No)\.$", re.I)


@dataclass
class Para:
    text: str  # one paragraph or list item, whitespace collapsed, code spans as \x00k\x00 slots
    item: bool = False
    checkbox: bool = False


@dataclass
class Section:
    heading: str | None
    kind: str  # "intent" | "accept" | "constraint" | "noise"
    paras: list[Para] = field(default_factory=list)


@dataclass
class Doc:
    title: str | None
    sections: list[Section]
    spans: list[str]  # code-span contents, indexed by slot

    def restore(self, text: str, *, ticks: bool = True) -> str:
        def put(m: re.Match[str]) -> str:
            code = self.spans[int(m.group(1))]
            return f"`{code}`" if ticks else code

        return SLOT.sub(put, text)


def _unemphasize(m: re.Match[str]) -> str:
    # `__iter__` unquoted is an identifier, not bold: kept byte for byte
    if m.group(1) == "__" and re.fullmatch(r"\w+", m.group(2)):
        return m.group(0)
    return m.group(2)


def _clean_inline(text: str) -> str:
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _EMPHASIS.sub(_unemphasize, text)
    return _SHORTCODE.sub("", text)


# Words that may stand before a section's keyword in its label ("Relevant log output",
# "Describe alternatives you've considered", "What is the expected behaviour?").
_LABEL_LEAD = re.compile(
    r"^(?:(?:the|your|any|additional|relevant|full|current|complete|other|possible|known|"
    r"optional|describe|steps to|what(?:'s| is| are)?|python|package|library|os|tool)\s+)*")


def _heading_kind(heading: str) -> str:
    """A section's kind from its heading. A short label (three words or fewer) may hold its
    keyword anywhere ("Python version"); a longer one must start with it, past the lead words
    ("Steps to reproduce the crash"): a heading that is a sentence with a keyword inside
    ("Indicate expected content in parse errors") is a title, not a section."""
    h = heading.lower().replace("behavior", "behaviour").strip(" :*_#?")
    if len(h.split()) > 3:
        rest = h[_LABEL_LEAD.match(h).end():]  # type: ignore[union-attr]
        return next((kind for kind, rx in _KINDS if rx.match(rest)), "intent")
    return next((kind for kind, rx in _KINDS if rx.search(h)), "intent")


def _is_template_heading(heading: str) -> bool:
    h = heading.lower().replace("behavior", "behaviour").strip(" :*_#?.")
    return bool(_TEMPLATE_HEADING.match(h)) or _heading_kind(heading) != "intent"


def read_request(text: str) -> Doc:
    """Markdown-ish text -> sections of paragraphs/items, with code and tracebacks dropped."""
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = textwrap.dedent(text)  # a request pasted with a common indent is not a code block
    text = _HTML_COMMENT.sub("", text)
    text = _HTML_TAG.sub("", text)
    text = _split_glued_title(text)
    spans: list[str] = []
    sections = [Section(None, "intent")]
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
                    and len(sentences(joined)) == 1):
                title = unslot(joined)  # a GitHub-style title line above the body
                title_line = joined
            else:
                sections[-1].paras.append(Para(joined, para_item, para_box))
            seen_prose = True
        para = []

    def unslot(text: str) -> str:
        return SLOT.sub(lambda m: f"`{spans[int(m.group(1))]}`", text)

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
        if _FILLER.match(stripped):
            continue  # tracker/template filler, never text
        if _CODE_LINE.match(stripped) or stripped.startswith(">"):
            flush()  # REPL, shell prompt, pytest "E" lines, tables, block quotes
            in_repl = stripped.startswith((">>>", "In ["))
            continue
        heading = None
        if (m := _HEADING.match(stripped)) or (m := _BOLD_HEADING.match(stripped)) or (
            (m := _COLON_HEADING.match(stripped)) and _heading_kind(m.group(1)) != "intent"
        ) or (not para and (m := _LONE_HEADING.match(stripped))):
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
            sections.append(Section(heading, _heading_kind(heading)))
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
        sections[0].paras.append(Para(title_line))  # a lone line with no body is the body
        title = None
    return Doc(title, sections, spans)


def sentences(text: str) -> list[str]:
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
    bare = SLOT.sub("", sentence).strip()
    return (not re.search(r"\w", bare) or bool(_BOILERPLATE_SENTENCE.fullmatch(bare))
            or bool(_TEMPLATE_SENTENCE.fullmatch(bare)))


def unframe(sentence: str) -> str:
    """Strip boilerplate framing from one sentence; '' when nothing is left."""
    if _is_boilerplate(sentence):
        return ""
    s = _LEAD_FRAMING.sub("", sentence)
    s = _TAIL_FRAMING.sub("", s)
    s = _INNER_PLEASE.sub("", s)
    s = " ".join(s.split()).strip(" ,;:-")
    return "" if _is_boilerplate(s) else s


def finish(text: str, *, upper: bool = False) -> str:
    """A sentence as a predicate: no trailing stop or empty '()'; a goal starts upper-case."""
    text = re.sub(r"\s\(\s*\)", "", " ".join(text.split())).rstrip(" .!?;,:")
    text = " ".join(text.split())
    return text[:1].upper() + text[1:] if upper and text[:1].isalpha() else text



def key(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        if (k := key(item)) and k not in seen:
            seen.add(k)
            out.append(item)
    return out



# Framing a goal or a derived candidate drops ("I would like to", "it would be nice to")
WISH = re.compile(
    r"^(?:(?:i|we)(?:'d| would)? (?:like|love|want|need) to|it would be (?:nice|great|good|"
    r"useful|helpful|cool) (?:to|if (?:we|you|one) could))\s+(?=[a-z])",
    re.I,
)

# "... without breaking X": a constraint, not part of the predicate
WITHOUT = re.compile(
    r"\bwithout (breaking|changing|affecting|removing|touching|altering|modifying|adding|"
    r"introducing|dropping|requiring|regressing|renaming|deleting)\b"
    r"([^,;.!?]*?)(?=\s+(?:if|when|unless|so|because|but|as|since|while)\b|[,;.!?]|$)",
    re.I,
)
