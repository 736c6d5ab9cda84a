"""Preparing a segmentation session ahead of its first real update.

The first GPU update of a :class:`~graphcut.Segmenter` pays for what later ones reuse: CuPy's
kernels for the energy (compiled by NVRTC on a machine's first run, else loaded from CuPy's
cache), the solver's kernels (a shipped fatbin, else NVRTC), the solver state for the image's
shape, the page-locked upload buffers and the captured CUDA graphs. :func:`warm_up` pays all of
that with one throwaway update (one object and one background seed), for example while the app
shows a newly opened image, so that the user's first stroke costs what later strokes do.

A model with a hold (:class:`graphcut.models.Learned`, :mod:`._hold`) runs more kernels from
its ``confident_after``-th stroke (the previous update's classifier, the gated hold) and from
its ``hold_after``-th (the plain hold): :func:`warm_up` then adds throwaway background seeds
along the image's border and runs one update at each of those stroke counts, given the update
before as ``previous``, so that the user's third stroke does not pay a compilation (about 4 s
on an H100 with an empty CuPy cache) either. The next real update re-solves from the
throwaway preflow with the exact answer of a fresh solve (the Segmenter's guarantee: it keeps
no hidden state).
"""

from __future__ import annotations

import math
import time

import numpy as np

from graphcut._arrays import CUB_SIZE_CLASSES_UP_TO
from graphcut._labels import BACKGROUND, FOREGROUND

#: the most throwaway strokes :func:`warm_up` adds for a model's hold (a larger ``hold_after``
#: or ``confident_after`` is not warmed)
MAX_WARM_STROKES = 8
#: the seeds' share of the pixels at most (:func:`seed_side`; a learned model records a
#: sample of at most an eighth of the pixels)
SAMPLE_SHARE = 0.12


def warm_up(session) -> float:
    """Run throwaway updates on a GPU ``session`` (a Segmenter); returns the seconds spent.

    One update with a square of object seeds at the centre and one of background seeds at
    the corner (:func:`seed_side`; one voxel each in a volume); for a 2-D session the import
    of a box's neighbour split (:func:`~._box_neighbours.load_watershed`); for one whose
    model holds the previous mask (``model.hold > 0``), one more at each of the model's
    ``confident_after`` and ``hold_after`` stroke counts (at most :data:`MAX_WARM_STROKES`
    strokes), each given the update before as ``previous``.

    Does nothing for CPU sessions (there is nothing to compile, and a full CPU solve would delay
    the user's first stroke) or for single-pixel images (no room for two seeds).

    Examples
    --------
    >>> import numpy as np
    >>> import graphcut
    >>> session = graphcut.Segmenter(np.zeros((8, 8)), device="cpu")
    >>> warm_up(session)
    0.0
    """
    started = time.perf_counter()
    shape = tuple(session.shape)  # (H, W) or a volume's (D, H, W)
    if session.backend != "cuda" or int(np.prod(shape)) < 2:
        return 0.0
    seeds = np.zeros(shape, dtype=np.uint8)
    side = seed_side(shape) if len(shape) == 2 else 1
    centre = tuple(n // 2 for n in shape)  # never the corner with two pixels or more
    seeds[tuple(slice(c - side // 2, c - side // 2 + side) for c in centre)] = FOREGROUND
    seeds[(slice(0, side),) * len(shape)] = BACKGROUND
    mask = session.update(seeds)
    model = getattr(session, "model", None)
    if len(shape) == 2:  # a learned model's first box splits off its neighbours: import now
        from ._box_neighbours import load_watershed
        load_watershed()
    if len(shape) == 2 and getattr(model, "hold", 0) > 0:
        previous, spots = (seeds, mask), border_spots(shape)
        for count in hold_stroke_counts(model):
            seeds = previous[0].copy()
            for spot in spots[:count - 2]:  # two strokes are there already
                if seeds[spot] == 0:
                    seeds[spot] = BACKGROUND
            previous = (seeds, session.update(seeds, previous=previous))
    return time.perf_counter() - started


def seed_side(shape) -> int:
    """The side (pixels) of :func:`warm_up`'s two square seeds on an (H, W) image: each
    label's seeds hold more than ``graphcut._arrays.CUB_SIZE_CLASSES_UP_TO`` pixels (so the
    GPU comparison of a later stroke's sample with the last fit's, compiled for the one size
    class above it, is compiled here), where the image allows it: at most an eighth of the
    pixels (a recorded sample's share) and a quarter of each side.

    Examples
    --------
    >>> seed_side((2048, 2048)), seed_side((100, 100)), seed_side((3, 3))
    (33, 25, 1)
    """
    wanted = math.isqrt(CUB_SIZE_CLASSES_UP_TO) + 1
    fits = min(math.isqrt(int(SAMPLE_SHARE * shape[0] * shape[1])), shape[0] // 4,
               shape[1] // 4)
    return max(1, min(wanted, fits))


def hold_stroke_counts(model) -> list[int]:
    """The stroke counts at which ``model``'s hold starts running other kernels: its
    ``confident_after`` (the gated hold, when below ``hold_after``) and its ``hold_after``,
    those of 3 to :data:`MAX_WARM_STROKES`, ascending.

    Examples
    --------
    >>> from graphcut.models import Learned
    >>> hold_stroke_counts(Learned())
    [3, 7]
    >>> hold_stroke_counts(Learned(confident_after=7))
    [7]
    """
    after = getattr(model, "hold_after", None)
    counts = {after}
    confident = getattr(model, "confident_after", None)
    if confident is not None and after is not None and confident < after:
        counts.add(confident)
    return sorted(c for c in counts if c is not None and 3 <= c <= MAX_WARM_STROKES)


def border_spots(shape) -> list[tuple[int, int]]:
    """Up to seven pixels along the border of an (H, W) image, apart from each other and
    from the square at (0, 0) (where :func:`warm_up`'s first background seeds are,
    :func:`seed_side`): the other corners, then the sides' middles (fewer on an image too
    small to keep them apart).

    Examples
    --------
    >>> border_spots((100, 200))[:3]
    [(0, 199), (99, 0), (99, 199)]
    """
    last_row, last_col = shape[0] - 1, shape[1] - 1
    spots = [(0, last_col), (last_row, 0), (last_row, last_col), (0, last_col // 2),
             (last_row, last_col // 2), (last_row // 2, 0), (last_row // 2, last_col)]
    side = seed_side(shape)
    kept: list[tuple[int, int]] = []
    for spot in spots:  # 8-connected neighbours would be one stroke
        if all(max(abs(spot[0] - r), abs(spot[1] - c)) > 1 for r, c in kept) and \
                max(spot) > side:  # apart from the background square at (0, 0)
            kept.append(spot)
    return kept


__all__ = ["MAX_WARM_STROKES", "SAMPLE_SHARE", "border_spots", "hold_stroke_counts", "seed_side",
           "warm_up"]
