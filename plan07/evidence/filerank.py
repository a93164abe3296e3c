"""Where in the source an issue's words are (docs/evidence.md "Localization"): BM25 over each
source file's text (its identifiers split into words, its strings and comments, its path), then,
in the best files, over each definition's body. Pure: the request and the sources in, scores out.

The query is the whole issue, code blocks included: a reproduction names the API it calls
(`xr.concat(...)`, `sns.pairplot(..., hue_order=...)`), which is where a fix usually goes.
`blend` folds these scores into the names-first localization (plan07.evidence.localize): a file
the issue names an entity of keeps that entity first; the lexical rank decides among the rest and
picks, in a file no name reaches, the definition whose body the issue's words fit best.
"""

from __future__ import annotations

import ast
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import pairwise

from plan07.evidence.softrank import tokens
from plan07.model import ReconNode

K1, B = 1.2, 0.9  # BM25: the usual k1; b a little above the usual 0.75, hub files are long
PATH_WEIGHT = 3  # a word of the file's path counts as this many occurrences
NAMED_WEIGHT = 0.75  # a file's best names-first score, added to its normalized BM25 score
FILES_RANKED = 5  # files whose definitions are ranked by their bodies
NAMED = 1.0  # a names-first score this high: the issue writes the entity's name out
WRITTEN = 0.75  # at least this: the issue names it (a lexical overlap scores less)
FILE_CEILING = 0.99  # the best file's pick: below an entity the issue writes out (NAMED)
NOT_RUN = 0.5  # a file the reproduction never entered, when plan07 ran it
HISTORY_WEIGHT = 0.5  # times a file's share of the past commits that read like the issue
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def words(text: str) -> list[str]:
    """Identifier-aware words of source or prose: `hue_order` -> hue, order, hue_order."""
    out: list[str] = []
    for w in _IDENT.findall(text):
        out.extend(tokens(w))
        if "_" in w.strip("_") or any(c.isupper() for c in w[1:]):
            out.append(w.lower())
    return out


class Index:
    """A BM25 index of documents (bags of words)."""

    def __init__(self, docs: Mapping[str, Counter[str]]) -> None:
        self.docs = docs
        self.n = len(docs)
        self.avg = sum(sum(c.values()) for c in docs.values()) / max(self.n, 1)
        self.df: Counter[str] = Counter()
        for c in docs.values():
            self.df.update(c.keys())

    def idf(self, w: str) -> float:
        return math.log(1 + (self.n - self.df[w] + 0.5) / (self.df[w] + 0.5))

    def scores(self, query: Counter[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        for key, c in self.docs.items():
            length = sum(c.values())
            s = 0.0
            for w, qf in query.items():
                tf = c.get(w, 0)
                if tf:  # a word the query repeats weighs more, by the log of its count
                    norm = tf + K1 * (1 - B + B * length / max(self.avg, 1.0))
                    s += self.idf(w) * tf * (K1 + 1) / norm * (1 + math.log(qf))
            out[key] = round(s, 6)
        return out


def file_scores(request: str, sources: Mapping[str, str]) -> dict[str, float]:
    """BM25 of each source file for the whole request, normalized to [0, 1]."""
    docs: dict[str, Counter[str]] = {}
    for f, text in sources.items():
        c = Counter(words(text))
        for w in tokens(f.removesuffix(".py").replace("/", " ")):
            c[w] += PATH_WEIGHT
        docs[f] = c
    query = Counter(words(request))
    query.update(set(compounds(request)) - set(query))
    raw = Index(docs).scores(query)
    top = max(raw.values(), default=0.0)
    return {f: s / top for f, s in raw.items()} if top > 0 else {}


def compounds(text: str) -> list[str]:
    """Two words the prose writes apart that code writes as one: "man page" -> `manpage`,
    "type hints" -> `typehints` (a file or name the issue's words spell out)."""
    ws = re.findall(r"[A-Za-z]{2,}|\S", text)
    return [t[0] for a, b in pairwise(ws)
            if a.isalpha() and b.isalpha() and a.islower() and b.islower()
            and (t := tokens(a + b))]


def definitions(source: str) -> list[tuple[str, int, int]]:
    """(qualname, first line, last line) of every def and class of a module."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[tuple[str, int, int]] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                q = f"{prefix}{node.name}"
                out.append((q, node.lineno, node.end_lineno or node.lineno))
                walk(node.body, q + ".")

    walk(tree.body, "")
    return out


def body_scores(request: str, source: str, module: str, known: set[str]) -> dict[str, float]:
    """BM25 of each function or method body of one file (a class: its own lines outside its
    methods), keyed by recon id (`module.qualname`, those in `known`), normalized to [0, 1]."""
    lines = source.splitlines()
    defs = definitions(source)
    inner = {q: [d for d in defs if d[0].startswith(q + ".")] for q, _, _ in defs}
    docs: dict[str, Counter[str]] = {}
    for q, a, b in defs:
        rid = f"{module}.{q}"
        if rid not in known:
            continue
        own = [ln for i, ln in enumerate(lines[a - 1:b], a)
               if not any(x <= i <= y for _, x, y in inner[q])]
        docs[rid] = Counter(words("\n".join(own)))
    raw = Index(docs).scores(Counter(words(request)))
    top = max(raw.values(), default=0.0)
    return {e: s / top for e, s in raw.items()} if top > 0 else {}


def blend(named: Mapping[str, float], nodes: Sequence[ReconNode], request: str,
          sources: Mapping[str, str], eligible: set[str],
          ran: Mapping[str, int] | None = None,
          history: Mapping[str, float] | None = None) -> dict[str, float]:
    """The localization: each file scored by its normalized BM25 plus NAMED_WEIGHT times its
    best names-first score (`named`), normalized; in each of the FILES_RANKED best files, its
    entities the issue names (WRITTEN), else the definition its body ranks first, at the
    file's score (a second named one a little lower), the best file's at FILE_CEILING; every
    other names-first entity at half its score, except that an entity whose name the issue
    writes out (NAMED) keeps its score, less a hair by how far its file ranks below the best
    (of two written names, the one where the issue's words are goes first).

    `ran`: the entities the issue's reproduction called (plan07.evidence.repro), when plan07
    ran it: a file it never entered scores NOT_RUN times its score, and in a file it entered
    the body pick is among the definitions it called."""
    by_file: dict[str, list[ReconNode]] = {}
    module_of: dict[str, str] = {}
    for n in nodes:
        if n.file and n.file in sources:
            by_file.setdefault(n.file, []).append(n)
            if n.kind == "module":
                module_of[n.file] = n.id
    bm = file_scores(request, sources)
    best_named: dict[str, float] = {}
    file_of: dict[str, str] = {}  # a named entity -> its file
    for n in nodes:
        if n.id in named and n.file:
            best_named[n.file] = max(best_named.get(n.file, 0.0), named[n.id])
            file_of[n.id] = n.file
    past = history or {}
    comb = {f: bm.get(f, 0.0) + NAMED_WEIGHT * best_named.get(f, 0.0)
            + HISTORY_WEIGHT * past.get(f, 0.0) for f in set(bm) | set(best_named) | set(past)}
    entered = {f for n in nodes if ran and n.id in ran and (f := n.file)}
    if entered:
        comb = {f: s if f in entered else NOT_RUN * s for f, s in comb.items()}
    top = max(comb.values(), default=0.0)
    out = {e: round(0.5 * s, 4) for e, s in named.items()}
    if top <= 0:
        return out
    for f in sorted(comb, key=lambda f: (-comb[f], f))[:FILES_RANKED]:
        score = FILE_CEILING * comb[f] / top
        here = sorted((n.id for n in by_file.get(f, []) if named.get(n.id, 0.0) >= WRITTEN),
                      key=lambda e: (-named[e], e))
        if not here and f in module_of:
            known = {n.id for n in by_file.get(f, []) if n.id in eligible}
            if f in entered:  # the definitions the reproduction called, where it entered
                known = {e for e in known if ran and e in ran} or known
            body = body_scores(request, sources[f], module_of[f], known)
            here = sorted(body, key=lambda e: (-body[e], e))[:1]
        for k, e in enumerate(here[:3]):
            out[e] = max(out.get(e, 0.0), round(score * (1.0 - 0.05 * k), 4))
    for e, s in named.items():  # what the issue writes out by name stays where it ranked,
        if s >= NAMED:  # the one in the file the words fit best first
            fit = comb.get(file_of.get(e, ""), 0.0) / top
            out[e] = max(out.get(e, 0.0), round(s - (1.0 - fit) * (1.0 - FILE_CEILING) / 2, 4))
    return out
