"""The A/B's units as Ray tasks (`plan07 ab --ray ADDRESS`), gathered as they finish. I/O.

A unit (run, task, strategy) is one Ray task given what the local runner gives it: the task,
its snapshot packed and shipped with it (`plan07.ab.shipping`: never read from the driver's
disk), and the config; the row it returns is the local runner's row. A worker that dies is
retried by Ray (`max_retries`); a unit that ran more than once, or was lost once its retries
were spent (then also a salvaged, unresolved row with the reason), is listed in results.json's
`retried`, never dropped. Ctrl-C ends the job, and with it every unit still out. Units are
submitted task by task in a window of twice the cluster's CPUs, so only the snapshots in flight
are held in the object store. Ray is optional (the scale extra, plan07.extras) and imported here
only.
"""

from __future__ import annotations

import functools
import ipaddress
import secrets
import shutil
import socket
import tempfile
from collections import Counter, deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from plan07 import extras
from plan07.ab import shipping
from plan07.ab.runner import Config, Execute, Progress, Unit, salvaged_row
from plan07.ab.tasks import Task
from plan07.errors import InputError
from plan07.sandbox import environ

INSTALL = shipping.INSTALL
MAX_RETRIES = 3  # Ray's own default for a task whose worker dies
CONNECT_TIMEOUT_S = 5.0
# A cluster this process starts (`--ray local`): the node's address is 127.0.0.1, so every Ray
# server listens on loopback only (with the default, they listen on every interface); no usage
# report; a token of its own in the environment rather than one written to ~/.ray/auth_token.
LOCAL_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0",
             "RAY_AUTH_MODE": "token"}


@functools.cache
def _token() -> str:
    """One token for every cluster this process starts (Ray's client keeps the first it read)."""
    return secrets.token_hex(32)


def require(address: str) -> None:
    """Refuse `--ray ADDRESS` in one line, before any work: Ray not installed, or an address
    that is none of local, auto, HOST:PORT."""
    _endpoint(address)
    if not extras.available("scale"):
        raise extras.missing("scale", "--ray")


def _endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) of HOST:PORT; None for `local` and `auto`."""
    if address in ("local", "auto"):
        return None
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "://" in address:
        raise InputError(f"{address!r}: use local, auto or HOST:PORT (a head node's GCS "
                         "address, as `ray start --head` prints it)", field="--ray")
    return host.strip("[]"), int(port)


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextmanager
def connect(address: str, *, cpus: int) -> Iterator[Any]:
    """Ray, connected: `local` starts a loopback-only cluster of `cpus` CPUs on this machine
    (stopped on exit, its files removed); `auto` or HOST:PORT joins a running one (`ray start
    --head`), which keeps running."""
    local, endpoint = address == "local", _endpoint(address)
    env = {**LOCAL_ENV, "RAY_AUTH_TOKEN": _token()} if local else {}
    if endpoint is not None:
        try:  # Ray itself would retry for minutes
            socket.create_connection(endpoint, timeout=CONNECT_TIMEOUT_S).close()
        except OSError as exc:
            raise InputError(f"{address}: no Ray cluster answers there ({exc.strerror or exc})"
                             "; start one with `ray start --head`", field="--ray") from None
        if _loopback(endpoint[0]):  # else Ray swaps it for this machine's own address
            env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    temp = tempfile.mkdtemp(prefix="plan07-ray-") if local else None
    if temp is not None:  # the cluster's files and every temporary file of its workers (the
        env["TMPDIR"] = temp  # units' repos, unpacked snapshots): removed with it at the end
    try:
        with environ(env):
            import ray

            try:
                if local:
                    ray.init(address="local", num_cpus=cpus, include_dashboard=False,
                             log_to_driver=False, _temp_dir=temp)
                else:
                    ray.init(address=address, log_to_driver=False)
            except Exception as exc:  # noqa: BLE001 - Ray's many start/connect failures
                raise InputError(f"{address}: {type(exc).__name__}: {exc}; start a cluster "
                                 "with `ray start --head` (then --ray auto) or use --ray local",
                                 field="--ray") from None
            try:
                yield ray
            finally:
                ray.shutdown()
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)


def on_ray(address: str, retries: int = MAX_RETRIES) -> Execute:
    """What `plan07.ab.runner.run_ab(execute=)` takes to run the units on Ray at `address`."""
    return functools.partial(run_on_ray, address=address, retries=retries)


def run_on_ray(tasks: list[Task], config: Config, todo: list[Unit],
               progress: Progress | None = None, *, address: str, retries: int = MAX_RETRIES
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every unit of `todo` on Ray: (rows, the units that ran more than once or were lost)."""
    with connect(address, cpus=config.workers) as ray:
        shipping.preflight(ray, tasks, config)
        return gather(ray, tasks, config, todo, retries, progress)


def gather(ray: Any, tasks: list[Task], config: Config, todo: list[Unit], retries: int,
           progress: Progress | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The units on a connected `ray` (`connect`), as they finish: (rows, not run once)."""
    fn = ray.remote(max_retries=retries, num_cpus=1)(shipping.plan07_ab_unit)
    window = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    queue = deque(sorted(todo, key=lambda u: (u[1], u[0], u[2])))  # task by task
    left = Counter(u[1] for u in todo)
    shipped: dict[int, Any] = {}  # task index -> its shipped task in the object store
    pending: dict[Any, Unit] = {}
    rows: list[dict[str, Any]] = []
    retried: list[dict[str, Any]] = []
    try:
        while queue or pending:
            while queue and len(pending) < window:
                unit = queue.popleft()
                if unit[1] not in shipped:
                    shipped[unit[1]] = ray.put(shipping.ship(tasks[unit[1]]))
                pending[fn.remote(shipped[unit[1]], config, unit)] = unit
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                unit = pending.pop(ref)
                row, note = _outcome(ray, ref, tasks[unit[1]], unit, retries)
                if note:
                    retried.append(note)
                left[unit[1]] -= 1
                if not left[unit[1]]:
                    del shipped[unit[1]]  # its last unit is back: the object store may free it
                rows.append(row)
                if progress:
                    progress(len(rows), len(todo), row)
    except KeyboardInterrupt:
        # Ctrl-C: no `ray.cancel` of the units still out. A cancel that crosses a unit's reply
        # aborts this process inside Ray's core worker ("Tried to complete task that was not
        # pending", ray-project/ray#54798, still so in 2.60). `connect` shuts the driver down
        # instead: its job ends, and every raylet ends the workers running the job's tasks.
        raise
    retried.sort(key=lambda n: (n["run"], n["task_index"], n["strategy"]))
    return rows, retried


def _outcome(ray: Any, ref: Any, task: Task, unit: Unit, retries: int
             ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The unit's row, and what to report when it did not run exactly once."""
    run, ti, name = unit
    where = {"run": run, "task_index": ti, "task_id": task.id, "strategy": name}
    try:
        row, attempt = ray.get(ref)
    except ray.exceptions.RayError as exc:
        why = f"ray: {type(exc).__name__}: {' '.join(str(_cause(exc)).split())[:200]}"
        note = {**where, "outcome": f"lost: {why}"}
        if not isinstance(exc, ray.exceptions.RayTaskError):  # not the unit's own exception:
            note["attempts"] = retries + 1  # its worker or node died on every attempt
        return salvaged_row(task, unit, f"error: {why}"), note
    if attempt == 0:
        return row, None
    return row, {**where, "attempts": attempt + 1,
                 "outcome": "completed after its worker died"}


def _cause(exc: BaseException) -> BaseException:
    """A task's own exception rather than Ray's wrapper of it (with its remote traceback)."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc
