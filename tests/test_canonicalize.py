"""§3.1 task canonicalization: criteria, derivation, constraints, rejection, caps, no model."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import types
from pathlib import Path

import pytest

import plan07
from plan07 import caps
from plan07.cli import main
from plan07.errors import InputError
from plan07.request.canonicalize import canonicalize, canonicalize_with_notes, shorten

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "canonicalize"
TEST_ID = "`tests/test_a.py::test_b` must pass."


# --- named criteria ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("Fix the cache.\n\n`tests/test_cache.py::test_evict` should pass.",
         ["tests/test_cache.py::test_evict"]),
        ("Fix the cache; see tests/unit/test_cache.py::TestLRU::test_evict[2-3] for the case.",
         ["tests/unit/test_cache.py::TestLRU::test_evict[2-3]"]),
        ("Speed up startup. `pytest -q tests/test_boot.py` must pass.",
         ["`pytest -q tests/test_boot.py` succeeds"]),
        ("Speed up startup.\n\nAfter the change `make lint` should run without errors.",
         ["`make lint` succeeds"]),
        ("Handle empty files.\n\n`load(\"\")` should return an empty list.",
         ['`load("")` should return an empty list']),
        ("# Handle empty files\n\n## Expected behaviour\n\n- returns `[]`\n- logs nothing",
         ["returns `[]`", "logs nothing"]),
        ("Handle empty files.\n\n### Acceptance criteria\n\n1. [ ] returns `[]`\n2. [x] no log",
         ["returns `[]`", "no log"]),
    ],
)
def test_named_criteria_are_kept(request_text: str, expected: list[str]) -> None:
    req = canonicalize(request_text)
    assert req.acceptance_criteria == expected
    assert req.needs_confirmation is False


def test_a_named_test_in_an_item_is_its_own_predicate_and_the_item_stays() -> None:
    req = canonicalize("Do X.\n\n## Acceptance criteria\n\n- X works (`tests/test_x.py::test_x`)")
    assert req.acceptance_criteria == ["tests/test_x.py::test_x", "X works"]


def test_reproduction_commands_and_code_are_not_criteria() -> None:
    text = ("`flask run` crashes on start.\n\n## Steps to reproduce\n\nRun `pytest` — it should "
            "pass but fails.\n\n```\nassert app.should_work()\n```\n")
    req = canonicalize(text)
    assert req.needs_confirmation is True
    assert req.acceptance_criteria == ["`flask run` does not crash on start"]


# --- derived criteria ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("Make the session timeout configurable.", ["the session timeout is configurable"]),
        ("Please add a `--verbose` flag to the CLI. Thanks!",
         ["a `--verbose` flag is added to the CLI"]),
        ("`Client.get` raises KeyError when the header is missing",
         ["`Client.get` does not raise KeyError when the header is missing"]),
        ("`Config.load` raises `KeyError` when the file is empty",  # raise, never "rais"
         ["`Config.load` does not raise `KeyError` when the file is empty"]),
        ("using --fix crashes the parser", ["using --fix does not crash the parser"]),
        ("Allow users to set the page size.", ["users can set the page size"]),
        ("Make `report` infer the format from the extension.",
         ["`report` infers the format from the extension"]),
        ("1. Add a `--limit` option\n2. Write tests for it\n",
         ["a `--limit` option is added", "tests are written for it"]),
        ("Remove the deprecated `old_api` module.", ["the deprecated `old_api` module is removed"]),
        ("The retry counter is wrong after a reconnect.",
         ["The retry counter is correct after a reconnect"]),
    ],
)
def test_no_named_criterion_derives_candidates_needing_confirmation(
    request_text: str, expected: list[str]
) -> None:
    req = canonicalize(request_text)
    assert req.acceptance_criteria == expected
    assert req.needs_confirmation is True


def test_derived_candidates_are_at_most_the_cap() -> None:
    text = " ".join(f"Add feature {i}." for i in range(10))
    req = canonicalize(text)
    assert len(req.acceptance_criteria) == caps.MAX_DERIVED_CRITERIA
    assert req.needs_confirmation is True


def test_a_goal_with_nothing_derivable_gets_the_goal_as_the_criterion_to_confirm() -> None:
    # §3.1: a request with a goal is never refused for want of a named criterion; the one it
    # gets is phrased as a check, never a placeholder
    out = canonicalize_with_notes("Session timeout.")
    assert out.requirement.acceptance_criteria == [
        "a test reproducing the report passes: session timeout"]
    assert out.requirement.needs_confirmation is True
    assert any("plan07 confirm" in n for n in out.notes)


@pytest.mark.parametrize(
    ("request_text", "criterion"),
    [
        ("pass the hook name explicitly to _multicall",
         "the hook name is passed explicitly to _multicall"),
        ("varnames gains a keyword-only flag", "varnames has a keyword-only flag"),
        ("Drop the `P` parameter from `F`", "`F` no longer takes `P`"),
        ("drop the timeout argument from Session.send", "Session.send no longer takes timeout"),
        ("`getlist` returns a tuple instead of a list", "`getlist` returns a list, not a tuple"),
        ("`quote` encodes spaces as %20 instead of +", "`quote` no longer encodes spaces as %20"),
        ("socket.error not caught in iter_content", "socket.error is caught in iter_content"),
        ("Flask routes to return subdomain information",
         "Flask routes return subdomain information"),
        ("method = builtin_str(method) problem",
         "the method = builtin_str(method) problem no longer occurs"),
    ],
)
def test_imperative_and_statement_requests_derive_what_they_ask(request_text: str,
                                                                criterion: str) -> None:
    req = canonicalize(request_text)
    assert req.acceptance_criteria == [criterion]
    assert req.needs_confirmation is True


@pytest.mark.parametrize(
    "request_text",
    [
        # a symptom outside the headline is not derived from: it would say the wrong thing
        "Fix the redirect bug\n\nAlso, I tried in python2.6 and this bug doesn't exist there.",
        "Fix the client\n\nneutronclient is broken because it encodes every value.",
        "Raise error when blueprint name contains a dot\n\nAn error was already added for "
        "endpoint names in 1.0.",
    ],
)
def test_no_derived_criterion_reverses_the_request(request_text: str) -> None:
    req = canonicalize(request_text)
    text = " ".join(req.acceptance_criteria)
    for wrong in ("does exist", "works because", "does not error", "An does"):
        assert wrong not in text


@pytest.mark.parametrize(
    ("request_text", "goal"),
    [
        ("method = builtin_str(method) problem\nIn requests/sessions.py is a command:",
         "method = builtin_str(method) problem"),
        ("Raise error when blueprint name contains a dot\nThis is required since every dot is "
         "now significant.", "Raise error when blueprint name contains a dot"),
        ("QuerySet.only() crashes on proxy models.\nDescription\n\t \n\t\t(last modified by "
         "Mariusz Felisiak)\n\t \nWhen using only() on a proxy, it crashes.",
         "QuerySet.only() crashes on proxy models"),
        ("__iter__ of LazyList skips the last item", "__iter__ of LazyList skips the last item"),
        ("socket.error not wrapped (ConnectionError perhaps?)\nI just noticed it.",
         "socket.error not wrapped"),
    ],
)
def test_real_issue_goals_are_the_title_byte_for_byte(request_text: str, goal: str) -> None:
    assert canonicalize(request_text).goal == goal


def test_template_filler_and_links_are_never_criteria() -> None:
    text = ("Retry ignores Retry-After\n\n**Expected behavior**\n\n_No response_\n\n"
            "The client waits as documented in https://example.test/retry.\n\n"
            "### Relevant links\n\nhttps://example.test/issue/1\n")
    req = canonicalize(text)
    assert req.acceptance_criteria == ["The client waits"]


# --- normalization, goal -----------------------------------------------------------------------

@pytest.mark.parametrize(
    ("request_text", "goal"),
    [
        ("Hi team! Hope you're all well.\n\nCould you please add retries to `fetch`?",
         "Add retries to `fetch`"),
        ("  please   make\n the  timeout configurable ,  as always  ",
         "Make the timeout configurable"),
        ("<!-- template: describe the bug -->\n\nFix the [docs](https://x.test) of `limit`.\n"
         "The limit must be 10.", "Fix the docs of `limit`"),
        ("- [ ] I searched the tracker\n\n**Describe the bug**\n\n`parse()` fails on BOM input.",
         "`parse()` fails on BOM input"),
        ("# [Bug] `parse()` fails on BOM input\n\n`parse()` must accept a BOM.",
         "`parse()` fails on BOM input"),
        ("Title: Faster import\n\nI want `import pkg` to take under 100 ms. It must stay pure.",
         "Faster import"),
        ("Make the default backend the best. It should be fast, thanks in advance!",
         "Make the default backend the best"),
        ("Please refactor `utils.py`, thanks", "Refactor `utils.py`"),
        ("hey, quick one: `report` writes CSV for `.json` names. can we make it infer the "
         "format? ty!", "Make it infer the format"),
        ("Ticket #34512: `bulk_create()` crashes on PostgreSQL\n\nSee the SQL below.",
         "`bulk_create()` crashes on PostgreSQL"),
        ("    Please make the timeout configurable.\n\n    It must be an int.\n",
         "Make the timeout configurable"),
    ],
)
def test_goal_is_the_headline_without_boilerplate(request_text: str, goal: str) -> None:
    assert canonicalize(request_text).goal == goal


def test_task_text_supplies_the_goal_when_the_request_only_points_at_it() -> None:
    req = canonicalize("Please fix this. Thanks!", "# Cache misses on `None` keys\n\n"
                       "`tests/test_cache.py::test_none_key` must pass.")
    assert req.goal == "Cache misses on `None` keys"
    assert req.acceptance_criteria == ["tests/test_cache.py::test_none_key"]


# --- constraints ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("sentence", "constraints", "criteria"),
    [
        ("`get` should accept a timeout without breaking existing callers.",
         ["do not break existing callers"], ["`get` should accept a timeout"]),
        ("It must not change the public API.", ["It must not change the public API"], []),
        ("Keep the CLI backward compatible.", ["Keep the CLI backward compatible"], []),
        ("No new dependency, please.", ["No new dependency"], []),
        ("`parse` must not raise on empty input.", [], ["`parse` must not raise on empty input"]),
        # a prohibition is a constraint; a description of what happens is not
        ("Do not remove the build dir.", ["Do not remove the build dir"], []),
        ("`clean` does not remove the build dir.", [], []),
        ("It never removes stale files.", [], []),
        ("It must never change the schema.", ["It must never change the schema"], []),
        ("We cannot add dependencies here.", ["We cannot add dependencies here"], []),
        ("Please address the warning.", [], []),
    ],
)
def test_constraints(sentence: str, constraints: list[str], criteria: list[str]) -> None:
    req = canonicalize(f"Improve `parse`. {TEST_ID} {sentence}")
    assert req.constraints == constraints
    assert req.acceptance_criteria == ["tests/test_a.py::test_b", *criteria]


def test_constraint_heading_items_are_constraints() -> None:
    req = canonicalize(f"Improve X. {TEST_ID}\n\n## Non-goals\n\n- Windows support\n- speed")
    assert req.constraints == ["Windows support", "speed"]


# --- rejection at the CLI: exit 2, one line, nothing on stdout ----------------------------------

@pytest.mark.parametrize(
    "request_text",
    ["", "   \n\t \n", "Please. Thanks!", "Hi team,\n\nThanks in advance!\n\nCheers,\nBob",
     "```python\nraise SystemExit('please fix')\n```\n",
     "Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: bad\n"],
    ids=["empty", "whitespace", "boilerplate", "greeting-signoff", "code-only", "traceback-only"],
)
def test_empty_requests_exit_2_with_one_line(
    request_text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "request.md"
    path.write_text(request_text, "utf-8")
    assert main(["canonicalize", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: goal: ")
    assert err.count("\n") == 1


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["canonicalize", str(tmp_path / "nope.md")]) == 2
    assert capsys.readouterr().err.startswith("error: ")


# --- caps at their boundaries ------------------------------------------------------------------

def _words(n: int) -> str:
    """Exactly n characters of words ('alpha beta …'), no trailing space or stop."""
    text = ""
    i = 0
    while len(text) < n:
        text += ("" if not text else " ") + f"word{i}"
        i += 1
    return text[:n].rstrip() + "x" * (n - len(text[:n].rstrip()))


def test_goal_cap_boundary() -> None:
    ok = "Make " + _words(caps.GOAL_MAX_CHARS - 5)
    assert len(ok) == caps.GOAL_MAX_CHARS
    assert canonicalize(f"# {ok}\n\n{TEST_ID}").goal == ok
    over = "Make " + _words(caps.GOAL_MAX_CHARS - 4)
    goal = canonicalize(f"# {over}\n\n{TEST_ID}").goal
    assert len(goal) <= caps.GOAL_MAX_CHARS
    assert goal.endswith("…")
    assert over.startswith(goal[:-1] + " "), "cut at a word boundary, never mid-word"


def test_goal_cut_at_a_clause_boundary_when_there_is_one() -> None:
    head = "Make " + _words(300)
    goal = canonicalize(f"# {head}, {_words(300)}\n\n{TEST_ID}").goal
    assert goal == head


def test_one_word_longer_than_the_goal_cap_is_refused() -> None:
    with pytest.raises(InputError) as exc:
        canonicalize(f"# Fix {'x' * 600}\n\n{TEST_ID}")
    assert exc.value.cap == f"GOAL_MAX_CHARS={caps.GOAL_MAX_CHARS}"


def test_predicate_cap_boundary() -> None:
    ok = _words(caps.PREDICATE_MAX_CHARS)
    over = _words(caps.PREDICATE_MAX_CHARS + 1)
    text = "Do it.\n\n## Acceptance criteria\n\n- {}\n"
    assert canonicalize(text.format(ok)).acceptance_criteria == [ok]
    [cut] = canonicalize(text.format(over)).acceptance_criteria
    assert len(cut) <= caps.PREDICATE_MAX_CHARS
    assert over.startswith(cut[:-1] + " ")


def test_an_uncuttable_prose_statement_is_left_out_with_a_note() -> None:
    path = "/srv/example/" + "a" * 190  # a link would be left out as a link (never a criterion)
    result = canonicalize_with_notes(f"Fix the link. It should point to {path}. "
                                     "The link must be https.")
    assert result.requirement.acceptance_criteria == ["The link must be https"]
    assert len(result.notes) == 1
    assert "PREDICATE_MAX_CHARS=200" in result.notes[0]


def test_an_uncuttable_heading_item_is_refused() -> None:
    with pytest.raises(InputError) as exc:
        canonicalize(f"Fix it.\n\n## Acceptance criteria\n\n- reads /srv/x/{'a' * 190}")
    assert exc.value.cap == f"PREDICATE_MAX_CHARS={caps.PREDICATE_MAX_CHARS}"


def test_a_test_id_over_the_predicate_cap_is_refused_not_cut() -> None:
    node = "tests/test_a.py::test_" + "b" * caps.PREDICATE_MAX_CHARS
    with pytest.raises(InputError) as exc:
        canonicalize(f"Fix it. `{node}` must pass.")
    assert exc.value.cap == f"PREDICATE_MAX_CHARS={caps.PREDICATE_MAX_CHARS}"


@pytest.mark.parametrize("n", [caps.MAX_ACCEPTANCE_CRITERIA, caps.MAX_ACCEPTANCE_CRITERIA + 1])
def test_named_criteria_cap_16_ok_17_refused(n: int) -> None:
    items = "\n".join(f"- item {i} works" for i in range(n))
    text = f"Do it.\n\n## Acceptance criteria\n\n{items}\n"
    if n <= caps.MAX_ACCEPTANCE_CRITERIA:
        assert len(canonicalize(text).acceptance_criteria) == n
    else:
        with pytest.raises(InputError, match="over-scoped") as exc:
            canonicalize(text)
        assert exc.value.cap == f"MAX_ACCEPTANCE_CRITERIA={caps.MAX_ACCEPTANCE_CRITERIA}"


@pytest.mark.parametrize("n", [caps.MAX_ACCEPTANCE_CRITERIA, caps.MAX_ACCEPTANCE_CRITERIA + 1])
def test_should_statements_past_16_keep_the_first_16_and_say_so(n: int) -> None:
    text = "Rework it. " + " ".join(f"Part {i} should work." for i in range(n))
    result = canonicalize_with_notes(text)
    kept = result.requirement.acceptance_criteria
    assert kept == [f"Part {i} should work" for i in range(min(n, 16))]
    assert len(result.notes) == (n > caps.MAX_ACCEPTANCE_CRITERIA)


@pytest.mark.parametrize("n", [caps.MAX_CONSTRAINTS, caps.MAX_CONSTRAINTS + 1])
def test_constraints_cap_16_ok_17_refused_from_a_heading(n: int) -> None:
    items = "\n".join(f"- leave module {i} alone" for i in range(n))
    text = f"Do it. {TEST_ID}\n\n## Constraints\n\n{items}\n"
    if n <= caps.MAX_CONSTRAINTS:
        assert len(canonicalize(text).constraints) == n
    else:
        with pytest.raises(InputError) as exc:
            canonicalize(text)
        assert exc.value.cap == f"MAX_CONSTRAINTS={caps.MAX_CONSTRAINTS}"


def test_prose_constraints_past_16_keep_the_first_16_and_say_so() -> None:
    text = f"Do it. {TEST_ID} " + " ".join(f"Do not change module{i}." for i in range(17))
    result = canonicalize_with_notes(text)
    assert result.requirement.constraints == [f"Do not change module{i}" for i in range(16)]
    assert len(result.notes) == 1
    assert "MAX_CONSTRAINTS" in result.notes[0]


@pytest.mark.parametrize(
    ("text", "cap", "expected"),
    [
        ("abc def", 7, "abc def"),
        ("abc def ghi", 9, "abc def…"),
        ("alpha beta, gamma delta", 20, "alpha beta"),
        ("a, bcdefgh ijk", 12, "a, bcdefgh…"),  # a clause break in the first third is ignored
    ],
)
def test_shorten_rule(text: str, cap: int, expected: str) -> None:
    assert shorten(text, cap, what="x", cap_name="X") == expected


# --- no model is consulted -------------------------------------------------------------------

class _Probe(types.ModuleType):
    """Stands in for the model layer: any use of it fails the test."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"canonicalize consulted the model layer ({self.__name__}.{name})")


def test_no_model_is_consulted(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("openai", "plan07.decompose", "plan07.decompose.call"):
        monkeypatch.setitem(sys.modules, name, _Probe(name))
    monkeypatch.setattr(plan07, "llm", _Probe("plan07.decompose"), raising=False)

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("canonicalize opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    for case in sorted(GOLDEN.glob("*.md")):
        if not case.name.endswith(".task.md"):
            task = case.with_suffix(".task.md")
            canonicalize(case.read_text("utf-8"),
                         task.read_text("utf-8") if task.exists() else None)


_FRESH = """
import json, socket, sys
def no_network(*a, **k): raise AssertionError("network")
socket.socket.connect = no_network
socket.create_connection = no_network
from plan07.request.canonicalize import canonicalize
req = canonicalize(open(sys.argv[1], encoding="utf-8").read())
leaked = sorted(m for m in sys.modules if m == "openai" or m.startswith(
    ("openai.", "plan07.decompose", "plan07.decompose.call", "httpx")))
assert not leaked, leaked
print(json.dumps(req.model_dump(mode="json"), sort_keys=True))
"""


def test_fresh_interpreter_imports_no_model_client_and_is_hash_seed_stable() -> None:
    request = ROOT / "examples" / "session_timeout" / "request.md"
    outs = []
    for seed in ("0", "12345"):
        proc = subprocess.run(
            [sys.executable, "-c", _FRESH, str(request)], capture_output=True, text=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""}, check=False, cwd=ROOT,
        )
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1]


# --- the bundled example and the CLI ---------------------------------------------------------

def test_session_example() -> None:
    req = canonicalize((ROOT / "examples" / "session_timeout" / "request.md").read_text("utf-8"))
    assert req.goal == "Make the session timeout configurable"
    assert req.acceptance_criteria[0] == "tests/test_session.py::test_custom_timeout"
    assert "a custom timeout value is honoured at runtime" in req.acceptance_criteria
    assert req.constraints == ["No breaking change to the public Session API"]
    assert req.needs_confirmation is False


def test_cli_human_output_marks_derived(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.md"
    path.write_text("Make the cache size configurable without breaking the old default.")
    assert main(["canonicalize", str(path)]) == 0
    assert capsys.readouterr().out == (
        "goal: Make the cache size configurable without breaking the old default\n"
        "acceptance criteria:\n"
        "  1. the cache size is configurable (derived, needs confirmation)\n"
        "constraints:\n"
        "  - do not break the old default\n"
    )


def test_cli_json_from_stdin_with_task_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    task = tmp_path / "task.md"
    task.write_text("# Cache misses on `None` keys\n\n`tests/test_c.py::test_none` must pass.")
    monkeypatch.setattr(sys, "stdin", io.StringIO("Please fix this."))
    assert main(["canonicalize", "-", "--task-file", str(task), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "goal": "Cache misses on `None` keys",
        "acceptance_criteria": ["tests/test_c.py::test_none"],
        "constraints": [],
        "needs_confirmation": False,
    }


def test_cli_reports_what_a_cap_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.md"
    path.write_text("Rework it. " + " ".join(f"Part {i} should work." for i in range(18)))
    assert main(["canonicalize", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert len(json.loads(out)["acceptance_criteria"]) == 16
    assert err.startswith("note: 2 acceptance_criteria")
    assert "MAX_ACCEPTANCE_CRITERIA" in err


# --- GitHub-issue noise ------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("request_text", "goal", "criteria"),
    [
        # template placeholder text is boilerplate, not the goal or a criterion
        ("**Describe the bug**\nA clear and concise description of what the bug is.\n\n"
         "`parse` drops the BOM.\n\n**Expected behavior**\nA clear and concise description of "
         "what you expected to happen.\n`parse` should keep the BOM.",
         "`parse` drops the BOM", ["`parse` should keep the BOM"]),
        # "it would be great to" / "we need to" are framing around the verb
        ("It would be great to cache the parsed config.", "Cache the parsed config",
         ["the parsed config is cached"]),
        ("We need to support Python 3.13.", "Support Python 3.13", ["Python 3.13 is supported"]),
        # a lone first line is a title only when a body follows
        ("Speed up `import plan07`", "Speed up `import plan07`",
         ["`import plan07` is sped up"]),
        # "and make sure X passes" belongs to the criteria, not the headline
        ("Add a `retries` option to `fetch` and make sure `pytest tests/test_fetch.py` passes.",
         "Add a `retries` option to `fetch`", ["`pytest tests/test_fetch.py` succeeds"]),
        # a clause naming a test is criterion (1); the other clause stays a statement
        ("Fix grouping. `None` keys should sort last, and `tests/t.py::test_none` should pass.",
         "Fix grouping", ["tests/t.py::test_none", "`None` keys should sort last"]),
        ("`load()` should return a list and never raise.", "`load()` should return a list and "
         "never raise", ["`load()` should return a list and never raise"]),
        # REPL output and tables are not prose
        ("`dump` loses aliases.\n\n>>> dump(M(userId=1))\n{'user_id': 1}\n\n| a | b |\n"
         "|---|---|\n| must | be ignored |\n", "`dump` loses aliases",
         ["`dump` does not lose aliases"]),
    ],
)
def test_github_issue_noise(request_text: str, goal: str, criteria: list[str]) -> None:
    req = canonicalize(request_text)
    assert (req.goal, req.acceptance_criteria) == (goal, criteria)
