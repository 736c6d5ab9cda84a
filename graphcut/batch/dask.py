"""Batch segmentation on a Dask cluster: one task per image.

:func:`run_batch_dask` is :func:`graphcut.batch.run_batch` with a :class:`DaskRunner`: each
image becomes one task that calls :func:`graphcut.batch.segment_file` on a worker. Workers read
the image and seed files and write the masks themselves, so the cluster needs a shared
filesystem mounted at the same path everywhere; only paths and the small summary records
travel through the scheduler. Masks and summary are those of the serial run.

CPU tasks (:func:`segment_file_on_worker`) run each image in a solver process of the worker:
PyMaxflow holds the GIL for a whole solve, which would otherwise stop the worker's heartbeats.

GPUs: a worker started with ``--resources GPU=1`` (one per GPU, each with its own
``CUDA_VISIBLE_DEVICES``) offers one GPU. When the cluster has such workers and the device is
not "cpu", every task asks for :data:`GPU_TASK_SHARE` (1/8) of one, so a GPU worker with 8
threads runs the batch's pipeline: one image on the card at a time (the solve holds a lock per
process), the others being read and written around it. :func:`local_cluster` pins worker i to
GPU i that way. CPU workers run one image per thread; give them one thread each.

Faults:

- an image that fails for its input (unreadable, bad seeds, ...) gives a "failed" record; the
  task itself succeeds, so it is never retried;
- a worker that dies mid-task (killed, out of memory, a crash in native code) loses its
  tasks, and the scheduler runs them on another worker; a task that has been on
  ``allowed-failures + 1`` dying workers is given up (``KilledWorker``) and reported as
  failed, so a poison image cannot take the cluster down. A GPU task given up that way had
  shared its workers with up to 7 others, so it is tried once more alone (asking for the
  whole card) before it is reported. Local clusters use :data:`ALLOWED_FAILURES`; for your own
  scheduler set ``DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES``;
- a worker that stops answering (stopped with SIGSTOP, hung while holding the GIL) misses its
  heartbeats and is restarted after the scheduler's ``worker-ttl`` (:data:`WORKER_TTL` on local
  clusters; ``DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL`` for yours); a task that runs longer
  than ``task_timeout`` seconds has its worker restarted by the driver. Either way its tasks
  run again elsewhere, as after a death;
- a task that no running worker can run (every worker gone, none offering the GPU share it
  asks for) waits in the scheduler; after ``no_worker_timeout`` seconds
  (:data:`NO_WORKER_TIMEOUT`) of that the driver cancels it and reports its image as failed,
  so a run always ends. A local cluster keeps every nanny while it is open (Dask's
  SpecCluster would close one whose worker is restarting at the wrong moment);
- a done task whose worker died before its result was fetched runs again;
- Ctrl-C (KeyboardInterrupt) cancels the tasks not yet finished, closes the client (and a local
  cluster), removes temporary files of interrupted writes, rewrites the summary with the
  finished images and re-raises; every mask present is complete.

Needs the ``distributed`` extra: ``pip install 'graphcut[distributed]'``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import distributed
from distributed import Client, KilledWorker, as_completed

from ._cluster import (_KEY_PREFIX, ALLOWED_FAILURES, GPU, GPU_TASK_SHARE, NO_WORKER_TIMEOUT,
                       WATCH_INTERVAL, WORKER_TTL, _done, _NoWorkerWatch, _outcome, _Watchdog,
                       gpu_worker_count, local_cluster, quiet_dask_logs, visible_gpus)
from ._image import segment_file
from ._jobs import find_jobs
from ._lock import OutputFolderBusyError, output_folder_lock
from ._records import display, failed_record
from ._run import output_folder, remove_temporary_files, run_jobs
from ._runners import Call, usable_cores

log = logging.getLogger("graphcut.batch")

# Seconds to wait for a scheduler given by address.
CONNECT_TIMEOUT = 20

_pool_lock = threading.Lock()
_solver_pool = None


def _worker_solver_pool():
    """This worker process's pool of solver processes (one per worker thread), made on first
    use and stopped when the worker exits."""
    global _solver_pool
    with _pool_lock:
        if _solver_pool is None:
            import atexit
            import multiprocessing

            from pebble import ProcessPool

            from ._runners import _ignore_sigint
            try:
                threads = distributed.get_worker().state.nthreads
            except ValueError:  # not on a worker
                threads = 1
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["graphcut.batch"])
            _solver_pool = ProcessPool(max_workers=max(1, threads), initializer=_ignore_sigint,
                                       context=context)
            atexit.register(_solver_pool.stop)
        return _solver_pool


@functools.lru_cache(maxsize=1)
def _warn_daemonic() -> None:
    log.warning("this Dask worker process is a daemon, which may not start processes: CPU "
                "solves run in its own thread, and a long one (PyMaxflow holds the GIL) delays "
                "its heartbeats; start CPU workers with DASK_DISTRIBUTED__WORKER__DAEMON=False")


def segment_file_on_worker(*, work=segment_file, **kwargs) -> dict:
    """The Dask task of one image: :func:`graphcut.batch.segment_file` (or ``work``, another
    function with its arguments and result).

    On the CPU it runs in a child process of the worker: PyMaxflow holds the GIL for a whole
    solve (minutes on large images), which would stop the worker's heartbeats and have a
    healthy worker evicted after the worker TTL; in a child the worker keeps answering, and a
    crash of the solver (out of memory, PyMaxflow's exit on a failed allocation) fails this
    image instead of killing the worker. On the GPU it runs in the worker's thread, as the
    batch's pipeline (the solve stage takes the process's GPU lock).
    """
    from pebble import ProcessExpired

    from ..solver import resolve_device
    from ._runners import death_reason
    try:
        backend = resolve_device(kwargs.get("device", "auto"))
    except Exception:  # noqa: BLE001 - work() reports an unusable device as this image's failure
        backend = None
    if backend != "cpu":
        return work(**kwargs)
    import multiprocessing
    if multiprocessing.current_process().daemon:
        _warn_daemonic()
        return work(**kwargs)
    future = _worker_solver_pool().schedule(work, kwargs=kwargs)
    try:
        return future.result()
    except ProcessExpired as error:
        return failed_record(kwargs["image_path"], kwargs["seeds_path"], kwargs["out_path"],
                             f"the process segmenting this image on the worker "
                             f"{death_reason(error.exitcode)}")


class DaskRunner:
    """A :data:`graphcut.batch.Runner` that submits one task per image to a Dask client and
    yields the records as tasks complete (``distributed.as_completed``).

    Parameters
    ----------
    client
        a connected ``distributed.Client``.
    gpu
        every task asks for ``resources={"GPU": GPU_TASK_SHARE}`` (only workers offering
        a GPU run them, at most 8 per card); a task given up as ``KilledWorker`` is tried
        once more alone (``GPU=1``).
    task
        the per-image function, called on a worker with :func:`segment_file`'s keyword
        arguments (paths made absolute); it must return a summary record. Default:
        :func:`segment_file_on_worker`.
    task_timeout
        seconds a task may run before its worker is restarted (None: no limit).
    no_worker_timeout
        seconds an image's task may wait while no running worker can run it (no worker
        left, or none offering the GPU share it asks for) before the image is reported as
        failed and its task cancelled (None: wait for workers as long as it takes).
    """

    def __init__(self, client, *, gpu: bool = False, task=None,
                 task_timeout: float | None = None,
                 no_worker_timeout: float | None = NO_WORKER_TIMEOUT):
        self.client = client
        self.gpu = gpu
        self.task = segment_file_on_worker if task is None else task
        self.task_timeout = task_timeout
        self.no_worker_timeout = no_worker_timeout

    def _resources(self, alone: bool) -> dict | None:
        return {GPU: 1 if alone else GPU_TASK_SHARE} if self.gpu else None

    def __call__(self, calls: list[Call]) -> Iterator[tuple[int, dict]]:
        run = uuid.uuid4().hex[:8]
        futures: dict[str, tuple[int, object, dict, bool]] = {}
        # Results are fetched here, not by as_completed: one whose worker died before it was
        # fetched runs again, and as_completed would never report it if that run failed.
        finished = as_completed([])
        unrunnable = _NoWorkerWatch(self.client, self.no_worker_timeout)

        def submit(index, kwargs, alone=False):
            name = display(Path(kwargs["image_path"]).name)
            key = f"{_KEY_PREFIX}{name}-{run}-{index}{'-alone' if alone else ''}"
            future = self.client.submit(self.task, key=key, pure=False,
                                        resources=self._resources(alone), **kwargs)
            futures[future.key] = (index, future, kwargs, alone)
            finished.add(future)

        watchdog = (_Watchdog(self.client, self.task_timeout) if self.task_timeout
                    else contextlib.nullcontext())
        try:
            with watchdog:
                for index, kwargs in calls:
                    submit(index, {name: os.path.abspath(value) if isinstance(value, Path)
                                   else value for name, value in kwargs.items()})
                while futures:
                    for future in _done(finished, WATCH_INTERVAL):
                        if futures.get(future.key, (0, None))[1] is not future:
                            continue  # given up meanwhile
                        outcome = _outcome(future)
                        if outcome is None:  # its result was lost with its worker: it runs again
                            finished.add(future)
                            continue
                        result, error = outcome
                        index, _, kwargs, alone = futures.pop(future.key)
                        if isinstance(error, KilledWorker) and self.gpu and not alone:
                            log.info("%s was given up after its workers died; trying it alone",
                                     display(Path(kwargs["image_path"]).name))
                            submit(index, kwargs, alone=True)
                            future.release()
                            continue
                        timed_out = (watchdog.timed_out if self.task_timeout else set())
                        yield index, self._record(future, result, error, kwargs,
                                                  future.key in timed_out)
                        future.release()
                    late = unrunnable.given_up({key: self._resources(entry[3])
                                                for key, entry in futures.items()})
                    for key, why in late.items():
                        index, future, kwargs, _ = futures.pop(key)
                        log.warning("%s: %s", display(Path(kwargs["image_path"]).name), why)
                        self.client.cancel([future], force=True)
                        yield index, failed_record(kwargs["image_path"], kwargs["seeds_path"],
                                                   kwargs["out_path"], why)
        finally:
            if futures:
                log.info("cancelling %d unfinished task(s)", len(futures))
                with contextlib.suppress(Exception):
                    self.client.cancel([f for _, f, _, _ in futures.values()], force=True)

    def _record(self, future, result, error, kwargs, timed_out: bool) -> dict:
        """The task's record, or a failed record saying why the task itself failed."""
        if future.status == "finished" and isinstance(result, dict):
            return result
        paths = (kwargs["image_path"], kwargs["seeds_path"], kwargs["out_path"])
        if isinstance(error, KilledWorker):
            deaths = getattr(error, "allowed_failures", ALLOWED_FAILURES) + 1
            if timed_out:
                why = (f"it ran for more than {self.task_timeout:g} s on {deaths} workers in "
                       "turn (each restarted) (KilledWorker)")
            else:
                why = (f"the worker processes running this image died {deaths} times "
                       "(KilledWorker); it may need more memory than a worker has")
            return failed_record(*paths, why)
        if future.status == "cancelled":
            return failed_record(*paths, "the task was cancelled on the cluster")
        error = error if error is not None else result
        return failed_record(*paths, f"the task failed on the cluster: "
                                     f"{type(error).__name__}: {error}")


def _local_gpus(device: str, gpu_resource: bool | None, n_workers: int) -> list[str] | None:
    """GPU per local worker (None: no pinning), or ValueError when it cannot be done."""
    from ..solver import resolve_device
    if gpu_resource is False:
        return None
    backend = resolve_device(device)  # BackendUnavailableError for "cuda" without a GPU
    if backend != "cuda":
        if gpu_resource:
            raise ValueError(f"--gpu-resource needs a GPU device; device {device!r} runs on "
                             "the CPU here")
        return None
    gpus = visible_gpus()
    if n_workers > len(gpus):
        raise ValueError(
            f"{n_workers} local workers on the GPU, but this machine shows {len(gpus)} GPU(s) "
            f"({', '.join(gpus)}): use at most {len(gpus)} (one worker per GPU), or "
            "--device cpu, or --no-gpu-resource to let workers share cards")
    return gpus[:n_workers]


def check_local_workers(n_workers: int, gpus) -> None:
    """ValueError when a local cluster of ``n_workers`` CPU workers would have more workers
    than this machine has cores (each solve keeps a core busy; more only adds memory and
    missed heartbeats)."""
    cores = usable_cores()
    if gpus is None and n_workers > cores:
        raise ValueError(f"--local-cluster {n_workers}: this machine has {cores} core(s) for "
                         f"this process, and each CPU worker keeps one busy; use at most "
                         f"{cores}")


def _use_gpu_resource(client, device: str, gpu_resource: bool | None) -> bool:
    if gpu_resource is False:
        return False
    if device == "cpu":
        if gpu_resource:
            raise ValueError("--gpu-resource with --device cpu: CPU tasks need no GPU")
        return False
    count = gpu_worker_count(client)
    if gpu_resource and not count:
        raise ValueError("no worker of the cluster offers a GPU resource, so GPU tasks would "
                         "wait forever: start the workers with `--resources GPU=1`, or pass "
                         "--no-gpu-resource")
    return count > 0


@contextlib.contextmanager
def _connect(scheduler, n_workers, gpus, device, gpu_resource):
    """(client, gpu) for an existing scheduler or a new local cluster of ``n_workers`` pinned
    to ``gpus`` (None: CPU workers); closes what it made."""
    if n_workers is not None:
        with local_cluster(n_workers, gpus=gpus) as cluster, Client(cluster) as client:
            yield client, gpus is not None
        return
    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as error:
        raise ConnectionError(f"cannot connect to the Dask scheduler at {scheduler!r} "
                              f"within {CONNECT_TIMEOUT} s: {error}") from None
    with client:
        yield client, _use_gpu_resource(client, device, gpu_resource)


def _remove_leftovers(out_dir) -> None:
    """Temporary files of workers stopped with a local cluster, once it is closed (only if no
    other run has taken the folder meanwhile)."""
    if Path(out_dir).is_dir():
        with contextlib.suppress(OutputFolderBusyError, OSError):
            with output_folder_lock(out_dir):
                remove_temporary_files(out_dir)


def run_batch_dask(images_dir, seeds_dir, out_dir, *, scheduler: str | None = None,
                   n_workers: int | None = None, client=None, gpu_resource: bool | None = None,
                   lam=None, sigma=None, device="auto", overwrite=False, overlay=False,
                   progress=True, max_pixels=None, task=None,
                   task_timeout: float | None = None,
                   no_worker_timeout: float | None = NO_WORKER_TIMEOUT,
                   segment_options: dict | None = None) -> list[dict]:
    """:func:`graphcut.batch.run_batch` on a Dask cluster, one task per image.

    Give exactly one of ``scheduler`` (address of a running scheduler, e.g.
    ``"tcp://10.0.0.5:8786"``), ``n_workers`` (start a local cluster of that many worker
    processes, closed at the end; on the CPU at most one per core) or ``client`` (a connected
    ``distributed.Client``, left open). Paths are sent to the workers as absolute paths and
    must be valid there. Arguments not listed below are as for
    :func:`graphcut.batch.run_batch`.

    Parameters
    ----------
    gpu_resource
        ask each task for a share of a ``GPU``. None (default): yes when the
        device is not "cpu" and the cluster has workers offering ``GPU`` (a local cluster
        on a machine with GPUs pins one worker per GPU); True: require it (ValueError when
        no worker offers a GPU); False: never (and local workers are not pinned).
    task
        the per-image function (default :func:`segment_file_on_worker`).
    task_timeout
        seconds an image's task may run before its worker is restarted and the
        task run again elsewhere (None: no limit).
    no_worker_timeout
        seconds an image's task may wait while no running worker of the cluster can run it
        before the image is reported as failed (None: no limit, e.g. for a cluster that
        starts its workers on demand).

    Returns
    -------
    list[dict]
        The records in image-name order, as :func:`graphcut.batch.run_batch`.

    Raises
    ------
    ValueError
        not exactly one of scheduler / n_workers / client, bad folders, more
        local CPU workers than cores, or a GPU set-up that cannot work (see
        ``gpu_resource``).
    NotADirectoryError
        a missing input folder.
    graphcut.batch.OutputFolderBusyError
        another batch writes to ``out_dir``.
    graphcut.solver.BackendUnavailableError
        a local cluster with device "cuda" and no GPU.
    ConnectionError
        the scheduler cannot be reached.
    KeyboardInterrupt
        after cancelling the tasks and cleaning up (see the module notes).
    """
    if sum(x is not None for x in (scheduler, n_workers, client)) != 1:
        raise ValueError("give exactly one of scheduler, n_workers or client")
    jobs = find_jobs(images_dir, seeds_dir, out_dir, overlay=overlay)  # bad folders: fail first
    gpus = None
    if n_workers is not None:
        gpus = _local_gpus(device, gpu_resource, n_workers)
        check_local_workers(n_workers, gpus)
    options = dict(lam=lam, sigma=sigma, device=device, overwrite=overwrite, progress=progress,
                   max_pixels=max_pixels, segment_options=segment_options)
    try:
        with quiet_dask_logs():
            if client is not None:
                gpu = _use_gpu_resource(client, device, gpu_resource)
                runner = DaskRunner(client, gpu=gpu, task=task, task_timeout=task_timeout,
                                    no_worker_timeout=no_worker_timeout)
                with output_folder(out_dir, overlay=overlay):
                    return run_jobs(jobs, out_dir, runner, **options)
            with _connect(scheduler, n_workers, gpus, device, gpu_resource) as (connected, gpu):
                runner = DaskRunner(connected, gpu=gpu, task=task, task_timeout=task_timeout,
                                    no_worker_timeout=no_worker_timeout)
                with output_folder(out_dir, overlay=overlay):
                    return run_jobs(jobs, out_dir, runner, **options)
    finally:
        _remove_leftovers(out_dir)


__all__ = ["ALLOWED_FAILURES", "DaskRunner", "GPU_TASK_SHARE", "NO_WORKER_TIMEOUT", "WORKER_TTL",
           "check_local_workers", "gpu_worker_count", "local_cluster", "run_batch_dask",
           "segment_file_on_worker", "visible_gpus"]
