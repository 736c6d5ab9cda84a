"""Dask clusters for the batch: the local cluster (one worker per GPU or per core), the worker
set-up hook, the GPU count of a cluster, and the driver's watches: tasks over their time
limit, tasks no worker can run, results of done tasks. Used by :mod:`graphcut.batch.dask`,
which documents the faults handled."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
import traceback
from asyncio import CancelledError
from pathlib import Path

import dask
from distributed import Nanny, Scheduler, SpecCluster

from ._runners import GPU_PIPELINE_DEPTH

log = logging.getLogger("graphcut.batch")

# How many dying workers a task may take with it before it is given up (local clusters;
# Dask's default is 3).
ALLOWED_FAILURES = 2
# Seconds without a heartbeat after which a local cluster's scheduler restarts a worker
# (Dask's default is 5 minutes; the scheduler never uses less than 10 heartbeat intervals).
WORKER_TTL = 30.0
# How often the driver checks the tasks' run times against task_timeout (seconds).
WATCH_INTERVAL = 1.0
# Seconds an image's task may wait while no running worker of the cluster can run it (all
# workers gone, none offering the GPU share it asks for) before it is given up as failed.
NO_WORKER_TIMEOUT = 300.0
# How often the driver looks for tasks that no running worker can run (seconds).
NO_WORKER_CHECK_INTERVAL = 2.0
# Seconds to wait for the result of a task the scheduler reported done (longer when its
# worker died meanwhile and it runs again; it is then waited for with the others).
RESULT_TIMEOUT = 10.0
GPU = "GPU"
# Share of a GPU resource each GPU task asks for: up to 8 images in flight per card.
GPU_TASK_SHARE = 1.0 / GPU_PIPELINE_DEPTH
# Prefix of the keys of the batch's tasks (the watchdog times only those).
_KEY_PREFIX = "graphcut-segment-"


def visible_gpus() -> list[str]:
    """The GPUs this process may use, as values for ``CUDA_VISIBLE_DEVICES`` (indices or
    UUIDs): those listed in ``CUDA_VISIBLE_DEVICES`` when it is set, else 0..count-1; [] when
    the CUDA backend cannot run here."""
    from ..solver import cuda_status
    ok, _ = cuda_status()
    if not ok:
        return []
    import cupy
    count = cupy.cuda.runtime.getDeviceCount()
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None and listed.strip():
        return [g.strip() for g in listed.split(",") if g.strip()][:count]
    return [str(i) for i in range(count)]


def local_cluster(n_workers: int, *, gpus=None, threads_per_worker: int | None = None,
                  allowed_failures: int = ALLOWED_FAILURES, worker_ttl: float = WORKER_TTL,
                  silence_logs=logging.ERROR):
    """A Dask cluster of ``n_workers`` worker processes on this machine (each under a nanny
    that restarts it if it dies), scheduler in this process, listening on 127.0.0.1 only.

    Sets Dask's ``distributed.worker.daemon`` to False in this process (worker processes may
    then start the CPU tasks' solver processes).

    Parameters
    ----------
    n_workers
        number of worker processes (>= 1).
    gpus
        None, or one ``CUDA_VISIBLE_DEVICES`` value per worker: worker i then sees only
        GPU ``gpus[i]`` and offers the resource ``GPU=1``.
    threads_per_worker
        tasks run at once per worker. None: 1 on the CPU (a solve keeps a
        core busy and holds the GIL), :data:`GPU_PIPELINE_DEPTH` per GPU worker (the
        pipeline around the card).
    allowed_failures
        dying workers a task may take with it before it is given up.
    worker_ttl
        seconds without a heartbeat before the scheduler restarts a worker.
    silence_logs
        level below which Dask's own log messages are hidden.

    Returns
    -------
    distributed.SpecCluster
        A ``distributed.SpecCluster``; use it as a context manager, or ``close()`` it.
    """
    if int(n_workers) < 1:
        raise ValueError(f"a local cluster needs at least 1 worker, got {n_workers}")
    if gpus is not None and len(gpus) < n_workers:
        raise ValueError(f"{n_workers} workers need {n_workers} GPUs, got {len(gpus)}: "
                         f"{', '.join(map(str, gpus)) or 'none'}")
    if threads_per_worker is None:
        threads_per_worker = 1 if gpus is None else GPU_PIPELINE_DEPTH
    workers = {}
    for i in range(int(n_workers)):
        options = {"nthreads": threads_per_worker, "host": "127.0.0.1", "dashboard": False,
                   "silence_logs": silence_logs, "preload": [__name__]}
        if gpus is not None:
            options["env"] = {"CUDA_VISIBLE_DEVICES": str(gpus[i])}
            options["resources"] = {GPU: 1}
        workers[f"graphcut-worker-{i}"] = {"cls": Nanny, "options": options}
    scheduler = {"cls": Scheduler, "options": {"host": "127.0.0.1", "dashboard": False,
                                               "dashboard_address": ":0",
                                               "allowed_failures": allowed_failures,
                                               "worker_ttl": f"{worker_ttl}s"}}
    # Worker processes that may start processes (the CPU tasks' solver processes, see
    # segment_file_on_worker); the nanny reads this whenever it (re)starts a worker, so it is
    # set for this process, not only while the cluster starts.
    dask.config.set({"distributed.worker.daemon": False})
    # A worker holds only the tasks it runs (no queue of its own): a worker that dies then
    # takes no waiting image's retry budget with it, and idle workers get the next image.
    settings = {"distributed.scheduler.worker-saturation": 1.0}
    if gpus is not None:
        # Dask sets MALLOC_TRIM_THRESHOLD_ in its workers (memory back to the OS sooner); that
        # also fixes glibc's mmap threshold, so every 4 MP array of the pipeline is a fresh
        # mmap whose pages fault in again: 25 % fewer images/s per GPU worker (measured with
        # bench/bench_batch_multigpu.py). GPU workers keep glibc's adaptive default.
        settings["distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_"] = None
    with dask.config.set(settings):
        return _RestartingCluster(workers=workers, scheduler=scheduler,
                                  silence_logs=silence_logs, name="graphcut")


class _RestartingCluster(SpecCluster):
    """A SpecCluster that keeps every nanny while the cluster is open.

    SpecCluster closes a worker's nanny for good when, ``distributed.deploy.lost-worker-timeout``
    (15 s) after one of its workers left the scheduler, no worker of that name is registered:
    the check looks at that one moment only, so a worker that died again and is being
    restarted then (an image that kills its workers, a loaded machine) loses its nanny, and a
    cluster that lost all its nannies leaves its tasks waiting for a worker forever (seen with
    distributed 2026.8). Nannies restart their workers themselves; this cluster never closes
    one for a lost worker.
    """

    def _update_worker_status(self, op, msg):
        with dask.config.set({"distributed.deploy.lost-worker-timeout": _NEVER}):
            super()._update_worker_status(op, msg)


# A delay (seconds) that never ends while a cluster is open (about 30 years).
_NEVER = f"{10**9}s"


def dask_setup(worker) -> None:
    """Preload hook of :func:`local_cluster`'s workers: they ignore SIGINT. Ctrl-C in a
    terminal reaches the whole process group; the driver alone handles it (it cancels the
    tasks and closes the cluster, which stops the workers). Their heartbeat-loss tracebacks
    are dropped (:class:`_HeartbeatLossFilter`)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    quiet_worker_logs()


class _HeartbeatLossFilter(logging.Filter):
    """Drops the traceback a worker logs when a heartbeat cannot reach the scheduler
    (``distributed.worker``: an OSError, after which the worker carries on). It comes when
    the driver closes a local cluster, e.g. after Ctrl-C (seen in CI), where it would alarm
    the user; a worker that really lost its scheduler is restarted after :data:`WORKER_TTL`
    and its images are reported by the batch. Every other record passes."""

    MESSAGE = "Failed to communicate with scheduler during heartbeat."

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != self.MESSAGE


def quiet_worker_logs() -> None:
    """Install :class:`_HeartbeatLossFilter` on this process's ``distributed.worker`` logger
    (once)."""
    _filter_once("distributed.worker", _HeartbeatLossFilter)


def _filter_once(logger_name: str, kind: type) -> None:
    """Add a ``kind`` filter to logger ``logger_name`` unless it has one already."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, kind) for f in logger.filters):
        logger.addFilter(kind())


def _workers(client) -> list[dict]:
    """The scheduler's description of every worker (name, status, resources, ...)."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:  # older distributed: no n_workers argument
        info = client.scheduler_info()
    return list(info.get("workers", {}).values())


def gpu_worker_count(client) -> int:
    """Number of the cluster's workers that offer a GPU resource."""
    return sum(1 for worker in _workers(client) if worker.get("resources", {}).get(GPU, 0) >= 1)


class _NoWorkerWatch:
    """Finds the tasks that no running worker of the cluster has been able to run for more
    than ``timeout`` seconds (None: never): the scheduler keeps such a task waiting forever.
    Asks the scheduler for its workers at most every :data:`NO_WORKER_CHECK_INTERVAL`."""

    def __init__(self, client, timeout: float | None):
        self.client = client
        self.timeout = timeout
        self._since: dict[str, float] = {}
        self._checked = -float("inf")

    def given_up(self, pending: dict[str, dict | None]) -> dict[str, str]:
        """``{key: why}`` for the tasks of ``pending`` (key: resources each asks for, None
        for none) that have waited more than ``timeout`` s with no worker able to run them."""
        now = time.monotonic()
        if self.timeout is None or now - self._checked < NO_WORKER_CHECK_INTERVAL:
            return {}
        self._checked = now
        try:
            running = [w.get("resources") or {} for w in _workers(self.client)
                       if w.get("status", "running") == "running"]
        except Exception:  # noqa: BLE001 - a failed check is retried at the next one
            log.debug("looking up the cluster's workers failed", exc_info=True)
            return {}
        late, since = {}, {}
        for key, resources in pending.items():
            why = _why_unrunnable(running, resources or {})
            if why is None:
                continue
            since[key] = self._since.get(key, now)
            if now - since[key] > self.timeout:
                late[key] = (f"no worker of the cluster could run this image for more than "
                             f"{self.timeout:g} s: {why}")
        self._since = since
        return late


def _why_unrunnable(running: list[dict], resources: dict) -> str | None:
    """Why no worker (the resources of each running worker) can run a task asking for
    ``resources``; None when one can."""
    if not running:
        return "the cluster has no running worker"
    if any(all(offer.get(name, 0) >= amount for name, amount in resources.items())
           for offer in running):
        return None
    asked = ", ".join(f"{name}={amount:g}" for name, amount in resources.items())
    return f"no running worker offers {asked}"


class _Watchdog:
    """Restarts the worker of any task that has been processing for more than ``timeout``
    seconds (its task then runs again elsewhere), from a thread of the driver."""

    def __init__(self, client, timeout: float):
        self.client = client
        self.timeout = float(timeout)
        self.timed_out: set[str] = set()
        self._seen: dict[tuple[str, str], float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="graphcut-watchdog",
                                        daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(WATCH_INTERVAL):
            try:
                self.check()
            except Exception:  # noqa: BLE001 - a failed check is retried at the next tick
                log.debug("task watchdog check failed", exc_info=True)

    def check(self) -> None:
        now = time.monotonic()
        processing = self.client.processing()
        current = {(worker, str(key)) for worker, keys in processing.items() for key in keys}
        self._seen = {pair: self._seen.get(pair, now) for pair in current}
        late = {worker for (worker, key), since in self._seen.items()
                if now - since > self.timeout and str(key).startswith(_KEY_PREFIX)}
        for worker in late:
            keys = [key for (w, key) in self._seen if w == worker]
            self.timed_out.update(keys)
            log.warning("a task has run for more than %g s on %s; restarting that worker",
                        self.timeout, worker)
            for pair in [pair for pair in self._seen if pair[0] == worker]:
                del self._seen[pair]
            self.client.restart_workers([worker], raise_for_error=False)


def _done(finished, seconds: float) -> list:
    """The futures of ``finished`` (a ``distributed.as_completed``) done so far, waiting up
    to ``seconds`` for the first."""
    deadline = time.monotonic() + seconds
    while not finished.has_ready() and time.monotonic() < deadline:
        time.sleep(0.05)
    return finished.next_batch(block=False)


def _outcome(future):
    """(result, error) of a done task; None when its result was lost with its worker before
    it could be fetched and the task runs again."""
    if future.status in ("pending", "lost"):  # reported done, then its result was lost
        return None
    if future.status != "finished":
        return None, future.exception() if future.status == "error" else None
    try:
        return future.result(timeout=RESULT_TIMEOUT), None
    except TimeoutError:  # it runs again: the caller waits for it with the others
        return None
    except (Exception, CancelledError) as error:  # noqa: BLE001 - lost, run again and failed
        return None, error


class _CancelRaceFilter(logging.Filter):
    """Drops the NameError that ``distributed.utils.sync`` logs (through Tornado) when Ctrl-C
    arrives before its task started: its ``cancel`` callback reads a variable not yet set
    (distributed 2026.8). The interruption itself is handled and reported by the batch; the
    traceback would only alarm the user. Every other record passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if not isinstance(error, NameError) or error.__traceback__ is None:
            return True
        last = traceback.extract_tb(error.__traceback__)[-1]
        in_dask_sync = Path(last.filename).parts[-2:] == ("distributed", "utils.py")
        return not (in_dask_sync and last.name == "cancel")


@contextlib.contextmanager
def quiet_dask_logs():
    """Dask's INFO and WARNING messages (worker start-up, restarts, shutdown) hidden unless
    the root logger is at DEBUG (``graphcut -vv``), and Dask's cancel race on Ctrl-C dropped
    (:class:`_CancelRaceFilter`; it stays, since the callback may run on a client's loop
    after the batch returned)."""
    logger = logging.getLogger("distributed")
    _filter_once("tornado.application", _CancelRaceFilter)
    old = logger.level
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(old)
