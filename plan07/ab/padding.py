"""Real-sized modules for generated tasks: seeded, ordinary helper code appended to each source
module the generator writes, so a file is the size of a real module (~120-260 lines) and the
fixed cost of planning is not measured against 10-line toys. Pure.

The helpers are plain, working Python (parsing, validation, formatting, small caches and value
classes); none is touched by a task's change, none shares a name or a line with a gold edit
(compose checks that every gold edit still applies exactly once, in gold order).
"""

from __future__ import annotations

import random

_HELPERS = (
    '''

def @P@_parse_pairs(text, *, sep=",", kv="="):
    """Parse "a=1,b=2" into a dict of stripped strings; empty items are skipped."""
    out = {}
    for item in text.split(sep):
        item = item.strip()
        if not item:
            continue
        key, _, value = item.partition(kv)
        if not key:
            raise ValueError(f"empty key in {item!r}")
        out[key.strip()] = value.strip()
    return out
''',
    '''

def @P@_chunked(items, size):
    """Split a sequence into lists of at most `size` items (the last may be shorter)."""
    if size <= 0:
        raise ValueError("size must be positive")
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
''',
    '''

class @C@Cache:
    """A tiny least-recently-used cache with a hit counter."""

    def __init__(self, capacity=64):
        self.capacity = capacity
        self._data = {}
        self.hits = 0
        self.misses = 0

    def get(self, key, default=None):
        if key in self._data:
            self.hits += 1
            value = self._data.pop(key)
            self._data[key] = value
            return value
        self.misses += 1
        return default

    def put(self, key, value):
        self._data.pop(key, None)
        self._data[key] = value
        while len(self._data) > self.capacity:
            self._data.pop(next(iter(self._data)))
''',
    '''

def @P@_slug(text, *, max_len=48):
    """Lower-case, ASCII, dash-separated; runs of other characters collapse to one dash."""
    out, dash = [], False
    for ch in text.lower():
        if ch.isascii() and ch.isalnum():
            out.append(ch)
            dash = False
        elif not dash and out:
            out.append("-")
            dash = True
    return "".join(out).strip("-")[:max_len]
''',
    '''

def @P@_clamp(value, low, high):
    """`value` limited to [low, high]; low > high is an error, not a silent swap."""
    if low > high:
        raise ValueError(f"empty range [{low}, {high}]")
    return max(low, min(high, value))


def @P@_percent(part, whole, *, places=1):
    """part / whole as a rounded percentage; 0 of 0 is 0 %."""
    if whole == 0:
        return 0.0
    return round(100.0 * part / whole, places)
''',
    '''

class @C@Window:
    """A fixed-size moving window with its running mean."""

    def __init__(self, size=5):
        if size < 1:
            raise ValueError("size must be >= 1")
        self.size = size
        self.values = []

    def push(self, value):
        self.values.append(value)
        if len(self.values) > self.size:
            self.values.pop(0)
        return self.mean()

    def mean(self):
        return sum(self.values) / len(self.values) if self.values else 0.0
''',
    '''

def @P@_merge_settings(base, override, *, strict=False):
    """A new dict: `base` updated by `override`; nested dicts are merged, not replaced."""
    out = dict(base)
    for key, value in override.items():
        if strict and key not in base:
            raise KeyError(f"unknown setting {key!r}")
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = @P@_merge_settings(out[key], value, strict=strict)
        else:
            out[key] = value
    return out
''',
    '''

def @P@_human_size(n):
    """Bytes as a short human string (1.5 KiB, 3.0 MiB ...)."""
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    size = float(n)
    for unit in units:
        if abs(size) < 1024 or unit == units[-1]:
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return f"{size:.1f} TiB"
''',
    '''

class @C@Registry:
    """Named factories; registering a name twice is an error."""

    def __init__(self):
        self._factories = {}

    def register(self, name):
        def deco(fn):
            if name in self._factories:
                raise ValueError(f"{name!r} is already registered")
            self._factories[name] = fn
            return fn
        return deco

    def create(self, name, *args, **kwargs):
        try:
            factory = self._factories[name]
        except KeyError:
            known = ", ".join(sorted(self._factories)) or "none"
            raise KeyError(f"unknown {name!r}; known: {known}") from None
        return factory(*args, **kwargs)
''',
    '''

def @P@_dedupe(items, *, key=None):
    """Items in first-seen order with duplicates (by `key`) dropped."""
    seen = set()
    out = []
    for item in items:
        k = key(item) if key else item
        if k in seen:
            continue
        seen.add(k)
        out.append(item)
    return out
''',
)


def pad(text: str, module: str, rng: random.Random, *, lines: tuple[int, int] = (120, 260)
        ) -> str:
    """`text` with helpers appended until it is within `lines` (seeded by `rng`); names are
    prefixed with the module's own name so no two modules share a helper."""
    want = rng.randint(*lines)
    stem = "".join(ch for ch in module if ch.isalnum() or ch == "_").strip("_") or "mod"
    cls = "".join(part.capitalize() for part in stem.split("_"))
    order = list(range(len(_HELPERS)))
    rng.shuffle(order)
    out = text
    for n, i in enumerate(order * 3):
        if out.count("\n") >= want:
            break
        tag = f"{stem}_{n}"
        out += _HELPERS[i].replace("@P@", f"_{tag}").replace("@C@", f"{cls}{n}")
    return out
