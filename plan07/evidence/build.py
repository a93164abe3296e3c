"""build_evidence: the whole built-in evidence bundle for a Python repository — recon (03), a
one-line context per localized entity (04), lex localization (05), impact (06), soft-rank. I/O
(reads the tree and git history) around the pure parts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from plan07.caps import (
    EVIDENCE_MAX_DEPTH,
    LOCALIZATION_TOP_K,
    SOFT_RANK_MAX_ENTITIES,
)
from plan07.errors import InputError
from plan07.evidence.filerank import blend
from plan07.evidence.history import Commit, commit_files, history_scores, past_commits
from plan07.evidence.impact import impact
from plan07.evidence.localize import issue_prose, localize
from plan07.evidence.parse import is_test_file
from plan07.evidence.recon import recon
from plan07.evidence.repro import Reproduction, executed_entities, frame_tuples, informative
from plan07.evidence.resolve import ReconResult
from plan07.evidence.softrank import cochange, lex_scores
from plan07.model import ContextItem, Evidence, Impact, Localization, Recon, SoftRank

# where a change lands is code: not these kinds, nor helpers in test files (pytest conventions),
# nor the fixtures and test data under a test tree (sphinx's tests/roots/, pytest's testing/)
NOT_LOCALIZED = {"module", "test", "migration"}
TEST_TREE = re.compile(r"(?:^|/)(?:tests?|testing)/")


@dataclass
class EvidenceReport:
    evidence: Evidence
    warnings: list[str] = field(default_factory=list)
    files: int = 0


def build_evidence(repo: Path, *, request: str | None = None, seeds: Sequence[str] | None = None,
                   depth: int = 2, reproduction: Reproduction | None = None) -> Evidence:
    """Built-in evidence for the Python repository at `repo` (the public evidence interface).
    `reproduction`: what running the issue's snippets recorded (plan07.gate.reproduce), read
    by localization."""
    return evidence_report(repo, request=request, seeds=seeds, depth=depth,
                           reproduction=reproduction).evidence


def evidence_report(repo: Path, *, request: str | None = None, seeds: Sequence[str] | None = None,
          depth: int = 2, reproduction: Reproduction | None = None) -> EvidenceReport:
    """`build_evidence`, keeping the warnings (files that did not parse) and the file count."""
    if not 0 <= depth <= EVIDENCE_MAX_DEPTH:
        raise InputError(f"depth must be in 0..{EVIDENCE_MAX_DEPTH}, got {depth}", field="--depth",
                         cap="EVIDENCE_MAX_DEPTH")
    rr = recon(Path(repo))
    return EvidenceReport(assemble(rr, Path(repo), request=request, seeds=seeds, depth=depth,
                                   reproduction=reproduction),
                 rr.warnings, len({n.file for n in rr.nodes}))


def assemble(rr: ReconResult, repo: Path | None, *, request: str | None,
             seeds: Sequence[str] | None, depth: int,
             reproduction: Reproduction | None = None) -> Evidence:
    """Recon result -> bundle. `repo=None` skips git (cochange 0)."""
    graph = Recon(nodes=rr.nodes, edges=rr.edges)
    by_id = {n.id: n for n in rr.nodes}
    lexes = lex_scores(request, rr.nodes) if request else {}
    commits: list[Commit] | None = None  # the history, once read (evidence.history)
    if seeds:
        entities = [resolve_seed(s, by_id) for s in seeds]
        localization = [Localization(entity=e, score=1.0) for e in dict.fromkeys(entities)]
    else:
        # 05: what the issue names (code, paths, traceback frames, quoted lines) first, then
        # lexical overlap of its prose without the template sections (plan07.evidence.localize)
        eligible = [n.id for n in rr.nodes if n.kind not in NOT_LOCALIZED
                    and not is_test_file(n.file or "") and not TEST_TREE.search(n.file or "")]
        ran = executed_entities(reproduction, rr.nodes) if reproduction else {}
        scores = localize(request, rr.nodes, eligible=eligible,
                          sources=_sources(repo, rr, request),
                          observed=frame_tuples(reproduction)) if request else {}
        if request and repo is not None:  # where the issue's words are (evidence.filerank)
            prose, code = issue_prose(request)  # its template sections left out
            library = _library(repo, rr, eligible)
            # and where fixes of reports like it went (evidence.history)
            commits = past_commits(repo)
            past = history_scores(prose, commits, library)
            scores = blend(scores, rr.nodes, "\n".join([prose, *code]), library,
                           set(eligible), ran if informative(reproduction, ran) else None,
                           history=past)
        ranked = sorted(scores, key=lambda e: (-scores[e], e))[:LOCALIZATION_TOP_K]
        localization = [Localization(entity=e, score=scores[e]) for e in ranked]
    anchors = [x.entity for x in localization]
    edges = impact(graph, anchors, depth, arity=rr.arity, passed=rr.passed)
    # soft-rank: the anchors, everything impact reached, then the best lexical matches
    keep = dict.fromkeys(anchors + [e.dst for e in edges])
    for e in sorted(lexes, key=lambda e: (-lexes[e], e)):
        if len(keep) >= SOFT_RANK_MAX_ENTITIES:
            break
        keep.setdefault(e)
    files = {f for e in keep if (f := by_id[e].file)}
    anchor_files = {f for e in anchors if (f := by_id[e].file)}
    co = (cochange(commit_files(repo, commits=commits), anchor_files, files)
          if repo and anchor_files else {})
    soft = {
        e: SoftRank(lex=lexes.get(e, 0.0), cochange=co.get(by_id[e].file or "", 0.0))
        for e in sorted(keep)
    }
    context = [ContextItem(entity=e, summary=rr.docs.get(e) or by_id[e].signature or by_id[e].kind)
               for e in anchors]
    return Evidence(recon=graph, impact=Impact(edges=edges), localization=localization,
                    context=context, soft_rank=soft)


def _sources(repo: Path | None, rr: ReconResult, request: str | None) -> dict[str, str]:
    """The text of the repository's Python files, read only when the request quotes code."""
    if repo is None or not request or not issue_prose(request)[1] and "=" not in request:
        return {}
    out = {}
    for f in sorted({n.file for n in rr.nodes if n.file}):
        try:
            out[f] = (repo / f).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return out


# folders and files that hold no library code a fix goes into: documentation, examples,
# benchmarks, release tooling, build and configuration scripts
NOT_LIBRARY = re.compile(r"(?:^|/)(?:docs?|examples?|benchmarks?|release|ci|\.github)/|"
                         r"(?:^|/)(?:conftest|setup|noxfile|fabfile|tasks)\.py$")


def _library(repo: Path, rr: ReconResult, eligible: Sequence[str]) -> dict[str, str]:
    """The text of each source file a change may land in (the files of `eligible` entities,
    NOT_LIBRARY left out)."""
    by_id = {n.id: n.file for n in rr.nodes}
    files = sorted({f for e in eligible if (f := by_id.get(e)) and not NOT_LIBRARY.search(f)})
    out = {}
    for f in files:
        try:
            out[f] = (repo / f).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return out


def resolve_seed(seed: str, by_id: Mapping[str, object]) -> str:
    """A seed as an entity id: a dotted id, or a pytest node id `tests/test_x.py::TestA::test_b`
    (mapped to `tests.test_x.TestA.test_b`); an unknown seed is an error naming close matches."""
    if seed in by_id:
        return seed
    if "::" in seed:
        path, *names = seed.split("::")
        from plan07.evidence.parse import module_name

        if path.endswith(".py"):
            dotted = ".".join([module_name(path)[0], *names])
            if dotted in by_id:
                return dotted
    tail = seed.rpartition(".")[2].rpartition(":")[2]
    near = sorted(e for e in by_id if e.rpartition(".")[2] == tail)[:3]
    hint = (f"; did you mean {', '.join(near)}?" if near
            else "; use a dotted name like pkg.mod.Class.method")
    raise InputError(f"seed {seed!r} is not an entity of this repository{hint}", field="--seed")
