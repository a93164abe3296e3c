"""What a Ray worker is given for one A/B unit and runs (plan07.ab.cluster submits it): the task
with its snapshot packed (`ship`), unpacked on the worker, never read from the driver's disk
(`plan07_ab_unit`); and the check, before any unit, that every node runs these plan07 sources
with what the tasks need (`preflight`). I/O (tar archives, the worker's temporary files).
"""

from __future__ import annotations

import atexit
import hashlib
import io
import os
import shutil
import socket
import tarfile
import tempfile
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from plan07 import extras
from plan07.ab.runner import Config, Unit
from plan07.ab.tasks import Task
from plan07.errors import InputError

INSTALL = extras.install_hint("scale")
PROBE_TIMEOUT_S = 120.0
KEEP_SNAPSHOTS = 2  # unpacked snapshots a worker keeps (units are submitted task by task)
# plan07-ray-snap-PID-*: a worker Ray ends at the run's end runs no atexit; the next run's probe
# on that node removes what a worker no longer alive left
SNAP_PREFIX = "plan07-ray-snap-"


@dataclass(frozen=True)
class Shipped:
    """A task as a worker gets it: `task.snapshot` (a directory on the driver) replaced by
    `tar`, that directory as tar.gz, and `key`, its digest."""

    task: Task
    tar: bytes | None = None
    key: str = ""


def ship(task: Task) -> Shipped:
    if task.snapshot is None:  # generated and example tasks carry their files
        return Shipped(task)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tf:
        tf.add(task.snapshot, arcname=".")
    data = buf.getvalue()
    return Shipped(replace(task, snapshot=None), data, hashlib.sha256(data).hexdigest()[:16])


_UNPACKED: OrderedDict[str, Path] = OrderedDict()


def unship(s: Shipped) -> Task:
    """The task as this worker runs it: its snapshot unpacked here (once for the units that
    follow; the last KEEP_SNAPSHOTS are kept, removed when the worker exits)."""
    return s.task if s.tar is None else replace(s.task, snapshot=_unpacked(s))


def _unpacked(s: Shipped) -> str:
    assert s.tar is not None
    if s.key in _UNPACKED:
        _UNPACKED.move_to_end(s.key)
        return str(_UNPACKED[s.key])
    if not _UNPACKED:
        atexit.register(_clean)
    root = Path(tempfile.mkdtemp(prefix=f"{SNAP_PREFIX}{os.getpid()}-"))
    with tarfile.open(fileobj=io.BytesIO(s.tar), mode="r:gz") as tf:
        tf.extractall(root, filter="tar")  # our own archive: links kept as copytree keeps them
    _UNPACKED[s.key] = root
    while len(_UNPACKED) > KEEP_SNAPSHOTS:
        shutil.rmtree(_UNPACKED.popitem(last=False)[1], ignore_errors=True)
    return str(root)


def _clean() -> None:
    while _UNPACKED:
        shutil.rmtree(_UNPACKED.popitem()[1], ignore_errors=True)


def plan07_ab_unit(s: Shipped, config: Config, unit: Unit) -> tuple[dict[str, Any], int]:
    """Run on a Ray worker: the unit's row (as the local runner makes it) and which attempt of
    it this was (0: the first; Ray retries a unit whose worker died)."""
    from plan07.ab import runner

    runner.prepare(config)
    return runner.run_one(unship(s), config, unit), _attempt()


def _attempt() -> int:
    import ray

    try:  # not in ray.get_runtime_context(); tests/test_ab_ray.py pins that it is there
        worker = ray._private.worker.global_worker.core_worker
        return int(worker.get_current_task_attempt_number())
    except AttributeError:
        return 0


def source_digest() -> str:
    """A digest of the plan07 this process runs: its code, schemas and rule file."""
    import plan07
    from plan07 import rules_path

    pkg = Path(plan07.__file__).parent
    h = hashlib.sha256()
    for p in sorted(pkg.rglob("*")):
        if p.suffix in (".py", ".json") and "__pycache__" not in p.parts:
            h.update(f"{p.relative_to(pkg).as_posix()}\0".encode() + p.read_bytes() + b"\0")
    h.update(b"rules\0" + rules_path().read_bytes())
    return h.hexdigest()[:16]


def _sweep() -> None:
    """Remove the unpacked snapshots of workers that are gone (this node's temp directory)."""
    if not Path("/proc/self").exists():  # no way to tell a live pid here: leave them
        return
    for d in Path(tempfile.gettempdir()).glob(f"{SNAP_PREFIX}*-*"):
        pid = d.name.removeprefix(SNAP_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists() and d.is_dir():
            shutil.rmtree(d, ignore_errors=True)


def plan07_ab_probe(pythons: list[str], model: bool) -> dict[str, Any]:
    """Run on each node before any unit: this node's plan07 sources and what it lacks (and
    the snapshots dead workers left there, removed)."""
    _sweep()
    missing = [f"no interpreter {p} (a task's `python`; every node needs it at the same path)"
               for p in pythons if not Path(p).exists()]
    if model and not os.environ.get("PLAN07_LLM_BASE_URL", "").strip():
        missing.append("PLAN07_LLM_BASE_URL is not set in its workers' environment (export it, "
                       "and PLAN07_LLM_API_KEY, before `ray start`)")
    return {"node": socket.gethostname(), "digest": source_digest(), "missing": missing}


def preflight(ray: Any, tasks: list[Task], config: Config) -> None:
    """Every live node runs this plan07 and has what the tasks need; else one line, exit 2,
    before any unit runs."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    probe = ray.remote(num_cpus=0, max_retries=0)(plan07_ab_probe)
    pythons = sorted({t.python for t in tasks if t.python})
    model = any(e.startswith("openai:") for e in (config.executor, config.ablation_executor))
    refs = [probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"],
                                                                             soft=False)
                          ).remote(pythons, model)
            for n in ray.nodes() if n.get("Alive")]
    try:
        answers = ray.get(refs, timeout=PROBE_TIMEOUT_S)
    except ray.exceptions.GetTimeoutError:
        raise InputError(f"the cluster's nodes did not answer in {PROBE_TIMEOUT_S:.0f} s",
                         field="--ray") from None
    except ray.exceptions.RayError as exc:
        cause = getattr(exc, "cause", None) or exc
        raise InputError(f"a node cannot run plan07's units ({type(cause).__name__}: "
                         f"{' '.join(str(cause).split())[:200]}); install this plan07 on "
                         f"every node (and the scale extra: {INSTALL})", field="--ray") from None
    here = source_digest()
    for a in answers:
        if a["digest"] != here:
            raise InputError(f"node {a['node']} runs other plan07 sources (digest "
                             f"{a['digest']}, here {here}); install this one on every node",
                             field="--ray")
        if a["missing"]:
            raise InputError(f"node {a['node']}: {'; '.join(a['missing'])}", field="--ray")
