"""Several objects: the expansion's start from the previous update's label image.

Given ``previous=(seeds, labels)`` (the label image the update before returned), an update of
several objects starts its alpha-expansion from those labels instead of from each pixel's
cheapest label. After a stroke most pixels keep their label, so the first cycle's moves change
few pixels and a second cycle is often short: fewer and cheaper moves. The answer is the one
alpha-expansion of this update's energy reaches from that start (every seeded pixel, and a box's
or lasso's outside, set to its label first; a pixel whose previous label is no longer among the
objects starts at its cheapest label), so a fresh :func:`graphcut.segment` given the same
``previous`` answers the same: exact in the sense of ``previous`` (:mod:`._hold`), like the
learned model's hold. Without ``previous`` nothing changes: the cheapest labels, as before.
"""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module
from graphcut._labels import BACKGROUND

#: a start pixel with this value starts at its cheapest label (:func:`fill_cheapest`)
CHEAPEST = -1


def previous_start(labels, objects, xp):
    """The expansion's label indices from a previous label image.

    Parameters
    ----------
    labels : array
        The previous update's (H, W) label image (integers: 0 background, each object its
        seed label; a bool mask reads as object 1 where True). NumPy or CuPy.
    objects : sequence of int
        This update's object labels, in index order (index 0 is the background).
    xp : module
        NumPy or CuPy: the device of the result.

    Returns
    -------
    array
        int32 (H, W) indices into ``[background, *objects]``; :data:`CHEAPEST` where the
        previous label is none of them.

    Examples
    --------
    >>> import numpy as np
    >>> previous_start(np.array([[0, 1, 3, 4]], np.uint8), [1, 3], np)
    array([[ 0,  1,  2, -1]], dtype=int32)
    """
    labels = xp.asarray(labels)
    if labels.dtype == bool or labels.dtype == np.uint8:  # one lookup in a table of 256
        table = np.full(256, CHEAPEST, np.int32)
        table[[0, BACKGROUND]] = 0  # a seed-style background label (2) is background too
        table[np.asarray(objects, np.intp)] = np.arange(1, len(objects) + 1)
        return xp.asarray(table)[labels.astype(np.uint8, copy=False)]
    start = xp.full(labels.shape, CHEAPEST, dtype=xp.int32)
    for index, value in enumerate([0, *objects]):
        start[labels == value] = index
    start[labels == BACKGROUND] = 0
    return start


def fill_cheapest(start, costs):
    """``start`` with every :data:`CHEAPEST` pixel at its cheapest label (the first on ties,
    as the expansion's own default start).

    Parameters
    ----------
    start : array
        int32 (H, W) label indices, :data:`CHEAPEST` where unknown.
    costs : array
        The problem's (L, H, W) integer data costs, on ``start``'s device.

    Returns
    -------
    array
        int32 (H, W) label indices in ``0 .. L - 1``.

    Examples
    --------
    >>> import numpy as np
    >>> costs = np.array([[[5, 0]], [[1, 9]]], np.int32)
    >>> fill_cheapest(np.array([[-1, -1]], np.int32), costs)
    array([[1, 0]], dtype=int32)
    """
    xp = array_module(costs)
    return xp.where(start == CHEAPEST, costs.argmin(axis=0), start).astype(xp.int32)
