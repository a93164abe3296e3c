"""Seeded generator of A/B tasks: small real Python packages with tests and a multi-step change
of each §3.2 ladder shape. Pure (returns values; `tasks.write_repo` writes them).

Shapes (each a "component"; a task combines components to reach 3..30 obligations):
  widen    a signature widened, m consumers rebound, then narrowed      (2m+3 obligations)
  migrate  a migration read by m views: expand, rebind views, contract  (2m+4)
  default  a configurable default that must be preserved, k clients     (2k+4)
  testfirst  k features, each test defined before it is validated       (3k)
The decomposition is listed the way a model typically emits it: grouped by file (path order),
the gold order within a file. That listing is what a static chain runs; it is not always a
valid order (a narrowing lands before the consumers in the same listing), which is exactly what
dependency ordering exists to fix (§3.2).
"""

from __future__ import annotations

import random

from plan07.ab.compose import Component, Proto, compose
from plan07.ab.edits import Edit
from plan07.ab.tasks import Task
from plan07.model import (
    ImpactEdge,
    ReconEdge,
    ReconNode,
)

MIN_OBLIGATIONS, MAX_OBLIGATIONS = 3, 30
PACKAGES = ("shop", "ledger", "notes", "metrics", "depot", "billing", "atlas", "relay")
SCREENS = ("invoice", "receipt", "summary", "report", "badge", "banner", "ticket", "label",
           "export", "digest")
THINGS = ("customer", "product", "author", "station", "vendor", "device")
SERVICES = ("api", "queue", "mailer", "sync", "cache", "worker", "crawler", "uploader")
FEATURES = {
    "hypot2": ("a, b", "math.hypot(a, b)", "3, 4", "5.0"),
    "ceil_div": ("a, b", "math.ceil(a / b)", "7, 2", "4"),
    "degrees_of": ("r", "round(math.degrees(r), 3)", "3.141592653589793", "180.0"),
    "close_to": ("a, b", "math.isclose(a, b, rel_tol=1e-9)", "0.1 + 0.2, 0.3", "True"),
    "geo_mean": ("xs", "math.prod(xs) ** (1 / len(xs))", "[2, 8]", "4.0"),
    "log2_int": ("n", "int(math.log2(n))", "1024", "10"),
    "fact_of": ("n", "math.factorial(n)", "5", "120"),
    "gcd_of": ("a, b", "math.gcd(a, b)", "12, 18", "6"),
}
VIEW_FNS = (("upper", "s.upper()"), ("lower", "s.lower()"), ("swap", "s.swapcase()"),
            ("rev", "s[::-1]"), ("title", "s.title()"), ("strip", "s.strip('-')"))


def _t(template: str, **kw: str) -> str:
    for k, v in kw.items():
        template = template.replace(f"@{k}@", v)
    return template


def _init_files(pfx: str) -> dict[str, str]:
    return {f"tests/{pfx}/__init__.py": ""}


def _widen(pkg: str, pfx: str, m: int, rng: random.Random) -> Component:
    fn = f"fmt_{pfx}"
    core = f"{pfx}_core"
    screens = rng.sample(SCREENS, m)
    files = _init_files(pfx)
    files[f"{pkg}/{core}.py"] = _t('"""Number formatting for the screens."""\n\n\n'
                                   'def @FN@(value):\n    return f"{value:.2f}"\n', FN=fn)
    files[f"tests/{pfx}/test_core.py"] = _t(
        "from @PKG@.@CORE@ import @FN@\n\n\ndef test_fmt():\n    assert @FN@(1.5) == \"1.50\"\n",
        PKG=pkg, CORE=core, FN=fn)
    protos = [Proto("widen", f"{pkg}.{core}.{fn}", "modify",
                    f"requirement: {fn} takes a digits keyword (widen first)",
                    f"06 impact sig_change: {fn} -> {m + 1} consumers",
                    f"tests/{pfx}/test_core.py::test_fmt",
                    Edit(f"{pkg}/{core}.py",
                         _t('def @FN@(value):\n    return f"{value:.2f}"\n', FN=fn),
                         _t('def @FN@(value, *, digits=2):\n    return f"{value:.{digits}f}"\n',
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
        files[f"{pkg}/{mod}.py"] = _t(
            '"""The @S@ screen."""\n\nfrom @PKG@.@CORE@ import @FN@\n\nLABEL = "@S@"\n\n\n'
            'def @SHOW@(value):\n    return LABEL + ": " + @FN@(value)\n',
            S=s, PKG=pkg, CORE=core, FN=fn, SHOW=show)
        files[f"tests/{pfx}/test_{s}.py"] = _t(
            "from @PKG@.@MOD@ import @SHOW@\n\n\ndef test_label():\n"
            "    assert @SHOW@(1.5).startswith(\"@S@: \")\n", PKG=pkg, MOD=mod, SHOW=show, S=s)
        test_new = f"tests/{pfx}/test_{s}_digits.py"
        expected = f"{s}: {1.23456:.{d}f}"
        protos.append(Proto(
            f"test_{s}", f"tests.{pfx}.test_{s}_digits.test_digits", "modify",
            f"test_anchor: define the test for {show} before validating it",
            f"requirement: {s} shows {d} decimals", f"import:tests.{pfx}.test_{s}_digits",
            Edit(test_new, None, _t("from @PKG@.@MOD@ import @SHOW@\n\n\ndef test_digits():\n"
                                    "    assert @SHOW@(1.23456) == \"@E@\"\n",
                                    PKG=pkg, MOD=mod, SHOW=show, E=expected))))
        rebinds.append(Proto(
            f"rebind_{s}", f"{pkg}.{mod}.{show}", "modify",
            f"consumer_rebind: {show} passes digits={d}", f"06 impact CalledBy {fn} <- {show}",
            f"{test_new}::test_digits",
            Edit(f"{pkg}/{mod}.py", _t('LABEL + ": " + @FN@(value)\n', FN=fn),
                 _t('LABEL + ": " + @FN@(value, digits=@D@)\n', FN=fn, D=str(d))),
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
        Edit(f"tests/{pfx}/test_core.py", _t("@FN@(1.5) ==", FN=fn),
             _t("@FN@(1.5, digits=2) ==", FN=fn)),
        deps=["widen"], misspell=("digits=", "digit=")))
    # The narrowing is about the parameter's default, not the widened function: an entity of
    # its own, so the ladder does not take it for a second widening (docs/rules.md roles).
    protos.append(Proto(
        "narrow", f"{pkg}.{core}.{fn}.digits_default", "modify",
        "compile: digits becomes required once every consumer passes it",
        f"06 impact sig_change: {fn} narrowed after rebind", f"pytest:tests/{pfx}",
        Edit(f"{pkg}/{core}.py", _t("def @FN@(value, *, digits=2):", FN=fn),
             _t("def @FN@(value, *, digits):", FN=fn)),
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


def _migrate(pkg: str, pfx: str, m: int, rng: random.Random) -> Component:
    thing = rng.choice(THINGS)
    mig = f"migrate_{thing}"
    views = rng.sample(VIEW_FNS, m)
    a, b = rng.sample(("ada", "bo-b", "Cy", "dee", "Eve-", "fay"), 2)
    files = _init_files(pfx)
    mig_old = "    rec = dict(rec)\n    return rec\n"
    files[f"{pkg}/{pfx}_migrate.py"] = _t(
        '"""Schema migrations for @T@ records."""\n\n\ndef @MIG@(rec):\n' + mig_old,
        T=thing, MIG=mig)
    files[f"{pkg}/{pfx}_store.py"] = _t(
        "from @PKG@.@PFX@_migrate import @MIG@\n\nRECORDS = [{\"id\": 1, \"name\": \"@A@\"}, "
        "{\"id\": 2, \"name\": \"@B@\"}]\n\n\ndef load():\n"
        "    return [@MIG@(r) for r in RECORDS]\n",
        PKG=pkg, PFX=pfx, MIG=mig, A=a, B=b)
    files[f"tests/{pfx}/test_migrate.py"] = _t(
        "from @PKG@.@PFX@_migrate import @MIG@\n\n\ndef test_migrate():\n"
        "    assert @MIG@({\"id\": 1, \"name\": \"x\"})[\"name\"] == \"x\"\n",
        PKG=pkg, PFX=pfx, MIG=mig)
    target = f"{pkg}.{pfx}_migrate.{mig}"
    protos = [
        Proto("test_mig", f"tests.{pfx}.test_migrate_title.test_title", "modify",
              "test_anchor: define the migration test first", "requirement: title field",
              f"import:tests.{pfx}.test_migrate_title",
              Edit(f"tests/{pfx}/test_migrate_title.py", None, _t(
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
        files[f"{pkg}/{vmod}.py"] = _t(
            "from @PKG@.@PFX@_store import load\n\n\ndef _fmt(s):\n    return @EXPR@\n\n\n"
            "def @VIEW@(records):\n    return [_fmt(r[\"name\"]) for r in records]\n\n\n"
            "def page():\n    return @VIEW@(load())\n", PKG=pkg, PFX=pfx, EXPR=expr, VIEW=view)

        def f(s: str, expr: str = expr) -> str:
            return str(eval(expr, {"s": s}))  # noqa: S307 - our own constant expressions

        files[f"tests/{pfx}/test_view_{v}.py"] = _t(
            "from @PKG@.@VMOD@ import page\n\n\ndef test_page():\n    assert page() == @EXP@\n",
            PKG=pkg, VMOD=vmod, EXP=repr([f(a), f(b)]))
        tnew = f"tests/{pfx}/test_view_{v}_title.py"
        protos.append(Proto(
            f"test_{v}", f"tests.{pfx}.test_view_{v}_title.test_title_only", "modify",
            f"test_anchor: define the title-only test for {view}",
            "requirement: views read title", f"import:tests.{pfx}.test_view_{v}_title",
            Edit(tnew, None, _t("from @PKG@.@VMOD@ import @VIEW@\n\n\ndef test_title_only():\n"
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


def _default(pkg: str, pfx: str, k: int, rng: random.Random) -> Component:
    cfg = f"{rng.choice(('Session', 'Http', 'Rpc', 'Net'))}Config{pfx.upper()}"
    svcs = rng.sample(SERVICES, k)
    files = _init_files(pfx)
    old_init = "    def __init__(self, retries=3):\n        self.retries = retries\n"
    files[f"{pkg}/{pfx}_config.py"] = _t(
        '"""Settings for the @P@ clients."""\n\n\nclass @CFG@:\n' + old_init, P=pfx, CFG=cfg)
    new_init = ("    def __init__(self, retries=3, timeout=30):\n"
                "        if isinstance(timeout, bool) or not isinstance(timeout, int) "
                "or timeout <= 0:\n"
                "            raise ValueError(f\"timeout must be a positive int, "
                "got {timeout!r}\")\n"
                "        self.retries = retries\n        self.timeout = timeout\n")
    tcfg = f"tests/{pfx}/test_config_timeout.py"
    protos = [
        Proto("test_cfg", f"tests.{pfx}.test_config_timeout", "modify",
              "test_anchor: define the config tests first", "requirement: timeout in config",
              f"import:tests.{pfx}.test_config_timeout",
              Edit(tcfg, None, _t(
                  "import pytest\n\nfrom @PKG@.@PFX@_config import @CFG@\n\n\n"
                  "def test_timeout_field():\n    assert @CFG@(timeout=5).timeout == 5\n\n\n"
                  "def test_old_default():\n    assert @CFG@().timeout == 30\n\n\n"
                  "@pytest.mark.parametrize(\"bad\", [0, -1, \"30\", True])\n"
                  "def test_malformed(bad):\n    with pytest.raises(ValueError):\n"
                  "        @CFG@(timeout=bad)\n", PKG=pkg, PFX=pfx, CFG=cfg))),
        Proto("config", f"{pkg}.{pfx}_config.{cfg}", "modify",
              "requirement: SessionConfig accepts a timeout, default 30",
              "06 impact default_change: config -> clients", f"pytest:{tcfg}",
              Edit(f"{pkg}/{pfx}_config.py", old_init, new_init), deps=["test_cfg"],
              misspell=("self.timeout = timeout", "self.timout = timeout")),
    ]
    first = svcs[0]
    protos.append(Proto(
        "preserve", f"{pkg}.{pfx}_{first}.Client.timeout", "preserve",
        "constraint: the old default (30) is preserved when no timeout is supplied",
        "06 impact default_change: preserve-default", f"tests/{pfx}/test_{first}.py::test_default",
        None, deps=["config"]))
    nodes = [ReconNode(id=f"{pkg}.{pfx}_config.{cfg}", kind="config",
                       file=f"{pkg}/{pfx}_config.py", signature=f"class {cfg}(retries=3)")]
    edges: list[ReconEdge] = []
    impact: list[ImpactEdge] = []
    criteria = [f"{cfg} accepts a timeout ({tcfg}::test_timeout_field)",
                f"old default preserved (tests/{pfx}/test_{first}.py::test_default)"]
    rebinds = []
    mods = [f"{pfx}_{s}" for s in svcs]
    for s, mod in zip(svcs, mods, strict=True):
        files[f"{pkg}/{mod}.py"] = _t(
            "from @PKG@.@PFX@_config import @CFG@\n\nTIMEOUT = 30\n\n\nclass Client:\n"
            "    def __init__(self, config=None):\n        self.config = config or @CFG@()\n\n"
            "    def timeout(self):\n        return TIMEOUT\n", PKG=pkg, PFX=pfx, CFG=cfg)
        files[f"tests/{pfx}/test_{s}.py"] = _t(
            "from @PKG@.@MOD@ import Client\n\n\ndef test_default():\n"
            "    assert Client().timeout() == 30\n", PKG=pkg, MOD=mod)
        val = rng.choice((5, 7, 12, 45, 90))
        tnew = f"tests/{pfx}/test_{s}_custom.py"
        protos.append(Proto(
            f"test_{s}", f"tests.{pfx}.test_{s}_custom.test_custom_timeout", "modify",
            f"test_anchor: define the custom-timeout test for {s}",
            "requirement: a custom timeout is honoured", f"import:tests.{pfx}.test_{s}_custom",
            Edit(tnew, None, _t(
                "from @PKG@.@PFX@_config import @CFG@\nfrom @PKG@.@MOD@ import Client\n\n\n"
                "def test_custom_timeout():\n"
                "    assert Client(@CFG@(timeout=@V@)).timeout() == @V@\n",
                PKG=pkg, PFX=pfx, CFG=cfg, MOD=mod, V=str(val)))))
        rebinds.append(Proto(
            f"client_{s}", f"{pkg}.{mod}.Client.timeout", "modify",
            f"consumer_rebind: the {s} client reads the timeout from {cfg}",
            f"06 impact reads Client.timeout -> {cfg}", f"{tnew}::test_custom_timeout",
            Edit(f"{pkg}/{mod}.py", "        return TIMEOUT\n",
                 "        return self.config.timeout\n"),
            deps=["preserve", f"test_{s}"], misspell=("config.timeout", "config.timout"),
            siblings=[f"{pkg}/{o}.py" for o in mods if o != mod]))
        nodes.append(ReconNode(id=f"{pkg}.{mod}.Client.timeout", kind="method",
                               file=f"{pkg}/{mod}.py", signature="def timeout(self)"))
        edges.append(ReconEdge(src=f"{pkg}.{mod}.Client", dst=f"{pkg}.{pfx}_config.{cfg}",
                               kind="uses_type"))
        impact.append(ImpactEdge(src=f"{pkg}.{pfx}_config.{cfg}",
                                 dst=f"{pkg}.{mod}.Client.timeout", relation="ReadBy",
                                 cause="default_change", confidence=0.8))
    protos += rebinds
    protos.append(Proto(
        "validate", f"tests.{pfx}", "validate",
        "requirement: every client honours custom and default timeouts",
        "06 impact default_change: all clients", f"pytest:tests/{pfx}", None,
        deps=[p.key for p in rebinds]))
    criteria.append(f"every client honours its timeout (pytest:tests/{pfx})")
    sentence = (f"Make the client timeout configurable through `{cfg}.timeout` (default 30, "
                f"kept when none is given; malformed values rejected) for the "
                + ", ".join(f"`{s}`" for s in svcs) + " clients.")
    return Component("default", files, protos, sentence, criteria, nodes, edges, impact)


def _testfirst(pkg: str, pfx: str, k: int, rng: random.Random) -> Component:
    feats = rng.sample(sorted(FEATURES), k)
    files = _init_files(pfx)
    protos: list[Proto] = []
    nodes: list[ReconNode] = []
    criteria = []
    for name in feats:
        params, body, args, exp = FEATURES[name]
        tfile = f"tests/{pfx}/test_{name}.py"
        node = f"{tfile}::test_{name}"
        protos.append(Proto(
            f"test_{name}", f"tests.{pfx}.test_{name}.test_{name}", "modify",
            f"test_anchor: define test_{name} before {name} exists", f"requirement: {name}",
            f"import:tests.{pfx}.test_{name}",
            Edit(tfile, None, _t("import math  # noqa: F401\n\n\ndef test_@N@():\n"
                                 "    from @PKG@.@PFX@_@N@ import @N@\n\n"
                                 "    assert @N@(@ARGS@) == @EXP@\n",
                                 N=name, PKG=pkg, PFX=pfx, ARGS=args, EXP=exp))))
        protos.append(Proto(
            f"impl_{name}", f"{pkg}.{pfx}_{name}.{name}", "modify",
            f"requirement: add {name}", f"05 localization: new module {pfx}_{name}", node,
            Edit(f"{pkg}/{pfx}_{name}.py", None, _t(
                '"""@N@: a small numeric helper."""\n\nimport math\n\n\ndef @N@(@P@):\n'
                "    return @B@\n", N=name, P=params, B=body)),
            deps=[f"test_{name}"], import_line="import math\n"))
        protos.append(Proto(
            f"check_{name}", f"tests.{pfx}.test_{name}.test_{name}", "validate",
            f"requirement: {name} is validated by the test defined for it",
            "test_anchor: validate after define", node, None,
            deps=[f"impl_{name}", f"test_{name}"]))
        criteria.append(f"{name} works ({node})")
        nodes.append(ReconNode(id=f"tests.{pfx}.test_{name}.test_{name}", kind="test",
                               file=tfile))
    sentence = "Add the numeric helpers " + ", ".join(f"`{n}`" for n in feats) + \
        ", each test-first."
    return Component("testfirst", files, protos, sentence, criteria, nodes, [], [])


SHAPES = {"widen": (_widen, 2, 3, 8), "migrate": (_migrate, 2, 4, 6),
          "default": (_default, 2, 4, 6), "testfirst": (_testfirst, 3, 0, 4)}
PYPROJECT = "[tool.pytest.ini_options]\naddopts = \"-p no:cacheprovider\"\n"


def _plan_components(rng: random.Random, n: int) -> list[tuple[str, int]]:
    """Shapes and fan-outs whose obligation counts sum to at most n (and at least 3)."""
    out: list[tuple[str, int]] = []
    left = n
    while True:
        fits = [(s, per, base, hi) for s, (_, per, base, hi) in SHAPES.items()
                if per + base <= left]
        if not fits:
            return out
        s, per, base, hi = fits[rng.randrange(len(fits))]
        k = rng.randint(1, min(hi, (left - base) // per))
        out.append((s, k))
        left -= per * k + base
        if left < 3 or (out and rng.random() < 0.3):
            return out


def _hide(seed: int, index: int, comps: list[Component], rate: float) -> list[tuple[int, str]]:
    """Hidden consumers (§7.5 revision trigger): for each widening with >= 2 consumers, with
    probability `rate`, one consumer-rebind obligation (component index, proto key) that the
    decomposition leaves out. Its own rng: the task itself is the same at any rate."""
    if rate <= 0:
        return []
    rng = random.Random(f"ab-hidden:{seed}:{index}")
    out = []
    for ci, c in enumerate(comps):
        keys = [p.key for p in c.protos if p.key.startswith("rebind_") and p.key != "rebind_test"]
        if c.shape == "widen" and len(keys) >= 2 and rng.random() < rate:
            out.append((ci, rng.choice(keys)))
    return out


def generate_task(seed: int, index: int, *, size: int | None = None,
                  max_size: int = MAX_OBLIGATIONS, hidden_consumer_rate: float = 0.0,
                  real_size: bool = True) -> Task:
    """The index-th task of `seed`: deterministic, 3..max_size obligations (or about `size`).
    `hidden_consumer_rate`: see `_hide`; a task with a hidden consumer gets the id suffix `h`."""
    rng = random.Random(f"ab-task:{seed}:{index}")
    n = size if size is not None else rng.randint(MIN_OBLIGATIONS, max_size)
    n = max(MIN_OBLIGATIONS, min(MAX_OBLIGATIONS, n))
    pkg = f"{rng.choice(PACKAGES)}{index}"
    comps = []
    for c, (shape, k) in enumerate(_plan_components(rng, n)):
        comps.append(SHAPES[shape][0](pkg, f"{shape[0]}{c}", k, rng))
    files = {f"{pkg}/__init__.py": "", "tests/__init__.py": "", "pyproject.toml": PYPROJECT}
    hidden = _hide(seed, index, comps, hidden_consumer_rate)
    return compose(f"s{seed}-t{index:04d}" + ("h" if hidden else ""), pkg, files, comps,
                   hidden=hidden, real_size=real_size)


def generate_tasks(seed: int, n: int, *, start: int = 0, size: int | None = None,
                   max_size: int = MAX_OBLIGATIONS,
                   hidden_consumer_rate: float = 0.0, real_size: bool = True) -> list[Task]:
    return [generate_task(seed, i, size=size, max_size=max_size,
                          hidden_consumer_rate=hidden_consumer_rate, real_size=real_size)
            for i in range(start, start + n)]
