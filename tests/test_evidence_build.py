"""build_evidence and `plan07 recon`: recon + impact + soft-rank + localization on a small repo."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_recon_small import write_repo  # the small repo, defined once (tests/ is on sys.path)

from plan07.cli import main
from plan07.errors import InputError
from plan07.evidence import build_evidence, load_evidence, neighbourhood

REQUEST = "Make the session timeout configurable: SessionConfig timeout default stays 30"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo")


def test_seeds_give_impact_and_full_localization(repo: Path) -> None:
    ev = build_evidence(repo, seeds=["pkg.auth.SessionConfig"], depth=2)
    assert [(x.entity, x.score) for x in ev.localization] == [("pkg.auth.SessionConfig", 1.0)]
    rows = {(i.src, i.dst, i.relation, i.cause) for i in ev.impact.edges}
    assert ("pkg.auth.SessionConfig", "pkg.auth.SessionManager._read", "CalledBy",
            "default_change") in rows  # a config type: its consumers see its defaults
    assert ("pkg.auth.SessionConfig", "tests.test_session.test_custom_timeout", "TestedBy",
            "test_anchor") in rows
    assert ("pkg.auth.SessionConfig", "pkg.auth.SessionManager.__init__", "UsedBy",
            "default_change") in rows
    # depth 2: callers of _read's ... and load's callers via the constructor
    assert all(0 < i.confidence <= 1 for i in ev.impact.edges)
    assert ev.context[0].entity == "pkg.auth.SessionConfig"
    assert set(ev.soft_rank) >= {"pkg.auth.SessionConfig", "pkg.auth.SessionManager._read"}


def test_no_seed_localizes_by_lex(repo: Path) -> None:
    ev = build_evidence(repo, request=REQUEST)
    assert ev.localization[0].entity == "pkg.auth.SessionConfig"
    assert all(0 < x.score <= 1 for x in ev.localization)
    assert all(not x.entity.startswith("tests.") for x in ev.localization)  # code, not tests
    scores = [x.score for x in ev.localization]
    assert scores == sorted(scores, reverse=True)
    # the request names `SessionConfig`: localization ranks the named entity first (score 1,
    # plan07.evidence.localize); soft-rank keeps the lexical overlap itself
    assert ev.localization[0].score == 1.0
    assert 0 < ev.soft_rank["pkg.auth.SessionConfig"].lex <= 1


def test_no_request_no_seed_is_recon_only(repo: Path) -> None:
    ev = build_evidence(repo)
    assert ev.recon.nodes
    assert not ev.impact.edges
    assert not ev.localization
    assert not ev.soft_rank


def test_pytest_node_id_seed_and_unknown_seed(repo: Path) -> None:
    ev = build_evidence(repo, seeds=["tests/test_session.py::test_custom_timeout"])
    assert ev.localization[0].entity == "tests.test_session.test_custom_timeout"
    with pytest.raises(InputError, match=r"seed 'pkg.auth.load'.*SessionManager.load"):
        build_evidence(repo, seeds=["pkg.auth.load"])


def test_depth_is_capped(repo: Path) -> None:
    with pytest.raises(InputError, match="EVIDENCE_MAX_DEPTH"):
        build_evidence(repo, seeds=["pkg.auth.helper"], depth=99)


def test_built_bundle_round_trips_and_cuts_to_a_neighbourhood(repo: Path, tmp_path: Path) -> None:
    ev = build_evidence(repo, request=REQUEST)
    p = tmp_path / "e.json"
    p.write_text(ev.model_dump_json())
    assert load_evidence(p) == ev
    near = neighbourhood(ev, ["pkg.auth.SessionConfig"], hops=1)
    assert 0 < len(near.recon.nodes) < len(ev.recon.nodes)


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_cochange_from_the_repo_history(repo: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                        "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "all")
    for i in range(3):  # auth.py and cli.py change together three more times
        for f in ("pkg/auth.py", "pkg/cli.py"):
            (repo / f).write_text((repo / f).read_text() + f"\n# {i}\n")
        git("commit", "-q", "-am", f"c{i}")
    ev = build_evidence(repo, seeds=["pkg.auth.SessionManager.load"])
    assert ev.soft_rank["pkg.cli.main"].cochange == 1.0  # every cli.py commit touched auth.py


# --- the CLI ---------------------------------------------------------------------------------


def test_cli_writes_json_and_db(repo: Path, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    out, db = tmp_path / "e.json", tmp_path / "recon.db"
    req = tmp_path / "request.md"
    req.write_text(REQUEST)
    code = main(["recon", str(repo), "-o", str(out), "--db", str(db), "--request", str(req),
                 "--json"])
    cap = capsys.readouterr()
    assert code == 0
    summary = json.loads(cap.out)
    assert summary["localization"][0] == "pkg.auth.SessionConfig"
    assert summary["warnings"] == [w.removeprefix("warning: ") for w in cap.err.splitlines()]
    assert any("broken.py" in w for w in summary["warnings"])  # reported, not in the bundle
    assert "warnings" not in json.loads(out.read_text())
    assert load_evidence(out) == load_evidence(db)


def test_cli_prints_bundle_to_stdout_without_outputs(repo: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recon", str(repo), "--seed", "pkg.auth.helper", "--depth", "1"]) == 0
    bundle = json.loads(capsys.readouterr().out)
    assert {i["dst"] for i in bundle["impact"]["edges"]} >= {"pkg.auth.SessionManager.load"}


@pytest.mark.parametrize("args", [
    ["--seed", "no.such.thing"],
    ["--depth", "-1", "--seed", "pkg.auth.helper"],
    ["--request", "missing-request.md"],
])
def test_cli_bad_input_exit_2_nothing_written(repo: Path, tmp_path: Path, args: list[str],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "e.json"
    assert main(["recon", str(repo), "-o", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert err.count("\n") == 1
    assert not out.exists()


def test_cli_not_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recon", str(tmp_path / "nope"), "-o", str(tmp_path / "e.json")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_bundle_does_not_depend_on_hash_seed(repo: Path, tmp_path: Path) -> None:
    outs = []
    for seed in ("0", "12345"):
        out = tmp_path / f"e{seed}.json"
        code = "import sys; from plan07.cli import main; sys.exit(main(sys.argv[1:]))"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", code, "recon", str(repo), "-o", str(out),
                        "--seed", "pkg.auth.SessionConfig", "--depth", "3"],
                       env=env, check=True, capture_output=True, timeout=120)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
