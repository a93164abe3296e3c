"""Where a repository keeps its tests, as its own pytest configuration says (docs/evidence.md
"Test layout"): which files are test modules (`python_files`), which folders pytest never
collects (`norecursedirs`: fixtures and example projects such as pytest's
`testing/example_scripts`), and where its tests live (`testpaths`). I/O: reads pytest.ini,
pyproject.toml, tox.ini and setup.cfg, in the order pytest does; the matching itself is pure.

Without a configuration: pytest's defaults (`test_*.py`, `*_test.py`), Django's `tests.py`, and
pytest's default `norecursedirs`.
"""

from __future__ import annotations

import configparser
import fnmatch
import posixpath
from dataclasses import dataclass
from pathlib import Path

DEFAULT_FILES = ("test_*.py", "*_test.py", "tests.py")
# pytest's own default norecursedirs (virtualenvs and build output recon never reads anyway)
DEFAULT_NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv",
                     "{arch}")


@dataclass(frozen=True)
class TestLayout:
    """The repository's test layout (the module docstring). Pure value."""

    __test__ = False  # not a pytest test class

    python_files: tuple[str, ...] = DEFAULT_FILES
    norecurse: tuple[str, ...] = DEFAULT_NORECURSE
    testpaths: tuple[str, ...] = ()
    source: str = "default"  # the file the configuration came from

    def is_test(self, rel: str) -> bool:
        """True when pytest collects the repo-relative file `rel` as a test module: its name
        (or, for a pattern with a '/', its path) matches `python_files`, and no folder above it
        is one pytest does not recurse into."""
        rel = rel.replace("\\", "/").removeprefix("./")
        if not rel.endswith(".py"):
            return False
        base = posixpath.basename(rel)
        if not any(_match(rel, base, p) for p in self.python_files):
            return False
        return not self.ignored_dir(posixpath.dirname(rel))

    def ignored_dir(self, folder: str) -> bool:
        """True when `folder` (repo-relative) or a folder above it is one pytest skips."""
        parts = [p for p in folder.split("/") if p]
        for i in range(len(parts)):
            path = "/".join(parts[: i + 1])
            for pat in self.norecurse:
                if "/" in pat.strip("/"):
                    if fnmatch.fnmatchcase(path, pat.strip("/")):
                        return True
                elif fnmatch.fnmatchcase(parts[i], pat):
                    return True
        return False


def _match(rel: str, base: str, pattern: str) -> bool:
    if "/" in pattern:  # pytest matches a pattern with a separator against the whole path
        return fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, "*/" + pattern)
    return fnmatch.fnmatchcase(base, pattern)


def _split(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list):
        return tuple(str(v) for v in value if isinstance(v, str | int | float))
    return ()


def _ini(path: Path, section: str) -> dict[str, str] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text("utf-8", errors="replace"))
    except (OSError, configparser.Error):
        return None
    return dict(parser[section]) if parser.has_section(section) else None


def _config(repo: Path) -> tuple[dict[str, object], str] | None:
    """The pytest options of the first configuration file pytest would read."""
    root = Path(repo)
    for name, section in (("pytest.ini", "pytest"), (".pytest.ini", "pytest")):
        if (root / name).is_file():
            got = _ini(root / name, section)
            return (dict(got or {}), name)  # pytest.ini counts even without the section
    if (root / "pyproject.toml").is_file():
        import tomllib

        try:
            data = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            data = {}
        opts = data.get("tool", {}).get("pytest", {}).get("ini_options") \
            if isinstance(data.get("tool"), dict) else None
        if isinstance(opts, dict):
            return opts, "pyproject.toml"
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        if (root / name).is_file():
            got = _ini(root / name, section)
            if got is not None:
                return dict(got), name
    return None


def read_layout(repo: Path) -> TestLayout:
    """The test layout the repository's pytest configuration gives (the module docstring)."""
    found = _config(repo)
    if found is None:
        return TestLayout()
    opts, source = found
    files = _split(opts.get("python_files", "")) or DEFAULT_FILES
    norecurse = _split(opts.get("norecursedirs", "")) if "norecursedirs" in opts \
        else DEFAULT_NORECURSE
    paths = tuple(p.strip("/") for p in _split(opts.get("testpaths", "")) if p.strip("/"))
    return TestLayout(tuple(files), tuple(norecurse), paths, source)
