"""The issue's reproduction, run (docs/evidence.md "Running the reproduction"): which code of an
issue is runnable, and what its run tells localization. Pure: text in, snippets out; a run's
record and the recon nodes in, frames and executed entities out. The run itself is I/O in the
repository's own interpreter (plan07.gate.reproduce), opt-in (`plan --reproduce`).

A reproduction that raises gives the traceback the reporter may not have pasted: its frames are
read as an issue's own (plan07.evidence.localize: the innermost frame in the project's own code
is where the error surfaced). One that runs gives the project's functions it called: a fix to
what the reproduction shows sits, almost always, in a file it ran, so a file it never entered
ranks below the files it did (plan07.evidence.filerank.blend).
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from plan07.model import ReconNode

MAX_SNIPPETS = 8  # code blocks run, first ones first
MAX_SNIPPET_CHARS = 20_000  # all of them together
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")
# a fenced block's language tag that is not Python: never run
_NOT_PYTHON = re.compile(r"^(?:sh|bash|shell|console|text|txt|output|diff|patch|ini|toml|yaml|"
                         r"yml|json|rst|md|markdown|html|xml|sql|c|cpp|js|javascript|cfg|"
                         r"pytb|traceback|log|none|plain)$", re.I)
_PROMPT = re.compile(r"^\s*(?:>>>|\.\.\.)(?: |$)")
_IPY_IN = re.compile(r"^\s*In \[\d+\]:\s?")
_IPY_MORE = re.compile(r"^\s*\.\.\.+:\s?")
_SHELL = re.compile(r"^\s*(?:\$ |pip |python\d?(?:\.\d+)? |%|!)")


@dataclass(frozen=True)
class Frame:
    """One frame of a traceback: the repo-relative file, the line, the function."""

    file: str
    line: int
    func: str


@dataclass
class Reproduction:
    """What running an issue's snippets in the repository's interpreter recorded."""

    snippets: int = 0  # snippets found and run (in order, one namespace)
    ran: int = 0  # snippets that ran to their end or raised (not cut by the time budget)
    errors: list[tuple[str, str, list[Frame]]] = field(default_factory=list)  # type, msg, frames
    partial: bool = False  # an error cut a snippet short (a name, a module, the network, a file)
    # errors of this machine's environment (OSError, ImportError): their frames are no evidence
    environment: list[tuple[str, str, list[Frame]]] = field(default_factory=list)
    calls: dict[tuple[str, int, str], int] = field(default_factory=dict)  # (file, line, name)
    timed_out: bool = False
    supplied: list[str] = field(default_factory=list)  # names the snippets used, never imported
    problem: str | None = None  # why nothing useful ran (interpreter, import error, ...)

    @property
    def frames(self) -> list[Frame]:
        """The frames of the last error raised in the project's code (innermost last), unless
        it was the environment's (the network, a file, a missing optional module) rather than
        the issue's."""
        for _, _, frames in reversed([e for e in self.errors if e not in self.environment]):
            if frames:
                return frames
        return []

    @property
    def complete(self) -> bool:
        """Every snippet ran to its end or to an error that is part of what it shows: the calls
        it recorded are all it would call (no time cut, no missing name, module or host)."""
        return not (self.timed_out or self.partial)

    @property
    def executed_files(self) -> set[str]:
        return {f for f, _, _ in self.calls}

    def summary(self) -> str:
        """One line for the user: what the run showed."""
        if self.problem:
            return f"the reproduction told nothing: {self.problem}"
        parts = [f"{self.ran}/{self.snippets} snippet(s) ran",
                 f"{len(self.calls)} function(s) of the repository called in "
                 f"{len(self.executed_files)} file(s)"]
        if self.errors:
            kind, msg, frames = self.errors[-1]
            where = f" at {frames[-1].file}:{frames[-1].line}" if frames else ""
            parts.append(f"raised {kind}{where}: {msg[:80]}")
        if self.supplied:
            parts.append(f"{len(self.supplied)} name(s) it never imported taken from the "
                         f"repository ({', '.join(self.supplied[:5])})")
        if self.timed_out:
            parts.append("cut at its time budget")
        return "; ".join(parts)


def describe(rep: Reproduction | None) -> str:
    """The one line a user sees about a reproduction (`reproduce` gives None for an issue with
    no Python code)."""
    return rep.summary() if rep is not None else "the issue holds no Python code to run"


def snippets(request: str) -> list[str]:
    """The issue's runnable Python, in order: each fenced block that parses as Python (an
    interactive session's `>>>` / `In [1]:` input lines only, its output dropped), and each run
    of `>>>` lines outside a fence. Tracebacks, shell commands, output and blocks tagged with
    another language are not code to run. At most MAX_SNIPPETS, MAX_SNIPPET_CHARS in all."""
    out: list[str] = []
    block: list[str] = []
    fence: str | None = None
    lang = ""
    loose: list[str] = []  # `>>>` lines outside any fence

    def keep(lines: Sequence[str]) -> None:
        code = _python(lines)
        if code and sum(map(len, out)) + len(code) <= MAX_SNIPPET_CHARS:
            out.append(code)

    for line in request.replace("\r\n", "\n").split("\n"):
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                if not _NOT_PYTHON.match(lang):
                    keep(block)
                fence, block = None, []
            else:
                block.append(line)
            continue
        if m := _FENCE.match(line):
            if loose:
                keep(loose)
                loose = []
            fence, lang, block = m.group(1), m.group(2), []
            continue
        if _PROMPT.match(line):
            loose.append(line)
        elif loose:
            keep(loose)
            loose = []
    if loose:
        keep(loose)
    return out[:MAX_SNIPPETS]


def _python(lines: Sequence[str]) -> str | None:
    """A block's code to run, or None: the input lines of an interactive session, else the
    whole block when it parses and is not a traceback or a shell session."""
    text = textwrap.dedent("\n".join(lines)).strip("\n")
    if not text.strip() or text.lstrip().startswith("Traceback (most recent call last)"):
        return None
    rows = text.split("\n")
    if any(_PROMPT.match(r) or _IPY_IN.match(r) for r in rows):
        code = []
        for r in rows:
            if _PROMPT.match(r):
                code.append(re.sub(r"^\s*(?:>>>|\.\.\.) ?", "", r))
            elif _IPY_IN.match(r):
                code.append(_IPY_IN.sub("", r))
            elif _IPY_MORE.match(r) and code:
                code.append(_IPY_MORE.sub("", r))
        text = textwrap.dedent("\n".join(code)).strip("\n")
    elif any(_SHELL.match(r) for r in rows):
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    # a block of bare names and literals (output, a repr) runs nothing worth watching
    if not any(isinstance(n, ast.Call | ast.Import | ast.ImportFrom | ast.Assign | ast.Attribute
                          | ast.BinOp | ast.Compare | ast.Subscript) for n in ast.walk(tree)):
        return None
    return text


def parse_record(data: object, snippets_run: int) -> Reproduction:
    """The child's JSON record (plan07.gate.repro_child) -> a Reproduction; a record of another
    shape is a problem, never an exception (the child runs in the user's interpreter)."""
    rep = Reproduction(snippets=snippets_run)
    if not isinstance(data, dict):
        rep.problem = "the run left no record"
        return rep
    try:
        rep.ran = int(data.get("ran", 0))
        rep.timed_out = bool(data.get("timed_out", False))
        for err in data.get("errors", []):
            frames = [Frame(str(f), int(n), str(fn)) for f, n, fn in err.get("frames", [])]
            e = (str(err.get("type", "")), str(err.get("message", "")), frames)
            rep.errors.append(e)
            rep.partial = rep.partial or bool(err.get("partial"))
            if err.get("environment"):
                rep.environment.append(e)
        for f, n, name, count in data.get("calls", []):
            rep.calls[(str(f), int(n), str(name))] = int(count)
        rep.supplied = [str(n) for n in data.get("supplied", [])]
        if data.get("problem"):
            rep.problem = str(data["problem"])
    except (TypeError, ValueError, AttributeError):
        return Reproduction(snippets=snippets_run, problem="the run's record is malformed")
    return rep


def executed_entities(rep: Reproduction, nodes: Sequence[ReconNode]) -> dict[str, int]:
    """Recon entity -> how often the run called it: a call's (file, first line, name) is the
    definition of that name in that file whose `def` line is nearest at or after the code's
    first line (a decorated function's code starts at its first decorator)."""
    by_file: dict[str, list[ReconNode]] = {}
    for n in nodes:
        if n.file and n.kind not in ("module", "test"):
            by_file.setdefault(n.file, []).append(n)
    out: dict[str, int] = {}
    for (file, line, name), count in rep.calls.items():
        hits = [n for n in by_file.get(file, [])
                if n.id.rpartition(".")[2] == name and (n.line or 0) >= line]
        if hits:
            e = min(hits, key=lambda n: (n.line or 0) - line).id
            out[e] = out.get(e, 0) + count
    return out


def frame_tuples(rep: Reproduction | None) -> list[tuple[str, str, int]]:
    """The run's frames as localize reads a traceback's: (path, function, line)."""
    return [(f.file, f.func, f.line) for f in rep.frames] if rep is not None else []


def informative(rep: Reproduction | None, executed: Mapping[str, int]) -> bool:
    """Does the run say where the issue's code went? It called code of the repository that
    recon knows (an import alone calls nothing: imports run before the watch starts), and no
    snippet was cut short (what a cut snippet never reached is no evidence against a file)."""
    return rep is not None and not rep.problem and rep.complete and bool(executed)
