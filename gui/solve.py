"""One segmentation request and its answer, and the plain-Python code that answers it.

No Qt in here: :class:`Solver` runs in the solver process (``solver_process.py``), or on the
worker thread when no process can be started. It calls ``graphcut`` (a ``graphcut.Segmenter``
session when the package has one, so that seed edits re-solve incrementally, on the GPU from
the kept preflow; else ``graphcut.segment`` each time).
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field

import numpy as np

import graphcut

from .overlay import object_boundary


@dataclass(frozen=True)
class Job:
    """One segmentation request.

    Attributes:
        number: increases with every request; the window keeps only the newest one's outcome.
        image_token: identifies the opened image (a new token when another image is opened), so
            that a session is never reused across images.
        image: the image as read (never modified), or None when the solver already holds the
            image of ``image_token``.
        seeds: a private copy of the seed labels (0 none, 1 foreground, 2 background); None
            in a "prepare" request (``Solver.prepare``).
        lam: the smoothness weight passed to ``graphcut``.
        device: "auto", "cpu" or "cuda".
    """

    number: int
    image_token: int
    image: np.ndarray | None
    seeds: np.ndarray
    lam: float
    device: str


@dataclass(frozen=True)
class Outcome:
    """What a job produced: the mask (True = object), its outline, and how it was solved.

    ``solve_seconds`` is graphcut's own total (``CutResult.stats["seconds"]["total"]``);
    ``wall_seconds`` adds the outline; ``incremental`` tells a re-solve from a kept state.
    """

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


class MissingImage(RuntimeError):
    """The job carries no image and the solver holds none for its token."""


class Solver:
    """Answers jobs one after another, keeping a ``graphcut.Segmenter`` between them.

    A new session is made when the image, lambda or device changes; any other job (new seeds)
    reuses it, which is what lets the backends re-solve from their previous state.
    """

    def __init__(self):
        self._image_token = None
        self._image = None
        self._session = None
        self._session_key = None

    def holds_image(self, token: int) -> bool:
        return self._image is not None and self._image_token == token

    def run(self, job: Job) -> Outcome:
        """Never raises for a bad job: failures come back as ``Outcome.error``."""
        start = time.perf_counter()
        try:
            if job.image is not None:
                self._image_token, self._image = job.image_token, job.image
            elif not self.holds_image(job.image_token):
                raise MissingImage(f"job {job.number} has no image and image "
                                   f"{job.image_token} is not held")
            mask, result = self._solve(job)
            boundary = object_boundary(mask)
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

    def prepare(self, job: Job) -> Outcome:
        """Ahead of the first stroke (the image was just opened; ``job.seeds`` are ignored):
        hold the image, make its session and warm it up (:func:`graphcut.warmup.warm_up`:
        kernels loaded, GPU state allocated), so that the first stroke costs what later ones
        do. Never raises: a failure comes back as ``Outcome.error`` and the next job retries."""
        start = time.perf_counter()
        try:
            self._image_token, self._image = job.image_token, job.image
            if self._session_for(job) is not None:
                from graphcut.warmup import warm_up
                warm_up(self._session)
        except Exception as error:  # reported like a solve's failure, never raised into Qt
            self._session, self._session_key = None, None
            return Outcome(job.number, error=_describe_error(error),
                           details=traceback.format_exc())
        return Outcome(job.number, wall_seconds=time.perf_counter() - start)

    def _session_for(self, job: Job):
        """The Segmenter for the job's image, lambda and device (made when any changed), or
        None when the package has no Segmenter."""
        segmenter_class = getattr(graphcut, "Segmenter", None)
        if segmenter_class is None:
            return None
        key = (job.image_token, job.lam, job.device)
        if self._session_key != key:
            self._session = None  # let the old session free its (GPU) memory first
            self._session = segmenter_class(self._image, lam=job.lam, channel_axis=-1,
                                            device=job.device)
            self._session_key = key
        return self._session

    def _solve(self, job: Job):
        channel_axis = -1  # images are read channels last; a 2-D image is grey either way
        session = self._session_for(job)
        if session is None:
            mask, result = graphcut.segment(self._image, job.seeds, lam=job.lam,
                                            channel_axis=channel_axis, device=job.device,
                                            return_result=True)
            return np.asarray(mask, bool), result
        mask = session.update(job.seeds)
        return np.asarray(mask, bool), session.last_result


def _describe_error(error: Exception) -> str:
    text = str(error) or type(error).__name__
    if isinstance(error, MemoryError):
        return f"out of memory while segmenting ({text})"
    return text
