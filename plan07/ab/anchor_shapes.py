"""The A/B generator's shapes anchored on what must keep holding: `default` (a configurable
default preserved for every client before they are rebound, §3.2 preserve) and `testfirst`
(each feature's test defined before it is implemented and validated). Pure (returns Components).
"""

from __future__ import annotations

import random

from plan07.ab.compose import Component, Proto, fill, tests_package
from plan07.ab.edits import Edit
from plan07.model import ImpactEdge, ReconEdge, ReconNode

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


def default_component(pkg: str, pfx: str, k: int, rng: random.Random) -> Component:
    cfg = f"{rng.choice(('Session', 'Http', 'Rpc', 'Net'))}Config{pfx.upper()}"
    svcs = rng.sample(SERVICES, k)
    files = tests_package(pfx)
    old_init = "    def __init__(self, retries=3):\n        self.retries = retries\n"
    files[f"{pkg}/{pfx}_config.py"] = fill(
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
              Edit(tcfg, None, fill(
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
        files[f"{pkg}/{mod}.py"] = fill(
            "from @PKG@.@PFX@_config import @CFG@\n\nTIMEOUT = 30\n\n\nclass Client:\n"
            "    def __init__(self, config=None):\n        self.config = config or @CFG@()\n\n"
            "    def timeout(self):\n        return TIMEOUT\n", PKG=pkg, PFX=pfx, CFG=cfg)
        files[f"tests/{pfx}/test_{s}.py"] = fill(
            "from @PKG@.@MOD@ import Client\n\n\ndef test_default():\n"
            "    assert Client().timeout() == 30\n", PKG=pkg, MOD=mod)
        val = rng.choice((5, 7, 12, 45, 90))
        tnew = f"tests/{pfx}/test_{s}_custom.py"
        protos.append(Proto(
            f"test_{s}", f"tests.{pfx}.test_{s}_custom.test_custom_timeout", "modify",
            f"test_anchor: define the custom-timeout test for {s}",
            "requirement: a custom timeout is honoured", f"import:tests.{pfx}.test_{s}_custom",
            Edit(tnew, None, fill(
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


def testfirst_component(pkg: str, pfx: str, k: int, rng: random.Random) -> Component:
    feats = rng.sample(sorted(FEATURES), k)
    files = tests_package(pfx)
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
            Edit(tfile, None, fill("import math  # noqa: F401\n\n\ndef test_@N@():\n"
                                   "    from @PKG@.@PFX@_@N@ import @N@\n\n"
                                   "    assert @N@(@ARGS@) == @EXP@\n",
                                   N=name, PKG=pkg, PFX=pfx, ARGS=args, EXP=exp))))
        protos.append(Proto(
            f"impl_{name}", f"{pkg}.{pfx}_{name}.{name}", "modify",
            f"requirement: add {name}", f"05 localization: new module {pfx}_{name}", node,
            Edit(f"{pkg}/{pfx}_{name}.py", None, fill(
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
