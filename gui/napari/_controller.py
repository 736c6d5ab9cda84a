"""The napari plugin's solver side, without Qt or napari: scribbles -> mask through a kept
:class:`graphcut.Segmenter`, and the rule that keeps at most one segmentation running.

napari conventions handled here: an Image layer's data is (Y, X), (Z, Y, X) or, with
``rgb=True``, (Y, X, 3 or 4); the scribbles are a Labels layer of the same spatial shape, in
which label 1 marks the object and label 2 the background (any other label is ignored).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import graphcut
from graphcut.io import BACKGROUND, FOREGROUND

OBJECT_LABEL, BACKGROUND_LABEL = 1, 2


class MissingScribbles(ValueError):
    """The scribbles lack an object or a background label; the message says which."""


@dataclass(frozen=True)
class Segmentation:
    """One answer: the mask (bool, the image's spatial shape) and how it was computed.

    ``solve_seconds`` is graphcut's own time (energy + max-flow of the update),
    ``wall_seconds`` includes converting the scribbles and building a new Segmenter.
    """

    mask: np.ndarray
    backend: str
    device_name: str
    solve_seconds: float
    wall_seconds: float
    incremental: bool
    flow: int

    def summary(self) -> str:
        """One line for the widget's status: backend, device, time, size."""
        size = "x".join(str(n) for n in self.mask.shape[::-1])
        unit = "voxels" if self.mask.ndim == 3 else "px"
        kind = "re-solve" if self.incremental else "solve"
        return (f"{self.backend} ({self.device_name}) · {kind} {self.wall_seconds:.3f} s · "
                f"{size} {unit} · object {100.0 * self.mask.mean():.1f} %")


def seeds_from_scribbles(scribbles) -> np.ndarray:
    """graphcut seed labels (uint8: 0 none, 1 object, 2 background) from a scribble layer's
    data (label 1 = object, 2 = background, anything else = no seed)."""
    scribbles = np.asarray(scribbles)
    seeds = np.zeros(scribbles.shape, dtype=np.uint8)
    seeds[scribbles == OBJECT_LABEL] = FOREGROUND
    seeds[scribbles == BACKGROUND_LABEL] = BACKGROUND
    return seeds


def spatial_shape(image_shape, rgb: bool) -> tuple[int, ...]:
    return tuple(image_shape[:-1] if rgb else image_shape)


class ScribbleSegmenter:
    """Answers scribbles on one image at a time, re-solving incrementally while the image and
    the options stay the same (a new :class:`graphcut.Segmenter` otherwise)."""

    def __init__(self):
        self._key = None
        self._session: graphcut.Segmenter | None = None

    def segment(self, image, scribbles, *, rgb: bool = False, lam: float = graphcut.DEFAULT_LAM,
                device: str = "auto", image_key=None) -> Segmentation:
        """Segment ``image`` (a layer's data) with ``scribbles`` (a Labels layer's data).

        Args:
            image: (Y, X) or (Z, Y, X) grey, or with ``rgb`` (Y, X, 3 or 4) colour.
            scribbles: labels of the image's spatial shape; 1 object, 2 background.
            lam, device: as for :func:`graphcut.segment`.
            image_key: identifies the image (e.g. the layer and its data); the session is kept
                while it, the shape, ``lam`` and ``device`` stay the same.

        Raises:
            MissingScribbles: no object or no background scribble yet.
            ValueError: an image that is neither 2-D, 3-D nor RGB, or scribbles of another
                shape (the message gives both shapes).
        """
        started = time.perf_counter()
        image = np.asarray(image)
        shape = spatial_shape(image.shape, rgb)
        if len(shape) not in (2, 3):
            raise ValueError(f"the image layer has shape {image.shape}; expected a 2-D image, "
                             "an RGB image or a 3-D volume")
        seeds = seeds_from_scribbles(scribbles)
        if seeds.shape != shape:
            raise ValueError(f"the scribbles layer has shape {seeds.shape} but the image's is "
                             f"{shape}; add a scribbles layer made for this image")
        if not (seeds == FOREGROUND).any():
            raise MissingScribbles("paint an object scribble (label 1)")
        if not (seeds == BACKGROUND).any():
            raise MissingScribbles("paint a background scribble (label 2)")
        key = (image_key, image.shape, str(image.dtype), rgb, float(lam), device)
        if key != self._key or self._session is None:
            self._session = None  # free the old state (GPU memory) first
            self._session = graphcut.Segmenter(image, lam=lam, device=device,
                                               channel_axis=-1 if rgb else None)
            self._key = key
        mask = self._session.update(seeds)
        result = self._session.last_result
        return Segmentation(mask, result.backend, result.stats.get("device_name", ""),
                            result.seconds, time.perf_counter() - started,
                            bool(result.stats.get("incremental", False)), result.flow)

    def reset(self) -> None:
        """Forget the kept session (and its GPU memory)."""
        self._key = self._session = None


# submit(job, on_done, on_error, on_finished): run job() somewhere, then call on_done(result)
# or on_error(exception), and always on_finished(), on the caller's thread.
Submit = Callable[[Callable[[], object], Callable[[object], None],
                   Callable[[BaseException], None], Callable[[], None]], None]


def run_here(job, on_done, on_error, on_finished) -> None:
    """A :data:`Submit` that runs the job at once on this thread (scripts, tests)."""
    try:
        result = job()
    except Exception as error:  # reported to on_error, as a worker thread would
        on_error(error)
    else:
        on_done(result)
    finally:
        on_finished()


class Coalescer:
    """Runs at most one job at a time: a request made while a job runs is remembered (only the
    newest) and started when the running one finishes, so the answer always catches up with
    the last scribble without queueing every stroke.

    ``make_job()`` is called on the requesting thread when a job starts (it should copy the
    scribbles there) and returns the callable to run; ``submit`` runs it (a napari
    ``thread_worker`` in the widget, :func:`run_here` in scripts).
    """

    def __init__(self, make_job: Callable[[], Callable[[], object]], submit: Submit,
                 on_done: Callable[[object], None], on_error: Callable[[BaseException], None]):
        self._make_job, self._submit = make_job, submit
        self._on_done, self._on_error = on_done, on_error
        self.running = False
        self.pending = False

    def request(self) -> None:
        if self.running:
            self.pending = True
            return
        self._start()

    def _start(self) -> None:
        self.running, self.pending = True, False
        try:
            job = self._make_job()
        except Exception as error:
            self.running = False
            self._on_error(error)
            return
        self._submit(job, self._on_done, self._on_error, self._finished)

    def _finished(self) -> None:
        self.running = False
        if self.pending:
            self._start()
