"""The gate on a real repository (issue 11), as a script: three plans driven through the
`plan07` console script on a pallets/click checkout with its own `.venv`, the report printed.

The checkout is left as found (its tree must be clean; every file the script touches is
restored and every `refs/plan07/` ref it made is deleted). Before each plan, a test that fails
already is added to `tests/test_formatting.py` (the pre-existing failure: it is in the CP0
tree, so the baseline records it failing). The decompositions are replayed files (the
obligations below), so what is proven is the gate, not a decomposer; the interpreter is the one
plan07 finds (`REPO/.venv`, no `--python`).

1. signature change, test first, to done, each node validated once: add `max_lines=None` to
   `click.formatting.wrap_text`. O1 defines the test (red), O2 widens `wrap_text`
   (`import:click.formatting`), O3 preserves the callers
   (`pytest:tests/test_formatting.py`: the pre-existing failure reported, never blamed), O4
   validates the test (green), O5 `compile`. Each `complete` runs once and passes; `plan07
   next` then says done.
2. red refused, red, green: O1 before the test exists is refused (not collected), then red;
   O2 before the fix fails, after it passes green; done.
3. no edits: a plan of two modify nodes whose checks pass on the untouched tree never ends
   done (`plan07 next` exits 1: no modify node changed any file).

    python benchmarks/gate_proof.py --repo /path/to/click --out benchmarks/results/gate-proof.md
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = [str(Path(sys.executable).parent / "plan07")]  # the installed console script
TESTS = "tests/test_formatting.py"
SOURCE = "src/click/formatting.py"
NEW_TEST = f"{TESTS}::test_wrap_text_max_lines"
KNOWN = f"{TESTS}::test_plan07_proof_known_failure"

KNOWN_FAILURE = '''

def test_plan07_proof_known_failure():
    # added by benchmarks/gate_proof.py: a test that already fails at CP0
    assert click.formatting.term_len("abc") == 4
'''

TEST_TEXT = '''

def test_wrap_text_max_lines():
    text = "a b c d e f g h i j k l m n o p"
    out = click.formatting.wrap_text(text, width=6, max_lines=2)
    assert out.splitlines() == ["a b c", "d e..."]
    assert click.formatting.wrap_text(text, width=6) == click.formatting.wrap_text(
        text, width=6, max_lines=None
    )
'''

LIMIT = '''

def _limit_lines(text: str, width: int, max_lines: int | None) -> str:
    """At most ``max_lines`` lines of ``text``, the last ending with "..."."""
    lines = text.splitlines()
    if max_lines is None or len(lines) <= max_lines:
        return text
    keep = lines[:max_lines]
    last = keep[-1]
    if term_len(last) + 3 > width:
        last = last[: max(width - 3, 0)].rstrip()
    keep[-1] = last + "..."
    return "\\n".join(keep)
'''

# (old, new) on src/click/formatting.py: the signature change
FIX = [
    ("    preserve_paragraphs: bool = False,\n) -> str:",
     "    preserve_paragraphs: bool = False,\n    max_lines: int | None = None,\n) -> str:"),
    ("        return wrapper.fill(text)\n",
     "        return _limit_lines(wrapper.fill(text), width, max_lines)\n"),
    ('    return "\\n\\n".join(rv)\n',
     '    return _limit_lines("\\n\\n".join(rv), width, max_lines)\n' + LIMIT),
]

REQUEST = """Add a `max_lines` keyword parameter to `click.formatting.wrap_text`: when given, the
wrapped text keeps at most that many lines, the last one ending with "...". The default (None)
keeps every line, so existing callers are unchanged.

## Acceptance criteria

- `tests/test_formatting.py::test_wrap_text_max_lines` passes
- existing callers of `wrap_text` keep working
"""

NO_EDIT_REQUEST = """Tidy `click.formatting.wrap_text` and `click.formatting.HelpFormatter`.

## Acceptance criteria

- existing callers of `wrap_text` keep working
"""


def ob(i: str, target: str, verb: str, deps: list[str], validation: str,
       why: str) -> dict[str, object]:
    return {"id": i, "target_entity": target, "obligation": verb, "caused_by": why,
            "dependencies": deps, "evidence": "03 recon", "status": "ready",
            "validation": validation}


SIGNATURE = [
    ob("O1", NEW_TEST, "modify", [], NEW_TEST, "criterion 1: define the test first"),
    ob("O2", "click.formatting.wrap_text", "modify", ["O1"], "import:click.formatting",
       "06 sig_change: widen wrap_text with max_lines=None"),
    ob("O3", "click.formatting.wrap_text", "preserve", ["O2"], f"pytest:{TESTS}",
       "criterion 2: existing callers of `wrap_text` keep working"),
    ob("O4", NEW_TEST, "validate", ["O2"], NEW_TEST, f"criterion 1: {NEW_TEST}"),
    ob("O5", "click", "validate", ["O3", "O4"], "compile", "every step compiles"),
]
RED_GREEN = [
    ob("O1", NEW_TEST, "modify", [], NEW_TEST, "criterion 1: define the test first"),
    ob("O2", "click.formatting.wrap_text", "modify", ["O1"], NEW_TEST,
       "06 sig_change: widen wrap_text with max_lines=None"),
]
NO_EDIT = [
    ob("O1", "click.formatting.wrap_text", "modify", [], f"pytest:{TESTS}",
       "criterion 1: existing callers of `wrap_text` keep working"),
    ob("O2", "click.formatting.HelpFormatter", "modify", ["O1"], "import:click.formatting",
       "tidy the formatter"),
]


class Failed(Exception):
    """The gate did not do what the proof says it does."""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


class Run:
    """One plan driven through the CLI; every command and its outcome recorded."""

    def __init__(self, repo: Path, work: Path, name: str, env: dict[str, str]) -> None:
        self.repo, self.env = repo, env
        self.state = work / f"state-{name}"
        self.rows: list[tuple[str, str, int, str]] = []  # (command, edit, rc, line)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, *args], cwd=self.repo, env=self.env, capture_output=True,
                              text=True, check=False)

    def plan(self, work: Path, request: str, obligations: list[dict[str, object]]) -> str:
        (work / "request.md").write_text(request)
        (work / "replay.json").write_text(json.dumps({"obligations": obligations}))
        p = self.cli("plan", str(work / "request.md"), "--repo", str(self.repo), "--llm",
                     f"replay:{work / 'replay.json'}", "--state", str(self.state))
        if p.returncode != 0:
            raise Failed(f"plan07 plan exited {p.returncode}: {p.stderr.strip()[-400:]}")
        keep, lines = False, []
        for line in (p.stderr + p.stdout).splitlines():
            if line.startswith(("checks run with", "baseline", "warning")):
                keep = True
            elif not line.startswith(" "):
                keep = False
            if keep:
                lines.append(line.strip())
        return " ".join(lines)

    def step(self, node: str, edit: str = "", *, expect: int = 0) -> str:
        n = self.cli("next", "--state", str(self.state))
        if n.returncode != 0 or not n.stdout.startswith(node):
            raise Failed(f"plan07 next handed out {n.stdout.split()[:1]}, not {node} "
                         f"(rc {n.returncode}): {n.stderr.strip()[-300:]}")
        c = self.cli("complete", node, "--state", str(self.state))
        out = (c.stdout + c.stderr).strip().splitlines()
        line = out[0] if out else ""
        detail = out[1].strip() if c.returncode == 0 and len(out) > 1 else \
            next((x.strip() for x in reversed(out) if x.strip()), "")
        self.rows.append((f"complete {node}", edit, c.returncode,
                          f"{line}" + (f" — {detail}" if detail and detail != line else "")))
        if c.returncode != expect:
            raise Failed(f"complete {node}: exit {c.returncode}, expected {expect}:\n"
                         + "\n".join(out[-15:]))
        return "\n".join(out)

    def finish(self, *, expect: int) -> str:
        n = self.cli("next", "--state", str(self.state))
        text = " ".join((n.stdout + n.stderr).split())
        self.rows.append(("next", "", n.returncode, text[:700]))
        if n.returncode != expect:
            raise Failed(f"plan07 next exited {n.returncode}, expected {expect}: {text}")
        return text

    def validated(self) -> dict[str, object]:
        plan = json.loads((self.state / "plan.json").read_text())
        return {k: v for k, v in (plan.get("gate") or {}).get("validated", {}).items()}


def edit_source(repo: Path) -> None:
    p = repo / SOURCE
    text = p.read_text()
    for old, new in FIX:
        if text.count(old) != 1:
            raise Failed(f"{SOURCE}: the proof's edit does not apply (anchor {old[:40]!r}); "
                         "a pallets/click checkout of 8.2 or later is needed")
        text = text.replace(old, new)
    p.write_text(text)


def append(repo: Path, rel: str, text: str) -> None:
    with (repo / rel).open("a") as fh:
        fh.write(text)


def table(rows: list[tuple[str, str, int, str]]) -> list[str]:
    out = ["| command | the agent's edit before it | exit | what plan07 printed |",
           "|---|---|---:|---|"]
    for cmd, edit, rc, line in rows:
        out.append(f"| `{cmd}` | {edit or '—'} | {rc} | "
                   f"{line.replace('|', '/').replace(chr(96), chr(39))} |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True,
                    help="a pallets/click git checkout with its own .venv (left as found)")
    ap.add_argument("--out", type=Path, help="write the markdown report here")
    args = ap.parse_args(argv)
    repo = args.repo.resolve()
    if not (repo / ".venv").is_dir() or not (repo / SOURCE).is_file():
        print(f"error: {repo} is not a click checkout with its own .venv", file=sys.stderr)
        return 2
    if git(repo, "status", "--porcelain", "--untracked-files=no"):
        print(f"error: {repo} has uncommitted changes; the proof edits and restores it",
              file=sys.stderr)
        return 2
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.pop("VIRTUAL_ENV", None)  # plan07 finds REPO/.venv itself
    env["COLUMNS"] = "400"  # its lines unwrapped, as the report quotes them
    saved = {rel: (repo / rel).read_bytes() for rel in (TESTS, SOURCE)}
    work = Path(tempfile.mkdtemp(prefix="plan07-gate-proof-"))
    sections: list[str] = []
    started = time.perf_counter()

    def restore() -> None:
        for rel, data in saved.items():
            (repo / rel).write_bytes(data)

    try:
        # 1. signature change, test first, each node validated once, to done
        restore()
        append(repo, TESTS, KNOWN_FAILURE)
        r1 = Run(repo, work, "signature", env)
        base = r1.plan(work, REQUEST, SIGNATURE)
        append(repo, TESTS, TEST_TEXT)
        o1 = r1.step("O1", "the new test appended")
        if "red as it should be" not in o1:
            raise Failed(f"O1 was not red:\n{o1}")
        edit_source(repo)
        r1.step("O2", "`max_lines` added to `wrap_text` and applied")
        o3 = r1.step("O3")
        if KNOWN not in o3:
            raise Failed(f"O3 did not report the pre-existing failure:\n{o3}")
        r1.step("O4")
        r1.step("O5")
        done = r1.finish(expect=0)
        if not done.startswith("done"):
            raise Failed(f"the plan did not end done: {done}")
        completes = [row for row in r1.rows if row[0].startswith("complete")]
        if [row[0] for row in completes] != [f"complete O{i}" for i in range(1, 6)]:
            raise Failed("a node was validated more than once")
        sections += [
            "## 1. A signature change, test first, to done: each node validated once", "",
            "Request: add a `max_lines` keyword parameter to `click.formatting.wrap_text` "
            "(default None: existing callers unchanged). Plan (replayed): "
            + "; ".join(f"{o['id']} {o['obligation']} `{o['target_entity']}` "
                        f"(`{o['validation']}`)" for o in SIGNATURE) + ".", "",
            f"`plan07 plan` (no `--python`): {base}", "", *table(r1.rows), "",
            f"Validated trees (plan.json `gate.validated`): {json.dumps(r1.validated())}", ""]

        # 2. red refused, red, green
        restore()
        append(repo, TESTS, KNOWN_FAILURE)
        r2 = Run(repo, work, "red-green", env)
        base = r2.plan(work, REQUEST, RED_GREEN)
        refused = r2.step("O1", "none yet", expect=1)
        if "not collected" not in refused:
            raise Failed(f"O1 before the test exists was not refused as uncollected:\n{refused}")
        append(repo, TESTS, TEST_TEXT)
        if "red as it should be" not in r2.step("O1", "the new test appended"):
            raise Failed("O1 was not red")
        r2.step("O2", "none yet", expect=1)
        edit_source(repo)
        if "green" not in r2.step("O2", "`max_lines` added to `wrap_text`") \
                and "passed" not in r2.rows[-1][3]:
            raise Failed("O2 did not pass green")
        done = r2.finish(expect=0)
        sections += [
            "## 2. Test first: red refused before the test exists, red, then green", "",
            "Plan (replayed): " + "; ".join(f"{o['id']} {o['obligation']} "
                                            f"`{o['target_entity']}` (`{o['validation']}`)"
                                            for o in RED_GREEN) + ".", "",
            f"`plan07 plan`: {base}", "", *table(r2.rows), ""]

        # 3. no edits: never done
        restore()
        append(repo, TESTS, KNOWN_FAILURE)
        r3 = Run(repo, work, "no-edit", env)
        base = r3.plan(work, NO_EDIT_REQUEST, NO_EDIT)
        r3.step("O1")
        r3.step("O2")
        blocked = r3.finish(expect=1)
        if "no modify node changed any file" not in blocked:
            raise Failed(f"the plan driven with no edits was not blocked: {blocked}")
        sections += [
            "## 3. A plan driven with no edits never ends done", "",
            "Plan (replayed): " + "; ".join(f"{o['id']} {o['obligation']} "
                                            f"`{o['target_entity']}` (`{o['validation']}`)"
                                            for o in NO_EDIT) + "; no file edited.", "",
            f"`plan07 plan`: {base}", "", *table(r3.rows), ""]
    except Failed as exc:
        print(f"error: the gate proof failed: {exc}", file=sys.stderr)
        return 1
    finally:
        restore()
        for ref in git(repo, "for-each-ref", "--format=%(refname)", "refs/plan07/").split():
            git(repo, "update-ref", "-d", ref)
        shutil.rmtree(work, ignore_errors=True)
    head = git(repo, "rev-parse", "HEAD")
    remote = git(repo, "config", "--get", "remote.origin.url") or str(repo)
    mine = git(Path(__file__).resolve().parents[1], "rev-parse", "--short", "HEAD")
    report = "\n".join([
        "# The gate on a real repository (issue 11)", "",
        f"- repo: {repo.name} ({remote}) at {head}, its own `.venv` (found by plan07, no "
        "`--python`)",
        f"- plan07 at {mine}; `python benchmarks/gate_proof.py --repo {repo.name}`; "
        f"{time.perf_counter() - started:.0f} s",
        f"- before each plan, `{KNOWN}` (`term_len(\"abc\") == 4`) is appended to `{TESTS}`: "
        "a test that fails already at CP0", "- decompositions replayed (below); each step is "
        "`plan07 next` then `plan07 complete ID`, the console script a user runs", "",
        *sections,
        "The checkout was restored afterwards (both files, and every `refs/plan07/` ref).", ""])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
