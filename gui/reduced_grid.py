"""The preview's grid: an image, its seeds, box and lasso reduced ``factor`` times in each
direction (block means, majority seeds, scaled coordinates). No Qt in here.

A coarse pixel stands for the ``factor x factor`` block of full pixels it covers (edge blocks
for the pixels they have). Its seed is the label most of the block's seeded pixels carry (any
label: background, object 1, objects 3, 4, ...); a tie leaves it unseeded. A box keeps every
coarse pixel that holds one of its pixels; a lasso's vertices move to the coarse grid's
coordinates (the centre of coarse pixel ``i`` is at full coordinate ``i k + (k - 1) / 2``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

import graphcut

# A preview's live model (``warm``, the GMM of ``auto`` on colour images) runs at most this
# many GrabCut iterations on its coarse grid (the exact solver: the model's, 5): the preview
# is shown only until the exact mask comes.
PREVIEW_ITERATIONS = 2


class Reducer:
    """Maps an image, its seeds and its box or lasso to a grid reduced ``factor`` times in
    each direction.

    Parameters
    ----------
    shape
        the full image's (rows, cols).
    factor
        the reduction factor k >= 1.
    """

    def __init__(self, shape, factor: int):
        self.shape, self.factor = tuple(shape), int(factor)
        self.reduced_shape = tuple(-(-n // self.factor) for n in self.shape)
        self.seeds = np.zeros(self.reduced_shape, np.uint8)

    def reduce_image(self, image: np.ndarray) -> np.ndarray:
        """Block means (edge blocks over the pixels they have), as float in [0, 1] like
        ``graphcut.energy.image_as_float`` scales them; shape (rows, cols, channels)."""
        image = np.asarray(image)
        if image.ndim == 2:
            image = image[..., None]
        scale = float(np.iinfo(image.dtype).max) if image.dtype.kind in "iu" else 1.0
        blocks = self._blocks(image)
        return (blocks.sum(axis=(1, 3), dtype=np.float64) / self._block_sizes()[..., None]
                / scale)

    def reduce_seeds(self, seeds: np.ndarray, dirty):
        """The reduced seeds, recomputed over the blocks that ``dirty`` (``(row0, row1, col0,
        col1)``, "all" or None) touches; returns them with the reduced region to pass to
        ``Segmenter.update``. A block takes the label most of its seeded pixels have (ties:
        no seed)."""
        k = self.factor
        if dirty is None:
            return self.seeds, (slice(0, 0), slice(0, 0))
        if dirty == "all":
            dirty = (0, self.shape[0], 0, self.shape[1])
        r0, r1, c0, c1 = dirty[0] // k, -(-dirty[1] // k), dirty[2] // k, -(-dirty[3] // k)
        part = seeds[r0 * k:r1 * k, c0 * k:c1 * k]
        pad = ((0, (r1 - r0) * k - part.shape[0]), (0, (c1 - c0) * k - part.shape[1]))
        part = np.pad(part, pad).reshape(r1 - r0, k, c1 - c0, k)
        best = np.zeros((r1 - r0, c1 - c0), np.uint8)
        best_count = np.zeros(best.shape, np.int64)
        tie = np.zeros(best.shape, bool)
        present = np.flatnonzero(np.bincount(part.ravel(), minlength=256))  # no sort
        for value in present[present != graphcut.NONE]:
            count = np.count_nonzero(part == value, axis=(1, 3))
            more = count > best_count
            tie = np.where(more, False, tie | ((count == best_count) & (count > 0)))
            best = np.where(more, value, best).astype(np.uint8)
            best_count = np.maximum(count, best_count)
        self.seeds[r0:r1, c0:c1] = np.where(tie, graphcut.NONE, best)
        return self.seeds, (slice(r0, r1), slice(c0, c1))

    def reduce_options(self, options):
        """``options`` (``SegmentOptions``) for the reduced grid: the box and lasso in its
        coordinates, no clean-up (the exact mask is cleaned up)."""
        k = self.factor
        box = lasso = None
        if options.box is not None:
            row0, col0, row1, col1 = options.box
            box = (row0 // k, col0 // k, -(-row1 // k), -(-col1 // k))
        if options.lasso is not None:
            lasso = tuple(((r - (k - 1) / 2) / k, (c - (k - 1) / 2) / k)
                          for r, c in options.lasso)
        return dataclasses.replace(options, keep="all", fill_holes=0, box=box, lasso=lasso)

    def _blocks(self, array):
        k = self.factor
        h, w = self.reduced_shape
        pad = ((0, h * k - array.shape[0]), (0, w * k - array.shape[1]), (0, 0))
        return np.pad(array, pad).reshape(h, k, w, k, array.shape[2])

    def _block_sizes(self):
        k = self.factor
        rows = np.minimum(k, self.shape[0] - k * np.arange(self.reduced_shape[0]))
        cols = np.minimum(k, self.shape[1] - k * np.arange(self.reduced_shape[1]))
        return np.outer(rows, cols).astype(np.float64)


def preview_model(model):
    """The preview's model for the exact solver's ``model`` (a name or a model object): a
    live model object with at most :data:`PREVIEW_ITERATIONS` iterations and no
    ``stroke_reach`` (on the reduced grid a stroke covers few pixels, and a first object
    mixture fitted on a few pixels against a far-background start collapses to the stroke),
    else ``model``.

    Parameters
    ----------
    model : str or graphcut.models.AppearanceModel
        The exact solver's model (``"auto"`` already chosen on the image).

    Returns
    -------
    str or graphcut.models.AppearanceModel
        ``model`` itself, or a new object with fewer iterations.
    """
    if isinstance(model, str) or not getattr(model, "warm", False) or \
            (getattr(model, "iterations", 0) <= PREVIEW_ITERATIONS
             and not getattr(model, "stroke_reach", 0)):
        return model
    knobs = {key: getattr(model, key) for key in model.knobs}
    changes = {"iterations": min(PREVIEW_ITERATIONS, getattr(model, "iterations", 0))}
    if "stroke_reach" in knobs:
        changes["stroke_reach"] = 0.0
    return type(model)(**{**knobs, **changes})
