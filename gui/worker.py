"""Segmentation off the GUI thread.

:class:`Solver` is plain Python: it turns a :class:`Job` into a :class:`Outcome` by calling
``graphcut`` (a ``graphcut.Segmenter`` session when the package has one, so that seed edits
re-solve incrementally on the GPU; else ``graphcut.segment`` each time). :class:`SegmentationWorker`
runs it on its own ``QThread`` and reports back with signals. Which results are still wanted is
decided by the window (see ``MainWindow._request_segmentation``): a worker never drops anything.
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass, field

import numpy as np
from PyQt6.QtCore import QObject, pyqtSignal, pyqtSlot
from skimage.segmentation import find_boundaries

import graphcut

log = logging.getLogger("graphcut.gui")


@dataclass(frozen=True)
class Job:
    """One segmentation request.

    Attributes:
        number: increases with every request; the window keeps only the newest one's outcome.
        image_token: identifies the opened image (a new token when another image is opened), so
            that a session is never reused across images.
        image: the image as read (never modified).
        seeds: a private copy of the seed labels (0 none, 1 foreground, 2 background).
        lam: the smoothness weight passed to ``graphcut``.
        device: "auto", "cpu" or "cuda".
    """

    number: int
    image_token: int
    image: np.ndarray
    seeds: np.ndarray
    lam: float
    device: str


@dataclass(frozen=True)
class Outcome:
    """What a job produced: the mask (True = object), its outline, and how it was solved."""

    number: int
    mask: np.ndarray | None = None
    boundary: np.ndarray | None = None
    backend: str = ""
    device_name: str = ""
    solve_seconds: float = float("nan")
    wall_seconds: float = float("nan")
    incremental: bool = False
    error: str | None = None
    details: str = field(default="", repr=False)


class Solver:
    """Runs jobs one after another, keeping a ``graphcut.Segmenter`` between jobs when it can.

    A new session is made when the image, lambda or device changes; any other job (new seeds)
    reuses it, which is what lets the GPU backend re-solve from its previous state.
    """

    def __init__(self):
        self._session = None
        self._session_key = None

    def run(self, job: Job) -> Outcome:
        start = time.perf_counter()
        try:
            mask, result = self._solve(job)
            boundary = find_boundaries(mask, mode="inner")
        except Exception as error:  # reported to the user, never raised into Qt
            self._session, self._session_key = None, None
            return Outcome(job.number, error=_describe_error(error),
                           details=traceback.format_exc())
        stats = getattr(result, "stats", {}) or {}
        return Outcome(
            job.number, mask=mask, boundary=boundary,
            backend=str(getattr(result, "backend", "")),
            device_name=str(stats.get("device_name", "")),
            solve_seconds=float(stats.get("seconds", {}).get("total", float("nan"))),
            wall_seconds=time.perf_counter() - start,
            incremental=bool(stats.get("incremental", False)))

    def _solve(self, job: Job):
        channel_axis = -1  # images are read channels last; a 2-D image is grey either way
        segmenter_class = getattr(graphcut, "Segmenter", None)
        if segmenter_class is None:
            mask, result = graphcut.segment(job.image, job.seeds, lam=job.lam,
                                            channel_axis=channel_axis, device=job.device,
                                            return_result=True)
            return np.asarray(mask, bool), result
        key = (job.image_token, job.lam, job.device)
        if self._session_key != key:
            self._session = None  # let the old session free its (GPU) memory first
            self._session = segmenter_class(job.image, lam=job.lam, channel_axis=channel_axis,
                                            device=job.device)
            self._session_key = key
        mask = self._session.update(job.seeds)
        return np.asarray(mask, bool), self._session.last_result


def _describe_error(error: Exception) -> str:
    text = str(error) or type(error).__name__
    if isinstance(error, MemoryError):
        return f"out of memory while segmenting ({text})"
    return text


class SegmentationWorker(QObject):
    """Lives on a worker ``QThread``; ``submit`` it a :class:`Job`, it emits ``done``."""

    done = pyqtSignal(object)  # Outcome

    def __init__(self):
        super().__init__()
        self._solver = Solver()

    @pyqtSlot(object)
    def submit(self, job: Job) -> None:
        outcome = self._solver.run(job)
        if outcome.error:
            log.debug("segmentation job %d failed:\n%s", job.number, outcome.details)
        self.done.emit(outcome)
