"""Which statements may be acceptance criteria (§3.1 step 2: a checkable predicate, never a vibe;
docs/canonicalize.md "What a criterion never is"). Pure (`re` only).

A criterion states the behaviour expected once the request is done. `screen` keeps such a
statement (trimmed to its clause that says it) and refuses one that is:

- code: a code span that is neither a name nor a command (`Max(2, x)`, an error message with
  spaces), a call with arguments or an assignment pasted into prose, SQL;
- a quote: a sentence mostly inside quotation marks, or a block quote;
- a fragment: fewer than three words, no subject (it opens with "not", "and", "to" ...), a bare
  pronoun as the subject of a short sentence, a clause cut at a dangling word;
- the reporter's situation rather than the code's: an instruction to the reader ("if you comment
  out ..."), an opinion or a hedge ("I don't think", "seems a bit overkill", "my guess"), an
  alternative ("Alternatively ..."), what happens now ("the current output is ...", "instead I
  get");
- a placeholder ("the request is met: ...").
"""

from __future__ import annotations

import re

_SPAN = re.compile(r"`([^`]+)`")
# a name, a path or a flag in a code span; `refine()` and `"Category"` too
_NAME_SPAN = re.compile(r"^[\w.:/\\*@<>'\"-]+(?:\(\))?$")
_COMMAND_SPAN = re.compile(r"^(?:pytest|py\.test|python3?|pylint|sphinx-build|make|tox|pip|git|"
                           r"mypy|flake8|black|ruff)(?:\s+[\w./:=*-]+)+$")
_PROSE_CODE = re.compile(r"\w\([^()]*[,=][^()]*\)|\s==?\s|\[\[|>>>|\bimport \w")
_SQL = re.compile(r"\b(?:SELECT|FROM|WHERE|INSERT|UPDATE|DELETE|JOIN|GROUP BY|ORDER BY|VALUES|"
                  r"CREATE TABLE|ALTER TABLE|LIMIT)\b")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|«[^»]*»")
_NO_SUBJECT = re.compile(r"^(?:not|and|or|but|nor|to|for|with|without|because|since|then|which|"
                         r"as|so|also|just|e\.g\.?|i\.e\.?)\b", re.I)
_PRONOUN = re.compile(r"^(?:it|this|that|they|these|those|he|she)\b", re.I)
_DANGLING = re.compile(r"\b(?:for|to|with|of|the|a|an|and|or|than|as|that|like|from|in|on|by|"
                       r"at|into|is|are|be)$", re.I)
_READER = re.compile(
    r"^(?:if|when|once|after) you\b|\byou(?:'ll| will| can| could| may| might| need| see)\b|"
    r"\bvote\b|^(?:use|see|try|note|please|let me know|run|install)\b", re.I)
_HEDGE = re.compile(
    r"\bi(?:'ll| will| have to| had to| need to| would have to)\b|"
    r"\bi (?:don't|do not) think\b|\b(?:seems?|looks?) (?:a bit|like|ok|fine|good|to be)\b|"
    r"\bmy (?:initial )?guess\b|\bi guess\b|\bnot sure\b|\bthat much\b|\bimho\b|\bimo\b|"
    r"\b(?:ok|okay|fine) to me\b|\boverkill\b|\bnot the point\b|\bi (?:think|believe|feel)\b|"
    r"\bmaybe\b|\bperhaps\b|\bprobably\b", re.I)
_ALTERNATIVE = re.compile(r"^(?:alternatively|otherwise|or else)\b|\bcould be (?:introduced|added|"
                          r"used|done)\b|\bneither of\b", re.I)
_NOW = re.compile(r"\binstead,? (?:i|we) get\b|\bbut (?:instead )?(?:i|we) get\b|\b(?:the )?"
                  r"(?:current|actual) (?:output|behaviou?r|result)\b|\bis handy\b|"
                  r"\b(?:currently|at the moment|right now)\b", re.I)
_PLACEHOLDER = re.compile(r"^(?:the request is (?:met|done)|todo|tbd|n/?a|see above|as above)\b",
                          re.I)
_CLAUSES = re.compile(r"\s+(?:--|—|–)\s+|;\s+")
_ASIDE_QUESTION = re.compile(r"\s*\([^()]{0,60}\?\)")
_MODAL = re.compile(r"\b(?:should|must|shall|needs? to|has to|have to|expected to|expect|"
                    r"would)\b", re.I)


# a code span that is a fragment of code, not a name, a command, a message or one simple call
# (`load("")`): nested brackets, a list or a literal with commas, statements, a long expression
_CODE_PUNCT = re.compile(r"[{};]|\[[^\]]*,|->|>>>|&&|\|\||\w:\d+:\d+")
_CALL = re.compile(r"[(\[]")


def _depth(s: str) -> int:
    depth = deepest = 0
    for ch in s:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest


def _is_code_span(span: str) -> bool:
    s = span.strip()
    if _NAME_SPAN.match(s) or _COMMAND_SPAN.match(s):
        return False
    return bool(_CODE_PUNCT.search(s)) or _depth(s) >= 2 or (len(s) > 40 and bool(_CALL.search(s)))


def why_not(text: str, *, item: bool = False) -> str | None:
    """Why `text` is no criterion (the module docstring), or None when it may be one. `item`: a
    list item under an acceptance heading, where terse items ("returns `[]`") are the request's
    own words: two words are enough, and no pronoun rule."""
    t = text.strip()
    bare = _SPAN.sub("x", t)
    words = re.findall(r"[A-Za-z0-9_]+", bare)
    if _PLACEHOLDER.match(t):
        return "a placeholder"
    if any(_is_code_span(s) for s in _SPAN.findall(t)) or _PROSE_CODE.search(bare):
        return "code"
    if len(_SQL.findall(t)) >= 2:
        return "SQL"
    quoted = sum(len(m.group(0)) for m in _QUOTED.finditer(t))
    if t.startswith(">") or quoted > 0.4 * len(t):
        return "a quote"
    if len(words) < (2 if item else 3) or _NO_SUBJECT.match(bare) or bare.count("(") != \
            bare.count(")") or _DANGLING.search(bare.rstrip(" .!?:,")):
        return "a fragment"
    if _PRONOUN.match(bare) and len(words) < 6 and not item:
        return "a fragment (a pronoun with nothing it stands for)"
    if _READER.search(bare):
        return "an instruction to the reader"
    if _HEDGE.search(bare):
        return "an opinion or a hedge"
    if _ALTERNATIVE.search(bare):
        return "an alternative, not the request"
    if _NOW.search(bare):
        return "a description of what happens now"
    return None


def screen(text: str, *, modal: bool = False, item: bool = False) -> str | None:
    """`text` as a criterion: its clause that states the expectation (`modal`: the one with a
    should/must/expect, for a prose sentence), without an aside question; None when no clause
    may be one (`why_not`)."""
    clauses = [c.strip(" ,") for c in _CLAUSES.split(_ASIDE_QUESTION.sub("", text))
               if c.strip(" ,")]
    if modal:
        clauses = [c for c in clauses if _MODAL.search(_SPAN.sub("x", c))] or clauses[:0]
    for c in clauses:  # an item that is a sentence of its own (a modal) is read as one
        if why_not(c, item=item and not _MODAL.search(c)) is None:
            return c
    return None
