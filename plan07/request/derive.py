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
    "set up": "set up", "tidy up": "tidied up", "show": "shown", "display": "displayed",
    "generate": "generated", "unroll": "unrolled", "print": "printed", "emit": "emitted",
    "preserve": "preserved", "report": "reported", "include": "included", "keep": "kept",
    "use": "used", "skip": "skipped", "escape": "escaped", "render": "rendered",
}
_PREP = re.compile(r"\s(to|into|from|with|in|on|for|when|so that|instead of)\s")
_ADJ = re.compile(r"(?:able|ible|ful|less|ive|al|ic|ent|ant|ed|ous|ary|ory)$|^(?:optional|lazy)$")
_PROBLEM_ADJ = (r"trailing|extra|spurious|redundant|missing|confusing|misleading|wrong|incorrect|"
                r"over-?escaped|duplicated?|unexpected|unnecessary|excessive|incomplete|"
                r"inconsistent|inaccurate")
_SYMPTOMS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(?P<s>.+?)\s+no longer\s+(?P<r>.+)$", re.I), "{s} {r} again"),
    # a message it shows ("X gives `<error>` with Y"): the code span was hidden (_hide_code)
    (re.compile(r"^(?P<s>.+?)\s+(?P<v>gives|shows|prints|reports|emits|returns|raises|throws|"
                r"yields|outputs)\s+(?P<m>\x01\d+\x01)(?P<r>.*)$"), "{s} does not {v_base} {m}{r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?:will|would|may|can)\s+(?P<v>throw|raise|crash|fail|hang|"
                r"break|error|complain)\b(?P<r>.*)$", re.I), "{s} does not {v}{r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?:raises|throws|raised|threw)\s+(?P<r>.+)$", re.I),
     "{s} does not raise {r}"),
    (re.compile(r"^(?:unexpected\s+)?(?P<e>\w*(?:error|exception|warning))\s+when\s+"
                r"(?P<g>\w+ing)\s+(?P<r>.+)$", re.I), "{g} {r} raises no {e}"),
    (re.compile(r"^(?P<x>(?:a |the )?(?:traceback|stack ?trace|error|warning|exception|crash)s?)"
                r"\s+(?P<v>printed|shown|raised|emitted|thrown|logged)\b(?P<r>.*)$", re.I),
     "no {x} is {v}{r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?P<v>crash|fail|hang|break|segfault|leak|error|drop|lose|"
                r"ignore|skip|omit|complain)(?:s|es|ed)?\b"
                r"(?P<r>.*)$", re.I), "{s} does not {v}{r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?:is |are )?broken\b(?P<r>.*)$", re.I), "{s} works{r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?P<p>\w+ed)\s+twice\b(?P<r>.*)$", re.I),
     "{s} {be} {p} only once{r}"),
    (re.compile(r"^(?:two|duplicate|duplicated|multiple)\s+(?P<n>\w+?)s\b(?P<r>.*)$", re.I),
     "a single {n}{r}"),
    (re.compile(rf"^(?P<pre>[\w.-]+:\s+)?(?P<a>{_PROBLEM_ADJ})\s+(?P<r>.+)$", re.I),
     "{pre}no {a} {r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?P<v>(?!(?:is|was|has)\b)\w+s)\s+extra\s+(?P<r>.+)$"),
     "{s} {v} no extra {r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?P<v>(?!(?:is|was|has)\b)\w+s)\s+(?:a |an )?(?:wrong|incorrect)"
                r"\s+(?P<r>.+?)"
                r"(?:\s+(?:due to|because|since)\b.*)?$", re.I), "{s} {v} the correct {r}"),
    (re.compile(r"^(?:bug|problem|issue|regression)s?\s+(?:with|in)\s+(?P<r>.+)$", re.I),
     "{r} works"),
    (re.compile(r"^(?P<s>.+?)\s+(?P<be>is|are)\s+(?P<p>treated|reported|marked|shown|considered|"
                r"displayed|flagged|rendered)\s+as\s+(?P<r>.+)$", re.I),
     "{s} {be} not {p} as {r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?P<v>have|has)\s+(?P<r>.+?)\s+since\s+\S+$", re.I),
     "{s} {v} no {r}"),
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
    (re.compile(r"^(?P<e>\w+(?:Error|Exception|Warning|ERROR))\b(?P<r>.*)$"), "no {e}{r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?P<be>is|are)\s+not\s+(?P<r>.+)$", re.I), "{s} {be} {r}"),
    (re.compile(r"^(?P<s>.+?)\s+needs\s+(?P<r>.+)$", re.I), "{s} has {r}"),
]
# a problem stated with a verb's -ing form: "X not respecting Y", "X started generating Y",
# "X reusing Y" (not a noun ending in -ing: "string", "logging", "warning" ...)
_ING_NOUNS = frozenset({"string", "thing", "something", "nothing", "anything", "everything",
                        "during", "padding", "encoding", "setting", "settings", "warning",
                        "logging", "rendering", "morning", "evening", "heading", "building",
                        "mapping", "binding", "spacing", "ring", "king", "sing", "bring"})
_GERUNDS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(?P<s>.+?)\s+not\s+(?P<g>\w+ing)\b(?P<r>.*)$"), "{s} {be} {g}{r}"),
    (re.compile(r"^(?P<s>.+?)\s+(?:started|starts|keeps|kept)\s+(?P<g>\w+ing)\b(?P<r>.*)$"),
     "{s} {be} no longer {g}{r}"),
    (re.compile(r"^(?P<s>(?:using|calling|running|passing|setting|adding)\s+\S+)\s+"
                r"(?P<v>[a-z]+s)\s+(?P<r>.+)$", re.I), "{s} does not {v_base} {r}"),
    (re.compile(r"^(?P<s>[^\s]+(?:\s+\w+){0,3}?)\s+(?P<g>\w{3,}ing)\s+(?P<r>.+)$"),
     "{s} {be} no longer {g} {r}"),
]
# a wanted feature stated as a noun phrase: "X properties in generated reports"
_FEATURE = re.compile(r"^(?P<x>.+?\b(?:properties|property|support|options?|attributes?|fields?|"
                      r"units|flags?|arguments?|parameters?|keywords?))\s+(?:in|for|to|on)\s+"
                      r"(?P<y>.+)$", re.I)


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


# verbs read in the headline only: in the body they are mostly the reporter's own steps ("use
# `pytest -k`", "keep the default", "print it")
_HEADLINE_ONLY = frozenset({"show", "display", "generate", "unroll", "print", "emit", "preserve",
                            "report", "include", "keep", "use", "skip", "escape", "render"})


def _imperative(s: str, *, headline: bool = True) -> str | None:
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
    if verb in _HEADLINE_ONLY and not headline:
        return None
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
    if m := _LEAKING.match(s):  # "X exceptions passing through the API"
        verb = _third(_GERUND[m.group("g").lower()], m.group("s"))
        return f"{m.group('s')} no longer {verb} {m.group('r')}"
    if hit := _first(_SYMPTOMS, s):
        return hit
    if m := _NOT_DONE.match(s):
        return f"{m.group('s')} {_be(m.group('s'))} {m.group('v')}{m.group('r')}"
    if m := _TO_VERB.match(s):
        return f"{m.group('s')} {_third(m.group('v').lower(), m.group('s'))}{m.group('r')}"
    if m := _PROBLEM.match(s):
        return f"the {m.group('s')} problem no longer occurs"
    if (m := _GERUNDS[-1][0].match(s)) and m.group("g").lower() in _ING_NOUNS:
        return _first(_GERUNDS[:-1], s)
    if hit := _first(_GERUNDS, s):
        return hit
    if m := _FEATURE.match(s):
        return f"{m.group('y')} {_third('include', m.group('y'))} {m.group('x')}"
    return None


def _first(table: list[tuple[re.Pattern[str], str]], s: str) -> str | None:
    """The template of the first pattern of `table` that matches `s`, filled in ({be}: the verb
    agreeing with the subject, {v_base}: a third-person verb's base form)."""
    for pattern, template in table:
        if sm := pattern.match(s):
            parts = {k: v or "" for k, v in sm.groupdict().items()}
            for k in ("a", "x", "e"):  # "Trailing whitespace in X" -> "no trailing whitespace"
                if parts.get(k) and not parts[k].isupper():
                    parts[k] = parts[k][:1].lower() + parts[k][1:]
            parts.setdefault("be", _be(parts.get("s", "")))
            verb = parts.get("v", "")
            parts["v_base"] = re.sub(r"(?:(?<=ss)|(?<=[xz])|(?<=ch)|(?<=sh))es$|s$", "", verb)
            return template.format(**parts)
    return None


# a release the headline names ("Pytest 6: ...", "... pytest versions: 5.4.x, current master")
_VERSION_HEAD = re.compile(r"^(?:[A-Za-z][\w.-]*\s+)?v?\d+(?:\.[\dx]+)*:\s+")
_VERSION_TAIL = re.compile(r"\s+\S*\s*versions?:\s.*$", re.I)


# what the report says of now, before the symptom: "But right now X does not Y" is "X does not Y"
_NOW = re.compile(r"^(?:(?:but|and|so|however|yet),?\s+)?(?:right now|currently|at the moment|"
                  r"at present|presently|for now|as of now|now),?\s+", re.I)


def _clean(sentence: str) -> str:
    s = _NOW.sub("", WISH.sub("", WITHOUT.sub("", TITLE_PREFIX.sub("", sentence))))
    s = _VERSION_TAIL.sub("", _VERSION_HEAD.sub("", _ASIDE.sub("", s)))
    return " ".join(s.split()).rstrip(" .!?:,")


def derive(goal: str, intents: list[str]) -> list[str]:
    """Up to MAX_DERIVED_CRITERIA candidates: from the goal (a request or a statement of the
    symptom), then from the other sentences that ask for something in the imperative. A
    symptom elsewhere in the text is not read: "it works in 2.6" or "X is broken because Y"
    would give a criterion that says the wrong thing."""
    from plan07.request.screen import screen

    out: list[str] = []
    first, spans = _hide_code(_clean(goal))
    if _STATES_EXPECTATION.search(first):  # "X should also affect Y": the goal is a check
        return [finish(_clean(goal))]
    heads = [_imperative(first) or _statement(first)]
    for s in map(_clean, intents):  # their code spans stay as they are: only a verb is read
        d = _imperative(s, headline=False)
        heads.append(screen(d) if d else None)  # never code, a quote, a fragment ...
    for d in heads:
        if len(out) >= caps.MAX_DERIVED_CRITERIA:
            break
        if d and re.search(r"[A-Za-z]{2}", d):
            out = dedupe([*out, finish(_show_code(d, spans))])
    return out


_CODE = re.compile(r"`[^`]+`")
_STATES_EXPECTATION = re.compile(r"\b(?:should|must|shall)\b", re.I)
_HIDDEN = re.compile(r"\x01(\d+)\x01")


def _hide_code(s: str) -> tuple[str, list[str]]:
    """`s` with each code span a placeholder word: a headline's verbs are read in its prose,
    never inside `Imaginary coordinates are not permitted.`."""
    spans: list[str] = []

    def put(m: re.Match[str]) -> str:
        spans.append(m.group(0))
        return f"\x01{len(spans) - 1}\x01"

    return _CODE.sub(put, s), spans


def _show_code(s: str, spans: list[str]) -> str:
    return _HIDDEN.sub(lambda m: spans[int(m.group(1))], s)
