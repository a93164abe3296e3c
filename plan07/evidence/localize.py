"""05 localization from the issue text: what the issue names first, lexical overlap after. Pure:
the request text, the recon nodes and (optionally) the source lines in; ranked entities out.

1. The issue's own names, resolved to recon entities: backticked code, dotted names
   (`flask.Config.from_file()`), identifiers with an underscore or inner capital
   (`resolve_redirects`, `SessionRedirectMixin`), paths (`requests/sessions.py`), traceback
   frames (`File ".../requests/models.py", line 627, in generate`) and code lines the issue
   quotes that occur in the source (`method = builtin_str(method)`).
2. Template and environment sections ("Environment", "Versions", "Installation", "Operating
   system", "Your project", checklists) are not read at all: their words ("Python version",
   "Sphinx extensions") would send localization to `BuildEnvironment`, `Extension`, `Project`.
3. Lexical overlap (plan07.evidence.softrank.lex) of the rest of the prose, below every named
   entity.

Scores (in [0,1]): a name the issue writes, resolved exactly or as a unique dotted suffix,
NAMED; through its last part only (`Session.resolve_redirects` found as
`SessionRedirectMixin.resolve_redirects`), or as one of a few same-named entities, lower; a
traceback frame or a quoted source line, FRAME (the innermost frame highest; the innermost
one in the project's own code, not a test, NAMED: where the error surfaced); lexical overlap,
scaled into [0, LEX_CEILING].
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property

from plan07.evidence.index import CALLABLE_KINDS
from plan07.evidence.softrank import lex, tokens
from plan07.model import ReconNode

NAMED, SUFFIX_ONLY, AMBIGUOUS, FRAME, QUOTED = 1.0, 0.9, 0.8, 0.85, 0.85
CALLED = 0.75  # a name the issue's code calls, times how well it resolves
LEX_CEILING = 0.6
MAX_SAME_NAME = 3  # a bare name shared by more entities than this names none of them,
# unless one alone is a module-level function or class (`refine()` beside a dozen methods)
CODE_KINDS = {"function", "method", "class", "schema", "config", "route", "test"}

_ENV_HEADING = re.compile(
    r"environment|versions?\b|system info|platform|installation|operating system|"
    r"python version|your project|checklist|prerequisites|before (?:submitting|you)|"
    r"screenshots?|desktop|smartphone|extensions?\b.*used|sphinx extensions|"
    r"(?:jupyter|matplotlib|python|sphinx|pytest|django|flask) (?:version|backend)",
    re.I,
)
_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s+(.+?)\s*#*|\*\*([^*]{1,80})\*\*:?|([A-Z][\w /'-]{2,40}):)\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_FRAME = re.compile(r'File "([^"\n]+\.py)", line (\d+), in ([\w<>]+)')
# IPython's and Jupyter's tracebacks: `File ~/seaborn/_core/scales.py:351, in
# ContinuousBase._setup(self, data)` (IPython 8) and `~/site-packages/seaborn/axisgrid.py in
# map(self, func, **kwargs)`, its line on the `--> 1265` arrow below it (IPython 7)
_FRAME_IPY = re.compile(r"File (\S+\.py):(\d+), in ([\w.<>]+)")
_FRAME_IPY7 = re.compile(r"^\s*(\S+\.py) in ([\w.<>]+)\(")
_ARROW = re.compile(r"^\s*-+>\s*(\d+)\b")
_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_DOTTED = re.compile(r"(?<![\w./-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?")
_PATH = re.compile(r"(?<![\w/.-])((?:[\w-]+/)+[\w-]+\.py)\b")
# `.register_hook()` names a method too (a leading dot, no qualifier)
_IDENT = re.compile(r"(?<!\w)(?<!\w\.)([A-Za-z_]\w*_\w+|_\w+|[A-Z][a-z0-9]+[A-Z]\w*)(?![\w])")
_MANGLED_DUNDER = re.compile(r"\.\*\*(\w+)\*\*")  # GitHub renders `X.__init__` as X.**init**
_CODE_LINE = re.compile(r"[=(]")
# a line of code pasted into prose (a call or an assignment): read for quoted source, not names
_PROSE_CODE = re.compile(r"^\s*(?:[\w.]+\(.*\)|[\w.\[\]'\"]+\s*[:=]\s*\S.*)\s*$")
# A call that does not bind raises in its caller's frame, about the callee it names:
# `_print_X() got an unexpected keyword argument 'exp'` is a fact of `_print_X`'s signature,
# and the innermost frame is only where the call was made.
_SIGNATURE_ERROR = re.compile(  # the callee as Python >= 3.10 writes it: `RST.__init__()`
    r"\b((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\(\) (?:got an unexpected keyword argument|"
    r"got multiple values for|"
    r"missing \d+ required (?:positional |keyword-only )?argument|"
    r"takes (?:from )?\d+ (?:to \d+ )?positional argument)")
_VENDORED = re.compile(r"(?:^|/)(?:packages|vendor|_vendor|vendored|extern|third_party)/")
_EXCEPTION = re.compile(r"(?:Error|Exception|Warning)$")
EXCEPTION_FACTOR = 0.7  # a named exception is usually what is raised, not where the fix goes
_BUILTINS = frozenset(dir(builtins)) | frozenset(keyword.kwlist)


def issue_prose(text: str) -> tuple[str, list[str]]:
    """The issue without its template/environment sections: (prose, code lines). Code lines
    are the lines of fenced blocks and tracebacks kept apart: read for frames and quoted
    source, never for lexical overlap."""
    prose: list[str] = []
    code: list[str] = []
    skip = False
    fence: str | None = None
    for line in text.replace("\r\n", "\n").split("\n"):
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            elif not skip:
                code.append(line)
            continue
        if m := _FENCE.match(line):
            fence = m.group(1)
            continue
        if (h := _HEADING.match(line)) and len(line.strip()) <= 80:
            skip = bool(_ENV_HEADING.search(next(g for g in h.groups() if g)))
            continue
        if skip:
            continue
        if (line.startswith(("    ", "\t")) or line.lstrip().startswith((">>>", "File \""))
                or _PROSE_CODE.match(line) or is_frame(line)):
            code.append(line)
        else:
            prose.append(line)
    return "\n".join(prose), code


def names_in(prose: str) -> list[str]:
    """The code names an issue writes, in order of first appearance, deduplicated."""
    out: list[str] = []
    prose = _MANGLED_DUNDER.sub(r".__\1__", prose)
    for span in _BACKTICK.findall(prose):
        dotted = [m.group(1) for m in _DOTTED.finditer(span)]
        # `Session.resolve_redirects` names the method, not `Session`: the words of a span
        # count alone only when it holds no dotted name
        # words of a span of several (`Command line:1:0: Unrecognized option`, output quoted)
        # count only when written as code (`hue_order`, `PylintRun`), not as plain words
        words = [w for w in re.findall(r"[A-Za-z_]\w*", span) if len(w) >= 3]
        if len(span.split()) > 1:
            words = [w for w in words if "_" in w or any(c.isupper() for c in w[1:])]
        out += dotted or words
    bare = _BACKTICK.sub(" ", prose)
    out += [m.group(1) for m in _PATH.finditer(bare)]
    out += [m.group(1) for m in _DOTTED.finditer(bare) if not m.group(1).endswith(".py")]
    out += _IDENT.findall(bare)
    return list(dict.fromkeys(n.strip(".") for n in out if n and n not in _BUILTINS))


class _Names:
    """Recon entities by the names an issue may use for them."""

    def __init__(self, nodes: Sequence[ReconNode]) -> None:
        self.by_id = {n.id: n for n in nodes}
        self.by_last: dict[str, list[str]] = defaultdict(list)
        self.by_file: dict[str, list[ReconNode]] = defaultdict(list)
        for n in nodes:
            self.by_last[n.id.rpartition(".")[2]].append(n.id)
            if n.file:
                self.by_file[n.file].append(n)
        for v in self.by_file.values():
            v.sort(key=lambda n: n.line or 0)

    @cached_property
    def by_tail(self) -> dict[str, list[str]]:
        """Files by each path tail of two parts or more: "a/b.py" -> ["src/a/b.py"] (read only
        for a traceback's frames)."""
        out: dict[str, list[str]] = defaultdict(list)
        for f in self.by_file:
            parts = f.split("/")
            for k in range(2, len(parts) + 1):
                out["/".join(parts[-k:])].append(f)
        return out

    def resolve(self, name: str) -> list[tuple[str, float]]:
        if name.endswith(".py"):  # a path: its module (the file's shortest id)
            hits = [f for f in self.by_file if f == name or f.endswith("/" + name)]
            return [(min((n.id for n in self.by_file[f]), key=len), QUOTED) for f in hits[:1]]
        if name in self.by_id:
            return [(name, NAMED)]
        last = name.rpartition(".")[2]
        same = self.by_last.get(last, [])
        suffix = [e for e in same if e.endswith("." + name)]
        if len(suffix) == 1:
            return [(suffix[0], NAMED)]
        if "." in name and same and len(same) <= MAX_SAME_NAME and self.knows(name):
            return [(e, SUFFIX_ONLY) for e in sorted(same)]
        if "." not in name and 0 < len(same) <= MAX_SAME_NAME:
            return [(e, NAMED if len(same) == 1 else AMBIGUOUS) for e in sorted(same)]
        # `refine()`, shared by a module-level function and a dozen methods: the function
        top = [e for e in same if self.by_id[e].kind in ("function", "class")]
        return [(top[0], NAMED)] if "." not in name and len(top) == 1 else []

    def commands(self, prose: str) -> list[str]:
        """`flask routes`, `pylint --recursive`: a subcommand of the project's own command line
        -> its implementation (`routes_command`, `cmd_routes`, `routes` in a cli module)."""
        tops = {i for i in self.by_id if "." not in i and self.by_id[i].kind == "module"}
        out: list[str] = []
        for top in sorted(tops):
            for sub in re.findall(rf"(?<![\w.-]){re.escape(top)}\s+([a-z][a-z0-9_]+)\b", prose):
                for name in (f"{sub}_command", f"cmd_{sub}", f"{sub}_cmd", sub):
                    out += [e for e in self.by_last.get(name, [])
                            if e.startswith(top + ".") and re.search(r"\bcli\b|command|"
                                                                     r"commands|main", e)]
        return list(dict.fromkeys(out))

    def knows(self, dotted: str) -> bool:
        """The qualifier of `dotted` is a name in this repository (`Session` in
        `Session.resolve_redirects`), not an outside module (`tomllib.load`, `json.load`)."""
        head = dotted.split(".")[0]
        return head in self.by_last or any(n.file and n.file.startswith(head + "/")
                                           for ns in self.by_file.values() for n in ns[:1])

    def frame(self, path: str, func: str, line: int) -> str | None:
        """A traceback frame -> the repo entity: the file the frame's path ends with, by the
        longest common tail, the definition named `func` in it. The repo file may sit below a
        layout folder the installed path lacks (`site-packages/_pytest/_io/saferepr.py` is
        `src/_pytest/_io/saferepr.py`); a tail of one part matches only a file at the top."""
        parts = path.replace("\\", "/").split("/")
        for k in range(len(parts), 0, -1):
            tail = "/".join(parts[-k:])
            exact = [tail] if tail in self.by_file else []
            files = exact or (self.by_tail.get(tail, []) if k > 1 else [])
            if len(files) == 1:
                hits = [n.id for n in _named(
                    [n for n in self.by_file[files[0]] if n.kind != "module"], func)]
                # of same-named methods, the one holding the frame's line; a nested function
                # recon has no node for: what encloses the frame's line
                at = self.enclosing(files[0], line)
                if len(hits) > 1 and at in hits:
                    return at
                return min(hits, key=len) if hits else at
        return self.moved(parts, func, line)

    def moved(self, parts: Sequence[str], func: str, line: int) -> str | None:
        """A frame in a file the repository no longer has (the reporter's release had
        `seaborn/_core.py`, the commit `seaborn/_oldcore.py`): the function or method of the
        frame's name in the package its path names, if all so named are in one file; of several
        there (every mapping's `_lookup_single`), the one nearest the frame's line."""
        name = func.rpartition(".")[2]
        if not name.isidentifier() or name.startswith("__"):
            return None
        dirs = set(parts[:-1])
        hits = _named([self.by_id[e] for e in self.by_last.get(name, [])
                       if self.by_id[e].kind in CALLABLE_KINDS
                       and _package(self.by_id[e].file) in dirs], func)
        if len({n.file for n in hits}) != 1:
            return None
        return min(hits, key=lambda n: abs((n.line or 0) - line)).id

    def enclosing(self, file: str, line: int) -> str | None:
        """The innermost definition starting at or before `line` in `file` (by start lines)."""
        best = None
        for n in self.by_file.get(file, []):
            if (n.line or 0) <= line and n.kind in CODE_KINDS:
                best = n.id
        return best


def is_frame(line: str) -> bool:
    """`line` heads a traceback frame, in Python's or IPython's form."""
    return bool(_FRAME.search(line) or _FRAME_IPY.search(line) or _FRAME_IPY7.match(line))


def _named(defs: Sequence[ReconNode], func: str) -> list[ReconNode]:
    """The definitions of `defs` a frame's function names: by its qualname where the frame
    writes one (IPython's `C.f`), else every one of its last name (`saferepr` in saferepr.py)."""
    return ([n for n in defs if n.id.endswith("." + func)]
            or [n for n in defs if n.id.rpartition(".")[2] == func.rpartition(".")[2]])


def _package(file: str | None) -> str | None:
    """The top package of a repository file: `seaborn` for seaborn/_oldcore.py and for
    src/seaborn/_oldcore.py."""
    parts = (file or "").split("/")
    return parts[1] if parts[0] in ("src", "lib") and len(parts) > 2 else parts[0] or None


def frames_in(lines: Sequence[str]) -> list[tuple[str, str, int]]:
    """The traceback frames written in `lines`, outermost first: (path, function, line). The
    function is as the traceback writes it (`ContinuousBase._setup` in IPython 8); an IPython
    7 frame's line is its first `-->` arrow's, 0 when it has none."""
    out: list[tuple[str, str, int]] = []
    pending: int | None = None  # an IPython 7 frame waiting for its arrow
    for ln in lines:
        if pending is not None and (a := _ARROW.match(ln)):
            path, func, _ = out[pending]
            out[pending] = (path, func, int(a.group(1)))
            pending = None
            continue
        if m := _FRAME_IPY7.match(ln):
            out.append((m.group(1), m.group(2), 0))
            pending = len(out) - 1
            continue
        out += [(m.group(1), m.group(3), int(m.group(2)))
                for rx in (_FRAME, _FRAME_IPY) for m in rx.finditer(ln)]
    return out


_CALL = re.compile(r"(?<![\w])(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)\s*\(")
_DEF = re.compile(r"^\s*(?:def|class)\s")


def called_in(code: Sequence[str]) -> list[str]:
    """The names the issue's code calls (the last part of `a.b.c(`), first call first: not a
    builtin, not what the code itself defines, nor a REPL's or traceback's output."""
    defined = {m.group(1) for ln in code
               for m in re.finditer(r"^\s*(?:def|class)\s+(\w+)", ln)}
    out: list[str] = []
    for ln in code:
        if _DEF.match(ln) or is_frame(ln) or ln.lstrip().startswith(("Traceback", "File ")):
            continue
        out += [m.group(1) for m in _CALL.finditer(ln)]
    return list(dict.fromkeys(n for n in out if n not in _BUILTINS and n not in defined
                              and len(n) >= 3))


def localize(request: str, nodes: Sequence[ReconNode], *, sources: Mapping[str, str] | None = None,
             eligible: Iterable[str] | None = None,
             observed: Sequence[tuple[str, str, int]] = ()) -> dict[str, float]:
    """Entity -> localization score for `request` (module docstring). `sources`: file -> text,
    for the code lines the issue quotes; `eligible`: the entities that may be ranked (default:
    all); `observed`: the frames (path, function, line) of the traceback the issue's
    reproduction raised when plan07 ran it (plan07.evidence.repro), read after the issue's own."""
    ix = _Names(nodes)
    allowed = set(eligible) if eligible is not None else set(ix.by_id)
    prose, code = issue_prose(request)
    score: dict[str, float] = {}

    def put(e: str | None, s: float) -> None:
        if e is not None and e in allowed:
            score[e] = max(score.get(e, 0.0), s)

    for name in names_in(prose):
        for hit, s in ix.resolve(name):
            put(hit, s * EXCEPTION_FACTOR if _EXCEPTION.search(hit) else s)
    for e in ix.commands(prose):
        put(e, SUFFIX_ONLY)
    # what the issue's reproduction calls (`sns.pairplot(...)`, `Intersection(...)`): the API
    # it exercises, a name resolved as a written one is, a little below what the prose names
    for name in called_in(code):
        for hit, s in ix.resolve(name):
            put(hit, CALLED * s * (EXCEPTION_FACTOR if _EXCEPTION.search(hit) else 1.0))
    frames = [*frames_in([*code, *prose.splitlines()]), *observed]
    innermost = None
    passed: set[str] = set()  # the files the traceback passes through
    for depth, (path, func, line) in enumerate(frames):  # the innermost frame is the last one
        at = ix.frame(path, func, line)
        if at is None:
            continue
        file = ix.by_id[at].file or ""
        passed.add(file)
        own = not _VENDORED.search(file)
        put(at, (FRAME if own else FRAME * EXCEPTION_FACTOR) + 0.1 * (depth + 1) / len(frames))
        if own and ix.by_id[at].kind != "test":
            innermost = at
    # where the error surfaced in the project's own code: read as if the issue named it, unless
    # the error is a call that did not bind: then what it names is the callee, and of several
    # so named (every printer's `_print_X`) the one in a file the traceback passes through
    callees = _SIGNATURE_ERROR.findall(request)
    if not callees:
        put(innermost, NAMED)
    for name in dict.fromkeys(callees):
        hits = ix.resolve(name)
        owner = name.rpartition(".")[0]  # `RST.__init__()`, a method RST only inherits: RST,
        if owner and not any(h == name or h.endswith("." + name) for h, _ in hits):
            hits = ix.resolve(owner) or hits  # where an override would go
        near = [h for h, _ in hits if ix.by_id[h].file in passed]
        for hit, s in ([(h, NAMED) for h in near] if len(near) == 1 else hits):
            put(hit, s)
    if sources:
        quoted = {ln.strip() for ln in [*code, *prose.splitlines()]
                  if len(ln.strip()) >= 12 and _CODE_LINE.search(ln) and not is_frame(ln)}
        for file, text in sources.items():
            for i, ln in enumerate(text.splitlines(), 1):
                if ln.strip() in quoted:
                    put(ix.enclosing(file, i), QUOTED)
    words = set(tokens(prose))
    for n in nodes:
        if n.id in allowed and n.id not in score and (s := lex(words, n)) > 0.0:
            score[n.id] = round(LEX_CEILING * s, 4)
    return score
