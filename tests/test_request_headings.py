"""A heading is a section label (acceptance, constraints, noise) only when it reads as one: a
title that is a sentence with such a word inside stays the request's title. Found on a real
commit subject used as a request's title: "Indicate expected content between mismatched tokens
in parse errors" had been read as an "Expected ..." section, and the request as empty."""

from __future__ import annotations

import pytest

from plan07 import canonicalize
from plan07.request.text import _heading_kind, read_request


@pytest.mark.parametrize(("heading", "kind"), [
    ("Expected behavior", "accept"),
    ("What is the expected behaviour?", "accept"),
    ("Acceptance criteria", "accept"),
    ("Definition of done for this change", "accept"),
    ("Constraints", "constraint"),
    ("Python version", "noise"),
    ("Relevant log output", "noise"),
    ("Steps to reproduce the crash", "noise"),
    ("Describe alternatives you've considered", "noise"),
    ("Indicate expected content between mismatched tokens in parse errors", "intent"),
    ("Indicate the expected content", "intent"),
    ("Show compatibility warnings for old configs", "intent"),
    ("Add environment variable support to the loader", "intent"),
])
def test_a_heading_is_a_section_label_only_when_it_reads_as_one(heading: str, kind: str) -> None:
    assert _heading_kind(heading) == kind


def test_a_commit_subject_as_title_is_the_goal() -> None:
    req = canonicalize("# Indicate expected content between mismatched tokens in parse errors\n\n"
                       "This provides more context to users about what the parser would've been "
                       "expecting.\n")
    assert req.goal == "Indicate expected content between mismatched tokens in parse errors"


def test_a_template_section_still_holds_its_criteria() -> None:
    req = canonicalize("# Parser errors are terse\n\nThe parser says only 'invalid'.\n\n"
                       "## Expected behavior\n\n- `tests/test_parser.py::test_expected` passes\n")
    assert req.goal.startswith("Parser errors are terse")
    assert any("tests/test_parser.py::test_expected" in c
               for c in req.acceptance_criteria)


def test_a_short_sentence_above_an_unwrapped_line_is_the_title() -> None:
    body = ("When in the equation x**n = a mod p, a % p == 0, then x = 0 mod p is also a root. "
            "But right now `nthroot_mod` does not check for this condition, and it misses it.")
    req = canonicalize("nthroot_mod function misses one root of x = 0 mod p.\n" + body)
    assert req.goal == "nthroot_mod function misses one root of x = 0 mod p"
    assert not any("right now" in c for c in req.acceptance_criteria)


def test_a_hard_wrapped_first_sentence_is_not_a_title() -> None:
    wrapped = ("The parser reports errors without the expected tokens in all modes.\n"
               "Show the expected tokens in each error message of the parser, as the\n"
               "lexer does.\n")
    assert read_request(wrapped).title is None
    assert read_request(wrapped.replace(" as the\n", " as the ") + "x" * 60).title is None


@pytest.mark.parametrize("lead", ["Currently", "But right now", "At the moment,"])
def test_a_symptom_said_of_now_gives_a_criterion_without_the_now(lead: str) -> None:
    req = canonicalize(f"{lead} `nthroot_mod` does not check for zero roots.")
    assert req.acceptance_criteria == ["`nthroot_mod` does check for zero roots"]
