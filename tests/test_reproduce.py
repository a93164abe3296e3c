"""Running the issue's reproduction (plan --reproduce): which code of an issue runs, what the run
records in the repository's own interpreter, and how it steers localization."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _smallplan import cli, cli_env, make_repo

from plan07.evidence import build_evidence
from plan07.evidence.repro import Reproduction, executed_entities, parse_record, snippets
from plan07.gate.reproduce import reproduce

# ---------------------------------------------------------------------------------------------
# which code of an issue runs


def test_a_fenced_python_block_runs_and_its_neighbours_do_not() -> None:
    issue = """Saving fails.

```python
from shop.cart import Cart
Cart([]).summary()
```

```
Traceback (most recent call last):
  File "x.py", line 2, in <module>
ZeroDivisionError: division by zero
```

```sh
$ pip install shop
```

```yaml
key: value
```
"""
    assert snippets(issue) == ["from shop.cart import Cart\nCart([]).summary()"]


def test_an_interactive_session_runs_its_input_lines_only() -> None:
    issue = """In a shell:

    >>> from shop.cart import Cart
    >>> c = Cart([1,
    ...           2])
    >>> c.summary()
    3.0

and in IPython:

```
In [1]: from shop.pricing import average

In [2]: average([])
---------------------------------------------------------------------------
ZeroDivisionError
```
"""
    assert snippets(issue) == [
        "from shop.cart import Cart\nc = Cart([1,\n          2])\nc.summary()",
        "from shop.pricing import average\naverage([])",
    ]


def test_output_and_prose_in_a_fence_are_not_code() -> None:
    assert snippets("```\n3.0\n```\n\n```\nthe result is wrong\n```\n") == []
    assert snippets("no code at all") == []


# ---------------------------------------------------------------------------------------------
# the run, in a real interpreter (plan07's own: the tiny repo needs nothing else)

SHOP = {
    "shop/__init__.py": "",
    "shop/pricing.py": ("def average(prices):\n"
                        "    return sum(prices) / len(prices)\n\n\n"
                        "def discount(price, rate):\n    return price * (1 - rate)\n"),
    "shop/cart.py": ("from shop.pricing import average\n\n\n"
                     "class Cart:\n"
                     "    '''A cart of prices; its summary is the average price.'''\n\n"
                     "    def __init__(self, prices):\n        self.prices = list(prices)\n\n"
                     "    def summary(self):\n        '''The average price of the cart.'''\n"
                     "        return average(self.prices)\n"),
}

EMPTY_CART = """Cart summary crashes for an empty cart

The summary of an empty cart should be 0, not a crash:

```python
from shop.cart import Cart
Cart([]).summary()
```
"""


def test_a_raising_reproduction_records_its_frames_and_calls(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files=SHOP)
    rep = reproduce(repo, EMPTY_CART, python=sys.executable)
    assert rep is not None
    assert rep.problem is None, rep
    assert (rep.snippets, rep.ran, rep.timed_out) == (1, 1, False)
    kind, _, frames = rep.errors[-1]
    assert kind == "ZeroDivisionError"
    assert [(f.file, f.func) for f in frames] == [("shop/cart.py", "summary"),
                                                  ("shop/pricing.py", "average")]
    assert {name for _, _, name in rep.calls} == {"__init__", "summary", "average"}
    assert "raised ZeroDivisionError at shop/pricing.py:2" in rep.summary()


def test_the_raised_frame_localizes_the_fix(tmp_path: Path) -> None:
    """The issue names Cart.summary (called); where the error surfaced is pricing.average."""
    repo = make_repo(tmp_path, files=SHOP)
    plain = build_evidence(repo, request=EMPTY_CART).localization[0].entity
    rep = reproduce(repo, EMPTY_CART, python=sys.executable)
    ran = build_evidence(repo, request=EMPTY_CART, reproduction=rep).localization[0].entity
    assert plain != "shop.pricing.average"
    assert ran == "shop.pricing.average"


FORMAT = {
    "shop/__init__.py": "",
    "shop/money.py": ("def money(amount):\n    return '%.2f' % amount\n"),
    # words of the issue everywhere, never run by its reproduction
    "shop/legacy.py": ("'''Legacy money formatting: rounding of money amounts, money rounding\n"
                       "rules, half-up money rounding for amounts.'''\n\n\n"
                       "def money_round(amount):\n    '''Money rounding of an amount.'''\n"
                       "    return round(amount, 2)\n\n\n"
                       "def legacy_amount(amount):\n    return money_round(amount)\n"),
}

ROUNDING = """Money rounding of amounts is wrong

Rounding money amounts gives 2.67 where 2.68 is expected:

```python
from shop.money import money
print(money(2.675))
```
"""


def test_a_file_the_reproduction_never_entered_ranks_below_one_it_ran(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files=FORMAT)
    plain = build_evidence(repo, request=ROUNDING).localization[0].entity
    rep = reproduce(repo, ROUNDING, python=sys.executable)
    assert rep is not None
    assert not rep.errors
    assert rep.executed_files == {"shop/money.py"}
    ran = build_evidence(repo, request=ROUNDING, reproduction=rep).localization[0].entity
    assert plain.startswith("shop.legacy.")
    assert ran == "shop.money.money"


def test_the_reproduction_runs_outside_the_repository_without_credentials(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path, files=SHOP)
    monkeypatch.setenv("SHOP_API_TOKEN", "s3cr3t-value-123")
    issue = ("Leaks:\n\n```python\nimport os\nopen('written.txt', 'w').write('x')\n"
             "if os.environ.get('SHOP_API_TOKEN'):\n    raise RuntimeError('token visible')\n"
             "from shop.pricing import discount\ndiscount(10, 0.5)\n```\n")
    rep = reproduce(repo, issue, python=sys.executable)
    assert rep is not None
    assert (rep.errors, rep.ran) == ([], 1)
    assert not (repo / "written.txt").exists()


def test_a_reproduction_that_never_ends_is_cut_at_its_budget(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files=SHOP)
    issue = ("Hangs:\n\n```python\nfrom shop.pricing import discount\ndiscount(1, 0)\n"
             "while True:\n    pass\n```\n")
    rep = reproduce(repo, issue, python=sys.executable, budget=1.0)
    assert rep is not None
    assert (rep.timed_out, rep.ran) == (True, 0)
    assert ("shop/pricing.py", 5, "discount") in rep.calls  # recorded before the cut


def test_an_interpreter_that_cannot_run_it_is_a_problem_not_an_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files=SHOP)
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'no python here' >&2\nexit 3\n")
    broken.chmod(0o755)
    rep = reproduce(repo, EMPTY_CART, python=broken)
    assert rep is not None
    assert rep.problem is not None
    assert "exited 3: no python here" in rep.problem
    assert reproduce(repo, "No code here.", python=sys.executable) is None


def test_an_import_the_environment_lacks_is_a_problem(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files=SHOP)
    rep = reproduce(repo, "```python\nimport shop_not_installed\nshop_not_installed.go()\n```",
                    python=sys.executable)
    assert rep is not None
    assert rep.problem is not None
    assert "import failed: No module named 'shop_not_installed'" in rep.problem
    assert rep.summary().startswith("the reproduction told nothing")


def test_a_missing_optional_import_is_no_problem_when_the_rest_ran(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files=SHOP)
    issue = ("```python\nimport not_installed_plotting\n```\n\n"
             "```python\nfrom shop.pricing import discount\ndiscount(4, 0.5)\n```")
    rep = reproduce(repo, issue, python=sys.executable)
    assert rep is not None
    assert rep.problem is None
    assert ("shop/pricing.py", 5, "discount") in rep.calls
    assert not rep.complete  # the first snippet was cut short: no file is demoted


def test_a_record_of_another_shape_is_a_problem() -> None:
    assert parse_record([1, 2], 1).problem == "the run left no record"
    assert parse_record({"calls": [["f.py", "x"]]}, 1).problem == "the run's record is malformed"


def test_calls_map_to_the_nearest_definition_at_or_after_the_code_line() -> None:
    from plan07.model import ReconNode

    nodes = [ReconNode(id="m", kind="module", file="m.py", line=1),
             ReconNode(id="m.A.go", kind="method", file="m.py", line=4),
             ReconNode(id="m.B.go", kind="method", file="m.py", line=9)]
    rep = Reproduction(calls={("m.py", 8, "go"): 2, ("m.py", 3, "go"): 1, ("x.py", 1, "go"): 5})
    assert executed_entities(rep, nodes) == {"m.B.go": 2, "m.A.go": 1}


def test_names_the_session_had_imported_are_taken_from_the_repository(tmp_path: Path) -> None:
    """An issue's session never shows its imports: `average` (a module-level def), `shop` (the
    package), `Cart` (exported by the package) are found; `_` is the last value; a name the
    repository does not define stays an error."""
    repo = make_repo(tmp_path, files={**SHOP, "shop/__init__.py": "from shop.cart import Cart\n"})
    issue = ("```\n>>> Cart([2, 4]).summary()\n3.0\n>>> shop.pricing.discount(_, 0.5)\n1.5\n"
             ">>> average([])\n```\n\nand\n\n```python\nundefined_thing()\n```\n")
    rep = reproduce(repo, issue, python=sys.executable)
    assert rep is not None
    assert rep.supplied == ["Cart", "shop", "average"]
    assert [(k, m) for k, m, _ in rep.errors] == [
        ("ZeroDivisionError", "division by zero"),
        ("NameError", "name 'undefined_thing' is not defined")]
    assert ("shop/pricing.py", 5, "discount") in rep.calls


def test_names_spelled_as_the_repository_imports_them(tmp_path: Path) -> None:
    """`sp` is what the repository's own tests call shop.pricing; `os` is imported plainly; a
    package's submodule is no session's variable (`app` below is the reporter's object)."""
    repo = make_repo(tmp_path, files={
        **SHOP, "tests/test_p.py": "import os\nimport shop.pricing as sp\n",
        "shop/app.py": "", "shop/__init__.py": "from shop import app\n",
        # an environment inside the repository writes imports its own way: not read
        **{f"myenv/lib/m{i}.py": "import shop.cart as sp\n" for i in range(3)},
        "myenv/pyvenv.cfg": "home = /usr/bin\n"})
    issue = "```python\nos.getcwd()\nsp.discount(4, 0.5)\napp.run()\n```"
    rep = reproduce(repo, issue, python=sys.executable)
    assert rep is not None
    assert rep.supplied == ["os", "sp"]
    assert [(k, m) for k, m, _ in rep.errors] == [("NameError", "name 'app' is not defined")]
    assert ("shop/pricing.py", 5, "discount") in rep.calls


def test_a_snippet_cut_short_is_no_evidence_against_a_file(tmp_path: Path) -> None:
    """Cut by a name nothing supplies, or by the reporter's network or files: the calls it made
    before do not demote the files it never reached, and an OSError's frames are not where the
    issue is."""
    repo = make_repo(tmp_path, files={
        **FORMAT, "shop/data.py": ("def fetch(name):\n    return open('/no/such/' + name)\n\n\n"
                                   "def chart():\n    import not_installed_charts\n")})
    plain = build_evidence(repo, request=ROUNDING).localization[0].entity
    cut = ROUNDING.replace("print(money(2.675))", "print(money(2.675))\nprint(reporters_helper())")
    rep = reproduce(repo, cut, python=sys.executable)
    assert rep is not None
    assert (rep.partial, rep.complete) == (True, False)
    assert build_evidence(repo, request=cut, reproduction=rep).localization[0].entity == plain
    offline = ROUNDING.replace("print(money(2.675))",
                               "from shop.data import fetch\nfetch('rates.csv')")
    rep = reproduce(repo, offline, python=sys.executable)
    assert rep is not None
    assert [k for k, _, _ in rep.errors] == ["FileNotFoundError"]
    assert rep.errors[0][2][-1].file == "shop/data.py"  # recorded,
    assert rep.frames == []  # but not read as the issue's traceback
    assert not rep.complete
    # nor an optional module missing here, raised inside the project (a repr's plotting helper)
    rep = reproduce(repo, ROUNDING.replace("print(money(2.675))",
                                           "from shop.data import chart\nchart()"),
                    python=sys.executable)
    assert rep is not None
    assert [k for k, _, _ in rep.errors] == ["ModuleNotFoundError"]
    assert rep.errors[0][2][-1].func == "chart"
    assert rep.frames == []


def test_a_value_is_shown_as_a_session_shows_it_and_a_wrapped_error_points_inside(
        tmp_path: Path) -> None:
    """A notebook displays a cell's value (`_repr_png_`: a plot renders only then); an error
    raised `from` another points where the other broke."""
    repo = make_repo(tmp_path, files={"plot/__init__.py": "", "plot/core.py": (
        "from plot.scales import setup\n\n\nclass Plot:\n"
        "    def _repr_png_(self):\n        return self.render()\n\n"
        "    def render(self):\n        try:\n            setup(True)\n"
        "        except TypeError as err:\n"
        "            raise ValueError('scale setup failed') from err\n"),
        "plot/scales.py": ("def setup(flag):\n    return flag - None\n\n\n"
                           "def lookup(table, key):\n    try:\n        return table[key]\n"
                           "    except KeyError:\n"
                           "        raise LookupError('no ' + key)\n")})
    rep = reproduce(repo, "```python\nfrom plot.core import Plot\nPlot()\n```",
                    python=sys.executable)
    assert rep is not None
    kind, msg, frames = rep.errors[-1]
    assert (kind, msg) == ("ValueError", "scale setup failed")
    assert [(f.file, f.func) for f in frames][-1] == ("plot/scales.py", "setup")
    assert ("plot/core.py", 8, "render") in rep.calls
    # a KeyError handled when another was raised is no cause: the raise is where it broke
    rep = reproduce(repo, "```python\nfrom plot.scales import lookup\nlookup({}, 'x')\n```",
                    python=sys.executable)
    assert rep is not None
    assert [(f.func, f.line) for f in rep.errors[-1][2]] == [("lookup", 9)]  # not 7


def test_a_preamble_runs_first_from_the_flag_or_the_repository_config(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files={
        **SHOP, "pyproject.toml": '[tool.plan07]\nreproduce-preamble = "cart = [2, 4]"\n'})
    issue = "```python\nfrom shop.pricing import average\nprint(average(cart))\n```"
    rep = reproduce(repo, issue, python=sys.executable)
    assert rep is not None
    assert rep.errors == []
    rep = reproduce(repo, issue, python=sys.executable, preamble="cart = []")
    assert rep is not None
    assert [k for k, _, _ in rep.errors] == ["ZeroDivisionError"]
    rep = reproduce(repo, issue, python=sys.executable, preamble="raise KeyError('x')")
    assert rep is not None
    assert rep.problem == "the preamble failed: KeyError: 'x'"


def test_a_preamble_that_is_not_python_is_refused(tmp_path: Path) -> None:
    from plan07.errors import InputError

    repo = make_repo(tmp_path, files={
        **SHOP, "pyproject.toml": '[tool.plan07]\nreproduce-preamble = "from import"\n'})
    with pytest.raises(InputError, match="reproduce-preamble is not Python: invalid syntax"):
        reproduce(repo, EMPTY_CART, python=sys.executable)
    with pytest.raises(InputError, match="--reproduce-preamble"):
        reproduce(repo, EMPTY_CART, python=sys.executable, preamble="x = (")


# ---------------------------------------------------------------------------------------------
# through the CLI


def test_plan_reproduce_says_what_the_run_showed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files=SHOP)
    (tmp_path / "issue.md").write_text(EMPTY_CART)
    state = tmp_path / "state"
    r = cli("plan", str(tmp_path / "issue.md"), "--repo", str(repo), "--state", str(state),
            "--python", sys.executable, "--reproduce", "--quiet", "--json", env=cli_env())
    assert r.returncode == 0, r.stderr
    assert "reproduction: 1/1 snippet(s) ran" in r.stderr
    assert "raised ZeroDivisionError at shop/pricing.py:2" in r.stderr
    assert '"shop.pricing.average"' in r.stdout


def test_plan_refuses_a_bad_preamble_and_writes_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files=SHOP)
    (tmp_path / "issue.md").write_text(EMPTY_CART)
    state = tmp_path / "state"
    r = cli("plan", str(tmp_path / "issue.md"), "--repo", str(repo), "--state", str(state),
            "--python", sys.executable, "--reproduce", "--reproduce-preamble", "def (",
            "--quiet", env=cli_env())
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert "reproduce-preamble is not Python" in r.stderr
    assert not state.exists() or not (state / "plan.json").exists()


def test_recon_reproduce_localizes_where_the_run_raised(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files=SHOP)
    (tmp_path / "issue.md").write_text(EMPTY_CART)
    r = cli("recon", str(repo), "--request", str(tmp_path / "issue.md"), "--reproduce",
            "--python", sys.executable, "-o", str(tmp_path / "ev.json"), "--quiet", "--json",
            env=cli_env())
    assert r.returncode == 0, r.stderr
    assert "reproduction: 1/1 snippet(s) ran" in r.stderr
    assert json.loads(r.stdout)["localization"][0] == "shop.pricing.average"
    r = cli("recon", str(repo), "--reproduce", "--quiet", env=cli_env())
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "error: --reproduce: --reproduce runs the request's code: pass --request FILE"]
