"""Derived candidate criteria, §3.1 step 2: when a request names no criterion, predicates built
from its own verbs (the table in docs/canonicalize.md §3), marked needs_confirmation by the
caller. Pure (`re` only).
"""

from __future__ import annotations

import re

from plan07 import caps
from plan07.request.text import TITLE_PREFIX, WISH, WITHOUT, dedupe, finish

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


_DROP_PARAM = re.compile(
    r"^(?:drop|remove|delete)\s+(?:the\s+)?(?P<p>\S+)\s+(?:parameter|argument|arg|kwarg|"
    r"keyword(?: argument)?|option|flag)\s+(?:from|of)\s+(?P<f>.+)$", re.I)
_PASS = re.compile(r"^pass\s+(?P<a>.+?)\s+(?P<adv>(?:\w+ly\s+)?)(?P<p>to|into)\s+(?P<b>.+)$", re.I)
_GAINS = re.compile(r"^(?P<s>.+?)\s+(?:gains?|gets?|grows?|acquires?|learns?)\s+(?P<r>.+)$", re.I)
_INSTEAD = re.compile(r"^(?P<s>.+?)\s+(?P<v>[a-z]+s)\s+(?P<y>.+?)\s+instead of\s+(?P<z>.+)$")
_TO_VERB = re.compile(
    r"^(?P<s>[^,]+?)\s+to\s+(?P<v>return|show|display|include|list|print|report|accept|support|"
    r"handle|use|raise|emit|log|respect|honou?r|preserve|keep|work|read|write|parse)\b(?P<r>.*)$",
    re.I)
_PARTICIPLE_WORD = r"\w+(?:ed|en|wn|ght)"
_NOT_DONE = re.compile(
    rf"^(?P<s>.+?)\s+(?:is\s+|are\s+)?not\s+(?P<v>{_PARTICIPLE_WORD}(?:/{_PARTICIPLE_WORD})?)\b"
    r"(?P<r>.*)$", re.I)
_LEAKING = re.compile(r"^(?P<s>.+?)\s+(?P<g>passing|leaking|bleeding|slipping|getting|falling)"
                      r"\s+(?P<r>(?:through|into|out of|past|via)\b.+)$", re.I)
_GERUND = {"passing": "pass", "leaking": "leak", "bleeding": "bleed", "slipping": "slip",
           "getting": "get", "falling": "fall"}
_PROBLEM = re.compile(r"^(?P<s>.+?)\s+(?:problem|issue|bug|regression)$", re.I)
_NOUNISH = re.compile(r"^(?:a|an|the)\s|^`")
_ADVERB_TAIL = re.compile(r"\s+(\w+ly)$")


def _third(verb: str, subject: str) -> str:
    """The verb agreeing with `subject` ("routes return", "the parser returns")."""
    if _be(subject) == "are":
        return verb
    return verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "o")) else "s")


def _imperative(s: str) -> str | None:
    """A request in the imperative ("Drop the P parameter from F", "Add X to Y") -> the
    predicate that says it was done ("F no longer takes P", "X is added to Y")."""
    if m := _DROP_PARAM.match(s):
        return f"{m.group('f')} no longer takes {m.group('p')}"
    if m := _PASS.match(s):
        return f"{m.group('a')} is passed {m.group('adv')}{m.group('p')} {m.group('b')}"
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
            adv = ""
            if a := _ADVERB_TAIL.search(head):  # "the name explicitly to f" -> "passed explicitly"
                head, adv = head[: a.start()], " " + a.group(1)
            return f"{head} {_be(head)} {_PARTICIPLE[verb]}{adv}{tail}"
        return f"{obj} {_be(obj)} {_PARTICIPLE[verb]}"
    return None


def _statement(s: str) -> str | None:
    """A headline that states a change or a symptom ("X gains a flag", "X returns A instead of
    B", "X raises E") -> the predicate that holds once it is handled. Never the reverse of the
    request: a symptom is negated, a wanted change is asserted."""
    if m := _GAINS.match(s):
        return f"{m.group('s')} has {m.group('r')}"
    if m := _INSTEAD.match(s):
        subj, verb, was, wanted = m.group("s"), m.group("v"), m.group("y"), m.group("z")
        if _NOUNISH.match(was) and _NOUNISH.match(wanted):
            return f"{subj} {verb} {wanted}, not {was}"
        return f"{subj} no longer {verb} {was}"
    for pattern, template in _SYMPTOMS:
        if sm := pattern.match(s):
            parts = {k: v or "" for k, v in sm.groupdict().items()}
            return template.format(**parts)
    if m := _LEAKING.match(s):  # "X exceptions passing through the API"
        verb = _third(_GERUND[m.group("g").lower()], m.group("s"))
        return f"{m.group('s')} no longer {verb} {m.group('r')}"
    if m := _NOT_DONE.match(s):
        return f"{m.group('s')} {_be(m.group('s'))} {m.group('v')}{m.group('r')}"
    if m := _TO_VERB.match(s):
        return f"{m.group('s')} {_third(m.group('v').lower(), m.group('s'))}{m.group('r')}"
    if m := _PROBLEM.match(s):
        return f"the {m.group('s')} problem no longer occurs"
    return None


def _clean(sentence: str) -> str:
    s = WISH.sub("", WITHOUT.sub("", TITLE_PREFIX.sub("", sentence)))
    s = _ASIDE.sub("", s)
    return " ".join(s.split()).rstrip(" .!?:,")


def derive(goal: str, intents: list[str]) -> list[str]:
    """Up to MAX_DERIVED_CRITERIA candidates: from the goal (a request or a statement of the
    symptom), then from the other sentences that ask for something in the imperative. A
    symptom elsewhere in the text is not read: "it works in 2.6" or "X is broken because Y"
    would give a criterion that says the wrong thing."""
    out: list[str] = []
    first = _clean(goal)
    for d in (_imperative(first) or _statement(first), *map(_imperative, map(_clean, intents))):
        if len(out) >= caps.MAX_DERIVED_CRITERIA:
            break
        if d and re.search(r"[A-Za-z]{2}", d):
            out = dedupe([*out, finish(d)])
    return out
