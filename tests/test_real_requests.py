"""Real requests on real-shaped trees (issue 12): localization reads the issue, not its template;
recon bundles that plan always accepts; test classes of unittest/Django; a builtin decomposition
sized to the fix (interface change only when asked, tests where the repo keeps them, fan-in
within the cap). Every repository is built here, on the fly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plan07 import caps
from plan07.api import Planner
from plan07.cli import main
from plan07.decompose.builtin import derive, interface_change
from plan07.evidence import build_evidence
from plan07.evidence.filerank import file_scores
from plan07.evidence.localize import issue_prose, localize, names_in
from plan07.evidence.recon import recon
from plan07.model import Evidence, ImpactEdge, Localization, Recon, ReconEdge, ReconNode


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


SESSIONS = {
    "reqs/__init__.py": "",
    "reqs/sessions.py": (
        "def builtin_str(x):\n    return str(x)\n\n\n"
        "class SessionRedirectMixin:\n"
        "    def resolve_redirects(self, resp, req):\n        return [req]\n\n\n"
        "class Session(SessionRedirectMixin):\n"
        "    def request(self, method, url):\n"
        "        method = builtin_str(method)\n"
        "        return self.send(method, url)\n\n"
        "    def send(self, method, url):\n        return method, url\n"
    ),
    "reqs/env.py": "class BuildEnvironment:\n    def version(self):\n        return 1\n",
    "reqs/models.py": (
        "class Response:\n"
        "    def iter_content(self):\n"
        "        def generate():\n"
        "            for chunk in self.raw.stream(10, decode_content=True):\n"
        "                yield chunk\n"
        "        return generate()\n"
    ),
    "test_reqs.py": (
        "import unittest\n\nfrom reqs.sessions import Session\n\n\n"
        "class RequestsTestCase(unittest.TestCase):\n"
        "    def test_request(self):\n        Session().request('GET', 'u')\n"
    ),
}


# --- localization -----------------------------------------------------------------------------


def test_template_and_environment_sections_are_not_read() -> None:
    text = ("Redirects lose the method\n\n### Environment\n\n- Build environment version 3\n\n"
            "### Your project\n\nextension project\n\n### Description\n\nThe redirect drops it.")
    prose, _ = issue_prose(text)
    assert "environment" not in prose.lower().split("redirects lose")[1]
    assert "extension project" not in prose


def test_names_in_an_issue_are_its_code_not_builtins() -> None:
    names = names_in("`flask.Config.from_file()` opens in text mode; the built-in `open()` "
                     "and `dict` do not; see requests/sessions.py and resolve_redirects.")
    assert names[:1] == ["flask.Config.from_file"]
    assert "requests/sessions.py" in names
    assert "resolve_redirects" in names
    assert "open" not in names
    assert "dict" not in names


def test_the_entities_an_issue_names_rank_first(tmp_path: Path) -> None:
    repo = _tree(tmp_path, SESSIONS)
    issue = ("`Session.resolve_redirects` copies the original request\n\n"
             "### Environment\n\nBuildEnvironment version 3, python version 3.12\n")
    ev = build_evidence(repo, request=issue)
    ranked = [x.entity for x in ev.localization]
    # the method is inherited: found through its last part, not the `Session` qualifier
    assert ranked[0] == "reqs.sessions.SessionRedirectMixin.resolve_redirects"
    assert "reqs.env.BuildEnvironment" not in ranked  # the template section is not read


def test_quoted_source_lines_and_traceback_frames_localize(tmp_path: Path) -> None:
    repo = _tree(tmp_path, SESSIONS)
    quoted = "method problem\nIn reqs/sessions.py is a command:\n\nmethod = builtin_str(method)\n"
    ev = build_evidence(repo, request=quoted)
    assert ev.localization[0].entity == "reqs.sessions.Session.request"
    tb = ("socket error not wrapped\n\n```\n"
          '  File "/venv/site-packages/reqs/models.py", line 4, in generate\n'
          "    for chunk in self.raw.stream(10, decode_content=True):\n"
          "socket.error: [Errno 104] Connection reset by peer\n```\n")
    ev = build_evidence(repo, request=tb)
    # the nested `generate` has no recon node: the frame lands in what encloses it
    assert ev.localization[0].entity == "reqs.models.Response.iter_content"


def test_lexical_overlap_ranks_below_a_named_entity() -> None:
    nodes = [ReconNode(id="m.load_config", kind="function", file="m.py", line=1),
             ReconNode(id="m.config_loader_for_config", kind="function", file="m.py", line=5)]
    score = localize("the config loader is slow in `load_config`", nodes)
    assert score["m.load_config"] == 1.0
    assert 0 < score["m.config_loader_for_config"] <= 0.6


def test_a_frame_of_the_installed_package_finds_its_file_below_src() -> None:
    nodes = [ReconNode(id="pkg.io.saferepr", kind="module", file="src/pkg/io/saferepr.py"),
             ReconNode(id="pkg.io.saferepr.saferepr", kind="function",
                       file="src/pkg/io/saferepr.py", line=3),
             ReconNode(id="pkg.hooks", kind="module", file="src/pkg/hooks.py")]
    tb = ("crash in repr\n\n```\n"
          '  File "/usr/lib/python3.8/site-packages/pkg/io/saferepr.py", line 4, in saferepr\n'
          '  File "/usr/lib/python3.8/site-packages/pluggy/hooks.py", line 9, in __call__\n'
          "```\n")
    score = localize(tb, nodes)
    assert score["pkg.io.saferepr.saferepr"] == 1.0  # the innermost of the project's frames
    assert "pkg.hooks" not in score  # pluggy's hooks.py is not the project's src/pkg/hooks.py


def test_the_innermost_own_frame_ranks_first(tmp_path: Path) -> None:
    repo = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/run.py": "from pkg.conf import load\n\n\ndef main(argv):\n    return load(argv)\n",
        "pkg/conf.py": "def load(argv):\n    raise ValueError(argv)\n",
        "pkg/main_runner_options.py": ("def main_runner_options():\n"
                                       "    return 'main runner options printed'\n"),
    })
    tb = ("main runner options printed with a traceback\n\nThe main runner prints its "
          "options, every runner option, as main runner options do.\n\n```\nTraceback:\n"
          '  File "/home/u/pkg/pkg/run.py", line 5, in main\n'
          '  File "/home/u/pkg/pkg/conf.py", line 2, in load\n'
          "ValueError: -Q\n```\n")
    ev = build_evidence(repo, request=tb)
    # where the error surfaced, above the file the issue's words fit best and the outer frame
    assert ev.localization[0].entity == "pkg.conf.load"


_SCALES = {
    "pkg/__init__.py": "",
    "pkg/plot.py": ("from pkg.scales import Continuous\n\n\nclass Plot:\n"
                    "    def setup(self, data):\n        return Continuous().setup(data)\n"),
    "pkg/scales.py": ("class Nominal:\n    def setup(self, data):\n        return data\n\n\n"
                      "class Continuous:\n    def setup(self, data):\n"
                      "        return data[1] - data[0]\n"),
    "pkg/color_mapping_boolean_data.py": ("def color_mapping_boolean_data():\n"
                                          "    return 'color mapping boolean data'\n"),
}


@pytest.mark.parametrize("frames", [
    # IPython 8: `File PATH:LINE, in QUALNAME(args)`
    ("File ~/code/pkg/pkg/plot.py:6, in Plot.setup(self, data)\n"
     "----> 6 return Continuous().setup(data)\n\n"
     "File ~/code/pkg/pkg/scales.py:8, in Continuous.setup(self, data)\n"
     "----> 8 return data[1] - data[0]\n"),
    # IPython 7: `PATH in FUNC(args)`, its line on the arrow below
    ("~/venv/lib/python3.9/site-packages/pkg/plot.py in setup(self, data)\n"
     "      5     def setup(self, data):\n----> 6         return Continuous().setup(data)\n\n"
     "~/venv/lib/python3.9/site-packages/pkg/scales.py in setup(self, data)\n"
     "      7     def setup(self, data):\n----> 8         return data[1] - data[0]\n"),
])
def test_an_ipython_traceback_localizes_like_pythons(tmp_path: Path, frames: str) -> None:
    repo = _tree(tmp_path, _SCALES)
    tb = ("Color mapping fails with boolean data\n\nColor mapping of boolean data fails: "
          "color mapping boolean data is common.\n\n```python-traceback\n"
          "TypeError                                 Traceback (most recent call last)\n"
          f"{frames}\nTypeError: numpy boolean subtract is not supported\n```\n")
    ev = build_evidence(repo, request=tb)
    # the innermost frame's method, not `Nominal.setup` of the same file and name, nor the
    # file the issue's words fit best
    assert ev.localization[0].entity == "pkg.scales.Continuous.setup"
    assert not any(x.entity == "pkg.scales.Nominal.setup" and x.score >= 0.75
                   for x in ev.localization)


def test_a_call_that_does_not_bind_localizes_the_callee(tmp_path: Path) -> None:
    repo = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/printer.py": ("class Printer:\n    def _print(self, expr, **kwargs):\n"
                           "        return getattr(self, '_print_' + expr)(expr, **kwargs)\n"),
        "pkg/latex.py": ("from pkg.printer import Printer\n\n\nclass Latex(Printer):\n"
                         "    def _print_Pow(self, expr):\n"
                         "        return self._print(expr, exp=2)\n\n"
                         "    def _print_Step(self, expr):\n        return expr\n"),
        "pkg/pretty.py": ("from pkg.printer import Printer\n\n\nclass Pretty(Printer):\n"
                          "    def _print_Step(self, expr):\n        return expr\n"),
    })
    tb = ("latex of a power of a step fails\n\n```\nTraceback (most recent call last):\n"
          '  File "/venv/site-packages/pkg/latex.py", line 6, in _print_Pow\n'
          '  File "/venv/site-packages/pkg/printer.py", line 3, in _print\n'
          "TypeError: _print_Step() got an unexpected keyword argument 'exp'\n```\n")
    score = localize(tb, recon(repo).nodes)
    # the call was made in `Printer._print`, but the error is about `_print_Step`'s signature:
    # the one in latex.py, where the traceback passes, not pretty.py's
    assert max(score, key=lambda e: score[e]) == "pkg.latex.Latex._print_Step"
    assert score["pkg.latex.Latex._print_Step"] == 1.0
    assert score["pkg.printer.Printer._print"] < 1.0
    assert score.get("pkg.pretty.Pretty._print_Step", 0.0) < 1.0


def test_a_callee_written_with_its_class_localizes_that_class(tmp_path: Path) -> None:
    """Python >= 3.10 writes the callee's qualname: `RST.__init__()` is RST's constructor, not
    one of every `__init__`; RST only inheriting it, RST is where an override goes."""
    repo = _tree(tmp_path, {
        "io/__init__.py": "",
        "io/core.py": ("def get_writer(Writer, **kwargs):\n    return Writer(**kwargs)\n\n\n"
                       "class Base:\n    def __init__(self):\n        pass\n"),
        "io/fixed.py": ("from io.core import Base\n\n\nclass Fixed(Base):\n"
                        "    def __init__(self, header_rows=None):\n"
                        "        self.rows = header_rows\n\n"
                        "    def write(self, lines):\n        return lines\n"),
        "io/rst.py": "from io.fixed import Fixed\n\n\nclass RST(Fixed):\n    pass\n",
        "io/html.py": ("from io.core import Base\n\n\nclass HTML(Base):\n"
                       "    def __init__(self, htmldict=None):\n        self.html = htmldict\n\n"
                       "    def write(self, lines):\n        return lines\n"),
    })
    tb = ("Please support header rows in RestructuredText output\n\n```\n"
          "Traceback (most recent call last):\n"
          '  File "/usr/lib/python3/dist-packages/io/core.py", line 2, in get_writer\n'
          "    return Writer(**kwargs)\n"
          "TypeError: RST.__init__() got an unexpected keyword argument 'header_rows'\n```\n")
    score = localize(tb, recon(repo).nodes)
    assert max(score, key=lambda e: score[e]) == "io.rst.RST"
    assert score["io.rst.RST"] == 1.0
    assert score["io.core.get_writer"] < 1.0  # where the call was made, a frame only
    # a method the class defines is that one, wherever the traceback passes
    score = localize(tb.replace("RST.__init__()", "HTML.write()").replace(
        "got an unexpected keyword argument 'header_rows'", "takes 2 positional arguments"),
        recon(repo).nodes)
    assert max(score, key=lambda e: score[e]) == "io.html.HTML.write"
    assert score.get("io.fixed.Fixed.write", 0.0) < 1.0


def test_a_frame_in_a_file_since_renamed_finds_its_function(tmp_path: Path) -> None:
    """The reporter's release had pkg/_core.py; at the commit it is pkg/_oldcore.py. The
    frame's function is found there by name (of two so named, the one nearer the frame's
    line); a frame of another package's file of the same name is not the repository's."""
    lookup = "    def _lookup_single(self, key):\n        return self.table[key]\n"
    repo = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/_oldcore.py": ("class Hue:\n" + lookup + "\n\n" + "# size\n" * 40
                            + "class Size:\n" + lookup),
        "pkg/grid.py": "class Grid:\n    def map(self, func):\n        return func()\n",
    })
    tb = ("Grid errors with hue assigned in map\n\n```\n"
          "TypeError                                 Traceback (most recent call last)\n"
          "<ipython-input-3-46dd21e9c95a> in <module>\n----> 4 g.map(f)\n\n"
          "~/env/lib/python3.8/site-packages/pkg/grid.py in map(self, func)\n"
          "----> 3         return func()\n\n"
          "~/env/lib/python3.8/site-packages/pkg/_core.py in _lookup_single(self, key)\n"
          "----> 3         return self.table[key]\n\nTypeError: 'NoneType' object\n```\n")
    score = localize(tb, recon(repo).nodes)
    assert max(score, key=lambda e: score[e]) == "pkg._oldcore.Hue._lookup_single"
    assert score.get("pkg._oldcore.Size._lookup_single", 0.0) < score["pkg.grid.Grid.map"]
    other = localize(tb.replace("site-packages/pkg/_core.py", "site-packages/other/_core.py"),
                     recon(repo).nodes)
    assert max(other, key=lambda e: other[e]) == "pkg.grid.Grid.map"
    assert other.get("pkg._oldcore.Hue._lookup_single", 0.0) < 0.5  # the issue's words only


def test_a_bare_name_many_methods_share_names_the_one_function() -> None:
    nodes = [ReconNode(id="sym.refine", kind="module", file="sym/refine.py"),
             ReconNode(id="sym.refine.refine", kind="function", file="sym/refine.py", line=1),
             *[ReconNode(id=f"sym.m{i}.C{i}.refine", kind="method", file=f"sym/m{i}.py", line=2)
               for i in range(5)]]
    score = localize("`refine()` does not simplify complex arguments", nodes)
    assert max(score, key=lambda e: score[e]) == "sym.refine.refine"
    assert not any(e.endswith(".C0.refine") and s >= 0.75 for e, s in score.items())


def test_plain_words_of_quoted_output_name_nothing() -> None:
    nodes = [ReconNode(id="fmt.TokenWrapper.line", kind="method", file="fmt.py", line=3),
             ReconNode(id="conf.PylintRun", kind="class", file="conf.py", line=1)]
    score = localize("traceback printed\n\nThe top part is handy:\n"
                     "`Command line:1:0: E0015: Unrecognized option found: Q`, as is `PylintRun`",
                     nodes)
    assert score.get("fmt.TokenWrapper.line", 0.0) < 0.75  # `line` is a word of the output
    assert score["conf.PylintRun"] == 1.0  # a name written as code in a span still counts


def test_two_words_the_code_writes_as_one_find_the_file() -> None:
    sources = {"sphinx/builders/manpage.py": "class ManualPageBuilder:\n    name = 'man'\n",
               "sphinx/application.py": ("class Sphinx:\n    def build(self, directories):\n"
                                         "        'build the section directories'\n")}
    scores = file_scores("Generate man page section directories", sources)
    assert max(scores, key=lambda f: scores[f]) == "sphinx/builders/manpage.py"


def test_of_two_written_names_the_one_where_the_issue_words_are_goes_first(
        tmp_path: Path) -> None:
    repo = _tree(tmp_path, {
        "sym/__init__.py": "",
        "sym/functions.py": "class Max:\n    def eval(self):\n        return 1\n",
        "sym/mathematica.py": ("def mathematica_code(expr):\n"
                               "    'mathematica code printer output'\n    return str(expr)\n"),
    })
    ev = build_evidence(repo, request="mathematica_code gives wrong output with `Max`\n\n"
                                      "The mathematica printer output is wrong.")
    assert ev.localization[0].entity == "sym.mathematica.mathematica_code"
    assert {x.entity for x in ev.localization} >= {"sym.functions.Max"}


# --- recon: tests and unique ids --------------------------------------------------------------


def test_unittest_and_django_test_classes_are_tests(tmp_path: Path) -> None:
    repo = _tree(tmp_path, {
        "app/__init__.py": "",
        "app/models.py": "class Item:\n    pass\n",
        "app/tests.py": ("from django.test import TestCase\n"
                         "from app.models import Item\n\n\n"
                         "class ItemTests(TestCase):\n"
                         "    def test_item(self):\n        Item()\n\n\n"
                         "class Helper:\n    def test_like(self):\n        pass\n"),
        "test_x.py": ("import unittest\n\n\nclass Checks(unittest.TestCase):\n"
                      "    def test_a(self):\n        pass\n"),
    })
    kinds = {n.id: n.kind for n in recon(repo).nodes}
    assert kinds["app.tests.ItemTests"] == kinds["app.tests.ItemTests.test_item"] == "test"
    assert kinds["test_x.Checks"] == kinds["test_x.Checks.test_a"] == "test"
    assert kinds["app.tests.Helper"] == "class"  # not every class of a test file is a test
    assert kinds["app.tests.Helper.test_like"] == "method"


def test_a_package_class_beside_a_same_named_module_gets_its_own_id(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[
                                                                         str]) -> None:
    repo = _tree(tmp_path / "repo", {
        "pkg/__init__.py": ("class foo:\n    def bar(self):\n        return 1\n\n\n"
                            "def use():\n    return foo().bar()\n"),
        "pkg/foo.py": "def bar():\n    return 2\n",
    })
    ids = [n.id for n in recon(repo).nodes]
    assert len(ids) == len(set(ids))
    assert {"pkg.foo", "pkg.foo.bar", "pkg.__init__.foo", "pkg.__init__.foo.bar"} <= set(ids)
    (tmp_path / "req.md").write_text("Fix `foo.bar` so it returns 3\n", encoding="utf-8")
    ev = tmp_path / "e.json"
    assert main(["recon", str(repo), "-o", str(ev)]) == 0
    # plan --evidence (recon output) plans wherever plan does
    for extra in ([], ["--evidence", str(ev)]):
        capsys.readouterr()
        code = main(["plan", str(tmp_path / "req.md"), "--repo", str(repo),
                     "--state", str(tmp_path / f"st{len(extra)}"), *extra])
        assert code == 0, capsys.readouterr().err


# --- the builtin decomposer, sized to the fix -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("`Session.resolve_redirects` copies the original request", "body"),
        ("Add a file mode parameter to `Config.from_file`", "compatible"),
        ("varnames gains a keyword-only flag", "compatible"),
        ("Drop the `timeout` parameter from `call_historic`", "breaking"),
        ("`send` no longer takes `proxies`", "breaking"),
        ("`reindex` should support a `fill_value` argument", "compatible"),
        # an interface word with nothing changing it: a bug in the body
        ("uniq modifies list argument", "body"),
        ("expr.atoms() should return objects with no args instead of subclasses of Atom", "body"),
        ("Traceback printed for unrecognized option. Add a check.", "body"),
    ],
)
def test_the_interface_change_is_what_the_request_says(text: str, shape: str) -> None:
    assert interface_change(text) == shape


def _fan_evidence(consumers: int) -> Evidence:
    """`core.f` with `consumers` callers, each a sig_change consumer with its own test."""
    nodes = [ReconNode(id="core", kind="module", file="core.py", line=1),
             ReconNode(id="core.f", kind="function", file="core.py", line=1),
             ReconNode(id="tests.test_core", kind="module", file="tests/test_core.py", line=1)]
    edges, impact = [], []
    for i in range(consumers):
        nodes.append(ReconNode(id=f"use{i}.g", kind="function", file=f"use{i}.py", line=1))
        nodes.append(ReconNode(id=f"use{i}", kind="module", file=f"use{i}.py", line=1))
        edges.append(ReconEdge(src=f"use{i}.g", dst="core.f", kind="calls"))
        impact.append(ImpactEdge(src="core.f", dst=f"use{i}.g", relation="CalledBy",
                                 cause="sig_change", confidence=0.9))
    return Evidence(recon=Recon(nodes=nodes, edges=edges), impact={"edges": impact},
                    localization=[Localization(entity="core.f", score=1.0)])


def _req(goal: str) -> dict[str, object]:
    return {"goal": goal, "acceptance_criteria": [goal], "constraints": []}


def test_a_body_fix_modifies_the_located_entity_only() -> None:
    obs = derive(_req("`f` returns the wrong total"), _fan_evidence(5))
    modified = [o.target_entity for o in obs if o.obligation == "modify" and "::" not in
                o.target_entity and o.status != "alternative"]
    assert modified == ["core.f"]
    assert not any("widen it" in o.caused_by for o in obs)  # no signature-change shape


def test_a_compatible_widening_rebinds_its_direct_callers_only() -> None:
    ev = _fan_evidence(3)
    ev.impact.edges.append(ImpactEdge(src="use0.g", dst="use1.g", relation="CalledBy",
                                      cause="sig_change", confidence=0.9))
    obs = derive(_req("Add an optional `mode` parameter to `f`"), ev)
    mods = sorted(o.target_entity for o in obs if o.obligation == "modify"
                  and o.target_entity.startswith("use") and o.status != "alternative")
    assert mods == ["use0.g", "use1.g", "use2.g"]  # f's callers, not onward through use0.g
    assert any("widen it" in o.caused_by for o in obs if o.target_entity == "core.f")


def test_a_breaking_change_with_many_callers_stays_within_the_fan_in_cap(tmp_path: Path) -> None:
    ev = _fan_evidence(20)
    obs = derive(_req("Drop the `strict` parameter from `f`"), ev)
    rebinds = [o for o in obs if o.obligation == "modify" and o.target_entity.startswith("use")]
    assert len(rebinds) == 20
    assert max(len(o.dependencies) for o in obs) <= caps.BUILTIN_MAX_FAN_IN
    repo = _tree(tmp_path, {"core.py": "def f(strict=True):\n    return 1\n",
                            **{f"use{i}.py": "from core import f\n\n\ndef g():\n    return f()\n"
                               for i in range(20)}})
    p = Planner.create("Drop the `strict` parameter from `f`", repo=repo, evidence=ev,
                       state_dir=tmp_path / "st", plan_id="fan", now="2026-01-01T00:00:00Z")
    assert len(p.artifact.nodes) <= caps.MAX_NODES  # the planner accepted its own plan


def test_a_new_test_goes_where_the_repo_keeps_its_tests() -> None:
    nodes = [ReconNode(id="reqs.sessions.Session.request", kind="method",
                       file="reqs/sessions.py", line=3),
             ReconNode(id="test_reqs", kind="module", file="test_reqs.py", line=1)]
    ev = Evidence(recon=Recon(nodes=nodes),
                  localization=[Localization(entity="reqs.sessions.Session.request", score=1.0)])
    obs = derive(_req("the method = builtin_str(method) problem no longer occurs"), ev)
    defined = [o.target_entity for o in obs if "::" in o.target_entity]
    assert defined
    assert all(t.startswith("test_reqs.py::") for t in defined)


def test_a_new_test_file_never_takes_a_test_packages_name() -> None:
    nodes = [ReconNode(id="pkg.utils.f", kind="function", file="pkg/utils.py", line=1),
             ReconNode(id="tests.test_a", kind="module", file="tests/test_a.py", line=1),
             ReconNode(id="tests.test_b", kind="module", file="tests/test_b.py", line=1),
             ReconNode(id="tests.test_utils", kind="module", file="tests/test_utils/__init__.py",
                       line=1),
             ReconNode(id="tests.test_utils.test_x", kind="module",
                       file="tests/test_utils/test_x.py", line=1)]
    ev = Evidence(recon=Recon(nodes=nodes),
                  localization=[Localization(entity="pkg.utils.f", score=1.0)])
    obs = derive({"goal": "Fix `f`", "acceptance_criteria": ["empty input is handled"],
                  "constraints": []}, ev)
    files = {o.target_entity.split("::")[0] for o in obs if "::" in o.target_entity}
    assert files
    assert all(f.startswith("tests/") for f in files)
    assert "tests/test_utils.py" not in files


def test_the_benchmark_reads_the_official_test_list_encoding() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "real_issues_data", Path(__file__).parents[1] / "benchmarks" / "real_issues_data.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    encoded = json.dumps(["tests/test_a.py::test_x", "tests/test_a.py::test_y[1-2]"])
    assert mod.test_list(encoded) == ["tests/test_a.py::test_x", "tests/test_a.py::test_y[1-2]"]
    assert mod.test_list(["t.py::a"]) == ["t.py::a"]
    patch = ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -2,3 +2,3 @@ def f():\n"
             "     a = 1\n-    b = 2\n+    b = 3\n     return a\n")
    assert mod.patch_lines(patch) == {"m.py": {3}}
