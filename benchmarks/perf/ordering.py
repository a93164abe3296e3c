"""Row "ordering": plan07's backends against a clingo program of the same ladder and facts.

    .venv/bin/python benchmarks/perf/ordering.py [--edges 10000] [--runs 5] [--sympy PATH]

The case is benchmarks/engine.py's: 64 obligations whose targets are hubs of a recon graph of
`--edges` edges (every edge within 2 hops of a hub), prepared into facts once. The floor is a
clingo program of the same ladder with the same facts and nothing of plan07 around it: the
rules' ASP text (written once, before the clock starts, exactly as a hand-written .lp of
rules/ordering.dl reads), the facts printed as ASP text by a plain loop, one Control, ground,
solve, the shown atoms read back as text. Two pairs on the same facts dict: the full model (the
floor shows every derived relation; plan07 is `plan07.engine.evaluate(program, facts, engine)`)
and the answer (the floor shows the `.output` relations; plan07 does what derive_order does:
`relevance.prune(..., outputs=program.outputs)`, as prepare_facts loads the facts, then
`evaluate`). CPU time, median of `--runs` interleaved runs. All must agree on precedes,
violation and role.

The facts are every fact of the case (`plan07.order.inputs.all_facts`: all the evidence), the same
dict for the floor and for plan07. With `--sympy PATH` the same is measured on the facts of the
sympy benchmark plan (benchmarks/perf/requests/sympy.md, the builtin decomposition over
plan07's own recon of the checkout: 202k edges).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import common  # noqa: E402

ANSWER = ("precedes", "violation", "role")


def floor_program(answer_only: bool = False) -> tuple[str, object]:
    """The ASP text of the ladder (rules and constants) and the program (for arities), showing
    every derived relation (the full model) or only the `.output` ones (the answer)."""
    from plan07.engine import load_program
    from plan07.engine.clingo_backend import translate

    prog = load_program()
    ar = prog.arities()
    shown = prog.outputs if answer_only else prog.derived()
    shows = "\n".join(f"#show {r}/{ar[r]}." for r in sorted(shown))
    return translate(prog) + "\n" + shows + "\n", prog


def _q(v: object) -> str:
    if isinstance(v, int):
        return str(v)
    s = str(v)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def floor(text: str, facts: dict) -> list[str]:  # type: ignore[type-arg]
    import clingo

    ctl = clingo.Control(["--warn=none"], logger=lambda _c, _m: None)
    body = "\n".join(f"{rel}({','.join(map(_q, t))})." for rel, ts in facts.items() for t in ts)
    ctl.add("base", [], text + body)
    ctl.ground([("base", [])])
    out: list[str] = []
    ctl.solve(on_model=lambda m: out.extend(str(s) for s in m.symbols(shown=True)))
    return out


def answer_of_floor(atoms: list[str]) -> dict[str, set]:  # type: ignore[type-arg]
    from plan07.engine.clingo_backend import _parse

    out: dict[str, set] = {r: set() for r in ANSWER}  # type: ignore[type-arg]
    for a in atoms:
        rel, t = _parse(a)
        if rel in out:
            out[rel].add(t)
    return out


def measure(label: str, facts: dict, runs: int) -> None:  # type: ignore[type-arg]
    from plan07.engine import evaluate, load_program
    from plan07.engine.relevance import prune

    text, _ = floor_program()
    answer_text, _ = floor_program(answer_only=True)
    prog = load_program()
    n_facts = sum(len(v) for v in facts.values())

    def answer(engine: str) -> dict:  # type: ignore[type-arg]
        # what derive_order does: the facts a derivation of the outputs can use (as
        # prepare_facts loads them), then the model
        return evaluate(prog, prune(prog, facts, min_size=0, outputs=prog.outputs), engine)

    models = {e: evaluate(prog, facts, e) for e in ("clingo", "pydatalog")}
    models |= {f"{e} answer": answer(e) for e in ("clingo", "pydatalog")}
    want = answer_of_floor(floor(text, facts))
    agree = all({r: models[e][r] for r in ANSWER} == want for e in models) \
        and answer_of_floor(floor(answer_text, facts)) == want
    t = common.side_by_side({
        "floor": lambda: floor(text, facts),
        "clingo": lambda: evaluate(prog, facts, "clingo"),
        "pydatalog": lambda: evaluate(prog, facts, "pydatalog"),
        "floor answer": lambda: floor(answer_text, facts),
        "clingo answer": lambda: answer("clingo"),
        "pydatalog answer": lambda: answer("pydatalog"),
    }, runs)
    print(f"{label}: {n_facts} facts ({len(facts.get('edge', ()))} edge), "
          f"{len(want['precedes'])} precedes, {len(want['violation'])} violations; "
          f"floor and both backends agree (full model and answer): {agree}")
    print(f"  CPU ms (median of {runs}), the full model: floor {t['floor'] * 1e3:.1f}, "
          f"clingo {t['clingo'] * 1e3:.1f}, pydatalog {t['pydatalog'] * 1e3:.1f}; the answer "
          f"(precedes, violation, role, as derive_order loads and reads them): floor "
          f"{t['floor answer'] * 1e3:.1f}, clingo {t['clingo answer'] * 1e3:.1f}, pydatalog "
          f"{t['pydatalog answer'] * 1e3:.1f}")
    if not agree:
        raise SystemExit("error: the backends and the floor disagree")
    for what, key in (("the full model", ""), ("the answer", " answer")):
        extra = {"case": label, "floor_ms": round(t["floor" + key] * 1e3, 1),
                 "facts": n_facts}
        common.result(f"ordering ({label}), {what}", "clingo backend / floor",
                      t["clingo" + key] / t["floor" + key], 1.2,
                      plan07_ms=round(t["clingo" + key] * 1e3, 1), **extra)
        common.result(f"ordering ({label}), {what}", "pyDatalog backend / floor",
                      t["pydatalog" + key] / t["floor" + key], 3.0,
                      plan07_ms=round(t["pydatalog" + key] * 1e3, 1), **extra)


def sympy_facts(repo: Path, cache: Path) -> dict:  # type: ignore[type-arg]
    from plan07.decompose import make_client
    from plan07.decompose.call import decompose
    from plan07.order.inputs import all_facts
    from plan07.request.canonicalize import canonicalize

    ev = common.evidence("sympy", repo, cache)
    dec = decompose(canonicalize(common.request_text("sympy")), ev, make_client("builtin"))
    return all_facts(dec.obligations, ev).facts


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", default="10000", help="comma-separated edge counts")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sympy", type=Path, default=None)
    ap.add_argument("--cache", type=Path, default=common.DEFAULT_CACHE)
    args = ap.parse_args(argv)
    from engine import make_case  # benchmarks/engine.py

    from plan07.order.inputs import all_facts

    print(common.load_avg())
    for n in (int(x) for x in args.edges.split(",")):
        obs, ev = make_case(n)
        measure(f"64 obligations x {n} edges", all_facts(obs, ev).facts, args.runs)
    if args.sympy:
        measure("sympy plan", sympy_facts(args.sympy.resolve(), args.cache), args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
