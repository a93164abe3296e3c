"""Loading evidence: the JSON bundle (shipped schema + the checks it cannot express) and the SQLite
recon.db, with errors that name the JSON path or the table row at fault."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from plan07.errors import InputError
from plan07.evidence import load_evidence, write_db
from plan07.model import Evidence

GOOD: dict[str, Any] = {
    "recon": {
        "nodes": [
            {"id": "pkg.auth.SessionConfig", "kind": "config", "file": "pkg/auth.py", "line": 3,
             "signature": "class SessionConfig(timeout: int = 30)"},
            {"id": "pkg.auth.SessionManager.load", "kind": "method", "file": "pkg/auth.py"},
            {"id": "tests.test_auth.test_load", "kind": "test"},
        ],
        "edges": [
            {"src": "pkg.auth.SessionManager.load", "dst": "pkg.auth.SessionConfig",
             "kind": "calls"},
            {"src": "tests.test_auth.test_load", "dst": "pkg.auth.SessionManager.load",
             "kind": "tests"},
        ],
    },
    "impact": {"edges": [
        {"src": "pkg.auth.SessionConfig", "dst": "pkg.auth.SessionManager.load",
         "relation": "CalledBy", "cause": "sig_change", "confidence": 0.9},
    ]},
    "localization": [{"entity": "pkg.auth.SessionManager.load", "score": 0.8}],
    "context": [{"entity": "pkg.auth.SessionManager", "summary": "one line"}],
    "soft_rank": {"pkg.auth.SessionManager": {"lex": 0.4, "cochange": 0.2}},
}


def write(tmp_path: Path, data: Any) -> Path:
    p = tmp_path / "evidence.json"
    p.write_text(json.dumps(data))
    return p


def mutate(path: list[Any], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(GOOD)
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def test_good_bundle_loads(tmp_path: Path) -> None:
    ev = load_evidence(write(tmp_path, GOOD))
    assert ev == Evidence.model_validate(GOOD)


def test_empty_bundle_is_valid(tmp_path: Path) -> None:
    assert load_evidence(write(tmp_path, {})) == Evidence()


@pytest.mark.parametrize(("data", "where", "what"), [
    (mutate(["extra"], 1), "(top level)", "Additional properties"),
    (mutate(["recon", "nodes", 0, "colour"], "red"), r"recon\.nodes\[0\]", "Additional"),
    (mutate(["impact", "edges", 0, "confidence"], 1.5), r"impact\.edges\[0\]\.confidence",
     "maximum"),
    (mutate(["localization", 0, "score"], -0.1), r"localization\[0\]\.score", "minimum"),
    (mutate(["soft_rank", "pkg.auth.SessionManager", "lex"], 2), r"soft_rank\.pkg", "maximum"),
    (mutate(["recon", "edges", 1, "kind"], "invokes"), r"recon\.edges\[1\]\.kind", "invokes"),
    (mutate(["recon", "nodes", 1, "line"], "7"), r"recon\.nodes\[1\]\.line", "not valid"),
    # what JSON Schema cannot say: every edge endpoint is a node
    (mutate(["recon", "edges", 1, "dst"], "pkg.gone"), r"recon\.edges\[1\]\.dst", "pkg.gone"),
    (mutate(["recon", "edges", 0, "src"], "pkg.gone"), r"recon\.edges\[0\]\.src", "not a recon"),
    (mutate(["impact", "edges", 0, "dst"], "pkg.gone"), r"impact\.edges\[0\]\.dst", "not a recon"),
    (mutate(["recon", "nodes", 2, "id"], "pkg.auth.SessionConfig"), r"recon\.nodes\[2\]\.id",
     "duplicate"),
])
def test_bad_bundle_names_the_json_path(tmp_path: Path, data: Any, where: str, what: str) -> None:
    with pytest.raises(InputError, match=rf"{where}.*{what}") as exc:
        load_evidence(write(tmp_path, data))
    assert str(tmp_path) in str(exc.value)  # and the file


def test_impact_endpoints_free_when_no_recon_nodes(tmp_path: Path) -> None:
    data = {"impact": GOOD["impact"], "localization": GOOD["localization"]}
    assert len(load_evidence(write(tmp_path, data)).impact.edges) == 1


def test_integer_confidence_and_float_line_follow_the_schema(tmp_path: Path) -> None:
    data = mutate(["impact", "edges", 0, "confidence"], 1)
    assert load_evidence(write(tmp_path, data)).impact.edges[0].confidence == 1.0
    data = mutate(["recon", "nodes", 1, "line"], 7.0)  # JSON Schema calls 7.0 an integer
    assert load_evidence(write(tmp_path, data)).recon.nodes[1].line == 7


def test_not_json_and_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "e.json"
    p.write_text("{nope")
    with pytest.raises(InputError, match="not valid JSON"):
        load_evidence(p)
    with pytest.raises(InputError, match="not found"):
        load_evidence(tmp_path / "missing.json")


# --- recon.db ------------------------------------------------------------------------------


def test_db_round_trip(tmp_path: Path) -> None:
    ev = Evidence.model_validate(GOOD)
    db = tmp_path / "recon.db"
    write_db(ev, db, meta={"repo": "/x"})
    assert load_evidence(db) == ev
    with sqlite3.connect(db) as con:
        assert dict(con.execute("SELECT key, value FROM meta")) == {
            "format": "plan07-recon-db", "version": "1", "repo": "/x"}
        assert con.execute("SELECT count(*) FROM edges").fetchone() == (2,)


def test_db_with_only_the_required_tables(tmp_path: Path) -> None:
    db = tmp_path / "minimal.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE nodes (id TEXT, kind TEXT, file TEXT, line INT, signature TEXT)")
        con.execute("CREATE TABLE edges (src TEXT, dst TEXT, kind TEXT)")
        con.execute("INSERT INTO nodes VALUES ('a', 'function', NULL, NULL, NULL)")
        con.execute("INSERT INTO nodes VALUES ('b', 'class', 'b.py', 2, 'class B')")
        con.execute("INSERT INTO edges VALUES ('a', 'b', 'calls')")
    ev = load_evidence(db)
    assert [n.id for n in ev.recon.nodes] == ["a", "b"]
    assert ev.recon.nodes[0].file is None
    assert [(e.src, e.dst) for e in ev.recon.edges] == [("a", "b")]


@pytest.mark.parametrize(("sql", "match"), [
    (["CREATE TABLE nodes (id TEXT, kind TEXT, file TEXT, line INT, signature TEXT)"],
     "no table 'edges'"),
    (["CREATE TABLE nodes (id TEXT)", "CREATE TABLE edges (src TEXT, dst TEXT, kind TEXT)"],
     "table nodes: no such column"),
    (["CREATE TABLE nodes (id TEXT, kind TEXT, file TEXT, line INT, signature TEXT)",
      "CREATE TABLE edges (src TEXT, dst TEXT, kind TEXT)",
      "INSERT INTO nodes VALUES ('a', 'function', NULL, NULL, NULL)",
      "INSERT INTO edges VALUES ('a', 'a', 'pokes')"], r"edges\[0\]\.kind"),
    (["CREATE TABLE nodes (id TEXT, kind TEXT, file TEXT, line INT, signature TEXT)",
      "CREATE TABLE edges (src TEXT, dst TEXT, kind TEXT)",
      "INSERT INTO nodes VALUES ('a', 'function', NULL, NULL, NULL)",
      "INSERT INTO edges VALUES ('a', 'zz', 'calls')"], r"edges\[0\]\.dst.*'zz' is not a recon"),
])
def test_bad_db_names_the_table(tmp_path: Path, sql: list[str], match: str) -> None:
    db = tmp_path / "bad.db"
    with sqlite3.connect(db) as con:
        for s in sql:
            con.execute(s)
    with pytest.raises(InputError, match=match):
        load_evidence(db)


def test_db_write_is_atomic_and_replaces(tmp_path: Path) -> None:
    db = tmp_path / "recon.db"
    write_db(Evidence.model_validate(GOOD), db)
    write_db(Evidence(), db)  # overwrite, not append
    assert load_evidence(db) == Evidence()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recon.db"]
