"""Built-in recon (the 03 default) for a Python repository: read its files, parse each with `ast`,
resolve across files. I/O (reads the tree, may fork parser processes); the work is done by the
pure parse and resolve modules.
"""

from __future__ import annotations

import codecs
import io
import multiprocessing
import os
import threading
import tokenize
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import plan07.evidence.factcache as factcache  # (not `from plan07.evidence`: no import cycle)
from plan07 import collector
from plan07.errors import InputError
from plan07.evidence.facts import ModuleFacts
from plan07.evidence.files import path_prefix, python_files
from plan07.evidence.layout import read_layout
from plan07.evidence.parse import is_test_file, parse_module
from plan07.evidence.resolve import ReconResult, build_recon

FILES_PER_WORKER = 64  # below this many files per process, forking costs more than it saves
MAX_WORKERS = 8
MIN_CPUS = 4


def _parse_files(repo: Path, rels: list[str], tests: dict[str, bool] | None = None
                 ) -> tuple[list[ModuleFacts], list[str]]:
    # ASTs and facts hold no reference cycles (collector.paused: ~10% of parsing)
    with collector.paused():
        return _parse_each(repo, rels, tests or {})


def _parse_each(repo: Path, rels: list[str], tests: dict[str, bool]
                ) -> tuple[list[ModuleFacts], list[str]]:
    """`tests`: the files whose test-module verdict the repo's layout changes from their name's
    (plan07.evidence.layout), and that verdict."""
    modules: list[ModuleFacts] = []
    warnings: list[str] = []
    caching = factcache.enabled()
    prefix = path_prefix(repo)
    for rel in rels:
        try:
            # (an unbuffered read of the whole file, not Path.read_bytes: 3x less CPU per file)
            with open(prefix + rel, "rb", buffering=0) as fh:  # noqa: PTH123
                data = fh.readall()
            test = tests.get(rel)
            k = factcache.key(rel, data, test) if caching else ""
            facts = factcache.get(k) if caching else None
            if facts is None:
                facts = parse_module(_decode(data), rel, test)
                if caching:
                    factcache.put(k, facts)
            modules.append(facts)
        except SyntaxError as exc:
            warnings.append(f"{rel}:{exc.lineno or 0}: does not parse ({exc.msg}); skipped")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            warnings.append(f"{rel}: cannot read ({exc}); skipped")
    return modules, warnings


def _decode(data: bytes) -> str:
    """The text `tokenize.open` reads: the PEP 263 coding line (or a BOM) honoured, universal
    newlines. Most files are UTF-8 with "\\n" line ends and no coding line in their first two
    lines: for them that text is `data.decode()` (a decoding error takes the general path, which
    raises what tokenize.open would)."""
    if b"\r" not in data and not data.startswith(codecs.BOM_UTF8):
        second = data.find(b"\n", data.find(b"\n") + 1)  # the end of line 2 (-1: none)
        if b"coding" not in (data if second < 0 else data[:second]):
            try:
                return data.decode()
            except UnicodeDecodeError:
                pass
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    with io.TextIOWrapper(io.BytesIO(data), encoding, line_buffering=True) as fh:
        return fh.read()


def auto_workers(n_files: int) -> int:
    """Parser processes for `n_files`: one per FILES_PER_WORKER files, at most one per CPU, and
    none below MIN_CPUS (measured on 2 busy CPUs: 2 processes were slower than 1, the facts
    pickled back cost more than the parse saved); 1 (no fork) when this process runs other
    threads, since forking a threaded process is unsafe."""
    cpus = os.cpu_count() or 1
    if (cpus < MIN_CPUS or threading.active_count() > 1
            or "fork" not in multiprocessing.get_all_start_methods()):
        return 1
    return max(1, min(cpus, MAX_WORKERS, n_files // FILES_PER_WORKER))


def read_modules(repo: Path, *, workers: int | None = None) -> tuple[list[ModuleFacts], list[str]]:
    """Every parsable module's facts (in file order), and one warning per file skipped."""
    if not repo.is_dir():
        raise InputError("not a directory; give the repository root", source=str(repo))
    files = python_files(repo)
    layout = read_layout(repo)  # the repo's own pytest configuration says what a test is
    tests = {f: t for f in files if (t := layout.is_test(f)) != is_test_file(f)}
    n = auto_workers(len(files)) if workers is None else max(1, workers)
    if n == 1 or threading.active_count() > 1:  # never fork a threaded process
        return _parse_files(repo, files, tests)
    size = -(-len(files) // (n * 4))  # 4 chunks per worker evens out big and small files
    chunks = [files[i:i + size] for i in range(0, len(files), size)]
    with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("fork")) as ex:
        parts = list(ex.map(_parse_files, [repo] * len(chunks), chunks, [tests] * len(chunks)))
    modules = [m for mods, _ in parts for m in mods]
    warnings = [w for _, ws in parts for w in ws]
    return modules, warnings  # chunks are contiguous slices of the sorted list: order is kept


def recon(repo: Path, *, workers: int | None = None) -> ReconResult:
    """The recon graph of the Python repository at `repo`; unreadable files become warnings.
    `workers`: parser processes (default: by size and CPU count; the result is the same)."""
    # one collector pause over parse and resolve (the facts and the graph hold no cycles: 15-20%
    # of build_recon on sympy); the facts are freed inside it, and the graph it leaves is
    # promoted, not rescanned as young objects by the first allocation after it
    with collector.paused(promote=True):
        modules, warnings = read_modules(repo, workers=workers)
        result = build_recon(modules)
        del modules
        result.warnings = warnings + result.warnings
    return result
