"""The vocabulary every stage shares, defined once. Pure.

- the check grammar of a node's `validation` (docs/revise.md "The validation gate"): a pytest
  node id `path/test_x.py::name[::name][param]`, `pytest:<path>`, `import:<module>`, `compile` or
  `regression` (the tests of every module the plan changed, against CP0); anything else is
  `unverifiable`. The grammar admits no space, quote, `;`, `$`, pipe or glob, so
  a validation string is data, never a command line;
- pytest node ids found in prose (acceptance criteria);
- test ids: a dotted test entity as the pytest node id that runs it, where a source root such as
  `src/` is part of the file's path but not of its dotted module;
- entity coverage: an obligation on `pkg.A` covers `pkg.A` and everything inside it;
- id order: natural order (O2 < O10), and the duplicate-id check;
- the code names a text writes (backticked, dotted), in order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

CheckKind = Literal["pytest_node", "pytest_path", "compile", "import", "regression",
                    "unverifiable"]
REGRESSION = "regression"  # the plan's regression run (README "No false done")
# what the plan lint's rules find (docs/rules.md "Plan lint")
FINDING_KINDS = ("criterion_uncovered", "target_unknown", "consumer_unplanned", "test_misplaced",
                 "top_unplanned", "no_regression_run", "weak_check")

PATH = r"[\w.+/-]+"
NAME = r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*(?:\[[\w.,+=-]*\])?"
NODE_ID = re.compile(rf"^(?P<path>{PATH}\.py)::(?P<name>{NAME})$")
PYTEST_PATH = re.compile(rf"^pytest:(?P<path>{PATH})$")
IMPORT = re.compile(r"^import:(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$")
# a pytest node id inside prose: not glued to a longer path, a parameter list of 120 chars at most
NODE_ID_IN_TEXT = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]*\.py::[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*(?:\[[^\]\s]{0,120}\])?)"
)
TEST_MODULE = re.compile(r"^(test_\w+|\w+_test)$")
# an acceptance criterion only the plan's regression run settles: "existing tests keep passing",
# "no regressions", "the test suite still passes" (plan07.plan.criteria)
REGRESSION_CRITERION = re.compile(
    r"\b(?:existing|all|other|current|old|previous|remaining)\b(?:\s+\w+){0,3}\s+tests?\b.*"
    r"\b(?:pass|passing|green|succeed|unaffected|unchanged|work)|\bno (?:new )?"
    r"(?:test )?(?:regressions?|failures?)\b|\b(?:test ?suite|tests) (?:still |keeps? )?"
    r"pass(?:es|ing)?\b|\bdo(?:es)? not break (?:any |the )?(?:existing )?tests?\b", re.I)


def classify(validation: str) -> CheckKind:
    """The kind of check a validation string names, from its syntax alone."""
    v = validation.strip()
    if v == "compile":
        return "compile"
    if v == REGRESSION:
        return "regression"
    if IMPORT.fullmatch(v):
        return "import"
    if PYTEST_PATH.fullmatch(v):
        return "pytest_path"
    if NODE_ID.fullmatch(v):
        return "pytest_node"
    return "unverifiable"


def runs(validation: str, test: str) -> bool:
    """True iff the validation string `validation` runs every test the id or path `test` names
    (the same node id, a class/function prefix of it, or `pytest:<dir or file>` holding it)."""
    v = validation.strip()
    kind = classify(v)
    if kind == "pytest_node":
        return test == v or test.startswith((v + "::", v + "["))
    if kind == "pytest_path":
        root = v.removeprefix("pytest:").rstrip("/") or "."
        path = test.split("::", 1)[0]
        return root in (".", "./") or path == root or path.startswith(root + "/")
    return False


def covers(outer: str, inner: str) -> bool:
    """`outer` is `inner` or contains it: `pkg.A` covers `pkg.A` and `pkg.A.load`."""
    return inner == outer or inner.startswith(outer + ".")


def related(a: str, b: str) -> bool:
    """One of the two entities covers the other."""
    return covers(a, b) or covers(b, a)


def natural_key(node_id: str) -> tuple[tuple[int, int, str], ...]:
    """O2 < O10: digit runs compare as numbers, the rest as text."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part)
        for part in re.split(r"(\d+)", node_id)
        if part
    )


def sort_ids(ids: Iterable[str]) -> list[str]:
    """The distinct ids in natural order."""
    return sorted(set(ids), key=natural_key)


def duplicates(ids: Iterable[str]) -> list[str]:
    """The ids that occur more than once, sorted."""
    seen: set[str] = set()
    dup: set[str] = set()
    for i in ids:
        (dup if i in seen else seen).add(i)
    return sorted(dup)


def first_repeat(ids: Sequence[str]) -> int | None:
    """The position of the first id that repeats an earlier one, else None."""
    seen: set[str] = set()
    for i, x in enumerate(ids):
        if x in seen:
            return i
        seen.add(x)
    return None


def _posix(file: str) -> str:
    return file.replace("\\", "/").removeprefix("./")


def file_module(entity: str, file: str | None) -> str | None:
    """The dotted module of `file` that `entity` is in or is, with a source root left out
    (`src/pkg/m.py` holds `pkg.m`; recon keeps the `src/` in the node's file), else None."""
    if not file or not file.endswith(".py"):
        return None
    parts = _posix(file)[:-3].removesuffix("/__init__").split("/")
    for k in range(len(parts)):
        mod = ".".join(parts[k:])
        if covers(mod, entity):
            return mod
    return None


def pytest_id(entity: str, file: str | None) -> str:
    """A test entity as a pytest node id, the node's file kept whole (`src/` included); from the
    dotted name alone (the first `test*` part from the right is the module) without a file;
    `entity` itself when it is already a node id or names no test."""
    if "::" in entity:
        return entity
    mod = file_module(entity, file)
    if mod is not None and file is not None and entity != mod:
        return f"{_posix(file)}::{entity[len(mod) + 1:].replace('.', '::')}"
    parts = entity.split(".")
    for i in range(len(parts) - 1, 0, -1):
        if parts[i - 1].startswith("test"):
            return "/".join(parts[:i]) + ".py::" + "::".join(parts[i:])
    return entity


def normalize_test(ident: str, file: str | None = None) -> str | None:
    """A test id as `path/test_x.py::name[::name]`, or None when `ident` names no test: a node id
    with a `.py` path as it is; a dotted id inside `file` (its source root allowed) at that file;
    else a dotted id whose module part is `test_*`/`*_test` followed by a `test*` name."""
    s = ident.strip()
    if "::" in s:
        path, _, rest = s.partition("::")
        path = _posix(path)
        return f"{path}::{rest}" if path.endswith(".py") else None
    if file and file.endswith(".py"):
        path = _posix(file)
        mod_parts = path[:-3].split("/")
        for k in range(len(mod_parts)):
            mod = ".".join(mod_parts[k:])
            if s.startswith(mod + ".") and len(s) > len(mod) + 1:
                return f"{path}::{'::'.join(s[len(mod) + 1:].split('.'))}"
    parts = s.split(".")
    for i in range(len(parts) - 2, -1, -1):
        if TEST_MODULE.match(parts[i]) and parts[i + 1].lower().startswith("test"):
            return f"{'/'.join(parts[: i + 1])}.py::{'::'.join(parts[i + 1:])}"
    return None


def dotted_test(test_id: str) -> str:
    """`tests/a/test_b.py::test_c[x]` -> `tests.a.test_b.test_c` (the dotted test entity)."""
    path, _, name = test_id.partition("::")
    return path.removesuffix(".py").replace("/", ".") + "." + name.split("[")[0]


_BACKTICKED = re.compile(r"`([^`\n]+)`")
_CODE_NAME = re.compile(r"\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
_DOTTED = re.compile(r"(?<![\w.`/])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w/])")


def mentioned(text: str) -> list[str]:
    """The code names a text gives, in order: each backticked name (its leading dotted
    identifier: `Table.__init__()` -> `Table.__init__`) and each bare dotted name."""
    found = [n.group(1) for m in _BACKTICKED.finditer(text)
             if (n := _CODE_NAME.match(m.group(1)))]
    found += [m.group(0) for m in _DOTTED.finditer(text)]
    return list(dict.fromkeys(found))


_WHOLE_NAME = re.compile(r"\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*(?:\(\s*\))?\s*")


def written_names(text: str) -> list[str]:
    """The code names a text writes as names of their own, in order: a backticked span that is
    one dotted name (a call's empty `()` allowed: `refine()`), and each bare dotted name. Not a
    command line (`pytest --fixtures`) nor a sentence in backticks."""
    found = [n.group(1) for m in _BACKTICKED.finditer(text)
             if (n := _WHOLE_NAME.fullmatch(m.group(1)))]
    found += [m.group(0) for m in _DOTTED.finditer(text)]
    return list(dict.fromkeys(found))


NAME_WORD_MIN = 6  # a one-word code name shorter than this (`all`, `xfail`) names no tests


def subject(text: str) -> str | None:
    """What a criterion is about, for where its test goes (`TestMap.named_for`): the first code
    name it writes whose last part has words joined by `_` (`autosummary_imported_members`
    before `members`), else the first one-word name of NAME_WORD_MIN characters or more
    (`concat`, not `all`). Names written as names only (`written_names`)."""
    words = {n: w for n in written_names(text) if (w := name_words(n))}
    return next((n for n, w in words.items() if len(w) > 1), None) or next(iter(words), None)


def name_words(name: str) -> list[str] | None:
    """The words of a code name's last dotted part (`SI._collect_factor_and_dimension` ->
    collect, factor, and, dimension); None for a short one-word name."""
    words = [w for w in name.rsplit(".", 1)[-1].lower().split("_") if w]
    return words if len(words) > 1 or words and len(words[0]) >= NAME_WORD_MIN else None
