"""Tests where the repository keeps them (README "Tests where the repository keeps them"): the
repo's pytest layout, the tests of a target (linked, else importing), the test module a new test
goes into, and where a new file goes."""

from __future__ import annotations

from pathlib import Path

import pytest

from plan07.evidence import build_evidence
from plan07.evidence.layout import read_layout
from plan07.evidence.testmap import TestMap, mirrors, named_after
from plan07.vocab import subject


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


PKG = {
    "pkg/__init__.py": "from pkg.calc import Calc\n",
    "pkg/calc.py": "class Calc:\n    def add(self, a, b):\n        return a + b\n\n"
                   "    def sub(self, a, b):\n        return a - b\n",
    "pkg/io.py": "def load(path):\n    return open(path).read()\n",
    # reaches Calc.add only through a partial: recon draws no test edge to it
    "tests/test_calc.py": "import functools\n\nimport pytest\n\nfrom pkg import Calc\n\n\n"
                          "@pytest.fixture\ndef make():\n    return functools.partial(Calc)\n\n\n"
                          "def test_add(make):\n    assert make().add(1, 2) == 3\n",
    "tests/test_other.py": "def test_nothing():\n    pass\n",
    "examples/test_example.py": "def test_demo():\n    pass\n",
}


@pytest.fixture
def tm(tmp_path: Path) -> TestMap:
    return TestMap(build_evidence(write(tmp_path, PKG)))


def test_a_target_tests_are_the_test_modules_importing_it_when_recon_links_none(
        tm: TestMap) -> None:
    assert tm.linked("pkg.calc.Calc.add") == []
    assert tm.tests_for("pkg.calc.Calc.add") == ["tests/test_calc.py"]  # through the package
    assert tm.tests_for("pkg.io.load") == []  # no test imports it


def test_a_module_named_like_a_test_that_defines_none_checks_nothing(tmp_path: Path) -> None:
    """jinja's examples/basic/test_*.py are scripts: pytest collects no test from them (exit
    5), so they are no check of what they import; the test module that has tests is."""
    files = {**PKG, "examples/basic/test_io.py": "from pkg.io import load\n\nload(__file__)\n",
             # reaches load through its module object: recon links no test to it
             "tests/test_io.py": "import pkg.io\n\n\ndef test_load(make_path):\n"
                                 "    assert make_path(pkg.io)\n"}
    tm = TestMap(build_evidence(write(tmp_path, files)))
    assert tm.tests_for("pkg.io.load") == ["tests/test_io.py"]


def test_a_new_test_goes_into_the_test_module_named_after_its_module(tm: TestMap) -> None:
    assert tm.home("pkg.calc.Calc.add") == "tests/test_calc.py"
    assert tm.home("pkg.io.load") is None
    assert tm.new_home("pkg.io.load") == "tests/test_io.py"  # beside the others


def test_the_repos_pytest_layout_decides_what_a_test_is(tmp_path: Path) -> None:
    repo = write(tmp_path, {**PKG, "pytest.ini": "[pytest]\npython_files = check_*.py\n"
                                                 "norecursedirs = examples\n",
                            "tests/check_io.py": "from pkg.io import load\n\n\n"
                                                 "def test_load():\n    load\n"})
    layout = read_layout(repo)
    assert layout.is_test("tests/check_io.py")
    assert not layout.is_test("tests/test_calc.py")  # its python_files replace the defaults
    assert not layout.is_test("examples/check_demo.py")  # a folder pytest never collects
    ev = build_evidence(repo)
    tests = {n.id for n in ev.recon.nodes if n.kind == "test"}
    assert "tests.check_io.test_load" in tests
    assert not any(t.startswith("tests.test_calc.") for t in tests)
    assert TestMap(ev).home("pkg.io.load") == "tests/check_io.py"


@pytest.mark.parametrize(("test_file", "module_file", "named"), [
    ("tests/test_auth.py", "pkg/auth.py", True),
    ("tests/auth_test.py", "pkg/auth.py", True),
    ("tests/checkers/unittest_misc.py", "pylint/checkers/misc.py", True),
    ("testing/python/fixtures.py", "src/_pytest/fixtures.py", True),
    ("tests/test_ext_autodoc.py", "sphinx/ext/autodoc/__init__.py", True),
    ("tests/test_domain_std.py", "sphinx/domains/std.py", True),
    ("tests/test_ext_autodoc_mock.py", "sphinx/ext/autodoc/__init__.py", False),
    ("tests/test_io.py", "pkg/calc.py", False),
])
def test_named_after_follows_the_repositories_naming(test_file: str, module_file: str,
                                                    named: bool) -> None:
    assert named_after(test_file, module_file) is named


def test_a_strengthened_check_runs_the_file_holding_the_targets_tests(tmp_path: Path) -> None:
    """A compile-checked modify gets the tests of its target: the file holding most of them,
    the one named after its module first, not the first by name (jinja2.utils: 18 tests in
    tests/test_utils.py, 2 in tests/test_api.py, and test_api.py was chosen)."""
    from plan07.model import Obligation
    from plan07.plan.repair import _strengthen

    files = {"pkg/__init__.py": "", "pkg/util.py": "def twice(x):\n    return 2 * x\n",
             "tests/test_api.py": "from pkg.util import twice\n\n\ndef test_api():\n"
                                  "    assert twice(1) == 2\n",
             "tests/test_util.py": "from pkg.util import twice\n\n\n" + "".join(
                 f"def test_twice_{i}():\n    assert twice({i}) == {2 * i}\n\n\n"
                 for i in range(3))}
    tm = TestMap(build_evidence(write(tmp_path, files)))
    o = Obligation(id="O1", target_entity="pkg.util", obligation="modify", caused_by="x",
                   dependencies=[], evidence="e", status="ready", validation="compile")
    assert _strengthen([o], "O1", tm)
    assert o.validation == "pytest:tests/test_util.py"


STARRED = {  # sympy's way: the top package star-imports a subpackage that re-exports a class
    "pkg/__init__.py": "from .geo import *\n",
    "pkg/geo/__init__.py": "from .point import Point, _origin\n",
    "pkg/geo/point.py": "def _origin():\n    return 0\n\n\nclass Point:\n"
                        "    def scale(self, k):\n        return k\n",
    "pkg/geo/shape.py": "from pkg.geo.point import Point\n\n\ndef square():\n"
                        "    return [Point() for _ in range(4)]\n",
    # the shapes' tests use Point more often than Point's own tests do
    "tests/test_shape.py": "from pkg.geo.point import Point\nfrom pkg.geo.shape import square\n\n\n"
                           "def test_square():\n    assert Point().scale(2) and square()\n\n\n"
                           "def test_point_in_square():\n    assert Point().scale(3)\n",
    "tests/test_point.py": "from pkg import *\nfrom pkg import _origin\n\n\n"
                           "def test_scale():\n    assert Point().scale(2) == 2\n",
}


def test_a_star_import_reexports_public_names(tmp_path: Path) -> None:
    """`from pkg import Point` through `from .geo import *` reaches the class, and `from pkg import
    *` in a test brings it in scope; a leading underscore is never star-exported."""
    ev = build_evidence(write(tmp_path, STARRED))
    tests = {(e.src, e.dst) for e in ev.recon.edges if e.kind == "tests"}
    assert ("tests.test_point.test_scale", "pkg.geo.point.Point") in tests
    tm = TestMap(ev)
    assert "tests/test_point.py::test_scale" in tm.tests_for("pkg.geo.point.Point")
    assert "tests/test_point.py" not in tm.importing("pkg.geo.point._origin")


def test_a_new_test_is_filed_with_its_modules_tests_before_a_heavier_user(tmp_path: Path) -> None:
    """Where the repository files a module's tests (`test_point.py` for point.py) wins over the
    test module that happens to call the class most (`test_shape.py`, two tests of Point)."""
    tm = TestMap(build_evidence(write(tmp_path, STARRED)))
    assert tm.home("pkg.geo.point.Point.scale") == "tests/test_point.py"


MIRRORED = {
    "setup.cfg": "[tool:pytest]\npython_files = *test_*.py\n",  # pylint's: unittest_*.py too
    "lint/__init__.py": "",
    "lint/reporters/__init__.py": "",
    "lint/reporters/text.py": "class ColorReporter:\n    def __init__(self, style):\n"
                              "        self.style = style\n",
    # the command-line tests call the reporter; the reporting tests only import its module
    "tests/test_self.py": "from lint.reporters.text import ColorReporter\n\n\n"
                          "def test_run_colored():\n    ColorReporter('bold')\n",
    "tests/reporters/unittest_reporting.py": "from lint.reporters import text\n\n\n"
                                             "def test_template():\n    assert text\n",
}


def test_a_new_test_is_filed_in_the_folder_mirroring_its_package(tmp_path: Path) -> None:
    """pylint files a reporter's tests in tests/reporters/ (unittest_reporting.py, which
    imports the module), not in the command-line tests that happen to call the class."""
    tm = TestMap(build_evidence(write(tmp_path, MIRRORED)))
    assert tm.home("lint.reporters.text.ColorReporter.__init__") == \
        "tests/reporters/unittest_reporting.py"


@pytest.mark.parametrize(("test_file", "module_file", "mirrored"), [
    ("tests/reporters/unittest_reporting.py", "pylint/reporters/text.py", True),
    ("sympy/core/tests/test_numbers.py", "sympy/core/numbers.py", True),
    ("testing/io/test_saferepr.py", "src/_pytest/_io/saferepr.py", True),
    ("tests/test_self.py", "pylint/reporters/text.py", False),  # a flat tests/ mirrors nothing
    ("xarray/tests/test_dataarray.py", "xarray/core/dataarray.py", False),
])
def test_mirrors_reads_the_test_folder_as_the_package_path(test_file: str, module_file: str,
                                                           mirrored: bool) -> None:
    assert mirrors(test_file, module_file) is mirrored


@pytest.mark.parametrize(("criterion", "about"), [
    ("`SI._collect_factor_and_dimension()` detects a dimensionless exponent",
     "SI._collect_factor_and_dimension"),
    ("The template variable `members` should not contain imported members when "
     "`autosummary_imported_members` is False", "autosummary_imported_members"),
    ("`refine()` does understand how to simplify complex arguments", "refine"),
    ("fixture scope is displayed with `pytest --fixtures`", None),  # a command line
    ("No entries should be shown because `__all__` is empty", None),  # too short to name tests
    ("simpify does not give `Imaginary coordinates are not permitted.`", None),  # a sentence
])
def test_a_criterions_subject_is_a_code_name_it_writes(criterion: str, about: str | None) -> None:
    assert subject(criterion) == about


def test_tests_named_after_the_whole_name_come_before_more_of_a_part() -> None:
    """`autosummary_imported_members`: one test named after all of it outweighs two named after
    a part of it (sphinx 7686: test_ext_autosummary.py, not test_ext_autodoc.py)."""
    from plan07.model import Evidence

    ids = [("tests/test_autosummary.py", "test_autosummary_imported_members"),
           ("tests/test_autodoc.py", "test_autodoc_imported_members"),
           ("tests/test_autodoc.py", "test_imported_members_are_skipped")]
    ev = Evidence.model_validate({"recon": {"nodes": [
        {"id": f"tests.{f[6:-3]}.{name}", "kind": "test", "file": f} for f, name in ids]}})
    tm = TestMap(ev)
    assert tm.named_for("autosummary_imported_members") == ["tests/test_autosummary.py"]
    assert tm.named_for("imported_members") == ["tests/test_autodoc.py"]
    assert tm.named_for("members") == ["tests/test_autodoc.py"]  # all three: the most
    assert tm.named_for("all") == []  # one word under 6 characters names no test


MIXIN = {
    "pkg/__init__.py": "",
    "pkg/mixins/__init__.py": "",
    "pkg/mixins/arith.py": "class ArithMixin:\n    def multiply(self, k):\n        return k\n",
    "pkg/data.py": "from pkg.mixins.arith import ArithMixin\n\n\nclass Data(ArithMixin):\n"
                   "    pass\n",
    # the mixin's own tests reach it through a class built at run time: recon ties none
    "pkg/mixins/tests/test_arith.py": "import importlib\n\n\ndef test_multiply():\n"
                                      "    data = importlib.import_module('pkg.data')\n"
                                      "    assert data.Data().multiply(2) == 2\n",
    "pkg/tests/test_data.py": "from pkg.data import Data\nfrom pkg.mixins.arith import "
                              "ArithMixin\n\n\ndef test_data():\n"
                              "    assert ArithMixin().multiply(3) == Data().multiply(3)\n",
}


def test_a_new_test_joins_the_module_named_after_its_module_beside_it_though_untied(
        tmp_path: Path) -> None:
    """astropy files NDArithmeticMixin's tests in nddata/mixins/tests/test_ndarithmetic.py,
    which reaches the mixin only through the classes using it: the repository's filing beats
    the test module that happens to import it (test_ccddata.py)."""
    tm = TestMap(build_evidence(write(tmp_path, MIXIN)))
    assert tm.importing("pkg.mixins.arith.ArithMixin.multiply") == ["pkg/tests/test_data.py"]
    assert tm.home("pkg.mixins.arith.ArithMixin.multiply") == "pkg/mixins/tests/test_arith.py"


PACKAGE_NAMED = {
    "lint/__init__.py": "",
    "lint/config/__init__.py": "",
    "lint/config/init.py": "def initialize(args):\n    return args\n",
    # the package's tests import the package; a documentation check imports the function
    "tests/config/test_config.py": "import lint.config\n\n\ndef test_options():\n"
                                   "    assert lint.config\n",
    "doc/test_docs.py": "from lint.config.init import initialize\n\n\ndef test_doc():\n"
                        "    assert initialize([]) == []\n",
}


def test_a_new_test_joins_the_tests_named_after_its_package_in_the_mirroring_folder(
        tmp_path: Path) -> None:
    """pylint's tests of pylint/config/config_initialization.py are in
    tests/config/test_config.py, not in doc/test_messages_documentation.py, which happens to
    import it."""
    tm = TestMap(build_evidence(write(tmp_path, PACKAGE_NAMED)))
    assert tm.importing("lint.config.init.initialize") == ["doc/test_docs.py"]
    assert tm.package_tests("lint/config/init.py") == ["tests/config/test_config.py"]
    assert tm.home("lint.config.init.initialize") == "tests/config/test_config.py"
