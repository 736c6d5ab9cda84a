"""What the app asks the library for besides the seeds and lambda: the colour model, the clean-up,
and the box or lasso. No Qt in here.

:class:`SegmentOptions` travels with every job to the solver (``solve.py``), is written next to
saved seeds as the settings JSON that ``graphcut segment`` and ``graphcut batch`` read
(:func:`graphcut.segmentation.write_settings`), and is read back from it when seeds are loaded.
The box is ``(row0, col0, row1, col1)``, half-open; the lasso a tuple of ``(row, col)``
vertices (pixel centres at integers); outside either is background, as in
:func:`graphcut.segment`.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from graphcut._arrays import array_module, to_host
from graphcut.io import FOREGROUND, object_labels
from graphcut.segmentation import allowed_region, clean_labels, clean_mask

# The app's clean-up when it is on (Segment > Clean up): keep the object parts connected to
# its seeds (or the box's centre), fill holes smaller than this many pixels.
APP_FILL_HOLES = 100


@dataclass(frozen=True)
class SegmentOptions:
    """:func:`graphcut.segment`'s options that the app sets (the defaults are the library's,
    i.e. today's energy; the app starts from :data:`APP_DEFAULTS`)."""

    model: str = "auto"
    keep: str = "all"
    fill_holes: int = 0
    box: tuple | None = None
    lasso: tuple | None = None

    @property
    def cleans_up(self) -> bool:
        """Whether the mask is cleaned up (components dropped or holes filled)."""
        return self.keep != "all" or self.fill_holes > 0

    @property
    def has_region(self) -> bool:
        """Whether a box or lasso limits the object."""
        return self.box is not None or self.lasso is not None

    def with_cleanup(self, on: bool) -> "SegmentOptions":
        """These options with the app's clean-up switched on (keep the connected
        components, fill holes up to :data:`APP_FILL_HOLES` pixels) or off.
        """
        return dataclasses.replace(self, keep="connected" if on else "all",
                                   fill_holes=APP_FILL_HOLES if on else 0)

    def with_region(self, *, box=None, lasso=None) -> "SegmentOptions":
        """These options with the box or the lasso (at most one: a new one replaces both)."""
        return dataclasses.replace(self, box=None if box is None else tuple(int(v) for v in box),
                                   lasso=None if lasso is None else
                                   tuple((float(r), float(c)) for r, c in lasso))

    def segment_kwargs(self, lam: float | None) -> dict:
        """Keyword options for :func:`graphcut.segment` that give what the app shows (``lam``
        None: the model's default, ``model_choice.LamChoice``)."""
        return dict(model=self.model, lam=None if lam is None else float(lam), keep=self.keep,
                    fill_holes=self.fill_holes, box=self.box,
                    lasso=None if self.lasso is None else [list(p) for p in self.lasso])

    def settings(self, lam: float | None) -> dict:
        """The settings JSON's keys (:func:`graphcut.segmentation.write_settings`); no
        ``lam`` when it is None (the model's default)."""
        kwargs = self.segment_kwargs(lam)
        return {key: value for key, value in kwargs.items()
                if value is not None or key in ("box", "lasso")}

    @classmethod
    def from_settings(cls, settings: dict, current: "SegmentOptions") -> "SegmentOptions":
        """``current`` with what the checked ``settings`` (from
        :func:`graphcut.segmentation.read_settings`) hold; a file without a box or lasso
        clears them."""
        changes = {key: settings[key] for key in ("model", "keep", "fill_holes")
                   if settings.get(key) is not None}
        merged = dataclasses.replace(current, **changes)
        return merged.with_region(box=settings.get("box"), lasso=settings.get("lasso"))


APP_DEFAULTS = SegmentOptions().with_cleanup(True)


def clean_up(output, seeds, options: SegmentOptions):
    """``graphcut.segment``'s clean-up (``options.keep``, ``options.fill_holes``) applied to
    the result ``output`` of a segmentation with ``keep="all", fill_holes=0`` and the same
    seeds, box and lasso: a bool mask (one object) or a label image (several). A mask is
    cleaned on its own device (a CuPy mask on the GPU, with or without box or lasso; ``seeds``
    from either device); a label image on the host (NumPy)."""
    if not options.cleans_up:
        return output
    if output.dtype == bool:
        on_gpu = array_module(output) is not np
        outside = None if not options.has_region else _outside(
            tuple(seeds.shape), options.box, options.lasso, on_gpu)
        seeds = array_module(output).asarray(seeds)
        return clean_mask(output, seeds, keep=options.keep, fill_holes_area=options.fill_holes,
                          outside=outside)
    output, seeds = to_host(output), to_host(seeds)
    region = allowed_region(seeds.shape, box=options.box, lasso=options.lasso)
    single = np.asarray(output).dtype == bool
    labels = np.asarray(output).astype(np.uint8)  # a mask: object 1
    cleaned = clean_labels(labels, object_labels(seeds) or [FOREGROUND], seeds,
                           keep=options.keep, fill_holes_area=options.fill_holes,
                           outside=None if region is None else ~region)
    return cleaned == FOREGROUND if single else cleaned


@functools.lru_cache(maxsize=4)
def _outside(shape, box, lasso, on_gpu):
    """The pixels outside the box or lasso (bool, on the GPU when ``on_gpu``); kept for the
    next strokes, which clean up with the same region. Read-only."""
    outside = ~allowed_region(shape, box=box, lasso=lasso)
    if on_gpu:
        import cupy
        return cupy.asarray(outside)
    return outside
