"""Segmentation requests, their answers, and the plain-Python code that answers them. No Qt.

A :class:`Solver` answers one opened image at a time (:class:`Session`), then any number of
:class:`Job`\\ s, each carrying only the seeds that changed. It runs in a solver process
(``solver_process.py``), or on a thread of the app when no process can be started; the app's
side of the conversation is ``controller.py`` and ``worker.py``.

Two kinds of solver, chosen by ``Session.preview_factor``:

- exact (factor 1): a ``graphcut.Segmenter`` on the full image; each job is an incremental
  re-solve and the mask equals a fresh ``graphcut.segment`` of the same seeds (unless
  :data:`WARM_STROKES`);
- preview (factor k > 1): a ``Segmenter`` on the image reduced k times (block means), with
  seeds, box and lasso reduced the same way (``reduced_grid.py``: a block takes the label most
  of its seeded pixels have) and lambda divided by k (a coarse pixel stands for k * k pixels, a
  coarse edge for k edges), with the job's colour model, box or lasso and any number of
  objects (no clean-up). It answers in a small fraction of the exact solve's time; the app
  shows its mask, scaled up, until the exact mask of the same seeds arrives.

Masks go back as :class:`~graphcut.gui.sharing.MaskUpdate`\\ s: the rectangle that changed
since the previous answer, as packed bits.
"""

from __future__ import annotations

import math
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

import graphcut
from graphcut.segmentation import only_binary_labels, warm_up
from graphcut.solver import SolveCancelled

from .model_choice import chosen_model, model_lam
from .options import SegmentOptions, clean_up
from .previous_update import HeldUpdates, Previous
from .reduced_grid import Reducer, preview_model
from .sharing import (ArrayRef, AttachedArray, MaskUpdate, SeedDelta, from_slices,
                      mask_fraction, to_slices, union)

# A preview grid has at most about this many pixels (a PyMaxflow solve of ~0.1 s on one core).
PREVIEW_PIXELS = 250_000
# True: a live model's strokes alone (the GMM of ``auto`` on colour images, no box) start
# their coarse GrabCut iterations from the previous job's (``Segmenter.warm_strokes``; one or
# two iterations instead of five, but a mask that may differ from a fresh
# ``graphcut.segment``'s). Off: on the photo cut-outs' development split it needed more
# strokes (NoC@90 6.70 against 6.00; bench/RESULTS.md, ninth session).
WARM_STROKES = False


@dataclass(frozen=True)
class Session:
    """Open an image: the solver drops any previous image and builds what does not depend on
    the seeds (n-links, colour bins, PyMaxflow's graph or the GPU state, warmed up with a
    throwaway update so that the first stroke costs what later ones do).

    Attributes:
        token: identifies the opened image; jobs name it, and a job for another token fails.
        image: the image as read (never modified): a :class:`~graphcut.gui.sharing.ArrayRef`
            to shared memory, or the array itself (a solver on a thread of the app).
        lam: the smoothness weight to start with; None: the model's own ``lam`` (given to
            the library explicitly: the histogram's automatic choice with a box is not used).
        device: "auto", "cpu" or "cuda".
        preview_factor: 1 = exact solver; k > 1 = preview solver on a grid reduced k times
            (2-D images only).
        channel_axis: -1 when a last axis of a 3-D image holds colour channels (the app's
            images); None for a grey volume (D, H, W); -1 also for a multichannel volume
            (D, H, W, C). A 2-D image is grey whatever this says.
        spacing: the pixel or voxel spacing per spatial axis (None: 1), as for
            ``graphcut.Segmenter``.
        model: the appearance model the session is prepared with (the app's current one, so
            that the first stroke finds its segmenter ready); a job naming another model
            makes a new segmenter, warmed up the same way before it solves.
    """

    token: int
    image: ArrayRef | np.ndarray
    lam: float | None
    device: str
    preview_factor: int = 1
    channel_axis: int | None = -1
    spacing: tuple | None = None
    model: str = SegmentOptions.model


@dataclass(frozen=True)
class Job:
    """One segmentation request.

    Attributes:
        number: increases with every request; a solver answers only the newest of the jobs
            waiting for it (the others come back cancelled) and stops a running GPU solve
            when a newer job arrives.
        token: the :class:`Session` this job belongs to.
        lam: the smoothness weight (a change re-solves from scratch, keeping the colour model);
            None: the model's own ``lam`` (a preview's divided by its factor).
        seeds: the labels that changed since the previous job sent to this solver (the whole
            seed array after a (re)start).
        options: the colour model, clean-up, box and lasso (``options.py``). The default is
            today's energy; seeds of several objects, a box, a lasso or the GMM go through
            ``graphcut.segment``'s pipeline (on a preview's reduced grid too, without the
            clean-up).
        previous: the previous update the user saw, for a model's hold (``previous_update.py``;
            exact jobs of one object from strokes alone); None: none.
    """

    number: int
    token: int
    lam: float | None
    seeds: SeedDelta
    options: SegmentOptions = SegmentOptions()
    previous: Previous | None = None


@dataclass(frozen=True)
class Opened:
    """The answer to a :class:`Session`: the backend that will solve, or why none can."""

    token: int
    backend: str = ""
    device_name: str = ""
    seconds: float = 0.0  # building the session (n-links, bins, graph)
    error: str | None = None
    details: str = field(default="", repr=False)


@dataclass(frozen=True)
class Outcome:
    """What a job produced.

    Attributes:
        update: the mask as a change to the previous answer of the same solver.
        factor: 1 for an exact mask, k for a preview on a grid reduced k times.
        seconds: wall seconds in the solver: "energy" (colour model and capacities), "solve"
            (max-flow), "mask" (finding what changed and packing it), "total" (the job, from
            taking it to the answer being ready; also includes any session rebuild).
        incremental: re-solved from the previous state (False: from scratch).
        coverage: the share of the mask's pixels in the object (0..1).
        lam: the smoothness weight the mask was cut at (on the solver's grid).
        labels: for seeds of several objects, the whole label image (uint8: 0 background,
            each object its seed label); ``update`` then describes ``labels != 0``.
        cancelled: a newer job made this one useless; no mask.
        mask, region, received: filled in by the app's side (``worker.py``): the whole mask
            with the update applied, the slices that changed, and when it arrived
            (``time.perf_counter()`` in the app's process).
    """

    number: int
    token: int
    update: MaskUpdate | None = None
    factor: int = 1
    backend: str = ""
    device_name: str = ""
    seconds: dict = field(default_factory=dict)
    incremental: bool = False
    coverage: float = float("nan")
    lam: float = float("nan")
    labels: np.ndarray | None = field(default=None, repr=False)
    cancelled: bool = False
    error: str | None = None
    details: str = field(default="", repr=False)
    mask: np.ndarray | None = field(default=None, repr=False)
    region: tuple | None = None
    received: float = float("nan")


class MissingSession(RuntimeError):
    """A job names an image the solver does not hold."""


def spatial_shape(shape, channel_axis=-1) -> tuple:
    """The shape of an image's seeds and mask: ``shape`` without its channel axis (a 2-D
    ``shape`` has none; ``channel_axis`` None: none either)."""
    shape = tuple(int(n) for n in shape)
    if channel_axis is None or len(shape) == 2:
        return shape
    axis = channel_axis % len(shape)
    return shape[:axis] + shape[axis + 1:]


def preview_factor(shape, pixels: int = PREVIEW_PIXELS) -> int:
    """The smallest reduction factor that brings an image of ``shape`` to at most ``pixels``."""
    return max(1, math.ceil(math.sqrt(shape[0] * shape[1] / pixels)))


class Solver:
    """Answers :class:`Session` and :class:`Job` requests, one after another.

    :meth:`take` a job's seeds as soon as it arrives (cheap), :meth:`solve` only the newest.
    Never raises for a bad request: failures come back in ``Opened.error`` / ``Outcome.error``.
    """

    def __init__(self):
        self._session: Session | None = None
        self._attached: AttachedArray | None = None
        self._image = None
        self._segmenter = None
        self._model = None  # the colour model self._segmenter was made with
        self._grid_lam = None      # the lam self._segmenter has (None: the model's default)
        self._preview: Reducer | None = None
        self._grid_image = None  # the image the segmenter solves (reduced for a preview)
        self._device = None      # the device it solves on
        self._seeds: np.ndarray | None = None
        self._dirty = None  # bounding region of seed changes not yet solved; "all" = unknown
        self._lam = None
        self._chosen = {}  # model name -> what the segmenter gets for it on the open image
        self._sent = None  # the mask of the last answer (on the solver's device)
        self._held = HeldUpdates()  # previous updates for the hold (previous_update.py)

    @property
    def token(self):
        """The open session's token (None when none is open)."""
        return None if self._session is None else self._session.token

    def open(self, session: Session) -> Opened:
        """Close any open session and open ``session`` (its image from shared memory or
        the array itself), with no seeds yet.

        Returns
        -------
        Opened
            The answer sent back: the backend and device that will solve and the seconds
            taken building the session, or the error.
        """
        started = time.perf_counter()
        self.close()
        try:
            if isinstance(session.image, ArrayRef):
                self._attached = AttachedArray(session.image)
                image = self._attached.array
            else:
                image = np.asarray(session.image)
            self._session, self._image = session, image
            self._seeds = np.zeros(spatial_shape(image.shape, session.channel_axis), np.uint8)
            self._chosen = {}  # "auto" is chosen on this (full) image when first asked for
            self._dirty = "all"
            self._lam = _optional_lam(session.lam)
            if session.preview_factor > 1:
                self._preview = Reducer(image.shape[:2], session.preview_factor)
                image = self._preview.reduce_image(image)
                device = "cpu"
            else:
                device = session.device
            self._grid_image, self._device = image, device
            self._make_segmenter(session.model)
        except Exception as error:  # reported to the user, never raised into the app
            self.close()
            return Opened(session.token, error=_describe_error(error),
                          details=traceback.format_exc())
        return Opened(session.token, self._segmenter.backend, self._segmenter.device_name,
                      time.perf_counter() - started)

    def close(self) -> None:
        """Drop the image and everything built on it."""
        self._segmenter = self._preview = self._session = self._image = self._sent = None
        self._grid_image = self._device = None
        self._seeds = None
        self._held.clear()
        if self._attached is not None:
            self._attached.close()
            self._attached = None

    def take(self, job: Job) -> bool:
        """Apply a job's seed changes and lambda (they count even when the job is not solved).
        Returns False when the job is for another image."""
        if self._session is None or job.token != self._session.token:
            return False
        region = job.seeds.apply(self._seeds)
        self._dirty = "all" if self._dirty == "all" or job.seeds.region is None \
            else union(self._dirty, from_slices(region))
        self._lam = _optional_lam(job.lam)
        self._held.take(job.previous, lambda array: _on_device_of(array, self._segmenter))
        return True

    def solve(self, job: Job, cancel=None) -> Outcome:
        """Segment with the seeds taken so far (``job`` must have been :meth:`take`\\ n).

        ``cancel``: polled during a GPU solve; True stops it (the outcome is ``cancelled``).
        """
        started = time.perf_counter()
        try:
            if self._session is None or job.token != self._session.token:
                raise MissingSession(f"job {job.number} is for image {job.token}, but the "
                                     f"solver holds {self.token}")
            factor = self._session.preview_factor
            remade = self._apply_lam()
            if self._preview is not None:
                seeds, region = self._preview.reduce_seeds(self._seeds, self._dirty)
            else:
                seeds = self._seeds
                region = None if self._dirty == "all" or remade else to_slices(self._dirty)
            self._dirty = None
            mask, labels = self._segment(seeds, region, job.options, cancel, job.previous)
            solved = time.perf_counter()
            if self._preview is None and (labels is not None
                                          or getattr(self._segmenter.model, "hold", 0) > 0):
                kept = self._segmenter.device_seeds  # the next job may name this answer
                kept = seeds if kept is None or kept.shape != mask.shape else kept
                self._held.answered(job.number, kept.copy(), mask if labels is None else
                                    _on_device_of(labels, self._segmenter))
            update = MaskUpdate.between(self._sent, mask)
            coverage = mask_fraction(mask)
            self._sent = mask
        except SolveCancelled:
            return Outcome(job.number, job.token, cancelled=True,
                           seconds={"total": time.perf_counter() - started})
        except Exception as error:  # reported to the user, never raised into the app
            self._dirty = "all"  # the segmenter may hold other seeds than ours now
            return Outcome(job.number, job.token, error=_describe_error(error),
                           details=traceback.format_exc())
        stats = self._segmenter.last_result.stats
        done = time.perf_counter()
        spent = stats["seconds"]
        seconds = {"energy": spent.get("energy", math.nan),
                   "solve": spent.get("solve", spent.get("total", math.nan))
                   + spent.get("prepare", 0.0),
                   "mask": done - solved, "total": done - started}
        return Outcome(job.number, job.token, update, factor, self._segmenter.backend,
                       stats.get("device_name", self._segmenter.device_name), seconds,
                       bool(stats.get("incremental", True)), coverage,
                       float(stats.get("lam", self._segmenter.lam)), labels)

    def _segment(self, seeds, region, options: SegmentOptions, cancel, previous=None):
        """The mask (on the solver's device) and, for several objects, the host label image.

        Today's energy (histogram, one object, no box or lasso) is the segmenter's incremental
        update, then the clean-up; anything else is ``graphcut.segment``'s pipeline on the same
        session (a GMM needs a session of its own, made when the model changes)."""
        if self._preview is not None:  # the box and lasso on the reduced grid, no clean-up
            options = self._preview.reduce_options(options)
        if options.model != self._model:
            self._make_segmenter(options.model)
            region = None
        several = not only_binary_labels(seeds)
        if options.has_region or several or options.model != "histogram":
            # one object's mask stays on the solver's device, cleaned up there (a label image
            # of several objects comes to the host); only the edited region of the seeds is
            # uploaded (the segmenter keeps them on the device)
            output = self._segmenter.update(seeds, region=region, box=options.box,
                                            lasso=options.lasso, cancel=cancel,
                                            device_mask=not several,
                                            previous=self._held.pair(previous))
        else:
            output = self._segmenter.update(seeds, region=region, cancel=cancel,
                                            device_mask=True)
        if options.cleans_up and output.dtype == bool:
            # on the segmenter's device, with the seeds it holds there
            output = clean_up(output, self._segmenter.device_seeds, options)
        elif options.cleans_up:
            output = clean_up(output, seeds, options)
        if output.dtype == bool:
            return _on_device_of(output, self._segmenter), None
        return _on_device_of(output != 0, self._segmenter), output

    def _grid_lam_for(self, model: str) -> float:
        """The lam of this solver's grid: the job's, or (job lam None) the model's own
        ``lam``, divided by a preview's factor. Always given to the library: the histogram's
        automatic choice with a box or lasso (two cuts from scratch per update) would make
        every box edit several times slower, so the app cuts at the model's nominal lam."""
        if self._lam is not None:
            return self._lam / self._session.preview_factor
        chosen = self._model_for(model)
        lam = model_lam(model) if isinstance(chosen, str) else float(chosen.lam)
        return lam / self._session.preview_factor

    def _model_for(self, model: str):
        """What the segmenter gets for ``model``: its name, or for a model chosen by the
        image (``"auto"``) the model it stands for on the open full image, chosen once (a
        preview's reduced image cuts with the same model as the full one)."""
        if model not in self._chosen:
            self._chosen[model] = chosen_model(model, self._image, self._session.channel_axis)
        return self._chosen[model]

    def _make_segmenter(self, model: str) -> None:
        """A new segmenter of the grid's image with ``model`` and the current lam, warmed up
        on the GPU (when the image opens and when the model changes during a session)."""
        lam = self._grid_lam_for(model)
        self._segmenter = _make_segmenter(self._grid_image, lam, self._device,
                                          self._model_for(model), self._session)
        self._model, self._grid_lam = model, lam
        # on the GPU: kernels, GPU state and captured CUDA graphs now, not at the next stroke
        # (the next update compares the seeds with the throwaway ones: still exact); a CPU
        # session is left alone (warm_up returns at once)
        warm_up(self._segmenter)

    def _apply_lam(self) -> bool:
        """Give the segmenter the current lam; returns whether it had to be made anew (never:
        ``set_lam`` re-solves from scratch itself)."""
        lam = self._grid_lam_for(self._model)
        if lam != self._grid_lam:
            self._segmenter.set_lam(lam)
            self._grid_lam = lam
        return False

    def run(self, job: Job, cancel=None) -> Outcome:
        """:meth:`take` then :meth:`solve`."""
        if not self.take(job):
            return Outcome(job.number, job.token, error=f"job {job.number} is for image "
                           f"{job.token}, but the solver holds {self.token}")
        return self.solve(job, cancel)


def _optional_lam(lam) -> float | None:
    return None if lam is None else float(lam)


def _make_segmenter(image, lam: float | None, device: str, model, session: Session):
    """A prepared ``graphcut.Segmenter`` of ``image`` (keep="all": the app cleans up itself,
    so that the histogram's incremental path stays today's); the session's channel axis and
    spacing (the preview's reduced image always has its channels last)."""
    channel_axis = -1 if session.preview_factor > 1 else session.channel_axis
    if session.preview_factor > 1:
        model = preview_model(model)
    segmenter = graphcut.Segmenter(image, lam=lam, channel_axis=channel_axis, device=device,
                                   model=model, spacing=session.spacing)
    segmenter.warm_strokes = WARM_STROKES
    segmenter.prepare()
    return segmenter


def _on_device_of(mask, segmenter):
    """``mask`` on ``segmenter``'s device (what ``MaskUpdate.between`` compares with)."""
    if segmenter.backend == "cuda" and isinstance(mask, np.ndarray):
        import cupy
        return cupy.asarray(mask)
    return mask


def _describe_error(error: Exception) -> str:
    text = str(error) or type(error).__name__
    if isinstance(error, MemoryError):
        return f"out of memory while segmenting ({text})"
    return text
