"""The A/B generator's expand -> rebind -> contract shapes (§3.2 ladder): `widen` (a signature
widened, its consumers rebound, then narrowed) and `migrate` (a record field renamed by a
migration read by views: expand, rebind the views, contract). Pure (returns Components).
"""

from __future__ import annotations

import random

from plan07.ab.compose import Component, Proto, fill, tests_package
from plan07.ab.edits import Edit
from plan07.model import ImpactEdge, ReconEdge, ReconNode

SCREENS = ("invoice", "receipt", "summary", "report", "badge", "banner", "ticket", "label",
           "export", "digest")
THINGS = ("customer", "product", "author", "station", "vendor", "device")
VIEW_FNS = (("upper", "s.upper()"), ("lower", "s.lower()"), ("swap", "s.swapcase()"),
            ("rev", "s[::-1]"), ("title", "s.title()"), ("strip", "s.strip('-')"))


def widen_component(pkg: str, pfx: str, m: int, rng: random.Random) -> Component:
    fn = f"fmt_{pfx}"
    core = f"{pfx}_core"
    screens = rng.sample(SCREENS, m)
    files = tests_package(pfx)
    files[f"{pkg}/{core}.py"] = fill('"""Number formatting for the screens."""\n\n\n'
                                     'def @FN@(value):\n    return f"{value:.2f}"\n', FN=fn)
    files[f"tests/{pfx}/test_core.py"] = fill(
        "from @PKG@.@CORE@ import @FN@\n\n\ndef test_fmt():\n    assert @FN@(1.5) == \"1.50\"\n",
        PKG=pkg, CORE=core, FN=fn)
    protos = [Proto("widen", f"{pkg}.{core}.{fn}", "modify",
                    f"requirement: {fn} takes a digits keyword (widen first)",
                    f"06 impact sig_change: {fn} -> {m + 1} consumers",
                    f"tests/{pfx}/test_core.py::test_fmt",
                    Edit(f"{pkg}/{core}.py",
                         fill('def @FN@(value):\n    return f"{value:.2f}"\n', FN=fn),
                         fill('def @FN@(value, *, digits=2):\n    return f"{value:.{digits}f}"\n',
                              FN=fn)),
                    misspell=("digits=2", "digit=2"))]
    nodes = [ReconNode(id=f"{pkg}.{core}", kind="module", file=f"{pkg}/{core}.py"),
             ReconNode(id=f"{pkg}.{core}.{fn}", kind="function", file=f"{pkg}/{core}.py",
                       line=4, signature=f"def {fn}(value)")]
    edges: list[ReconEdge] = []
    impact: list[ImpactEdge] = []
    rebinds = []
    criteria = []
    mods = [f"{pfx}_{s}" for s in screens]
    for s, mod in zip(screens, mods, strict=True):
        d = rng.choice((0, 1, 3, 4))
        show = f"show_{s}"
        files[f"{pkg}/{mod}.py"] = fill(
            '"""The @S@ screen."""\n\nfrom @PKG@.@CORE@ import @FN@\n\nLABEL = "@S@"\n\n\n'
            'def @SHOW@(value):\n    return LABEL + ": " + @FN@(value)\n',
            S=s, PKG=pkg, CORE=core, FN=fn, SHOW=show)
        files[f"tests/{pfx}/test_{s}.py"] = fill(
            "from @PKG@.@MOD@ import @SHOW@\n\n\ndef test_label():\n"
            "    assert @SHOW@(1.5).startswith(\"@S@: \")\n", PKG=pkg, MOD=mod, SHOW=show, S=s)
        test_new = f"tests/{pfx}/test_{s}_digits.py"
        expected = f"{s}: {1.23456:.{d}f}"
        protos.append(Proto(
            f"test_{s}", f"tests.{pfx}.test_{s}_digits.test_digits", "modify",
            f"test_anchor: define the test for {show} before validating it",
            f"requirement: {s} shows {d} decimals", f"import:tests.{pfx}.test_{s}_digits",
            Edit(test_new, None, fill("from @PKG@.@MOD@ import @SHOW@\n\n\ndef test_digits():\n"
                                      "    assert @SHOW@(1.23456) == \"@E@\"\n",
                                      PKG=pkg, MOD=mod, SHOW=show, E=expected))))
        rebinds.append(Proto(
            f"rebind_{s}", f"{pkg}.{mod}.{show}", "modify",
            f"consumer_rebind: {show} passes digits={d}", f"06 impact CalledBy {fn} <- {show}",
            f"{test_new}::test_digits",
            Edit(f"{pkg}/{mod}.py", fill('LABEL + ": " + @FN@(value)\n', FN=fn),
                 fill('LABEL + ": " + @FN@(value, digits=@D@)\n', FN=fn, D=str(d))),
            deps=["widen", f"test_{s}"], misspell=("digits=", "digit="),
            siblings=[f"{pkg}/{o}.py" for o in mods if o != mod]))
        criteria.append(f"{show} shows {d} decimals ({test_new}::test_digits)")
        nodes += [ReconNode(id=f"{pkg}.{mod}.{show}", kind="function", file=f"{pkg}/{mod}.py",
                            line=9, signature=f"def {show}(value)"),
                  ReconNode(id=f"tests.{pfx}.test_{s}.test_label", kind="test",
                            file=f"tests/{pfx}/test_{s}.py")]
        edges += [ReconEdge(src=f"{pkg}.{mod}.{show}", dst=f"{pkg}.{core}.{fn}", kind="calls"),
                  ReconEdge(src=f"tests.{pfx}.test_{s}.test_label", dst=f"{pkg}.{mod}.{show}",
                            kind="tests")]
        impact.append(ImpactEdge(src=f"{pkg}.{core}.{fn}", dst=f"{pkg}.{mod}.{show}",
                                 relation="CalledBy", cause="sig_change", confidence=0.9))
    protos += rebinds
    protos.append(Proto(
        "rebind_test", f"tests.{pfx}.test_core.test_fmt", "modify",
        f"consumer_rebind: test_fmt passes digits to {fn}", f"06 impact CalledBy {fn} <- test_fmt",
        f"tests/{pfx}/test_core.py::test_fmt",
        Edit(f"tests/{pfx}/test_core.py", fill("@FN@(1.5) ==", FN=fn),
             fill("@FN@(1.5, digits=2) ==", FN=fn)),
        deps=["widen"], misspell=("digits=", "digit=")))
    # The narrowing is about the parameter's default, not the widened function: an entity of
    # its own, so the ladder does not take it for a second widening (docs/rules.md roles).
    protos.append(Proto(
        "narrow", f"{pkg}.{core}.{fn}.digits_default", "modify",
        "compile: digits becomes required once every consumer passes it",
        f"06 impact sig_change: {fn} narrowed after rebind", f"pytest:tests/{pfx}",
        Edit(f"{pkg}/{core}.py", fill("def @FN@(value, *, digits=2):", FN=fn),
             fill("def @FN@(value, *, digits):", FN=fn)),
        deps=[p.key for p in rebinds] + ["rebind_test"], misspell=("digits)", "digit)")))
    nodes.append(ReconNode(id=f"tests.{pfx}.test_core.test_fmt", kind="test",
                           file=f"tests/{pfx}/test_core.py"))
    edges.append(ReconEdge(src=f"tests.{pfx}.test_core.test_fmt", dst=f"{pkg}.{core}.{fn}",
                           kind="tests"))
    impact.append(ImpactEdge(src=f"{pkg}.{core}.{fn}", dst=f"tests.{pfx}.test_core.test_fmt",
                             relation="CalledBy", cause="sig_change", confidence=0.9))
    sentence = (f"Give `{fn}` in `{pkg}/{core}.py` a required keyword-only `digits` parameter "
                f"(number of decimals) and have each caller pass its own: "
                + ", ".join(f"`show_{s}`" for s in screens) + ".")
    return Component("widen", files, protos, sentence, criteria, nodes, edges, impact)


def migrate_component(pkg: str, pfx: str, m: int, rng: random.Random) -> Component:
    thing = rng.choice(THINGS)
    mig = f"migrate_{thing}"
    views = rng.sample(VIEW_FNS, m)
    a, b = rng.sample(("ada", "bo-b", "Cy", "dee", "Eve-", "fay"), 2)
    files = tests_package(pfx)
    mig_old = "    rec = dict(rec)\n    return rec\n"
    files[f"{pkg}/{pfx}_migrate.py"] = fill(
        '"""Schema migrations for @T@ records."""\n\n\ndef @MIG@(rec):\n' + mig_old,
        T=thing, MIG=mig)
    files[f"{pkg}/{pfx}_store.py"] = fill(
        "from @PKG@.@PFX@_migrate import @MIG@\n\nRECORDS = [{\"id\": 1, \"name\": \"@A@\"}, "
        "{\"id\": 2, \"name\": \"@B@\"}]\n\n\ndef load():\n"
        "    return [@MIG@(r) for r in RECORDS]\n",
        PKG=pkg, PFX=pfx, MIG=mig, A=a, B=b)
    files[f"tests/{pfx}/test_migrate.py"] = fill(
        "from @PKG@.@PFX@_migrate import @MIG@\n\n\ndef test_migrate():\n"
        "    assert @MIG@({\"id\": 1, \"name\": \"x\"})[\"name\"] == \"x\"\n",
        PKG=pkg, PFX=pfx, MIG=mig)
    target = f"{pkg}.{pfx}_migrate.{mig}"
    protos = [
        Proto("test_mig", f"tests.{pfx}.test_migrate_title.test_title", "modify",
              "test_anchor: define the migration test first", "requirement: title field",
              f"import:tests.{pfx}.test_migrate_title",
              Edit(f"tests/{pfx}/test_migrate_title.py", None, fill(
                  "from @PKG@.@PFX@_migrate import @MIG@\n\n\ndef test_title():\n"
                  "    assert @MIG@({\"id\": 1, \"name\": \"x\"})[\"title\"] == \"x\"\n",
                  PKG=pkg, PFX=pfx, MIG=mig))),
        Proto("expand", target, "modify", "migration: records gain title, copied from name",
              f"06 impact migration: {mig} -> {m} views",
              f"tests/{pfx}/test_migrate_title.py::test_title",
              Edit(f"{pkg}/{pfx}_migrate.py", mig_old,
                   "    rec = dict(rec)\n    rec[\"title\"] = rec[\"name\"]\n    return rec\n"),
              deps=["test_mig"], misspell=("rec[\"title\"]", "rec[\"titel\"]")),
    ]
    nodes = [ReconNode(id=target, kind="migration", file=f"{pkg}/{pfx}_migrate.py", line=4,
                       signature=f"def {mig}(rec)"),
             ReconNode(id=f"{pkg}.{pfx}_store.load", kind="function",
                       file=f"{pkg}/{pfx}_store.py", signature="def load()")]
    edges = [ReconEdge(src=f"{pkg}.{pfx}_store.load", dst=target, kind="calls")]
    impact: list[ImpactEdge] = []
    rebinds = []
    criteria = [f"{mig} adds title (tests/{pfx}/test_migrate_title.py::test_title)"]
    vmods = [f"{pfx}_view_{v}" for v, _ in views]
    for (v, expr), vmod in zip(views, vmods, strict=True):
        view = f"{v}_view"
        files[f"{pkg}/{vmod}.py"] = fill(
            "from @PKG@.@PFX@_store import load\n\n\ndef _fmt(s):\n    return @EXPR@\n\n\n"
            "def @VIEW@(records):\n    return [_fmt(r[\"name\"]) for r in records]\n\n\n"
            "def page():\n    return @VIEW@(load())\n", PKG=pkg, PFX=pfx, EXPR=expr, VIEW=view)

        def f(s: str, expr: str = expr) -> str:
            return str(eval(expr, {"s": s}))  # noqa: S307 - our own constant expressions

        files[f"tests/{pfx}/test_view_{v}.py"] = fill(
            "from @PKG@.@VMOD@ import page\n\n\ndef test_page():\n    assert page() == @EXP@\n",
            PKG=pkg, VMOD=vmod, EXP=repr([f(a), f(b)]))
        tnew = f"tests/{pfx}/test_view_{v}_title.py"
        protos.append(Proto(
            f"test_{v}", f"tests.{pfx}.test_view_{v}_title.test_title_only", "modify",
            f"test_anchor: define the title-only test for {view}",
            "requirement: views read title", f"import:tests.{pfx}.test_view_{v}_title",
            Edit(tnew, None, fill("from @PKG@.@VMOD@ import @VIEW@\n\n\ndef test_title_only():\n"
                                  "    assert @VIEW@([{\"id\": 1, \"title\": \"@A@\"}]) == @EXP@\n",
                                  PKG=pkg, VMOD=vmod, VIEW=view, A=a, EXP=repr([f(a)])))))
        rebinds.append(Proto(
            f"view_{v}", f"{pkg}.{vmod}.{view}", "modify",
            f"usage: {view} reads title (after the migration)",
            f"06 impact reads {view} -> {mig}", f"{tnew}::test_title_only",
            Edit(f"{pkg}/{vmod}.py", "[_fmt(r[\"name\"]) for r in records]",
                 "[_fmt(r[\"title\"]) for r in records]"),
            deps=["expand", f"test_{v}"], misspell=("\"title\"", "\"titel\""),
            siblings=[f"{pkg}/{o}.py" for o in vmods if o != vmod]))
        criteria.append(f"{view} reads title ({tnew}::test_title_only)")
        nodes.append(ReconNode(id=f"{pkg}.{vmod}.{view}", kind="function",
                               file=f"{pkg}/{vmod}.py", signature=f"def {view}(records)"))
        edges.append(ReconEdge(src=f"{pkg}.{vmod}.{view}", dst=target, kind="reads"))
        impact.append(ImpactEdge(src=target, dst=f"{pkg}.{vmod}.{view}", relation="ReadBy",
                                 cause="migration", confidence=0.85))
    protos += rebinds
    protos.append(Proto(
        "rebind_test", f"tests.{pfx}.test_migrate.test_migrate", "modify",
        "consumer_rebind: the migration test reads title", f"06 impact reads test -> {mig}",
        f"tests/{pfx}/test_migrate.py::test_migrate",
        Edit(f"tests/{pfx}/test_migrate.py", "[\"name\"] == \"x\"", "[\"title\"] == \"x\""),
        deps=["expand"], misspell=("\"title\"", "\"titel\"")))
    protos.append(Proto(
        "contract", f"{target}.name_field", "modify",
        "contract: drop name once nothing reads it",
        f"06 impact schema_change: {mig} contract", f"pytest:tests/{pfx}",
        Edit(f"{pkg}/{pfx}_migrate.py", "rec[\"title\"] = rec[\"name\"]",
             "rec[\"title\"] = rec.pop(\"name\")"),
        deps=[p.key for p in rebinds] + ["rebind_test"],
        misspell=("pop(\"name\")", "pop(\"nmae\")")))
    sentence = (f"Rename the `name` field of {thing} records to `title` with a migration "
                f"(`{mig}`) and make the views read `title`: "
                + ", ".join(f"`{v}_view`" for v, _ in views) + ".")
    return Component("migrate", files, protos, sentence, criteria, nodes, edges, impact)
