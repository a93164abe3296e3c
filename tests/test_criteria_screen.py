"""Criteria from real issue prose (docs/canonicalize.md "What a criterion never is"): expected
behaviour, never a description of the bug, a quote, a code or SQL fragment, or a placeholder;
where none is named, one derived from the headline, phrased as a check."""

from __future__ import annotations

import pytest

from plan07.request.canonicalize import canonicalize
from plan07.request.screen import screen, why_not


@pytest.mark.parametrize(("text", "why"), [
    ("The answer should be `Piecewise(({1}, Eq(x, 1)), (S.EmptySet, True))` or remain "
     "unevaluated", "code"),
    ("Instead, the output should be `array([[2, 2], [3, 5]])`", "code"),
    ("The query should be SELECT name FROM users WHERE id = 1", "code"),
    ("It should run SELECT a FROM t WHERE b GROUP BY c", "SQL"),
    ('"The server MUST respond with a 400 status code to any request that lacks a Host"',
     "a quote"),
    ("not throw error", "a fragment"),
    ("No backslash, a similar output to what I get for", "a fragment"),
    ("It should be shown", "a fragment (a pronoun with nothing it stands for)"),
    ("If you comment out the 2 functions, you'll see that it resolves fine",
     "an instruction to the reader"),
    ("The traceback I don't think is expected & not user-friendly", "an opinion or a hedge"),
    ("It shouldn't be that much of a performance loss to copy the dictionary",
     "an opinion or a hedge"),
    ("Alternatively another separate config value could be introduced", "an alternative, not "
     "the request"),
    ("The top part of the current output is handy", "a description of what happens now"),
    ("the request is met: Bug with milli prefix", "a placeholder"),
])
def test_what_a_criterion_never_is(text: str, why: str) -> None:
    assert why_not(text) == why


@pytest.mark.parametrize("text", [
    "`load(\"\")` should return an empty list",
    "`url_for(\"api.index\")` should return `http://api.example.test/`",
    "The chunked DataArray should still be chunked after the update",
    "src\\gen\\* should not be checked",
    "Running `pylint a` if `a/a.py` is present should succeed",
    "`test_should_skip` is skipped, `test_should_not_skip` is not skipped",
    "An explicit `envvar=` on an option must win over the automatic name",
])
def test_expected_behaviour_is_kept(text: str) -> None:
    assert why_not(text) is None


def test_the_clause_that_states_the_expectation_is_kept() -> None:
    assert screen("Neither of these are great options -- `concat` should have an option (the "
                  "default?) to take care of this for the user", modal=True) == \
        "`concat` should have an option to take care of this for the user"
    assert screen("The routine should give the same answer if duplicates are present; my "
                  "initial guess is that they should be removed", modal=True) == \
        "The routine should give the same answer if duplicates are present"


@pytest.mark.parametrize(("title", "criterion"), [
    ("PolyFit is not robust to missing data", "PolyFit is robust to missing data"),
    ("to_unstacked_dataset broken for single-dim variables",
     "to_unstacked_dataset works for single-dim variables"),
    ("show units in dataset overview", "units are shown in dataset overview"),
    ("Trailing whitespace in DatasetGroupBy text representation",
     "no trailing whitespace in DatasetGroupBy text representation"),
    ("Traceback printed for unrecognized option", "no traceback is printed for unrecognized "
     "option"),
    ("rxg include '\\p{Han}' will throw error", "rxg include '\\p{Han}' does not throw error"),
    ("Module imported twice under import-mode=importlib",
     "Module is imported only once under import-mode=importlib"),
    ("INTERNALERROR when exception in __repr__", "no INTERNALERROR when exception in __repr__"),
    ("Pytest 6: Dynamically adding xfail marker in test no longer ignores failure",
     "Dynamically adding xfail marker in test ignores failure again"),
    ("Error message prints extra code line when using assert in python3.9",
     "Error message prints no extra code line when using assert in python3.9"),
    ("Using rst_prolog removes top level headings containing a domain directive",
     "Using rst_prolog does not remove top level headings containing a domain directive"),
    ("Two sections called Symbols in index", "a single section called Symbols in index"),
    ("Sphinx 3.2 complains about option:: syntax that earlier versions accepted",
     "Sphinx 3.2 does not complain about option:: syntax that earlier versions accepted"),
    ("mathematica_code gives wrong output with Max",
     "mathematica_code gives the correct output with Max"),
    ("Unexpected exception when multiplying geometry.Point and number",
     "multiplying geometry.Point and number raises no exception"),
    ("partitions() reusing the output dictionaries",
     "partitions() is no longer reusing the output dictionaries"),
    ("Bug with milli prefix", "milli prefix works"),
    ("simpify gives `Imaginary coordinates are not permitted.` with evaluate(False)",
     "simpify does not give `Imaginary coordinates are not permitted.` with evaluate(False)"),
    ("pytest --collect-only needs a one char shortcut command",
     "pytest --collect-only has a one char shortcut command"),
    ("Hostname and timestamp properties in generated JUnit XML reports",
     "generated JUnit XML reports include Hostname and timestamp properties"),
])
def test_a_headline_becomes_the_check_that_it_is_handled(title: str, criterion: str) -> None:
    req = canonicalize(f"{title}\n\nSome words about it.")
    assert req.needs_confirmation
    assert req.acceptance_criteria[0] == criterion


def test_a_body_sentence_is_read_for_its_request_not_the_reporters_steps() -> None:
    req = canonicalize("Rewrite fails on a number\n\nWhen I use `pytest -k xxx`, report an "
                       "error: `TypeError: argument of type 'int' is not iterable`.")
    assert req.acceptance_criteria == ["Rewrite does not fail on a number"]
