"""Explain: proof trees from minimal-height derivations, and why-not for atoms that do not hold.
Pure: it reads the model and derivations from plan07.engine.naive.

A proof names, at each derived step, the rule id and `file:LINE`; at each input fact its
sources (which obligation field, which evidence item); negated premises are checked absences.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from plan07.engine.ir import Atom, Const, Facts, Program, Rule, Tuple_, Var
from plan07.engine.naive import (
    Derivation,
    Index,
    Key,
    candidates,
    ground,
    holds,
    match,
    ordered_body,
)
from plan07.model.proof import Proof, ProofNode

Sources = Mapping[Key, list[str]]


def show(key: Key) -> str:
    rel, t = key
    return f"{rel}({', '.join(str(Const(v)) for v in t)})"


def location(program: Program, rule: Rule) -> str:
    """`rules/ordering.dl:LINE`: the rule file relative to its repository when it can be."""
    p = Path(program.file)
    try:
        rel = p.resolve().relative_to(p.resolve().parents[1])
    except (ValueError, IndexError):
        rel = p
    return f"{rel.as_posix()}:{rule.line}"


def prove(program: Program, best: Mapping[Key, Derivation], sources: Sources, key: Key,
          depth: int | None = None) -> ProofNode:
    """The minimal-height proof tree of `key` (which must be in the model)."""
    d = best[key]
    if d.rule is None:
        return ProofNode(atom=show(key), kind="fact",
                         sources=list(dict.fromkeys(sources.get(key, []))))
    if d.rule.is_fact:
        return ProofNode(atom=show(key), kind="fact", rule=d.rule.rule_id,
                         location=location(program, d.rule),
                         sources=[f"rule file fact {location(program, d.rule)}"])
    node = ProofNode(atom=show(key), kind="derived", rule=d.rule.rule_id or "(no id)",
                     location=location(program, d.rule))
    if depth is not None and depth <= 0:
        node.children = [ProofNode(atom=f"... {len(d.premises)} premise(s) cut by --depth",
                                   kind="cut")]
        return node
    nxt = None if depth is None else depth - 1
    node.children = [prove(program, best, sources, p, nxt) for p in d.premises]
    node.children += [ProofNode(atom=c, kind="comparison") for c in d.checks]
    node.children += [ProofNode(atom="!" + show(a), kind="absent",
                                sources=["checked: no such tuple in the model"])
                      for a in d.absences]
    return node


def find(model: Facts, relation: str, pattern: tuple[object | None, ...]) -> list[Tuple_]:
    """Tuples of `relation` matching `pattern` (None = any), sorted."""
    out = [t for t in model.get(relation, ()) if len(t) == len(pattern)
           and all(p is None or p == v for p, v in zip(pattern, t, strict=True))]
    return sorted(out, key=lambda t: tuple(str(v) for v in t))


def _pattern_text(relation: str, pattern: tuple[object | None, ...]) -> str:
    return f"{relation}({', '.join('_' if p is None else str(Const(p)) for p in pattern)})"  # type: ignore[arg-type]


def _partial(atom: Atom, b: Mapping[str, object]) -> tuple[object | None, ...]:
    return tuple(a.value if isinstance(a, Const)
                 else (b.get(a.name) if isinstance(a, Var) and not a.anonymous else None)
                 for a in atom.args)


def why_not(program: Program, model: Facts, relation: str, pattern: tuple[object | None, ...],
            prove_key: Callable[[Key], ProofNode], depth: int = 3) -> Proof:
    """Why no tuple of `relation` matches `pattern`: for each rule with that head, the longest
    satisfiable body prefix; the best rule (longest prefix, then file order) is the candidate and
    its first failing literal the missing premise. A failing positive derived atom is explained
    in turn (down to `depth`); a negation that fails shows the proof of what is present."""
    goal = _pattern_text(relation, pattern)
    idx = Index(model)
    best: tuple[int, int, Rule, str, list[str]] | None = None
    for order, rule in enumerate(program.rules):
        if rule.head.relation != relation or rule.is_fact:
            continue
        b0 = _bind_head(rule.head, pattern)
        if b0 is None:
            continue
        body = ordered_body(rule)
        done, fail_lit, fail_b = _longest_prefix(body, idx, b0)
        if fail_lit is None:
            continue  # the rule fires: the pattern should hold (model disagreement)
        lit = body[done]
        chain = _explain_failure(program, model, lit, fail_b, prove_key, depth)
        if best is None or done > best[0]:
            best = (done, order, rule, chain[0], chain)
    if best is None:
        return Proof(goal=goal, holds=False,
                     why_not=[f"no rule derives {relation} with this shape"])
    _, _, rule, missing, chain = best
    return Proof(goal=goal, holds=False, candidate_rule=rule.rule_id or "(no id)",
                 candidate_location=location(program, rule), missing_premise=missing,
                 why_not=[f"closest rule {rule.rule_id} ({location(program, rule)}) "
                          f"fails at {missing}", *chain[1:]])


def _bind_head(head: Atom, pattern: tuple[object | None, ...]) -> dict[str, object] | None:
    b: dict[str, object] = {}
    if head.arity != len(pattern):
        return None
    for arg, p in zip(head.args, pattern, strict=True):
        if p is None:
            continue
        if isinstance(arg, Const):
            if arg.value != p:
                return None
        elif not arg.anonymous and b.setdefault(arg.name, p) != p:
            return None
    return b


def _longest_prefix(body: list, idx: Index, b0: dict[str, object]) -> tuple[int, object, dict]:  # type: ignore[type-arg]
    """Depth of the deepest satisfiable prefix, the failing literal and its binding."""
    best_done, best_b = 0, b0
    frontier = [b0]
    for i, lit in enumerate(body):
        nxt = []
        for b in frontier:
            if lit.atom is not None and not lit.negated:
                for t in candidates(lit.atom, idx, b):
                    nb = match(lit.atom, t, b)
                    if nb is not None:
                        nxt.append(nb)
            elif holds(lit, idx, b):
                nxt.append(b)
        if not nxt:
            return i, lit, frontier[0]
        best_done, best_b, frontier = i + 1, nxt[0], nxt[:200]
    return best_done, None, best_b


def _explain_failure(program: Program, model: Facts, lit: object, b: dict[str, object],
                     prove_key: Callable[[Key], ProofNode], depth: int) -> list[str]:
    from plan07.engine.ir import Compare, Literal

    assert isinstance(lit, Literal)
    if isinstance(lit.item, Compare):
        return [f"{lit.item} (false for this binding)"]
    atom = lit.item
    pat = _partial(atom, b)
    text = ("!" if lit.negated else "") + _pattern_text(atom.relation, pat)
    if lit.negated:
        present = find(model, atom.relation, pat)
        if present:
            proof = prove_key((atom.relation, present[0]))
            how = (f"rule {proof.rule}, {proof.location}" if proof.rule
                   else f"input fact: {'; '.join(proof.sources) or 'given'}")
            return [text, f"  but {proof.atom} holds ({how})"]
        return [text]
    if atom.relation in program.derived() and depth > 0:
        sub = why_not(program, model, atom.relation, pat, prove_key, depth - 1)
        return [text, *("  " + line for line in sub.why_not)]
    return [f"{text} (no such input fact)"]


def render(node: ProofNode, indent: str = "") -> list[str]:
    """A proof tree as indented text lines (the CLI's human output)."""
    tag = {"derived": f"  [{node.rule} @ {node.location}]", "fact": "", "cut": "",
           "absent": "  [checked absence]", "comparison": "  [comparison]"}[node.kind]
    src = f"  <- {'; '.join(node.sources)}" if node.sources and node.kind == "fact" else ""
    lines = [f"{indent}{node.atom}{tag}{src}"]
    for c in node.children:
        lines += render(c, indent + "  ")
    return lines


def proof_of(program: Program, best: Mapping[Key, Derivation], sources: Sources, key: Key,
             depth: int | None = None) -> Proof:
    tree = prove(program, best, sources, key, depth)
    return Proof(goal=show(key), holds=True, height=best[key].height, tree=tree)


def explain_facts(program: Program, facts: Facts, sources: Sources, relation: str,
                  pattern: tuple[object | None, ...], depth: int | None = None) -> Proof:
    """The minimal-height proof of the first matching tuple (ties: lowest height, then sorted
    values), or why not when none matches."""
    from plan07.engine import naive

    model, best = naive.evaluate(program, facts)
    matches = find(model, relation, pattern)
    if not matches:
        return why_not(program, model, relation, pattern,
                       lambda k: prove(program, best, sources, k, 2))
    key = min(((relation, t) for t in matches),
              key=lambda k: (best[k].height, tuple(str(v) for v in k[1])))
    return proof_of(program, best, sources, key, depth)


__all__ = ["explain_facts", "find", "ground", "proof_of", "prove", "render", "show", "why_not"]
