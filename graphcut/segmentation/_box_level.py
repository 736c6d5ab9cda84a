"""The box's own level: a soft prior from where the image says a larger boxed object ends.

A box around one object gives the image's own scale for it: the median of the box's
one-pixel border (level 0) and the median of its core (level 1; the box's pixels at least
half its largest depth inside), and each pixel's level between them along the direction
from the one to the other (grey or colour, either polarity; :func:`box_axis`). Inside a
box whose smaller side exceeds :data:`MIN_SIDE` pixels the object costs :data:`LEVEL_COST`
nats more at the pixels below :data:`LEVEL` and as much less at those at or above it, except
at the pixels a neighbour crossing the box's side brings in
(:func:`~._box_neighbours.neighbour_pixels`: no reward there). Outside the box, and in a
smaller box, nothing changes.

Why (bench/RESULTS.md, eighteenth session, box18): the dev nuclei's masks are set by the
box's geometry more than by the image (the box's ring and outline cost eat a tight box's
object, a loose box's margin leaks); the level says where the object ends whatever the
margin. In a small box the level misreads the blurred halo (the annotators' boundary sits
anywhere between 0.3 and 0.6 of a small nucleus's contrast and one pixel is much of its
area), hence the size gate.

The reward is written as a lower object cost (the same cut as a higher background cost:
only the difference of the two labels' costs matters), so the prior joins the outline cost
(:func:`~._outline.outline_priors`, kept on the model per box and image). The level is
computed on the image's values on their device (a few element-wise operations on the box);
the two medians on the host from the box sampled to at most :data:`MAX_PIXELS` pixels.
"""

from __future__ import annotations

import math

import numpy as np

from graphcut._arrays import array_module, to_host

from ._box_neighbours import border_and_core, neighbour_pixels

#: nats: the object's cost below the level, minus that above it (the learned model's
#: ``level`` knob overrides it; 0: off). On since the nineteenth session, with one round of
#: the tightness prior's middle-of-run pins (:data:`~._tightness.MAX_ROUNDS`): with eight
#: rounds its tighter masks re-cut two to three times as often and the first mask after a box
#: at 4 MP took 90-96 ms instead of 34-43 on an H200; with one round 68-71 ms, and no dev box
#: changes (bench/RESULTS.md, eighteenth and nineteenth sessions)
LEVEL_COST = 1.0
#: the level between the box's border (0) and its core (1) where the object is taken to end
LEVEL = 0.3
#: pixels: only a box whose smaller side exceeds this gets the prior
MIN_SIDE = 20
#: the border and the core must be told apart: the median absolute deviation of their
#: pixels' levels from their own medians (pooled; the core's median is 1) at most this (an
#: object told from its background by texture alone has no level: the rough disc of
#: tests/support/synthetic.py 1.8-27, the dev nuclei's boxes at most 1.25)
SPREAD = 1.5
#: the medians are taken on the box sampled to at most this many pixels
MAX_PIXELS = 128 * 128


def box_axis(values, box, max_pixels=None):
    """The box's level scale: the border's median ``low`` and ``axis / |axis|^2``, ``axis``
    the core's median minus ``low`` (see the module's notes), host float64 vectors of the
    channels; None when the two medians are equal or the border's and the core's levels
    spread more than :data:`SPREAD` about their medians (no level to read).

    Parameters
    ----------
    values : array (H, W, C)
        The image's values (NumPy or CuPy; only the sampled box comes to the host).
    box : tuple of int
        ``(row0, col0, row1, col1)``, half-open, at least 1 x 1.
    max_pixels : int, optional
        The box is sampled with a stride when it has more pixels than this (None:
        :data:`MAX_PIXELS`).

    Returns
    -------
    tuple of numpy.ndarray or None

    Examples
    --------
    >>> import numpy as np
    >>> image = np.zeros((9, 9, 1)); image[2:7, 2:7] = 2.0
    >>> low, scale = box_axis(image, (1, 1, 8, 8))
    >>> float(low[0]), float(scale[0])
    (0.0, 0.5)
    """
    max_pixels = MAX_PIXELS if max_pixels is None else int(max_pixels)
    r0, c0, r1, c1 = (int(v) for v in box)
    stride = max(1, math.ceil(math.sqrt((r1 - r0) * (c1 - c0) / max_pixels)))
    inside = np.asarray(to_host(values[r0:r1:stride, c0:c1:stride]), dtype=np.float64)
    border, core, low, axis = border_and_core(inside)
    norm = float(axis @ axis)
    if not norm > 1e-12:
        return None
    scale = axis / norm
    levels = [(part - low) @ scale for part in (border, core)]
    spread = np.median(np.abs(np.concatenate([v - np.median(v) for v in levels])))
    if not spread <= SPREAD:
        return None
    return low, scale


def level_cost(values, box, cost, *, level=None, min_side=None):
    """The object's added cost (nats) in ``box``: ``+cost`` below the level, ``-cost`` at or
    above it but not at a neighbour's pixels (see the module's notes).

    Parameters
    ----------
    values : array (H, W, C)
        The image's values (any affine map of them per channel), NumPy or CuPy.
    box : tuple of int
        ``(row0, col0, row1, col1)``, half-open.
    cost : float
        Nats, >= 0.
    level, min_side : optional
        :data:`LEVEL`, :data:`MIN_SIDE` when None.

    Returns
    -------
    array (row1 - row0, col1 - col0) of float64 or None
        On ``values``' device; None when ``cost`` is 0, the box's smaller side is not
        larger than ``min_side`` or the box has no contrast.

    Examples
    --------
    >>> import numpy as np
    >>> image = np.zeros((40, 40, 1)); image[10:30, 10:30] = 1.0
    >>> added = level_cost(image, (5, 5, 35, 35), 1.0)
    >>> float(added[0, 0]), float(added[15, 15])
    (1.0, -1.0)
    """
    level = LEVEL if level is None else float(level)
    min_side = MIN_SIDE if min_side is None else int(min_side)
    r0, c0, r1, c1 = (int(v) for v in box)
    if not cost > 0 or min(r1 - r0, c1 - c0) <= min_side:
        return None
    scale = box_axis(values, (r0, c0, r1, c1))
    if scale is None:
        return None
    xp = array_module(values)
    low, axis = (xp.asarray(v) for v in scale)
    levels = (values[r0:r1, c0:c1].astype(xp.float64) - low) @ axis
    above = levels >= level
    found = neighbour_pixels(values, (r0, c0, r1, c1))
    if found is not None:  # a neighbour's pixels: not rewarded
        (rows, cols), pixels = found
        above = above & ~pixels[r0 - rows.start:r1 - rows.start,
                                c0 - cols.start:c1 - cols.start]
    return xp.where(above, xp.float64(-cost), xp.where(levels < level, xp.float64(cost),
                                                       xp.float64(0.0)))


def with_level_cost(cost_object, values, box, cost, **options):
    """``cost_object`` ((H, W), nats) plus :func:`level_cost` in ``box``: a new array (the
    given one may be a kept array: never changed), or ``cost_object`` itself when the prior
    does not apply."""
    added = level_cost(values, box, cost, **options)
    if added is None:
        return cost_object
    r0, c0, r1, c1 = (int(v) for v in box)
    changed = cost_object.astype(np.float64, copy=True)
    changed[r0:r1, c0:c1] += added
    return changed


__all__ = ["LEVEL", "LEVEL_COST", "MAX_PIXELS", "MIN_SIDE", "SPREAD", "box_axis", "level_cost",
           "with_level_cost"]
