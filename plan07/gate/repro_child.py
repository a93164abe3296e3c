"""The reproduction's child (plan07.gate.reproduce): runs in the repository's own interpreter,
which may be an old Python and never has plan07, so it is read as text and run with `-c`; it
imports nothing but the standard library and is written for Python 3.6 and newer.

    python -c SOURCE REPO SNIPPETS.json RECORD.json BUDGET_SECONDS

SNIPPETS.json: {"snippets": [code, ...], "preamble": code or null}. Runs the preamble (the
session the project's issues assume, e.g. `from sympy import *`), then the snippets in order in
one namespace, statement by statement (an expression's value is `_` and is shown, as in a
session or a notebook: its repr, its `_repr_html_` / `_repr_png_`); a name the snippet's own
code uses but never binds is taken from the repository (`_Finder`: a top-level package, a name
it exports, how the repository's files import it, a module-level definition), as the
reporter's session had it imported, and the statement runs again. Import statements and the
preamble run unwatched (what an import calls says nothing about the issue), every other
statement under a profile hook counting the calls of each function. Writes RECORD.json: the
snippets that ran; each error's type, first message line, frames in the repository, whether it
cut the snippet short before it showed anything (`partial`: a missing name or module, the
network, a file) and whether it is this machine's (`environment`: OSError, ImportError); the
calls of functions defined under REPO, as (repo-relative file, first line, name, count); a
`problem` when an import failed and nothing of the repository ran. Stops at BUDGET_SECONDS
(`timed_out`), keeping what it recorded.
"""

import ast
import importlib
import inspect
import json
import os
import re
import signal
import sys
import threading
import traceback
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple


class OutOfTime(BaseException):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise OutOfTime()


_NAME = re.compile(r"name '(\w+)' is not defined")
_TOP_DEF = re.compile(r"^(?:async\s+)?(?:def|class)\s+(\w+)", re.M)
_IMPORT_AS = re.compile(r"^[ \t]*(?:>>> )?import[ \t]+([\w.]+)(?:[ \t]+as[ \t]+(\w+))?[ \t]*$",
                        re.M)
_FROM_AS = re.compile(r"^[ \t]*(?:>>> )?from[ \t]+([\w.]+)[ \t]+import[ \t]+(\w+)[ \t]+as[ \t]+"
                      r"(\w+)[ \t]*$", re.M)
# folders whose files are not the repository's own way of writing imports: environments
# (any folder holding a pyvenv.cfg too), installed packages, build output
_NOT_OURS = {"node_modules", "site-packages", "build", "dist", "venv", "env", "__pycache__"}
_SKIP = {"tests", "test", "testing", "docs", "doc", "examples", "benchmarks", "build", "dist",
         "node_modules", "site-packages"}


def _show(value: Any) -> None:
    """What a session does with an expression's value: `>>>` prints its repr, a notebook
    displays it (`_repr_html_`, `_repr_png_`: a plot object renders only then). What showing
    it raises is the statement's error."""
    repr(value)
    for hook in ("_repr_html_", "_repr_png_"):
        method = getattr(value, hook, None)
        if callable(method) and not isinstance(value, type):
            method()


def _chain(exc: BaseException) -> List[BaseException]:
    """The error and those it was raised from (`raise X from err`: the wrapped error is the
    cause), the outermost first. An error merely being handled when it was raised (the
    implicit context: a lookup's KeyError caught on the way) is no cause."""
    out = [exc]
    while len(out) < 8:
        nxt = out[-1].__cause__
        if nxt is None or nxt in out:
            break
        out.append(nxt)
    return out


def _missing(exc: NameError) -> Optional[str]:
    name = getattr(exc, "name", None)
    if name:
        return str(name)
    m = _NAME.search(str(exc))
    return m.group(1) if m else None


def _at_top(exc: BaseException, snippet: str) -> bool:
    """The name is missing in the snippet's own code, not inside the project."""
    tb = traceback.extract_tb(exc.__traceback__)
    return bool(tb) and tb[-1].filename == snippet


class _Finder:
    """Where the repository defines a name: its top-level packages, what they export, the
    module-level `def`/`class` of each of its modules (read on first need)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.bases = [b for b in (root, os.path.join(root, "src"), os.path.join(root, "lib"))
                      if os.path.isdir(b)]
        self.tops = sorted({d for b in self.bases for d in os.listdir(b) if d not in _SKIP
                            and os.path.isfile(os.path.join(b, d, "__init__.py"))})
        self.defs = None  # type: Optional[Dict[str, List[str]]]
        self.spelled = None  # type: Optional[Dict[str, Dict[Tuple[str, str], int]]]

    def find(self, name: str) -> Optional[Tuple[Any]]:
        if name in self.tops:
            mod = self._load(name)
            return (mod,) if mod is not None else None
        for top in self.tops:
            mod = self._load(top)
            # a submodule (`flask.app`) is not what a session's `app` was
            if mod is not None and hasattr(mod, name) and not inspect.ismodule(
                    getattr(mod, name)):
                return (getattr(mod, name),)
        spelled = self._imports().get(name)
        if spelled:  # `xr`: the repository's own code writes `import xarray as xr`
            modname, attr = max(spelled, key=lambda k: (spelled[k], k))
            mod = self._load(modname)
            if mod is not None and (not attr or hasattr(mod, attr)):
                return (getattr(mod, attr) if attr else mod,)
        for modname in sorted(self._defs().get(name, []), key=lambda m: (m.count("."), m)):
            mod = self._load(modname)
            if mod is not None and hasattr(mod, name):
                return (getattr(mod, name),)
        return None

    def _load(self, modname: str) -> Any:
        try:
            return importlib.import_module(modname)
        except Exception:  # noqa: BLE001 (a module that does not import supplies nothing)
            return None

    def _imports(self) -> Dict[str, Dict[Tuple[str, str], int]]:
        """Each name the repository's files (its tests, docs and examples too) bind by an
        import: `import numpy as np`, `import os`, `from a import b as c`; how often each way."""
        if self.spelled is None:
            spelled = {}  # type: Dict[str, Dict[Tuple[str, str], int]]

            def count(name: str, mod: str, attr: str) -> None:
                if "." not in name:
                    ways = spelled.setdefault(name, {})
                    ways[(mod, attr)] = ways.get((mod, attr), 0) + 1

            for _, text in _texts(self.root, _ours, (".py", ".rst", ".md")):
                for mod, alias in _IMPORT_AS.findall(text):
                    count(alias or mod, mod, "")
                for mod, attr, alias in _FROM_AS.findall(text):
                    count(alias, mod, attr)
            self.spelled = spelled
        return self.spelled

    def _defs(self) -> Dict[str, List[str]]:
        """Each module-level `def`/`class` name of the library's modules (not its tests)."""
        if self.defs is None:
            defs = {}  # type: Dict[str, List[str]]
            for base in self.bases:
                for top in self.tops:
                    for path, text in _texts(os.path.join(base, top), _library, (".py",)):
                        if os.path.basename(path).startswith("test_"):
                            continue
                        mod = os.path.relpath(path, base)[:-3].replace(os.sep, ".")
                        mod = mod[: -len(".__init__")] if mod.endswith(".__init__") else mod
                        for n in _TOP_DEF.findall(text):
                            defs.setdefault(n, []).append(mod)
            self.defs = defs
        return self.defs


def _ours(parent: str, name: str) -> bool:
    """A folder whose files are the repository's own: not an environment inside it."""
    return name not in _NOT_OURS and not os.path.isfile(os.path.join(parent, name, "pyvenv.cfg"))


def _library(parent: str, name: str) -> bool:
    """A folder of the library itself: not its tests, docs or build output."""
    return name not in _SKIP


def _texts(top: str, keep: Callable[[str, str], bool],
           suffixes: Tuple[str, ...]) -> Iterator[Tuple[str, str]]:
    """(path, text) of each file under `top` whose name ends in `suffixes`, in the folders
    `keep(parent, name)` keeps, never a hidden one; a file that cannot be read is passed over."""
    for d, dirs, files in os.walk(top):
        dirs[:] = [x for x in dirs if not x.startswith(".") and keep(d, x)]
        for f in files:
            if f.endswith(suffixes):
                path = os.path.join(d, f)
                try:
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        yield path, fh.read()
                except OSError:
                    continue


def main() -> None:
    repo, src, dst, budget = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    root = os.path.realpath(repo)
    sys.path.insert(0, root)
    with open(src, encoding="utf-8") as fh:
        given = json.load(fh)
    blocks, preamble = given["snippets"], given.get("preamble")
    counts = {}  # type: Dict[Any, int]

    def prof(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            counts[code] = counts.get(code, 0) + 1

    real = {}  # type: Dict[str, Optional[str]]

    def rel(filename: str) -> Optional[str]:
        if filename not in real:
            p = os.path.realpath(filename) if filename and not filename.startswith("<") else ""
            real[filename] = (os.path.relpath(p, root).replace(os.sep, "/")
                              if p.startswith(root + os.sep) else None)
        return real[filename]

    found = _Finder(root)
    supplied = []  # type: List[str]

    def supply(missing: Optional[str]) -> bool:
        """Bind `missing` in the snippets' namespace, as the session the issue was written in
        had it (unwatched, as an import): a top-level package of the repository, a name it
        exports, else the one module-level definition of that name in the project."""
        if missing is None or missing in supplied or len(supplied) >= 40:
            return False
        value = found.find(missing)
        if value is None:
            return False
        supplied.append(missing)
        namespace[missing] = value[0]
        return True

    ran = 0
    errors = []  # type: List[Dict[str, Any]]
    import_failed = []  # type: List[str]
    record = {"timed_out": False}  # type: Dict[str, Any]
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    out, err = sys.stdout, sys.stderr
    sink = open(os.devnull, "w")  # noqa: SIM115 (the snippets' prints go nowhere)
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        if preamble:  # the session the project's issues are written in, unwatched
            try:
                sys.stdout = sys.stderr = sink
                exec(compile(preamble, "<preamble>", "exec"), namespace)  # noqa: S102
            except Exception as exc:  # noqa: BLE001
                record["problem"] = "the preamble failed: %s: %s" % (
                    type(exc).__name__, (str(exc).splitlines() or [""])[0][:160])
            finally:
                sys.stdout, sys.stderr = out, err
        for i, code in enumerate(blocks):
            name = "<issue snippet %d>" % (i + 1)
            try:
                tree = ast.parse(code, name)
                for stmt in tree.body:
                    if isinstance(stmt, ast.Expr):  # a session's `_`: its last value
                        compiled = compile(ast.Expression(body=stmt.value), name, "eval")
                    else:
                        compiled = compile(ast.Module(body=[stmt], type_ignores=[]), name,
                                           "exec")
                    watch = not isinstance(stmt, (ast.Import, ast.ImportFrom))
                    sys.stdout = sys.stderr = sink
                    if watch:
                        threading.setprofile(prof)
                        sys.setprofile(prof)
                    try:
                        while True:
                            try:
                                value = eval(compiled, namespace)  # noqa: S307 (the issue's code)
                                if value is not None and isinstance(stmt, ast.Expr):
                                    namespace["_"] = value
                                    _show(value)
                                break
                            except NameError as exc:  # a name the session had imported
                                sys.setprofile(None)  # what finding it imports is not watched
                                threading.setprofile(None)
                                if not _at_top(exc, name) or not supply(_missing(exc)):
                                    raise
                                if watch:
                                    threading.setprofile(prof)
                                    sys.setprofile(prof)
                    except ImportError as exc:
                        if not watch and not import_failed:
                            import_failed.append((str(exc).splitlines()
                                                  or [type(exc).__name__])[0][:200])
                        raise
                    finally:
                        sys.setprofile(None)
                        threading.setprofile(None)
                        sys.stdout, sys.stderr = out, err
                ran += 1
            except OutOfTime:
                record["timed_out"] = True
                break
            except (Exception, SystemExit) as exc:  # noqa: BLE001 (the issue's code may raise)
                ran += 1
                frames = []
                for link in _chain(exc):  # the error it wraps last: where it broke
                    for fs in traceback.extract_tb(link.__traceback__):
                        r = rel(fs.filename)
                        if r is not None:
                            frames.append([r, fs.lineno, fs.name])
                lines = str(exc).strip().splitlines()
                # the snippet stopped before it showed anything: a name or module it lacks, a
                # file or a host of the reporter's machine (OSError: the network, a path); a
                # module or host is this machine's environment, not the issue: its frames are
                # not where the issue is (an optional dependency missing in a repr)
                partial = isinstance(exc, (NameError, ImportError, OSError, SyntaxError))
                errors.append({"block": i, "type": type(exc).__name__,
                               "message": (lines[0] if lines else "")[:200],
                               "frames": frames[-40:], "partial": partial,
                               "environment": isinstance(exc, (OSError, ImportError))})
    except OutOfTime:
        record["timed_out"] = True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.setprofile(None)
    calls = {}  # type: Dict[Tuple[str, int, str], int]
    for code, n in counts.items():
        r = rel(code.co_filename)
        if r is not None and code.co_name != "<module>":
            key = (r, code.co_firstlineno, code.co_name)
            calls[key] = calls.get(key, 0) + n
    record["ran"], record["errors"], record["supplied"] = ran, errors, supplied
    if import_failed and not calls and "problem" not in record:  # nothing else ran either
        record["problem"] = "the snippet's import failed: %s" % import_failed[0]
    record["calls"] = [[f, line, fn, n] for (f, line, fn), n in sorted(calls.items())][:20000]
    with open(dst, "w", encoding="utf-8") as fh:
        json.dump(record, fh)


if __name__ == "__main__":
    main()
