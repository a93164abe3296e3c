"""What a check may see and what plan07 may print (docs/safety.md "Secrets"). I/O: os.environ,
/proc/self, libc.

* **The check's environment is an allowlist** (`check_env`): PATH, HOME, the locale (LANG,
  LANGUAGE, LC_*), the temp dir (TMPDIR, TMP, TEMP), TZ, TERM, USER/LOGNAME, the interpreter's
  own variables (VIRTUAL_ENV, CONDA_PREFIX, PYTHONPATH, PYTHONHASHSEED, ...), PYTEST_* (so
  `PYTEST_DISABLE_PLUGIN_AUTOLOAD` or `PYTEST_ADDOPTS` still reach pytest), and the names the
  repo lists itself under `[tool.plan07] check-env = [...]` in its pyproject.toml (a name or a
  `PREFIX_*` glob). A name that looks like a credential (`is_secret_name`) never passes, not even
  when the repo's config names it: the repo is what the check runs, it must not be able to ask
  for a token. Which interpreter and argv run the check is plan07.gate.grammar's business.
* **Secrets are redacted from every output** (`redact`): the value of every variable plan07 saw
  whose name looks like a credential (`*_KEY`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*`, `*PASSWD*`,
  `*CREDENTIAL*`, `*_AUTH`, PLAN07_LLM_API_KEY, ...), the user:password part and key-like query
  values of every URL-valued variable (PLAN07_LLM_BASE_URL, HTTPS_PROXY, PIP_INDEX_URL, ...), and,
  whatever the source, `scheme://user:pass@` and `Bearer <token>` shapes. The CLI's output and
  error lines, verdict output, audit rows, plan.json and checkpoint records go through it.
* **A check cannot read them from its parent** (`shield`): before the first check is spawned,
  the credential values are overwritten in this process's initial environment block (what
  `/proc/<pid>/environ` shows) and removed from libc's environ; os.environ, the Python copy the
  model client reads, keeps them. While a check runs the process is not dumpable
  (PR_SET_DUMPABLE 0), so a check of the same user cannot read this process's memory through
  /proc/<ppid>/mem either. A grandparent's environment (the shell that started plan07) is out of
  plan07's reach: do not export credentials a test must not see into that shell.
* **A check ends with its processes** (plan07.gate.supervisor; `child_setup` where no supervisor
  runs): its own session, PR_SET_PDEATHSIG SIGKILL.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import signal
import sys
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

ALLOW_NAMES = frozenset({
    "PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "TMP", "TEMP", "TZ", "TERM", "USER",
    "LOGNAME", "SHELL", "COLUMNS", "NO_COLOR", "FORCE_COLOR", "CI", "SOURCE_DATE_EPOCH",
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYENV_VERSION", "LD_LIBRARY_PATH",
    "PYTHONPATH", "PYTHONHASHSEED", "PYTHONUTF8", "PYTHONIOENCODING", "PYTHONWARNINGS",
    "PYTHONDEVMODE", "PYTHONFAULTHANDLER", "PYTHONNOUSERSITE", "PYTHONSAFEPATH",
    "SYSTEMROOT", "COMSPEC", "PATHEXT",
})
ALLOW_PREFIXES = ("LC_", "PYTEST_")
CONFIG_KEY = "check-env"  # [tool.plan07] check-env = ["DJANGO_SETTINGS_MODULE", "MYAPP_*"]

_SECRET_NAME = re.compile(
    r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE|SESSION_ID|PRIVATE|"
    r"_AUTH|^AUTH|_PAT$|_PWD$|DSN$|SIGNATURE)", re.I)
_NOT_SECRET = frozenset({"PYTHONHASHSEED", "KEYTIMEOUT", "GPG_TTY", "SSH_AUTH_SOCK",
                         "HF_HUB_DISABLE_TOKEN", "KEYBOARD", "XKB_DEFAULT_LAYOUT"})
# Well-known token shapes, redacted wherever they appear (even when no variable held them).
_TOKEN_SHAPES = re.compile(
    r"(?<![A-Za-z0-9])(sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]"
    r"{20,}|hf_[A-Za-z0-9]{20,}|xox[abpors]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|"
    r"glpat-[A-Za-z0-9_-]{20,})")
_TOKEN_PREFIXES = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "hf_", "xox",
                   "AKIA", "glpat-")  # every _TOKEN_SHAPES match starts with one
_URL_CREDS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@]+(?::[^/\s@]*)?)@")
_BEARER = re.compile(
    r"\b(Bearer|Basic|bearer)\s+(?=[A-Za-z0-9._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{12,}")
_AUTH_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key)(\s*[:=]\s*)([^\s,;\"'}]+)")
_KEY_PARAMS = re.compile(r"(?i)(key|token|secret|password|passwd|sig|signature|auth)")
MIN_SECRET_CHARS = 6  # shorter values ("1", "true") are never treated as secrets
REDACTED = "[redacted]"


@lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True iff an environment variable of this name is taken to hold a credential."""
    return name.upper() not in _NOT_SECRET and bool(_SECRET_NAME.search(name))


def _plausible(value: str) -> bool:
    v = value.strip()
    return len(v) >= MIN_SECRET_CHARS and v.lower() not in ("true", "false", "none", "null")


def secrets_of(env: Mapping[str, str]) -> set[str]:
    """The credential values `env` holds: secret-named variables' values, and the userinfo and
    key-like query values of every URL-valued variable."""
    out: set[str] = set()
    for name, value in env.items():
        if not value:
            continue
        if is_secret_name(name) and _plausible(value):
            out.add(value)
            out.add(value.strip())
        if "://" in value:
            for part in value.split():
                out |= _url_secrets(part)
        for m in _TOKEN_SHAPES.finditer(value):
            out.add(m.group(0))
    return {s for s in out if _plausible(s)}


def _url_secrets(url: str) -> set[str]:
    from urllib.parse import parse_qsl, urlsplit

    try:
        u = urlsplit(url)
    except ValueError:
        return set()
    out = set()
    if u.password:
        out.add(u.password)
    if u.username and u.password is not None or (u.username and "@" in u.netloc):
        out.add(u.username)
        userinfo = u.netloc.rsplit("@", 1)[0]
        out.add(userinfo)
    for k, v in parse_qsl(u.query, keep_blank_values=False):
        if _KEY_PARAMS.search(k):
            out.add(v)
    return out


_seen: set[str] = set()


def remember(*values: str) -> None:
    """Add credential values that did not come from the environment (a key given in code)."""
    _seen.update(v for v in values if v and _plausible(v))


_environ_secrets: tuple[tuple[tuple[str, str], ...], frozenset[str]] = ((), frozenset())


def known_secrets() -> set[str]:
    """Every credential value plan07 has seen: in os.environ now, captured at the first
    `shield`, or given to `remember`. (`secrets_of(os.environ)` is recomputed only when the
    environment changed: every git call and every redaction asks.)"""
    global _environ_secrets
    items = tuple(os.environ.items())
    if items != _environ_secrets[0]:
        _environ_secrets = (items, frozenset(secrets_of(os.environ)))
    _seen.update(_environ_secrets[1])
    return set(_seen)


def redact(text: str, extra: Iterable[str] = ()) -> str:
    """`text` with every known credential replaced by `[redacted]` (also in its JSON-escaped
    form), and URL userinfo, `Bearer <token>` and well-known token shapes redacted."""
    if not text:
        return text
    values = known_secrets() | {v for v in extra if v and _plausible(v)}
    for v in sorted(values, key=len, reverse=True):
        if v in text:
            text = text.replace(v, REDACTED)
        escaped = _json_escaped(v)
        if escaped != v and escaped in text:
            text = text.replace(escaped, REDACTED)
    # each pattern runs only where a literal every match holds occurs (a substring search is
    # far cheaper than a regex scan of a large document, and most hold none)
    if "://" in text and "@" in text:
        text = _URL_CREDS.sub(lambda m: m.group(1) + REDACTED + "@", text)
    if "Bearer" in text or "Basic" in text or "bearer" in text:
        text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    lowered = text.lower()
    if "authorization" in lowered or "api-key" in lowered:
        text = _AUTH_HEADER.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)
    if any(p in text for p in _TOKEN_PREFIXES):
        text = _TOKEN_SHAPES.sub(REDACTED, text)
    return text


def _json_escaped(v: str) -> str:
    import json

    return json.dumps(v, ensure_ascii=False)[1:-1]


def redact_data(value: Any) -> Any:
    """A JSON-like value with every string redacted (dict keys included)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_data(v) for v in value]
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_data(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------------------------
# The check's environment


def _config_names(repo: Path | None) -> list[str]:
    """`[tool.plan07] check-env` of the repo's pyproject.toml: names or `PREFIX_*` globs."""
    if repo is None:
        return []
    from plan07.caps import CONFIG_MAX_BYTES

    path = repo / "pyproject.toml"
    if not path.is_file() or path.stat().st_size > CONFIG_MAX_BYTES:
        return []
    import tomllib

    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    names = data.get("tool", {}).get("plan07", {}).get(CONFIG_KEY, [])
    if not isinstance(names, list):
        return []
    return [n for n in names
            if isinstance(n, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\*?", n)]


def allowed(name: str, extra: Iterable[str] = ()) -> bool:
    """May the variable `name` reach a check? Never when it looks like a credential."""
    if is_secret_name(name):
        return False
    if name in ALLOW_NAMES or name.startswith(ALLOW_PREFIXES):
        return True
    return any(fnmatch.fnmatchcase(name, pat) for pat in extra)


def check_env(base: Mapping[str, str] | None = None, *, repo: Path | None = None
              ) -> dict[str, str]:
    """The environment a check runs with: the allowlist over `base` (default os.environ), the
    repo's own `[tool.plan07] check-env` names, no bytecode written into the repo; and no value
    that is a known credential, whatever its name."""
    src = os.environ if base is None else base
    extra = _config_names(repo)
    values = known_secrets() | secrets_of(src)
    env = {k: v for k, v in src.items()
           if allowed(k, extra) and v not in values and not _URL_CREDS.search(v)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def tool_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for plan07's own helper processes (git): everything but credentials
    (a repo's git config may name filters or hooks that run with it)."""
    src = os.environ if base is None else base
    values = known_secrets()
    return {k: v for k, v in src.items() if not is_secret_name(k) and v not in values}


@contextmanager
def environ(values: Mapping[str, str]) -> Any:
    """This process's environment with `values` set for the block, each variable restored (or
    removed) after."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# ---------------------------------------------------------------------------------------------
# Keeping a check out of this process: /proc/<ppid>/environ, /proc/<ppid>/mem, orphans

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3


@cache
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:  # glibc's soname first: find_library runs `ldconfig -p` (a process per check)
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        pass
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


_shielded = False


def shield() -> None:
    """Overwrite every credential value in this process's initial environment block (what
    /proc/self/environ shows) and drop it from libc's environ; os.environ keeps its copy.
    Idempotent; a no-op where /proc or libc is not there (then only the allowlist protects)."""
    global _shielded
    if _shielded:
        return
    _shielded = True
    known_secrets()  # capture them before the block is overwritten
    libc = _libc()
    if libc is None:
        return
    names = [k for k in os.environ if is_secret_name(k) or os.environ[k] in _seen]
    for k in names:
        with contextlib.suppress(OSError):
            os.unsetenv(k)  # libc's environ only: os.environ keeps the value for plan07's use
    try:
        block = Path("/proc/self/environ").read_bytes()
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # env_start, env_end (fields 50, 51)
    except (OSError, ValueError, IndexError):
        return
    if end - start < len(block):
        return
    offset = 0
    for entry in block.split(b"\0"):
        name, eq, value = entry.partition(b"=")
        if eq and value:
            text_name = name.decode("utf-8", "replace")
            text_value = value.decode("utf-8", "replace")
            if is_secret_name(text_name) or text_value in _seen or _has_secret(text_value):
                at = start + offset + len(name) + 1
                _memset(at, len(value))
        offset += len(entry) + 1


def _memset(address: int, n: int) -> None:
    import ctypes

    ctypes.memset(address, ord("x"), n)


def _has_secret(value: str) -> bool:
    return any(s in value for s in _seen)


@contextmanager
def undumpable() -> Any:
    """While the block runs, this process is not dumpable: a process of the same user (a check)
    cannot read its /proc/<pid>/mem or environ (root still can)."""
    libc = _libc()
    before = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) if libc is not None else -1
    if libc is not None:
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    try:
        yield
    finally:
        if libc is not None and before > 0:
            libc.prctl(PR_SET_DUMPABLE, before, 0, 0, 0)


def child_setup(parent: int) -> Any:
    """A `preexec_fn` for a check: SIGKILL when plan07 dies (PR_SET_PDEATHSIG), and exit at once
    if plan07 already died between fork and prctl."""
    libc = _libc()
    if libc is None:
        return None
    prctl = libc.prctl

    def setup() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(137)

    return setup
