"""The tests of an entity (docs/evidence.md "Tests of a target"), read off the recon graph. Pure:
evidence in.

- `linked`: the tests recon links to the entity or to what it defines (`tests` and `calls` edges
  out of a test);
- `importing`: the test modules that import its module, or a name defined in that module (recon
  follows a package's re-export to the definition: `from pkg import Thing` is an edge to
  `pkg.mod.Thing`), closest first: those importing the entity itself, then those named after
  its module (`test_<mod>.py`, `<mod>_test.py`, or `<mod>.py` among tests), then those nearest
  to it in the tree;
- `tests_for`: what a modify node's check runs when its validation alone proves nothing
  (`import:`, `compile`): the linked tests, else the importing modules (README "The gate");
- `home`: the test module a new test of the entity goes into (the existing one that already tests
  its module, the repository's naming first), or the new file beside it, named the repository's
  way (`new_home`);
- `keep`: the entities a plan's evidence sidecar must hold so all of this reads the same there.

A test module is a module whose file holds a test (recon honours the repository's pytest
`python_files`, plan07.evidence.layout), or whose name pytest's defaults make one.
"""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_left
from collections import defaultdict

from plan07.model import Evidence
from plan07.vocab import name_words, pytest_id

TARGET_TEST_FILES = 3  # importing modules a node's check runs, at most
LINK_KINDS = ("tests", "calls")
_DEFAULT_NAMES = ("test_", "_test")


def _stem(file: str) -> str:
    """`pkg/auth.py` -> "auth"; `pkg/sub/__init__.py` -> "sub"."""
    base = posixpath.basename(file)[:-3]
    return posixpath.basename(posixpath.dirname(file)) if base == "__init__" else base


_TEST_AFFIXES = re.compile(r"^(?:test_|tests_|unittest_)|_tests?$")


def named_after(test_file: str, module_file: str) -> bool:
    """The repository names `test_file` after the module: `test_auth.py`, `auth_test.py`,
    `unittest_auth.py` (pylint), `auth.py` itself among the tests (pytest's own
    `testing/python/fixtures.py`), or the module's dotted tail joined by `_`
    (`test_ext_autodoc.py` for sphinx/ext/autodoc, `test_domain_std.py` for
    sphinx/domains/std.py: a plural folder read singular too)."""
    t = _TEST_AFFIXES.sub("", posixpath.basename(test_file)[:-3]).strip("_")
    parts = [p for p in module_file[:-3].split("/") if p not in ("src", "lib")]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    parts = [p.lstrip("_") for p in parts]
    if not t or not parts or not parts[-1]:
        return False
    for k in range(1, min(len(parts), 3) + 1):
        tail = parts[-k:]
        if t in ("_".join(tail), "_".join(p.removesuffix("s") for p in tail[:-1]) + (
                "_" if k > 1 else "") + tail[-1]):
            return True
    return False


def _beside(test_file: str, module_file: str) -> bool:
    """`test_file` is in the module's folder, a folder below it, or a folder beside it (its
    own `tests/`; a top-level package's `tests/` beside the package)."""
    return _common(test_file, module_file) + 1 >= module_file.count("/")


def _has_run(said: list[str], words: list[str], k: int) -> bool:
    """`said` holds `k` consecutive words of `words`, in order."""
    return any(said[j:j + k] == words[i:i + k]
               for i in range(len(words) - k + 1) for j in range(len(said) - k + 1))


def _common(a: str, b: str) -> int:
    """How many leading folders the two repo-relative paths share."""
    n = 0
    for x, y in zip(posixpath.dirname(a).split("/"), posixpath.dirname(b).split("/"),
                    strict=False):
        if x != y or not x:
            break
        n += 1
    return n


_TEST_DIRS = frozenset({"test", "tests", "testing", "unittests", "unit_tests"})
_LAYOUT_DIRS = frozenset({"src", "lib"})


def mirrors(test_file: str, module_file: str) -> bool:
    """`test_file` sits in the test folder that mirrors the module's package (the repository
    filing its tests by package): `tests/reporters/` for `pylint/reporters/text.py`,
    `sympy/core/tests/` for `sympy/core/numbers.py`, `testing/io/` for `src/_pytest/_io/`. A
    test folder that mirrors nothing (a flat `tests/`) mirrors no package."""
    def parts(folder: str, skip: frozenset[str]) -> list[str]:
        return [d.lstrip("_").lower() for d in folder.split("/") if d and d not in skip]

    tail = parts(posixpath.dirname(test_file), _TEST_DIRS)
    package = parts(posixpath.dirname(module_file), _LAYOUT_DIRS)
    return bool(tail) and package[-len(tail):] == tail


class TestMap:
    """Look-ups of the tests of entities over one evidence bundle, built once."""

    __test__ = False  # not a pytest test class

    def __init__(self, evidence: Evidence) -> None:
        self.nodes = {n.id: n for n in evidence.recon.nodes}
        self.ids = sorted(self.nodes)
        test_files = {n.file for n in evidence.recon.nodes if n.kind == "test" and n.file}
        self._with_tests = test_files  # the files defining at least one test
        self.test_modules: dict[str, str] = {}  # test module id -> its file
        for n in evidence.recon.nodes:
            if n.kind == "module" and n.file and (
                    n.file in test_files or posixpath.basename(n.file).startswith("test_")
                    or n.file.endswith("_test.py")):
                self.test_modules[n.id] = n.file
        tests = {n.id: pytest_id(n.id, n.file) for n in evidence.recon.nodes if n.kind == "test"}
        self._test_ids = set(tests.values())
        self._linked: dict[str, set[str]] = defaultdict(set)  # entity -> pytest ids
        self._importers: dict[str, set[str]] = defaultdict(set)  # entity -> test module ids
        self._imports: dict[str, set[str]] = defaultdict(set)  # test module id -> what it imports
        self._users: dict[str, set[str]] = defaultdict(set)  # entity -> library modules importing
        for e in evidence.recon.edges:
            if e.kind in LINK_KINDS and e.src in tests:
                self._linked[e.dst].add(tests[e.src])
            elif e.kind == "imports" and e.src in self.test_modules:
                self._importers[e.dst].add(e.src)
                self._imports[e.src].add(e.dst)
            elif e.kind == "imports":
                self._users[e.dst].add(e.src)

    # -----------------------------------------------------------------------------------------
    # what an entity is and holds

    def inside(self, entity: str) -> list[str]:
        """`entity` and every recon node defined inside it (dotted prefix); of a package, what
        its own `__init__` defines, not its submodules."""
        lo = bisect_left(self.ids, entity + ".")
        hi = bisect_left(self.ids, entity + "/")  # "/" sorts right after "."
        n = self.nodes.get(entity)
        if n is not None and n.kind == "module" and n.file:
            return [entity, *(x for x in self.ids[lo:hi] if self.nodes[x].file == n.file)]
        return [entity, *self.ids[lo:hi]]

    def module(self, entity: str) -> str | None:
        """The module node `entity` is or is defined in."""
        parts = entity.split(".")
        for k in range(len(parts), 0, -1):
            m = ".".join(parts[:k])
            n = self.nodes.get(m)
            if n is not None and n.kind == "module":
                return m
        return None

    def file_of(self, entity: str) -> str | None:
        n = self.nodes.get(entity)
        if n is not None and n.file:
            return n.file
        m = self.module(entity)
        return self.nodes[m].file if m else None

    def is_test_module(self, entity: str) -> bool:
        m = self.module(entity)
        return m is not None and m in self.test_modules

    # -----------------------------------------------------------------------------------------
    # the tests of an entity

    def linked(self, entity: str) -> list[str]:
        """The tests recon links to `entity` or to what it defines (pytest ids, sorted)."""
        out: set[str] = set()
        for x in self.inside(entity):
            out |= self._linked.get(x, set())
        return sorted(out)

    def importing(self, entity: str, limit: int | None = TARGET_TEST_FILES) -> list[str]:
        """The files of the test modules importing `entity`'s module or a name defined in it,
        closest first (the module docstring); at most `limit` (None: all). A module named like a
        test that defines none (jinja's examples/basic/test_*.py scripts) is left out: running
        it proves nothing (pytest collects no test, exit 5)."""
        mod = self.module(entity)
        if mod is None:
            return []
        own = {t for x in self.inside(entity) for t in self._importers.get(x, ())}
        every = {t for x in self.inside(mod) for t in self._importers.get(x, ())
                 if self.test_modules[t] in self._with_tests}
        every -= {mod}
        mod_file = self.nodes[mod].file or ""
        ranked = sorted(every, key=lambda t: (
            t not in own, not named_after(self.test_modules[t], mod_file),
            -_common(self.test_modules[t], mod_file), self.test_modules[t]))
        files = list(dict.fromkeys(self.test_modules[t] for t in ranked))
        return files if limit is None else files[:limit]

    def importers(self, module: str) -> list[str]:
        """The library modules (not packages: an `__init__` re-exporting everything would reach
        every module) that import `module` or a name defined in it."""
        out = {u for x in self.inside(module) for u in self._users.get(x, ())}
        return sorted(u for u in out if u != module and u in self.nodes
                      and not (self.nodes[u].file or "").endswith("__init__.py"))

    def tests_for(self, entity: str, limit: int = TARGET_TEST_FILES) -> list[str]:
        """What proves a change of `entity` (module docstring): its linked tests, else the
        files of the test modules importing it (at most `limit`); [] when no test reaches it."""
        if self.is_test_module(entity):
            return []
        return self.linked(entity) or self.importing(entity, limit)

    # -----------------------------------------------------------------------------------------
    # where a new test of an entity goes (README "Tests where the repository keeps them")

    def named_tests(self, module_file: str) -> list[str]:
        """Test module files named after the module, nearest first."""
        hits = [f for f in self.test_modules.values() if named_after(f, module_file)]
        return sorted(set(hits), key=lambda f: (-_common(f, module_file), f))

    def home(self, entity: str) -> str | None:
        """The existing test module a new test of `entity` goes into: the one named after its
        module (the repository's own filing: `test_point.py` for `point.py`) that tests or imports
        it; else one named after it beside it (`_beside`: its own tests folder), though recon ties
        none to it; else, of those that test or import it, one in the test folder mirroring its
        package (`mirrors`), exercising it most; else one named after its package in that folder
        (`package_tests`); else the one whose tests exercise it (a method: its class) most;
        else the module whose tests link to its module most,
        or that imports it closest; else the repository's one test module. None: no test module
        tests it (`new_home`). A class used everywhere (sympy's `Intersection`, 40 tests in
        test_solveset.py) is still filed with its module's tests."""
        file = self.file_of(entity)
        mod = self.module(entity)
        if file is None or self.is_test_module(entity):
            return None
        unit = self.unit(entity)
        own = self._link_counts([unit])
        named = self.named_tests(file)
        linked_files = self._link_counts(self.inside(mod)) if mod else {}
        importing = self.importing(mod, None) if mod else []
        tied = set(own) | set(linked_files) | set(importing)
        for f in named:
            if f in tied:
                return f
        if named and _beside(named[0], file):  # the repository's filing, though recon ties
            return named[0]  # none to it (a mixin's methods, reached through the classes)
        if mirrored := [f for f in sorted(tied) if mirrors(f, file)]:
            return max(mirrored, key=lambda f: (own.get(f, 0), linked_files.get(f, 0),
                                                _common(f, file)))
        if package := self.package_tests(file):
            return package[0]
        if own:
            return max(sorted(own), key=lambda f: (own[f], _common(f, file)))
        if linked_files:
            return max(sorted(linked_files), key=lambda f: (linked_files[f], _common(f, file)))
        if importing or named:
            return importing[0] if importing else named[0]
        only = set(self.test_modules.values())  # a repository whose tests are one file
        return only.pop() if len(only) == 1 else None

    def package_tests(self, module_file: str) -> list[str]:
        """The test modules named after the module's package in the test folder mirroring it
        (pylint's tests/config/test_config.py for pylint/config/config_initialization.py),
        sorted."""
        if posixpath.basename(module_file) == "__init__.py":
            return []  # named after the package is named after the module (`named_tests`)
        package = posixpath.dirname(module_file) + "/__init__.py"
        return sorted(f for f in set(self.test_modules.values()) if f in self._with_tests
                      and named_after(f, package) and mirrors(f, module_file))

    def unit(self, entity: str) -> str:
        """What a test of `entity` exercises: a method's class, else the entity."""
        n = self.nodes.get(entity)
        parent = entity.rpartition(".")[0]
        p = self.nodes.get(parent)
        if n is not None and n.kind == "method" and p is not None and p.kind == "class":
            return parent
        return entity

    def _link_counts(self, entities: list[str]) -> dict[str, int]:
        """Test file -> how many distinct tests of it link to `entities` or inside them."""
        tests = {t for e in entities for x in self.inside(e) for t in self._linked.get(x, ())}
        out: dict[str, int] = defaultdict(int)
        for t in tests:
            out[t.split("::", 1)[0]] += 1
        return dict(out)

    def new_home(self, entity: str) -> str:
        """A new test file for `entity`'s module, named the repository's way (`test_<mod>.py`)
        in the folder where the tests of its package's modules are, else where most test
        modules are; never a name an existing folder or file holds."""
        file = self.file_of(entity) or "module.py"
        stem = _stem(file).lstrip("_") or "module"
        folder = self._test_folder(file)
        taken = {n.file for n in self.nodes.values() if n.file}
        folders = {posixpath.dirname(f) for f in taken}
        name = f"test_{stem}"
        while posixpath.join(folder, name) in folders or \
                posixpath.join(folder, name + ".py") in taken:
            name += "_new"
        return posixpath.join(folder, name + ".py")

    def _test_folder(self, file: str) -> str:
        """Where the tests of `file`'s package live: the folder of the test modules importing
        its siblings, else the test folder nearest to it, else the most common one."""
        package = posixpath.dirname(file)
        near: dict[str, int] = defaultdict(int)
        for mid, n in self.nodes.items():
            if n.kind == "module" and n.file and posixpath.dirname(n.file) == package:
                for t in self._importers.get(mid, ()):
                    near[posixpath.dirname(self.test_modules[t])] += 1
        if near:
            return max(sorted(near), key=lambda d: (near[d], _common(d + "/x", file)))
        folders = [posixpath.dirname(f) for f in self.test_modules.values()]
        if not folders:
            return "tests"
        return max(sorted(set(folders)), key=lambda d: (_common(d + "/x", file),
                                                         folders.count(d)))

    def named_for(self, name: str) -> list[str]:
        """The test files holding the most tests named after code name `name`: its last dotted
        part, in words, all of them, else all but one of three or more
        (`_collect_factor_and_dimension` -> sympy's `test_factor_and_dimension`): the file with
        the most whole-name tests first (`test_autosummary_imported_members` before
        `test_autodoc_imported_members`), then the most of either. Sorted; [] when it names no
        test (`subject`: a name that can)."""
        words = name_words(name)
        if words is None:
            return []
        part = len(words) if len(words) <= 2 else len(words) - 1
        count: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # file -> [whole, either]
        for t in self._test_ids:
            file, _, rest = t.partition("::")
            said = rest.rsplit("::", 1)[-1].lower().removeprefix("test").strip("_").split("_")
            if _has_run(said, words, part):
                count[file][1] += 1
                count[file][0] += _has_run(said, words, len(words))
        best = max(count.values(), default=None)
        return sorted(f for f, c in count.items() if c == best) if best else []

    def linked_ids(self, file: str) -> list[str]:
        """The pytest ids of the tests in `file` recon knows."""
        return sorted(t for t in self._test_ids if t.split("::", 1)[0] == file)

    # -----------------------------------------------------------------------------------------
    # what a plan's evidence sidecar must hold

    def keep(self, entities: list[str]) -> set[str]:
        """The recon nodes `tests_for` reads for `entities`: their modules, the test modules
        importing them (the closest few), the names those import from them, and the test
        modules named after them."""
        out: set[str] = set()
        by_file = {f: m for m, f in self.test_modules.items()}
        for e in entities:
            mod = self.module(e)
            if mod is None:
                continue
            out.add(mod)
            files = self.importing(e, TARGET_TEST_FILES * 2)
            file = self.nodes[mod].file
            if file:
                files += self.named_tests(file)[:2]
            for f in files:
                t = by_file.get(f)
                if t is not None:
                    out.add(t)
                    out |= {x for x in self._imports.get(t, ()) if x == mod
                            or x.startswith(mod + ".")}
        return out
