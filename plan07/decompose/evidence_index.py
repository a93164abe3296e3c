"""Look-ups over an evidence bundle for the builtin decomposer: tests and what they exercise,
impact edges by source, recon uses, module of an entity, the check that proves a change, and how a
text names an entity. Pure.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from plan07 import caps
from plan07.evidence.impact import RELATIONS
from plan07.evidence.testmap import TestMap
from plan07.model import Evidence, ImpactEdge
from plan07.vocab import covers, file_module, mentioned, pytest_id, subject

REBIND_CAUSES = ("sig_change", "schema_change", "consumer_rebind", "migration")
# the impact relation of a may-call recon guessed from a method's name (docs/evidence.md): a
# compatible widening leaves such a caller alone (if it is one, its tests show it)
BY_NAME_RELATION = RELATIONS["by_name"][0]
TEST_PATH = re.compile(r"(^|/)tests?(/|$)|(^|/)test_[^/]*$")
_ARTICLES = {"a", "an", "the"}


def is_test_file(file: str) -> bool:
    """pytest's default test-file patterns and Django's `tests.py` (as recon reads them,
    plan07.evidence.parse.is_test_file; repeated so the prompt needs no recon import)."""
    base = file.rsplit("/", 1)[-1]
    return base.startswith("test_") or base.endswith("_test.py") or base == "tests.py"


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def edge_line(i: ImpactEdge) -> str:
    """An impact edge as an obligation's `evidence` string."""
    return cut(f"06 impact {i.src} -> {i.dst} {i.relation} {i.cause} {i.confidence:.2f}",
               caps.EVIDENCE_MAX_CHARS)


class EvidenceIndex:
    """Look-ups over the evidence, built once per decomposition."""

    def __init__(self, ev: Evidence, tests: Mapping[str, Any] | None = None,
                 named: Mapping[str, list[str]] | None = None) -> None:
        """`tests`: the prompt's tests lines (entity -> `.tests`, `.home`), read first; `named`:
        its tests.named lines (code name -> test files), the only ones read when given (a
        prompt's recon is a part of the repository's: `TestMap.named_for` on it would guess)."""
        from plan07.engine import constants

        # the rules' own constants (docs/rules.md breaking_cause, consume_kind), not a copy
        self.breaking_causes = constants("breaking_cause")
        self.consume_kinds = constants("consume_kind")
        self.nodes = {n.id: n for n in ev.recon.nodes}
        self.tests = {n.id: pytest_id(n.id, n.file) for n in ev.recon.nodes if n.kind == "test"}
        self.test_ids = set(self.tests.values())
        self.exercised = ev.exercised()  # entity -> pytest ids
        self.tm = TestMap(ev)
        self.lines = dict(tests or {})
        self.named = None if named is None else dict(named)
        self.used: dict[str, set[str]] = defaultdict(set)  # entity -> what it consumes
        for e in ev.recon.edges:
            if e.kind in self.consume_kinds:
                self.used[e.src].add(e.dst)
        self._by_suffix: dict[str, set[str]] | None = None  # dotted suffix -> ids, lazily
        self.out: dict[str, list[ImpactEdge]] = defaultdict(list)  # by src, strongest first
        for i in sorted(ev.impact.edges, key=lambda i: (-i.confidence, i.dst)):
            self.out[i.src].append(i)

    def resolve(self, name: str) -> str | None:
        """The recon node a dotted name in a request means: the exact id; else the one id
        ending in `.name` (unique); else the longest id that is a dotted suffix of `name` (the
        recon root was inside the package: `rich.table.Table` is node `table.Table`). Never a
        test (criteria name tests by node id) and never a bare dunder."""
        def ok(i: str) -> bool:
            return not self.is_test(i)

        if name in self.nodes:
            return name if ok(name) else None
        if self._by_suffix is None:
            self._by_suffix = defaultdict(set)
            for i in self.nodes:
                parts = i.split(".")
                for k in range(1, len(parts)):
                    self._by_suffix[".".join(parts[k:])].add(i)
        hits = sorted(i for i in self._by_suffix.get(name, ()) if ok(i))
        if len(hits) == 1:
            return hits[0]
        if hits:
            return None  # ambiguous: not a seed
        parts = name.split(".")
        for k in range(1, len(parts)):
            tail = ".".join(parts[k:])
            if tail in self.nodes and ok(tail) and not (k == len(parts) - 1
                                                        and tail.startswith("__")):
                return tail
        return None

    def is_test(self, e: str) -> bool:
        """A test, or anything inside a test module."""
        n = self.nodes.get(e)
        path = n.file if n is not None and n.file else e.replace(".", "/")
        return e in self.tests or "::" in e or bool(TEST_PATH.search(path))

    def consumer(self, e: str) -> bool:
        """An entity a changed definition can break: not a test, not a module (an import of a
        widened name keeps working)."""
        n = self.nodes.get(e)
        return not self.is_test(e) and not (n is not None and n.kind == "module")

    def uses(self, b: str, a: str) -> bool:
        """B (or a member of B) calls / imports / inherits / uses the type of / reads A."""
        return any(a in self.used.get(x, ()) for x in self.used if covers(b, x))

    def test_entity(self, test: str, default: str) -> str:
        """The evidence's own id for the test `test` (a pytest id), else `default`."""
        return next((k for k, v in self.tests.items() if v == test),
                    test if "::" in test else default)

    def module(self, e: str) -> str | None:
        n = self.nodes.get(e)
        mod = file_module(e, n.file) if n is not None else None
        if mod is not None:
            return mod
        parts = e.split(".")
        for i in range(len(parts) - 1, 0, -1):
            m = ".".join(parts[:i])
            if m in self.nodes and self.nodes[m].kind == "module":
                return m
        return None

    def check(self, entities: list[str]) -> str:
        """The validation for a change to `entities` (README "The gate": a check that can fail
        exercises the change): one test recon links to them; else the test file most of their
        linked tests are in; else the test module closest to them that imports their module
        (plan07.evidence.testmap); else an import of their module, else `compile`."""
        shown = [t for e in entities if e in self.lines for t in self.lines[e].tests]
        if shown:  # the prompt's tests line: linked ids, else importing files
            return shown[0] if "::" in shown[0] and len(shown) == 1 else \
                f"pytest:{shown[0].split('::', 1)[0]}"
        tests = sorted({t for e in entities for t in self.tm.linked(e)})
        if len(tests) == 1:
            return tests[0]
        if tests:
            files = [t.split("::")[0] for t in tests]
            home = self.tm.home(entities[0])
            best = max(sorted(set(files)), key=lambda f: (files.count(f), f == home))
            return f"pytest:{best}"
        for e in entities:
            near = self.tm.importing(e, 1)
            if near:
                return f"pytest:{near[0]}"
        mod = next((m for m in (self.module(e) for e in entities) if m), None)
        return f"import:{mod}" if mod else "compile"

    def test_file(self, order: list[str], text: str) -> str:
        """Where a derived test goes (README "Tests where the repository keeps them"): the test
        module whose tests are named after the criterion's subject (`autodoc_typehints`: the
        `test_autodoc_typehints_*` of sphinx's test_ext_autodoc_configs.py), else the
        existing test module that already tests the first changed entity's module, else a new
        file beside where its package's tests are, named the repository's way."""
        homes = (h for e in order if (h := self.lines[e].home if e in self.lines
                                      else self.tm.home(e)))  # asked only as far as needed
        name = subject(text)
        named = [] if name is None else (
            self.tm.named_for(name) if self.named is None else self.named.get(name, []))
        if named:  # ties: the earlier home, then by path
            listed = list(homes)
            return min(named, key=lambda f: (listed.index(f) if f in listed else len(listed), f))
        home = next(homes, None)
        if home:
            return home
        return self.tm.new_home(order[0]) if order else "tests/test_module.py"


def names(entity: str) -> set[str]:
    """The names by which a text can name an entity: each dotted suffix (`SessionManager.load`,
    `load`), the last part only when 3 chars or more."""
    parts = [p for p in re.split(r"[.:/]+", entity) if p]
    out = {".".join(parts[-k:]) for k in range(2, len(parts) + 1)}
    return out | ({parts[-1]} if parts and len(parts[-1]) >= 3 else set())


def named(text: str, entity: str) -> bool:
    """`text` names `entity`, not inside a longer dotted name (`plan07.store.schema.parse` does not
    name `decompose.parse`, `Sphinx.__init__` does not name `Sphinx`)."""
    # not inside a hyphenated word ("keyword-only" does not name `only`) nor as the qualifier
    # of a longer dotted name (`Sphinx.__init__` names the method, not `Sphinx`)
    return any(re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-]|\.\w)", text)
               for n in names(entity))


def named_seeds(text: str, evidence: Evidence) -> list[str]:
    """The recon entities `text` names in code (`mentioned`, resolved by
    `EvidenceIndex.resolve`), in the order named: localization seeds for a bundle that has none."""
    if not evidence.recon.nodes:
        return []
    ix = EvidenceIndex(evidence)
    return list(dict.fromkeys(r for r in map(ix.resolve, mentioned(text)) if r))


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - {"test", "tests", "py"}


def best_tests(text: str, tests: set[str]) -> list[str]:
    """The tests whose names share the most words with `text` (none if no word is shared)."""
    scored = [(len(words(text) & words(t.split("::")[-1])), t) for t in tests]
    top = max((n for n, _ in scored), default=0)
    return sorted(t for n, t in scored if n == top and n > 0)


SLUG_MAX_CHARS = 48
_SLUG_DROP = _ARTICLES | {"should", "must", "shall", "will", "would", "can", "could", "be", "is",
                          "are", "that", "it", "its", "when", "of", "to"}


def slug(text: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A test name's words from a criterion (`test_<slug>`): its words less articles and modal
    filler, whole words only, at most SLUG_MAX_CHARS (never cut mid-word); a name in `taken`
    gets a number."""
    ws = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _SLUG_DROP]
    out: list[str] = []
    for w in ws:
        if len("_".join([*out, w])) > SLUG_MAX_CHARS:
            break
        out.append(w)
    name = "_".join(out) or "criterion"
    if name[0].isdigit():
        name = "n" + name
    base, n = name, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name
