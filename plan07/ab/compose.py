"""Generator components (`Proto`, `Component`; `fill` and `tests_package`, which the shapes
build their files with) and their composition into a Task: ids in listed order, faulty variants
computed against the gold-order state of each file, the request text and the evidence. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial

from plan07.ab.edits import Edit
from plan07.ab.tasks import GoldStep, Task
from plan07.model import (
    ContextItem,
    Evidence,
    Impact,
    ImpactEdge,
    Localization,
    Obligation,
    Recon,
    ReconEdge,
    ReconNode,
)

MAX_CRITERIA = 8  # canonicalize counts a bullet naming a test twice (bullet + test id): <= 16


@dataclass
class Proto:
    """A component's obligation before ids are assigned (keys are component-local)."""

    key: str
    target: str
    verb: str
    caused_by: str
    evidence: str
    validation: str
    edit: Edit | None
    deps: list[str] = field(default_factory=list)
    misspell: tuple[str, str] | None = None  # (right, wrong) inside edit.new
    import_line: str | None = None  # a line of edit.new the missing_import fault drops
    siblings: list[str] = field(default_factory=list)  # files for the wrong_consumer fault


def fill(template: str, **kw: str) -> str:
    """`template` with each `@KEY@` replaced by the keyword argument KEY's value."""
    for k, v in kw.items():
        template = template.replace(f"@{k}@", v)
    return template


def tests_package(pfx: str) -> dict[str, str]:
    """The files of a component's own test package, tests/<pfx>/."""
    return {f"tests/{pfx}/__init__.py": ""}


@dataclass
class Component:
    shape: str
    files: dict[str, str]
    protos: list[Proto]  # gold order
    sentence: str
    criteria: list[str]
    nodes: list[ReconNode] = field(default_factory=list)
    edges: list[ReconEdge] = field(default_factory=list)
    impact: list[ImpactEdge] = field(default_factory=list)


def _file_of(p: Proto) -> str:
    if p.edit is not None:
        return p.edit.file
    v = p.validation.removeprefix("pytest:")
    return v.split("::", 1)[0]


def _after(files: dict[str, str], e: Edit) -> str | None:
    """The file's text after applying `e` to `files`, or None when it does not apply."""
    if e.old is None:
        return None if e.file in files else e.new
    text = files.get(e.file)
    if text is None or text.count(e.old) != 1:
        return None
    return text.replace(e.old, e.new, 1)


def _compiles(text: str) -> bool:
    try:
        compile(text, "<edit>", "exec")
    except SyntaxError:
        return False
    return True


def _partial(files: dict[str, str], e: Edit) -> Edit | None:
    """The write cut off part-way: the longest prefix of `e.new` (from its middle down) that
    leaves the file uncompilable."""
    mid = len(e.new) // 2
    for cut in [*range(mid, 0, -1), *range(mid + 1, len(e.new))]:
        bad = Edit(e.file, e.old, e.new[:cut])
        text = _after(files, bad)
        if text is not None and not _compiles(text):
            return bad
    return None


class _Variants(Mapping[str, Edit]):
    """A step's faulty variants, worked out the first time they are read (the partial write's
    search compiles the file once per cut tried: most of a task's generation, and a run with
    faults off never reads them). Equal to, and pickled as, the plain dict."""

    def __init__(self, make: Callable[[], dict[str, Edit]]) -> None:
        self._make: Callable[[], dict[str, Edit]] | None = make
        self._made: dict[str, Edit] = {}

    def _get(self) -> dict[str, Edit]:
        if self._make is not None:
            self._made, self._make = self._make(), None
        return self._made

    def __getitem__(self, key: str) -> Edit:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(self._get())

    def __reduce__(self) -> tuple[type[dict[str, Edit]], tuple[dict[str, Edit]]]:
        return dict, (self._get(),)


def _faults(files: dict[str, str], p: Proto) -> dict[str, Edit]:
    e = p.edit
    if e is None:
        return {}
    out: dict[str, Edit] = {}
    if p.misspell and p.misspell[0] in e.new:
        out["wrong_arg_name"] = Edit(e.file, e.old, e.new.replace(*p.misspell, 1))
    if p.import_line and p.import_line in e.new:
        out["missing_import"] = Edit(e.file, e.old, e.new.replace(p.import_line, "", 1))
    part = _partial(files, e)
    if part is not None:
        out["partial_edit"] = part
    if p.siblings:
        out["wrong_consumer"] = Edit(p.siblings[0], e.old, e.new)
    return out


_WHY = ("Support asked for it after a customer report", "The API review flagged it",
        "It blocks the next release", "Two teams need it for their integration",
        "The old behaviour caused an incident last week", "It is the first step of a larger "
        "refactor", "A contributor proposed it and the maintainers agreed",
        "The audit found the current code hard to extend")


def compose(task_id: str, pkg: str, base: dict[str, str], comps: list[Component], *,
            hidden: list[tuple[int, str]] | None = None, real_size: bool = True) -> Task:
    """`hidden`: (component index, proto key) of gold steps left out of the decomposition.
    `real_size`: every source module the generator wrote gets ordinary helper code appended
    (plan07.ab.padding), so files are the size of real modules."""
    import random

    from plan07.ab.padding import pad

    rng = random.Random(f"ab-compose:{task_id.removesuffix('h')}")  # hiding: same files
    files = dict(base)
    for c in comps:
        files.update(c.files)
    if real_size:
        for rel in sorted(files):
            if rel.endswith(".py") and not rel.startswith("tests/") and files[rel].strip():
                files[rel] = pad(files[rel], rel.rsplit("/", 1)[-1].removesuffix(".py"), rng)
    gold = [(ci, p) for ci, c in enumerate(comps) for p in c.protos]
    rank = {(ci, p.key): i for i, (ci, p) in enumerate(gold)}
    listed = sorted(gold, key=lambda cp: (_file_of(cp[1]), rank[(cp[0], cp[1].key)]))
    ids = {(ci, p.key): f"O{i + 1}" for i, (ci, p) in enumerate(listed)}
    # Faulty variants against the state each file is in when the gold order reaches the step.
    state = dict(files)
    variants: dict[str, Mapping[str, Edit]] = {}
    for ci, p in gold:
        variants[ids[(ci, p.key)]] = _Variants(partial(_faults, dict(state), p))
        if p.edit is not None:
            text = _after(state, p.edit)
            if text is None:
                raise AssertionError(f"{task_id}: gold edit {p.key} does not apply in gold order")
            state[p.edit.file] = text
    steps = []
    for ci, p in listed:
        oid = ids[(ci, p.key)]
        deps = [ids[(ci, d)] for d in p.deps]
        ob = Obligation(id=oid, target_entity=p.target, obligation=p.verb,
                        caused_by=p.caused_by[:500], dependencies=deps, evidence=p.evidence[:200],
                        status="blocked" if deps else "ready", validation=p.validation)
        steps.append(GoldStep(ob, p.edit, variants[oid]))
    criteria = [x for c in comps for x in c.criteria][:MAX_CRITERIA]
    shape = "+".join(c.shape for c in comps)
    ticket = f"{pkg.upper()}-{rng.randint(100, 9999)}"
    request = (f"Change the `{pkg}` package ({shape}), keeping every step green.\n\n"
               f"{rng.choice(_WHY)} (ticket {ticket}).\n\n"
               + "\n".join(c.sentence for c in comps)
               + "\n\n## Acceptance criteria\n\n" + "\n".join(f"- {x}" for x in criteria)
               + "\n\nNo breaking change to the public API between steps.\n")
    return Task(id=task_id, source="generated", shape=shape, request=request,
                evidence=evidence_of(comps), steps=tuple(steps),
                gold_order=tuple(ids[(ci, p.key)] for ci, p in gold), files=files,
                hidden=tuple(sorted(ids[h] for h in hidden or [])))


def evidence_of(comps: list[Component]) -> Evidence:
    """The evidence bundle the generator knows is true of the repo it wrote."""
    nodes = [n for c in comps for n in c.nodes]
    loc = [Localization(entity=p.target, score=0.9 if p.verb == "modify" else 0.5)
           for c in comps for p in c.protos if not p.target.startswith("tests.")]
    seen: set[str] = set()
    loc = [x for x in loc if not (x.entity in seen or seen.add(x.entity))]  # type: ignore[func-returns-value]
    ctx = [ContextItem(entity=n.id, summary=n.signature or n.kind) for n in nodes
           if n.kind != "test"][:32]
    return Evidence(recon=Recon(nodes=nodes, edges=[e for c in comps for e in c.edges]),
                    impact=Impact(edges=[e for c in comps for e in c.impact]),
                    localization=loc, context=ctx)
