"""Soft-rank inputs for branch scores (§3.3 step 3): `lex`, the request's overlap with an entity's
name and signature, and `cochange`, how often the entity's file changed with the anchor files in
recent git history (read by plan07.evidence.history.commit_files). Both in [0,1]; pure.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from plan07.model import ReconNode

COCHANGE_MAX_COMMITS = 500  # the bounded window of history cochange reads
# Weights of where a token sits in an entity: its own name, its qualifiers, its signature.
W_NAME, W_QUAL, W_SIG = 1.0, 0.5, 0.3
_STOP = """
a an the and or of to in on for with by from as is are be it its this that these those at into
not no when so if then than should must can could would will shall do does make makes made use
uses using add adds added new old same all any each get set self cls def class return none true
false int str bool float dict list tuple args kwargs py
"""
STOPWORDS = frozenset(_STOP.split())

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def tokens(text: str) -> list[str]:
    """Identifier-aware words: `SessionManager.load_config` -> session, manager, load, config.
    Lowercased, a plural `s` dropped; stopwords, numbers and 1-letter words removed."""
    out = []
    for word in _CAMEL.findall(text):
        w = word.lower()
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        if len(w) > 1 and w not in STOPWORDS and not w.isdigit():
            out.append(w)
    return out


def lex(request_tokens: set[str], node: ReconNode) -> float:
    """Weighted share of the entity's words that the request mentions, in [0,1]."""
    *quals, name = node.id.split(".")
    weight: dict[str, float] = {}
    for words, w in ((tokens(name), W_NAME), (tokens(" ".join(quals[-2:])), W_QUAL),
                     (tokens(node.signature or ""), W_SIG)):
        for t in words:
            weight[t] = max(weight.get(t, 0.0), w)
    total = sum(weight.values())
    if not total or not request_tokens:
        return 0.0
    hit = sum(w for t, w in weight.items() if t in request_tokens)
    name_hit = any(t in request_tokens for t in tokens(name))
    # an entity whose own name the request never mentions ranks below any that it does
    score = hit / total if name_hit else 0.5 * hit / total
    return round(min(1.0, score), 4)


def lex_scores(request: str, nodes: Iterable[ReconNode]) -> dict[str, float]:
    req = set(tokens(request))
    return {n.id: s for n in nodes if (s := lex(req, n)) > 0.0}


def cochange(commits: list[set[str]], anchors: Iterable[str], files: Iterable[str]
             ) -> dict[str, float]:
    """For each file, the largest share of its commits that also touched one other anchor file:
    max over anchors a != f of n(f, a) / n(f). 0 for a file never changed in the window."""
    anchor_set = set(anchors)
    n: Counter[str] = Counter()
    pair: Counter[tuple[str, str]] = Counter()
    for c in commits:
        n.update(c)
        for a in anchor_set & c:
            for f in c:
                if f != a:
                    pair[(f, a)] += 1
    out: dict[str, float] = {}
    for f in files:
        best = max((pair[(f, a)] for a in anchor_set if a != f), default=0)
        out[f] = round(best / n[f], 4) if n[f] else 0.0
    return out

