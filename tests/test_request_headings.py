"""A heading is a section label (acceptance, constraints, noise) only when it reads as one: a
title that is a sentence with such a word inside stays the request's title. Found on a real
commit subject used as a request's title: "Indicate expected content between mismatched tokens
in parse errors" had been read as an "Expected ..." section, and the request as empty."""

from __future__ import annotations

import pytest

from plan07 import canonicalize
from plan07.request.text import _heading_kind


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
