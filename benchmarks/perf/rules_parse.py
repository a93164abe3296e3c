"""Row "rules file parse per process": `load_program()` in a fresh process against unpickling the
parsed program.

    .venv/bin/python benchmarks/perf/rules_parse.py [--runs 15]

Each figure is the CPU time of getting the program, measured inside a fresh child process (so
no in-process memo helps), median of `--runs` interleaved runs:
  floor     = `import plan07.engine.ir` (the classes the pickle names) and `pickle.loads` of the
              parsed rules/ordering.dl (its bytes already in memory),
  cached    = `import plan07.engine` and `load_program()` with its cache warm (read + hash the
              file, find the pickle in the user cache, unpickle),
  uncached  = the same with the cache off (PLAN07_CACHE_DIR=off: lark import, grammar, parse,
              stratify) — what every process paid before the cache.
Both children import `pickle` and `hashlib` before the clock starts (the floor needs them too),
and run as a user's Python does, writing and reading bytecode (the first run fills both caches).
The cache goes to a temporary directory, never the user's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

PLAN07 = """
import pickle, hashlib, time
t = time.process_time()
import plan07.engine as e
u = time.process_time()
e.load_program()
print(time.process_time() - t, time.process_time() - u)
"""
FLOOR = """
import pickle, hashlib, time, sys
data = open(sys.argv[1], "rb").read()
t = time.process_time()
import plan07.engine.ir
u = time.process_time()
pickle.loads(data)
print(time.process_time() - t, time.process_time() - u)
"""


def timed(code: str, env: dict[str, str], *args: str) -> tuple[float, float]:
    """(CPU seconds with the imports, of the call alone) in a fresh process."""
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, check=True,
                         capture_output=True, text=True).stdout
    both, call = out.strip().splitlines()[-1].split()
    return float(both), float(call)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args(argv)
    print(common.load_avg())
    with tempfile.TemporaryDirectory(prefix="plan07-rules-cache-") as tmp:
        # as a user's Python runs: bytecode is written and read (a sandbox's
        # PYTHONDONTWRITEBYTECODE would have every child compile plan07 from source)
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        on = {**base, "PLAN07_CACHE_DIR": tmp}
        off = {**base, "PLAN07_CACHE_DIR": "off"}
        timed(PLAN07, on)  # fills the cache
        pickles = list(Path(tmp, "rules").glob("*.pickle"))
        if len(pickles) != 1:
            raise SystemExit(f"error: expected one cache entry, found {len(pickles)}")
        size = pickles[0].stat().st_size
        times: dict[str, list[tuple[float, float]]] = {"floor": [], "cached": [],
                                                       "uncached": []}
        for _ in range(args.runs):
            times["floor"].append(timed(FLOOR, off, str(pickles[0])))
            times["cached"].append(timed(PLAN07, on))
            times["uncached"].append(timed(PLAN07, off))
    t = {k: statistics.median(a for a, _ in v) for k, v in times.items()}
    c = {k: statistics.median(b for _, b in v) for k, v in times.items()}
    print(f"CPU ms (median of {args.runs} fresh processes), the call alone: floor (unpickle) "
          f"{c['floor'] * 1e3:.2f}, load_program cached {c['cached'] * 1e3:.2f}, uncached "
          f"{c['uncached'] * 1e3:.1f}; with the imports: {t['floor'] * 1e3:.1f}, "
          f"{t['cached'] * 1e3:.1f}, {t['uncached'] * 1e3:.1f}; the pickle is {size} bytes")
    common.result("rules file parse per process", "load_program (cached) / unpickle",
                  c["cached"] / c["floor"], 1.5, floor_ms=round(c["floor"] * 1e3, 2),
                  plan07_ms=round(c["cached"] * 1e3, 2),
                  uncached_ms=round(c["uncached"] * 1e3, 1),
                  uncached_ratio=round(c["uncached"] / c["floor"], 1),
                  with_imports_ratio=round(t["cached"] / t["floor"], 3))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
