"""Batch segmentation on a Dask cluster: one task per image.

:func:`run_batch_dask` is :func:`graphcut.batch.run_batch` with a :class:`DaskRunner`: each
image becomes one task that calls :func:`graphcut.batch.segment_file` on a worker. Workers read
the image and seed files and write the masks themselves, so the cluster needs a shared
filesystem mounted at the same path everywhere; only paths and the small summary records
travel through the scheduler. Masks and summary are those of the serial run.

Faults:

- an image that fails for its input (unreadable, bad seeds, ...) gives a "failed" record; the
  task itself succeeds, so it is never retried;
- a worker that dies mid-task (killed, out of memory, a crash in native code) loses its
  tasks, and the scheduler runs them on another worker; a task that has been on
  ``allowed-failures + 1`` dying workers is given up (``KilledWorker``) and reported as
  failed, so a poison image cannot take the cluster down. Local clusters use
  :data:`ALLOWED_FAILURES`; for your own scheduler set
  ``DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES``;
- Ctrl-C (KeyboardInterrupt) cancels the tasks not yet finished, closes the client (and a local
  cluster), removes temporary files of interrupted writes and re-raises; every mask present is
  complete (written to a temporary name and renamed).

GPUs: a worker started with ``--resources GPU=1`` (one per GPU, each with its own
``CUDA_VISIBLE_DEVICES``) offers one GPU; when the cluster has such workers and the device is
not "cpu", every task asks for ``resources={"GPU": 1}``, so two tasks never share a card.
:func:`local_cluster` pins worker i to GPU i that way.

Needs the ``distributed`` extra: ``pip install 'graphcut[distributed]'``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import dask
from distributed import Client, KilledWorker, Nanny, Scheduler, SpecCluster, as_completed

from .batch import Call, failed_record, find_jobs, remove_temporary_files, run_batch, \
    segment_file
from .energy import DEFAULT_LAM

log = logging.getLogger("graphcut.distributed")

# How many dying workers a task may take with it before it is reported as failed (local
# clusters; Dask's default is 3).
ALLOWED_FAILURES = 2
# Seconds to wait for a scheduler given by address.
CONNECT_TIMEOUT = 20
GPU = "GPU"


def visible_gpus() -> list[str]:
    """The GPUs this process may use, as values for ``CUDA_VISIBLE_DEVICES`` (indices or
    UUIDs): those listed in ``CUDA_VISIBLE_DEVICES`` when it is set, else 0..count-1; [] when
    the CUDA backend cannot run here."""
    from .solver import cuda_status
    ok, _ = cuda_status()
    if not ok:
        return []
    import cupy
    count = cupy.cuda.runtime.getDeviceCount()
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None and listed.strip():
        return [g.strip() for g in listed.split(",") if g.strip()][:count]
    return [str(i) for i in range(count)]


def local_cluster(n_workers: int, *, gpus=None, threads_per_worker: int = 1,
                  allowed_failures: int = ALLOWED_FAILURES, silence_logs=logging.ERROR):
    """A Dask cluster of ``n_workers`` worker processes on this machine (each under a nanny
    that restarts it if it dies), scheduler in this process, listening on 127.0.0.1 only.

    Args:
        n_workers: number of worker processes (>= 1).
        gpus: None, or one ``CUDA_VISIBLE_DEVICES`` value per worker: worker i then sees only
            GPU ``gpus[i]`` and offers the resource ``GPU=1``.
        threads_per_worker: tasks run at once per worker (1: the solvers keep a core or a GPU
            busy on their own).
        allowed_failures: dying workers a task may take with it before it is given up.
        silence_logs: level below which Dask's own log messages are hidden.

    Returns:
        A ``distributed.SpecCluster``; use it as a context manager, or ``close()`` it.
    """
    if int(n_workers) < 1:
        raise ValueError(f"a local cluster needs at least 1 worker, got {n_workers}")
    if gpus is not None and len(gpus) < n_workers:
        raise ValueError(f"{n_workers} workers need {n_workers} GPUs, got {len(gpus)}: "
                         f"{', '.join(map(str, gpus)) or 'none'}")
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
                                               "allowed_failures": allowed_failures}}
    # A worker holds only the tasks it runs (no queue of its own): a worker that dies then
    # takes no innocent image's retry budget with it, and idle workers get the next image.
    with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}):
        return SpecCluster(workers=workers, scheduler=scheduler, silence_logs=silence_logs,
                           name="graphcut")


def dask_setup(worker) -> None:
    """Preload hook of :func:`local_cluster`'s workers: they ignore SIGINT. Ctrl-C in a
    terminal reaches the whole process group; the driver alone handles it (it cancels the
    tasks and closes the cluster, which stops the workers)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def gpu_worker_count(client) -> int:
    """Number of the cluster's workers that offer a GPU resource."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:  # older distributed: no n_workers argument
        info = client.scheduler_info()
    return sum(1 for worker in info.get("workers", {}).values()
               if worker.get("resources", {}).get(GPU, 0) >= 1)


class DaskRunner:
    """A :data:`graphcut.batch.Runner` that submits one task per image to a Dask client and
    yields the records as tasks complete (``distributed.as_completed``).

    Args:
        client: a connected ``distributed.Client``.
        gpu: ask every task for ``resources={"GPU": 1}`` (only workers offering a GPU run them,
            one task per GPU at a time).
        task: the per-image function, called on a worker with :func:`segment_file`'s keyword
            arguments (paths made absolute); it must return a summary record.
    """

    def __init__(self, client, *, gpu: bool = False, task=segment_file):
        self.client = client
        self.gpu = gpu
        self.task = task

    def __call__(self, calls: list[Call]) -> Iterator[tuple[int, dict]]:
        run = uuid.uuid4().hex[:8]
        resources = {GPU: 1} if self.gpu else None
        futures = {}
        try:
            for index, kwargs in calls:
                kwargs = {name: os.path.abspath(value) if isinstance(value, Path) else value
                          for name, value in kwargs.items()}
                key = f"graphcut-segment-{Path(kwargs['image_path']).name}-{run}-{index}"
                future = self.client.submit(self.task, key=key, pure=False,
                                            resources=resources, **kwargs)
                futures[future.key] = (index, future, kwargs)
            finished = as_completed([f for _, f, _ in futures.values()], with_results=True,
                                    raise_errors=False)
            for future, result in finished:
                index, _, kwargs = futures.pop(future.key)
                yield index, self._record(future, result, kwargs)
                future.release()
        finally:
            if futures:
                log.info("cancelling %d unfinished task(s)", len(futures))
                with contextlib.suppress(Exception):
                    self.client.cancel([f for _, f, _ in futures.values()], force=True)

    @staticmethod
    def _record(future, result, kwargs) -> dict:
        """The task's record, or a failed record saying why the task itself failed."""
        if future.status == "finished" and isinstance(result, dict):
            return result
        paths = (kwargs["image_path"], kwargs["seeds_path"], kwargs["out_path"])
        if isinstance(result, KilledWorker):
            return failed_record(*paths, f"the worker processes running this image died "
                                         f"{result.allowed_failures + 1} times (KilledWorker); "
                                         "it may need more memory than a worker has")
        if future.status == "cancelled":
            return failed_record(*paths, "the task was cancelled on the cluster")
        return failed_record(*paths, f"the task failed on the cluster: "
                                     f"{type(result).__name__}: {result}")


def _local_gpus(device: str, gpu_resource: bool | None, n_workers: int) -> list[str] | None:
    """GPU per local worker (None: no pinning), or ValueError when it cannot be done."""
    from .solver import resolve_device
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
def _quiet_dask_logs():
    """Dask's INFO and WARNING messages (worker start-up, restarts, shutdown) hidden unless
    the root logger is at DEBUG (``graphcut -vv``)."""
    logger = logging.getLogger("distributed")
    old = logger.level
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(old)


@contextlib.contextmanager
def _connect(scheduler, n_workers, device, gpu_resource):
    """(client, gpu) for an existing scheduler or a new local cluster; closes what it made."""
    if n_workers is not None:
        gpus = _local_gpus(device, gpu_resource, n_workers)
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


def run_batch_dask(images_dir, seeds_dir, out_dir, *, scheduler: str | None = None,
                   n_workers: int | None = None, client=None, gpu_resource: bool | None = None,
                   lam=DEFAULT_LAM, sigma=None, device="auto", overwrite=False, overlay=False,
                   progress=True, max_pixels=None, task=segment_file) -> list[dict]:
    """:func:`graphcut.batch.run_batch` on a Dask cluster, one task per image.

    Give exactly one of ``scheduler`` (address of a running scheduler, e.g.
    ``"tcp://10.0.0.5:8786"``), ``n_workers`` (start a local cluster of that many worker
    processes, closed at the end) or ``client`` (a connected ``distributed.Client``, left
    open). Paths are sent to the workers as absolute paths and must be valid there.

    Args:
        gpu_resource: ask each task for ``GPU=1``. None (default): yes when the device is not
            "cpu" and the cluster has workers offering ``GPU`` (a local cluster on a machine
            with GPUs pins one worker per GPU); True: require it (ValueError when no worker
            offers a GPU); False: never (and local workers are not pinned).
        task: the per-image function (default :func:`graphcut.batch.segment_file`).
        Other arguments: as :func:`graphcut.batch.run_batch`.

    Returns:
        The records in image-name order, as :func:`graphcut.batch.run_batch`.

    Raises:
        ValueError: not exactly one of scheduler / n_workers / client, bad folders, or a
            GPU set-up that cannot work (see ``gpu_resource``).
        NotADirectoryError: a missing input folder.
        graphcut.solver.BackendUnavailableError: a local cluster with device "cuda" and no GPU.
        ConnectionError: the scheduler cannot be reached.
        KeyboardInterrupt: after cancelling the tasks and cleaning up (see the module notes).
    """
    if sum(x is not None for x in (scheduler, n_workers, client)) != 1:
        raise ValueError("give exactly one of scheduler, n_workers or client")
    find_jobs(images_dir, seeds_dir, out_dir, overlay=overlay)  # bad folders: fail before
    options = dict(lam=lam, sigma=sigma, device=device, overwrite=overwrite, overlay=overlay,
                   progress=progress, max_pixels=max_pixels)
    try:
        with _quiet_dask_logs():
            if client is not None:
                gpu = _use_gpu_resource(client, device, gpu_resource)
                runner = DaskRunner(client, gpu=gpu, task=task)
                return run_batch(images_dir, seeds_dir, out_dir, runner=runner, **options)
            with _connect(scheduler, n_workers, device, gpu_resource) as (connected, gpu):
                runner = DaskRunner(connected, gpu=gpu, task=task)
                return run_batch(images_dir, seeds_dir, out_dir, runner=runner, **options)
    finally:
        # workers stopped with the cluster may have left temporary files behind
        if Path(out_dir).is_dir():
            remove_temporary_files(out_dir)


__all__ = ["ALLOWED_FAILURES", "DaskRunner", "gpu_worker_count", "local_cluster",
           "run_batch_dask", "visible_gpus"]
