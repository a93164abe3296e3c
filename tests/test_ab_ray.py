"""`plan07 ab --ray`: the units on a real local Ray cluster (loopback only, no usage report,
nothing reaching the network) give the local runner's results.json byte for byte; a worker
SIGKILLed mid-unit is retried by Ray and reported, the results complete; a cluster that lacks
what the run needs is refused before any unit; without Ray, one line, exit 2."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plan07.cli import main

pytestmark = pytest.mark.usefixtures("no_pytest_plugins")
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason="ray is not installed (the scale extra)")
# 2 generated tasks of 3 obligations x 3 strategies: 6 units
ARGS = ["ab", "--tasks", "2", "--size", "3", "--toy-size", "--seed", "1", "--workers", "2",
        "--engine", "clingo", "--json"]
TOKEN = Path.home() / ".ray" / "auth_token"


def _stats() -> Iterator[tuple[int, list[str]]]:
    """(pid, the fields of /proc/PID/stat after the command) of every process."""
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                yield int(d.name), (d / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for pid, stat in _stats():
        kids.setdefault(int(stat[1]), []).append(pid)
    return kids


def descendants(pid: int) -> list[int]:
    """This process's descendants (the cluster it started: GCS, raylet, workers...)."""
    kids, out, todo = _children(), [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def _listening() -> dict[int, str]:
    """Listening TCP sockets: inode -> local address."""
    out = {}
    for name, v6 in (("tcp", False), ("tcp6", True)):
        try:
            lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] == "0A":  # LISTEN
                out[int(f[9])] = _addr(f[1].split(":")[0], v6)
    return out


def _addr(hexaddr: str, v6: bool) -> str:
    raw = bytes.fromhex(hexaddr)
    if not v6:
        return ".".join(str(b) for b in raw[::-1])
    words = [raw[i:i + 4][::-1].hex() for i in range(0, 16, 4)]
    return ":".join("".join(words)[i:i + 4] for i in range(0, 32, 4))


def listening_addresses(pids: list[int]) -> set[str]:
    """The addresses these processes listen on (TCP)."""
    socks, out = _listening(), set()
    for pid in pids:
        try:
            links = [fd.readlink().name for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:
            continue
        for link in links:
            if link.startswith("socket:[") and int(link[8:-1]) in socks:
                out.add(socks[int(link[8:-1])])
    return out


def ray_processes() -> list[int]:
    """This process's descendants that are Ray's (its GCS, raylet, workers, agents)."""
    out = []
    for pid in descendants(os.getpid()):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        # ray::Worker titles, gcs_server and raylet binaries, Ray's Python daemons (the agents,
        # monitor, log monitor): all run from the ray package or retitle themselves
        if cmd.startswith(b"ray::") or b"/site-packages/ray/" in cmd:
            out.append(pid)
    return out


LOOPBACK = {"127.0.0.1", "0000:0000:0000:0000:0000:0000:0000:0001",  # ::1
            "0000:0000:0000:0000:0000:ffff:7f00:0001"}  # ::ffff:127.0.0.1


class Watch(threading.Thread):
    """While a run goes on: the addresses the cluster listens on, and (with `kill`) one worker
    SIGKILLed while it runs a unit."""

    def __init__(self, kill: bool = False) -> None:
        super().__init__(daemon=True)
        self.kill, self.killed, self.addresses = kill, 0, set[str]()
        self.saw_ray = False
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.05):
            pids = descendants(os.getpid())
            self.addresses |= listening_addresses(pids)
            self.saw_ray = self.saw_ray or bool(ray_processes())
            if self.kill and not self.killed:
                for pid in pids:
                    try:
                        title = Path(f"/proc/{pid}/cmdline").read_bytes()
                    except OSError:
                        continue
                    if title.startswith(b"ray::plan07_ab_unit"):
                        os.kill(pid, signal.SIGKILL)  # a worker of our own cluster, mid-unit
                        self.killed = pid
                        break


@pytest.fixture
def watch() -> Iterator[Watch]:
    w = Watch()
    w.start()
    yield w
    w.stop.set()
    w.join()


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def commits(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A commits.jsonl of one real commit on a local checkout: a task whose snapshot is a
    directory on this machine (what --ray ships to the workers)."""
    repo = tmp_path_factory.mktemp("proj")
    (repo / "pkg").mkdir()
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "core.py").write_text("def area(w, h):\n    return w * h\n")
    (repo / "tests" / "test_core.py").write_text(
        "from pkg.core import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    (repo / "pkg" / "core.py").write_text(
        "def area(w, h, *, scale=1):\n    return w * h * scale\n")
    with (repo / "tests" / "test_core.py").open("a") as f:
        f.write("\n\ndef test_scale():\n    assert area(2, 3, scale=2) == 12\n")
    _git(repo, "commit", "-qam", "area: a scale keyword")
    out = tmp_path_factory.mktemp("commits") / "commits.jsonl"
    out.write_text(json.dumps({"id": "proj-scale", "repo_path": str(repo),
                               "commit": _git(repo, "rev-parse", "HEAD").strip(),
                               "request": "Add a scale keyword to area.",
                               "tests": "tests"}) + "\n")
    return out


def _mixed(commits: Path) -> list[str]:
    """1 generated task and 1 real commit (a snapshot), x 3 strategies: 6 units."""
    return [*ARGS[:2], "1", *ARGS[3:], "--commits", str(commits)]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory, commits: Path) -> Path:
    out = tmp_path_factory.mktemp("ab-local")
    assert main([*_mixed(commits), "--out", str(out)]) == 0
    return out


def _ray_run(out: Path, args: list[str] = ARGS) -> dict[str, Any]:
    token = TOKEN.stat().st_mtime if TOKEN.exists() else None
    assert main([*args, "--out", str(out), "--ray", "local"]) == 0  # a hang: pytest-timeout
    assert (TOKEN.stat().st_mtime if TOKEN.exists() else None) == token  # no ~/.ray write
    res: dict[str, Any] = json.loads((out / "results.json").read_text())
    return res


@needs_ray
@pytest.mark.slow
def test_ray_local_gives_the_local_runs_results_byte_for_byte_on_loopback_only(
        local_run: Path, commits: Path, tmp_path: Path, watch: Watch) -> None:
    res = _ray_run(tmp_path, _mixed(commits))
    assert [t["source"] for t in res["tasks"]] == ["generated", "commit"]
    for name in ("results.json", "report.md"):
        assert (tmp_path / name).read_bytes() == (local_run / name).read_bytes(), name
    assert watch.addresses, "the cluster's servers were never seen listening"
    assert watch.addresses <= LOOPBACK, watch.addresses
    assert watch.saw_ray
    assert not ray_processes()  # the cluster it started is gone


@needs_ray
@pytest.mark.slow
def test_a_worker_killed_mid_unit_is_retried_by_ray_and_reported(tmp_path: Path) -> None:
    """The killed unit's row is the one the local runner makes for it (every other row ran
    once, as in the test above); every unit is there, none salvaged."""
    from plan07.ab import runner
    from plan07.ab.faults import FaultConfig
    from plan07.ab.generator import generate_tasks

    w = Watch(kill=True)
    w.start()
    try:
        res = _ray_run(tmp_path)
    finally:
        w.stop.set()
        w.join()
    assert w.killed
    retried = res["retried"]
    assert retried
    assert all(n["attempts"] == 2 for n in retried), retried
    assert {n["outcome"] for n in retried} == {"completed after its worker died"}
    assert sorted((r["run"], r["task_index"], r["strategy"]) for r in res["rows"]) == sorted(
        (0, i, s) for i in range(2) for s in ("monolithic", "static", "plan07"))
    assert not [r for r in res["rows"] if r["note"]]
    tasks = generate_tasks(1, 2, size=3, max_size=30, real_size=False)
    cfg = runner.Config(tasks=2, seed=1, workers=2, engine="clingo", max_size=30,
                        real_size=False, faults=FaultConfig(p_first=0.15))
    assert res["config"] == json.loads(json.dumps(cfg.to_dict()))  # the run's own config
    runner.prepare(cfg)
    for n in retried:
        unit = (n["run"], n["task_index"], n["strategy"])
        row = next(r for r in res["rows"] if (r["run"], r["task_index"], r["strategy"]) == unit)
        assert row == json.loads(json.dumps(runner.run_one(tasks[unit[1]], cfg, unit)))
    report = (tmp_path / "report.md").read_text()
    assert "did not run exactly once on Ray" in report
    assert f"{retried[0]['task_id']} run 0: 2 attempts, completed after its worker died" in report


def test_without_ray_it_is_one_line_exit_2_nothing_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what an install without the extra finds
    out = tmp_path / "ab"
    assert main([*ARGS, "--out", str(out), "--ray", "local"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: --ray needs the scale extra, which is not installed; install it "
                   "with pip install 'ray>=2.50,<3'")
    assert not out.exists()


@pytest.mark.parametrize(("args", "needle"), [
    (["--ray", " "], "--ray: '': use local, auto or HOST:PORT"),
    (["--ray", "ray://head:10001"], "--ray: 'ray://head:10001': use local, auto or HOST:PORT"),
    (["--ray", "127.0.0.1"], "use local, auto or HOST:PORT"),
    (["--ray", "local", "--ray-retries", "-1"], "--ray-retries must be >= 0"),
])
def test_bad_ray_flags_are_one_line_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str) -> None:
    out = tmp_path / "ab"
    assert main([*ARGS, "--out", str(out), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ")
    assert needle in err
    assert len(err.splitlines()) == 1
    assert not out.exists()


def _session(sid: int) -> list[int]:
    """The processes still in session `sid`."""
    return [pid for pid, stat in _stats() if int(stat[4]) == sid]


@needs_ray
@pytest.mark.slow
def test_ctrl_c_ends_the_outstanding_units_and_writes_nothing(tmp_path: Path) -> None:
    """Ctrl-C in a terminal: SIGINT to the whole foreground group, after the first unit is
    back. The run stops (exit 130, one line), nothing is written, no Ray process is left."""
    out = tmp_path / "ab"
    argv = [sys.executable, "-c", "from plan07.entry import run; run()",
            *[a for a in ARGS if a != "--json"], "--out", str(out), "--ray", "local"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("[1/6]"):
                os.killpg(proc.pid, signal.SIGINT)
                break
        lines += proc.stderr.readlines()  # to the end: the process and its cluster are gone
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    rest = "".join(lines[lines.index(next(x for x in lines if x.startswith("[1/6]"))) + 1:])
    assert proc.returncode == 130, "".join(lines)
    assert rest.strip().splitlines()[-1] == "error: interrupted; nothing written", rest
    assert not [line for line in rest.splitlines() if line.startswith("[")], rest  # no more
    assert not out.exists()
    deadline = time.monotonic() + 20
    while _session(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _session(proc.pid)


def test_a_snapshot_travels_packed_and_lands_the_same_tree(tmp_path: Path) -> None:
    """What a worker gets holds no path of the driver's; unpacked, it is the same tree (a link
    kept as a link), and a worker keeps only the last KEEP_SNAPSHOTS unpacked."""
    from dataclasses import replace

    from plan07.ab import shipping
    from plan07.ab.generator import generate_tasks
    from plan07.ab.tasks import write_repo

    snap = tmp_path / "snap"
    (snap / "pkg").mkdir(parents=True)
    (snap / "pkg" / "core.py").write_text("X = 1\n")
    (snap / "link.py").symlink_to("pkg/core.py")
    task = replace(generate_tasks(1, 1, size=3, real_size=False)[0], files={},
                   snapshot=str(snap))
    s = shipping.ship(task)
    assert s.task.snapshot is None  # nothing names a path of the driver's
    repo = write_repo(shipping.unship(s), tmp_path / "repo")
    assert (repo / "pkg" / "core.py").read_text() == "X = 1\n"
    assert (repo / "link.py").readlink() == Path("pkg/core.py")
    assert shipping.unship(s).snapshot == shipping.unship(s).snapshot  # unpacked once
    assert shipping.ship(generate_tasks(1, 1, size=3)[0]).tar is None  # files travel as they are
    dirs = []
    for k in range(shipping.KEEP_SNAPSHOTS + 1):
        (snap / "pkg" / "core.py").write_text(f"X = {k}\n")
        dirs.append(Path(str(shipping.unship(shipping.ship(task)).snapshot)))
    assert [d.exists() for d in dirs] == [False] + [True] * shipping.KEEP_SNAPSHOTS


@needs_ray
def test_an_address_where_no_cluster_answers_is_one_line_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ab"
    assert main([*ARGS, "--out", str(out), "--ray", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --ray: 127.0.0.1:1: no Ray cluster answers there")
    assert len(err.splitlines()) == 1
    assert not out.exists()
