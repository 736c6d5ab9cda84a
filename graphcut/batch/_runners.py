"""Runners: how the images of a batch are processed. Each takes the list of calls and yields
``(index, record)`` pairs as images complete, in any order; closing the iterator (Ctrl-C, an
error in the driver) cancels what has not started and waits for what has, so that no write is
left half done when the driver cleans up.

- :class:`ThreadRunner`: threads of this process, each doing whole images. On the GPU this is
  the pipeline: one thread's image is on the card (the solve stage holds
  :data:`graphcut.batch._image.GPU_LOCK`) while the others decode the next images and encode
  the previous ones; at most ``jobs`` images are in flight, which bounds memory.
- :class:`ProcessRunner`: worker processes for the CPU, one image per process at a time
  (PyMaxflow holds the GIL, so threads would not run solves in parallel). Images are started
  only while their estimated memory fits in a budget; an image that could never fit fails at
  once; a worker that dies (out of memory, a crash in native code) fails only its image and is
  replaced.
- :class:`graphcut.batch.dask.DaskRunner`: one task per image on a Dask cluster.
"""

from __future__ import annotations

import logging
import os
import signal
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from ..solver.memory import available_bytes, format_bytes
from ._records import display, failed_record

log = logging.getLogger("graphcut.batch")

# One call of the per-image function: (index of the job in name order, keyword arguments of
# graphcut.batch.segment_file).
Call = tuple[int, dict]
Runner = Callable[[list[Call]], Iterator[tuple[int, dict]]]

# Images in flight around one GPU: one solving, the others being read or written.
GPU_PIPELINE_DEPTH = 8
# Share of the memory available at the start that CPU workers may plan to use.
MEMORY_SHARE = 0.85
# A worker process's own memory (interpreter, NumPy, Pillow, PyMaxflow) before any image.
PROCESS_BYTES = 200 * 2**20


def _default_task():
    """graphcut.batch.segment_file, looked up when a batch starts."""
    from graphcut import batch
    return batch.segment_file


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def serial_runner(calls: list[Call], task=None) -> Iterator[tuple[int, dict]]:
    """Run the calls one after the other in this thread."""
    task = task or _default_task()
    for index, kwargs in calls:
        yield index, task(**kwargs)


class ThreadRunner:
    """A :data:`Runner` of ``jobs`` threads in this process, one image each at a time (1:
    the calls run one after the other in the calling thread)."""

    def __init__(self, jobs: int, *, task=None):
        if int(jobs) < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        self.jobs = int(jobs)
        self.task = task

    def __call__(self, calls: list[Call]) -> Iterator[tuple[int, dict]]:
        task = self.task or _default_task()
        if self.jobs == 1 or len(calls) <= 1:
            yield from serial_runner(calls, task)
            return
        waiting = deque(calls)
        running = {}
        pool = ThreadPoolExecutor(self.jobs, thread_name_prefix="graphcut-batch")
        try:
            while waiting or running:
                while waiting and len(running) < self.jobs:
                    index, kwargs = waiting.popleft()
                    running[pool.submit(task, **kwargs)] = index
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    yield running.pop(future), future.result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def _ignore_sigint() -> None:
    """Worker processes leave Ctrl-C to the driver, which stops them; SIGTERM ends a worker
    at once (not the driver's handler, inherited through fork: the driver removes what a
    worker stopped mid-write leaves)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def cpu_image_bytes(path, *, max_pixels=None, segment_options=None) -> int:
    """Host bytes to decode and segment the image file ``path`` on the CPU, from its header
    (:mod:`graphcut.segmentation`), with ``segment_options``' model and box; 0 for a file
    that cannot be read (its worker reports why)."""
    from ..io import image_info
    from ..segmentation import file_bytes, segmentation_bytes
    try:
        info = image_info(path, max_pixels=max_pixels)
    except Exception:  # noqa: BLE001 - the worker reports unreadable files properly
        return 0
    options = segment_options or {}
    return file_bytes(info) + segmentation_bytes(info.height, info.width, info.channels, "cpu",
                                                 model=options.get("model"),
                                                 region=options.get("box") is not None)


def death_reason(exitcode: int | None) -> str:
    """Words for how a worker process ended (``exitcode`` as multiprocessing gives it)."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        why = " (often the system's out-of-memory killer)" if -exitcode == signal.SIGKILL else ""
        return f"killed by {name}{why}"
    why = " (PyMaxflow exits so when it cannot allocate its graph)" if exitcode == 1 else ""
    return f"exited with status {exitcode}{why}"


class ProcessRunner:
    """A :data:`Runner` of ``jobs`` worker processes (a ``pebble.ProcessPool``), one image
    each at a time, for the CPU backend.

    Parameters
    ----------
    jobs
        worker processes (>= 1).
    memory_budget
        bytes the images in flight may need together; None: a share
        (:data:`MEMORY_SHARE`) of the memory available when the run starts, less the
        workers' own; no limit where that cannot be read.
    timeout
        seconds after which an image's worker is stopped and the image failed
        (None: no limit).
    task
        the per-image function (default :func:`graphcut.batch.segment_file`), importable
        by the workers.
    """

    def __init__(self, jobs: int, *, memory_budget: int | None = None,
                 timeout: float | None = None, task=None):
        if int(jobs) < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        self.jobs = int(jobs)
        self.memory_budget = memory_budget
        self.timeout = timeout
        self.task = task

    def _budget(self) -> int | None:
        if self.memory_budget is not None:
            return int(self.memory_budget)
        room = available_bytes()
        return None if room is None else int(room * MEMORY_SHARE) - self.jobs * PROCESS_BYTES

    def _need(self, kwargs: dict) -> int:
        # the peak is the solve; the overlay is made after PyMaxflow's graph is freed
        return cpu_image_bytes(kwargs["image_path"], max_pixels=kwargs.get("max_pixels"),
                               segment_options=kwargs.get("segment_options"))

    def __call__(self, calls: list[Call]) -> Iterator[tuple[int, dict]]:
        import multiprocessing

        from pebble import ProcessPool

        task = self.task or _default_task()
        budget = self._budget()
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["graphcut.batch"])
        pool = ProcessPool(max_workers=min(self.jobs, max(1, len(calls))),
                           initializer=_ignore_sigint, context=context)
        waiting = deque(calls)
        running: dict = {}
        reserved = 0
        try:
            while waiting or running:
                while waiting and len(running) < self.jobs:
                    index, kwargs = waiting[0]
                    need = self._need(kwargs)
                    if budget is not None and need > budget:
                        waiting.popleft()
                        yield index, self._too_large(kwargs, need, budget)
                        continue
                    if budget is not None and running and reserved + need > budget:
                        break  # wait for memory to be freed
                    waiting.popleft()
                    future = pool.schedule(task, kwargs=kwargs, timeout=self.timeout)
                    running[future] = (index, kwargs, need)
                    reserved += need
                if not running:
                    continue
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    index, kwargs, need = running.pop(future)
                    reserved -= need
                    yield index, self._record(future, kwargs)
        finally:
            pool.stop()
            pool.join()

    @staticmethod
    def _paths(kwargs):
        return kwargs["image_path"], kwargs["seeds_path"], kwargs["out_path"]

    def _too_large(self, kwargs, need, budget) -> dict:
        return failed_record(*self._paths(kwargs), (
            f"out of memory: {display(kwargs['image_path'])} needs about {format_bytes(need)} "
            f"to segment on the CPU, more than the {format_bytes(max(budget, 0))} this batch "
            "may use; use a machine with more memory or the GPU (--device cuda)"))

    def _record(self, future, kwargs) -> dict:
        from concurrent.futures import TimeoutError as FutureTimeout

        from pebble import ProcessExpired

        try:
            return future.result()
        except ProcessExpired as error:
            return failed_record(*self._paths(kwargs), (
                f"the worker process segmenting this image {death_reason(error.exitcode)}; "
                "the other images go on"))
        except (TimeoutError, FutureTimeout):
            return failed_record(*self._paths(kwargs), (
                f"not done within {self.timeout:g} s: its worker process was stopped"))
        except Exception as error:  # noqa: BLE001 - a task's own error is that image's failure
            return failed_record(*self._paths(kwargs), f"{type(error).__name__}: {error}")
