"""The SQLite recon.db: one evidence bundle as tables (schema in docs/evidence.md). I/O.

    meta(key TEXT PRIMARY KEY, value TEXT)                    format, version, repo, ...
    nodes(id TEXT PRIMARY KEY, kind, file, line INTEGER, signature)
    edges(src, dst, kind)              PRIMARY KEY (src, dst, kind); index on dst
    impact(src, dst, relation, cause, confidence REAL)        optional
    localization(rank INTEGER PRIMARY KEY, entity, score REAL) optional
    context(rank INTEGER PRIMARY KEY, entity, summary)         optional
    soft_rank(entity TEXT PRIMARY KEY, lex REAL, cochange REAL) optional
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plan07.errors import InputError
from plan07.model import Evidence

FORMAT = "plan07-recon-db"
VERSION = "1"

DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE nodes (id TEXT PRIMARY KEY, kind TEXT NOT NULL, file TEXT, line INTEGER,
                    signature TEXT);
CREATE TABLE edges (src TEXT NOT NULL, dst TEXT NOT NULL, kind TEXT NOT NULL,
                    PRIMARY KEY (src, dst, kind));
CREATE INDEX edges_dst ON edges (dst);
CREATE TABLE impact (src TEXT NOT NULL, dst TEXT NOT NULL, relation TEXT NOT NULL,
                     cause TEXT NOT NULL, confidence REAL NOT NULL);
CREATE TABLE localization (rank INTEGER PRIMARY KEY, entity TEXT NOT NULL, score REAL NOT NULL);
CREATE TABLE context (rank INTEGER PRIMARY KEY, entity TEXT NOT NULL, summary TEXT NOT NULL);
CREATE TABLE soft_rank (entity TEXT PRIMARY KEY, lex REAL NOT NULL, cochange REAL NOT NULL);
"""

# table -> (columns, the bundle path its rows make, required)
TABLES: dict[str, tuple[tuple[str, ...], str, bool]] = {
    "nodes": (("id", "kind", "file", "line", "signature"), "recon.nodes", True),
    "edges": (("src", "dst", "kind"), "recon.edges", True),
    "impact": (("src", "dst", "relation", "cause", "confidence"), "impact.edges", False),
    "localization": (("entity", "score"), "localization", False),
    "context": (("entity", "summary"), "context", False),
    "soft_rank": (("entity", "lex", "cochange"), "soft_rank", False),
}


def write_db(evidence: Evidence, path: Path, *, meta: Mapping[str, str] | None = None) -> None:
    """Write `evidence` as a recon.db at `path`, atomically (a temp file, then a rename)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        with contextlib.closing(sqlite3.connect(tmp)) as con:
            con.executescript(DDL)
            rows = {"format": FORMAT, "version": VERSION, **(meta or {})}
            con.executemany("INSERT INTO meta VALUES (?, ?)", sorted(rows.items()))
            con.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?, ?)",
                            [(n.id, n.kind, n.file, n.line, n.signature)
                             for n in evidence.recon.nodes])
            con.executemany("INSERT OR IGNORE INTO edges VALUES (?, ?, ?)",
                            [(e.src, e.dst, e.kind) for e in evidence.recon.edges])
            con.executemany("INSERT INTO impact VALUES (?, ?, ?, ?, ?)",
                            [(i.src, i.dst, i.relation, i.cause, i.confidence)
                             for i in evidence.impact.edges])
            con.executemany("INSERT INTO localization VALUES (?, ?, ?)",
                            [(r, x.entity, x.score) for r, x in enumerate(evidence.localization)])
            con.executemany("INSERT INTO context VALUES (?, ?, ?)",
                            [(r, c.entity, c.summary) for r, c in enumerate(evidence.context)])
            con.executemany("INSERT INTO soft_rank VALUES (?, ?, ?)",
                            [(k, v.lex, v.cochange) for k, v in evidence.soft_rank.items()])
            con.commit()
        tmp.replace(path)
    except (OSError, sqlite3.Error) as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write recon.db: {exc}", source=str(path)) from None


def read_rows(path: Path) -> dict[str, Any]:
    """The rows of a recon.db as the JSON bundle shape (`plan07.evidence.load.read_db` parses
    them); a missing required table or an unreadable one is refused."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise InputError(f"cannot open recon.db: {exc}", source=str(path)) from None
    with contextlib.closing(con):
        try:
            present = {r[0] for r in
                       con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.Error as exc:  # "file is not a database": a header and garbage
            raise InputError(f"not a readable recon.db: {exc}", source=str(path)) from None
        data: dict[str, Any] = {}
        for table, (cols, where, required) in TABLES.items():
            if table not in present:
                if required:
                    raise InputError(
                        f"no table {table!r}; a recon.db needs nodes(id, kind, file, line, "
                        "signature) and edges(src, dst, kind) (docs/evidence.md)",
                        source=str(path))
                continue
            order = "rank" if table in ("localization", "context") else "rowid"
            try:
                rows = con.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order}")
                records = [dict(zip(cols, r, strict=True)) for r in rows]
            except sqlite3.Error as exc:
                raise InputError(f"table {table}: {exc}", source=str(path)) from None
            _place(data, where, records)
    return data


def _place(data: dict[str, Any], where: str, records: list[dict[str, Any]]) -> None:
    if where == "soft_rank":
        data["soft_rank"] = {r["entity"]: {"lex": r["lex"], "cochange": r["cochange"]}
                             for r in records}
        return
    head, _, tail = where.partition(".")
    if tail:
        data.setdefault(head, {})[tail] = records
    else:
        data[head] = records
    if where == "recon.nodes":  # NULLs are absent optional fields in the bundle
        for r in records:
            for k in ("file", "line", "signature"):
                if r[k] is None:
                    del r[k]
