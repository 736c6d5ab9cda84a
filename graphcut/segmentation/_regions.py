"""Boxes and lassos: the part of the image where the object may be (outside is background).

A box is ``(row0, col0, row1, col1)``, half-open like a slice: rows ``row0 <= r < row1`` and
columns ``col0 <= c < col1`` are inside, so ``image[row0:row1, col0:col1]`` is the box; a
volume's box is ``(z0, y0, x0, z1, y1, x1)``, ``volume[z0:z1, y0:y1, x0:x1]`` (a lasso is for
images only). A lasso
is a closed polygon of ``(row, col)`` vertices (the last joins the first); a pixel is inside
when its centre is inside the polygon or on its outline (:func:`skimage.draw.polygon2mask`).
"""

from __future__ import annotations

import math

import numpy as np


def box_mask(shape, box) -> np.ndarray:
    """bool (H, W), True inside the half-open ``box`` = (row0, col0, row1, col1); for a
    volume's ``shape`` (D, H, W) a bool (D, H, W), ``box`` = (z0, y0, x0, z1, y1, x1), so that
    ``volume[z0:z1, y0:y1, x0:x1]`` is the box.

    Raises
    ------
    ValueError
        not four (six for a volume) integers, an empty box, or a box reaching outside the
        image.

    Examples
    --------
    >>> from graphcut.segmentation import box_mask
    >>> box_mask((3, 4), (1, 1, 3, 3)).astype(int)          # (row0, col0, row1, col1)
    array([[0, 0, 0, 0],
           [0, 1, 1, 0],
           [0, 1, 1, 0]])
    """
    if len(shape) == 3:
        return _volume_box_mask(shape, box)
    h, w = int(shape[0]), int(shape[1])
    try:
        values = [v for v in box]
    except TypeError:
        raise ValueError(f"box must be (row0, col0, row1, col1), got {box!r}") from None
    if len(values) != 4 or not all(_is_integer(v) for v in values):
        raise ValueError(f"box must be four integers (row0, col0, row1, col1), got {box!r}")
    r0, c0, r1, c1 = (int(v) for v in values)
    if not (0 <= r0 < r1 <= h and 0 <= c0 < c1 <= w):
        raise ValueError(f"box {(r0, c0, r1, c1)} must satisfy 0 <= row0 < row1 <= {h} and "
                         f"0 <= col0 < col1 <= {w} (half-open, inside the {w}x{h} image)")
    mask = np.zeros((h, w), dtype=bool)
    mask[r0:r1, c0:c1] = True
    return mask


def _volume_box_mask(shape, box) -> np.ndarray:
    """bool (D, H, W), True inside the half-open ``box`` = (z0, y0, x0, z1, y1, x1)."""
    d, h, w = (int(n) for n in shape)
    try:
        values = [v for v in box]
    except TypeError:
        raise ValueError(f"a volume's box must be (z0, y0, x0, z1, y1, x1), got {box!r}") \
            from None
    if len(values) != 6 or not all(_is_integer(v) for v in values):
        raise ValueError(f"a volume's box must be six integers (z0, y0, x0, z1, y1, x1), "
                         f"got {box!r}")
    z0, y0, x0, z1, y1, x1 = (int(v) for v in values)
    if not (0 <= z0 < z1 <= d and 0 <= y0 < y1 <= h and 0 <= x0 < x1 <= w):
        raise ValueError(f"box {(z0, y0, x0, z1, y1, x1)} must satisfy 0 <= z0 < z1 <= {d}, "
                         f"0 <= y0 < y1 <= {h} and 0 <= x0 < x1 <= {w} (half-open, inside "
                         f"the {w}x{h}x{d} volume)")
    mask = np.zeros((d, h, w), dtype=bool)
    mask[z0:z1, y0:y1, x0:x1] = True
    return mask


def lasso_mask(shape, vertices) -> np.ndarray:
    """bool (H, W), True inside the closed polygon ``vertices`` ((row, col) pairs, at least
    3; coordinates may lie outside the image, which clips the polygon).

    Raises
    ------
    ValueError
        fewer than 3 vertices, non-finite coordinates, or no pixel inside.

    Examples
    --------
    >>> from graphcut.segmentation import lasso_mask
    >>> bool(lasso_mask((4, 4), [(0, 0), (0, 3), (3, 3), (3, 0)]).all())  # (row, col)
    True
    >>> lasso_mask((4, 4), [(0, 0), (0, 2)])
    Traceback (most recent call last):
        ...
    ValueError: a lasso needs at least 3 (row, col) vertices, got 2 (array shape (2, 2))
    """
    from skimage.draw import polygon2mask

    if len(shape) != 2:
        raise ValueError("a lasso is a polygon on one image: a volume takes a box "
                         "(z0, y0, x0, z1, y1, x1) instead")
    points = np.asarray(vertices, dtype=np.float64) if len(vertices) else np.zeros((0, 2))
    if points.ndim != 2 or points.shape[1] != 2 or points.shape[0] < 3:
        raise ValueError(f"a lasso needs at least 3 (row, col) vertices, got "
                         f"{len(points)} (array shape {points.shape})")
    if not np.isfinite(points).all():
        raise ValueError("lasso vertices must be finite numbers")
    mask = polygon2mask((int(shape[0]), int(shape[1])), points)
    if not mask.any():
        raise ValueError("the lasso encloses no pixel of the image")
    return mask


def allowed_region(shape, *, box=None, lasso=None):
    """Where an object may be: the box and the lasso (both, when both are given), bool
    (H, W) NumPy; ``None`` when neither is given (everywhere)."""
    region = None
    if box is not None:
        region = box_mask(shape, box)
    if lasso is not None:
        inside = lasso_mask(shape, lasso)
        region = inside if region is None else region & inside
        if not region.any():
            raise ValueError("the box and the lasso do not overlap: no pixel may be object")
    return region


def box_core(shape, box, fraction: float) -> np.ndarray:
    """:func:`region_core` of the box ``(row0, col0, row1, col1)`` in an image of ``shape``
    (``(z0, y0, x0, z1, y1, x1)`` in a volume),
    in closed form: a pixel's distance from a box's outline is the smaller of its distances
    to the nearest row and the nearest column outside the box (straight across is always
    nearest), so the core is the box of the rows and the columns at least the threshold away.

    Examples
    --------
    >>> import numpy as np
    >>> core = box_core((7, 9), (1, 1, 6, 8), 0.5)
    >>> np.argwhere(core).min(axis=0).tolist(), np.argwhere(core).max(axis=0).tolist()
    ([2, 2], [4, 6])
    """
    ndim = len(shape)
    starts, stops = [int(v) for v in box[:ndim]], [int(v) for v in box[ndim:]]
    depths = [np.minimum(np.arange(1, b - a + 1), np.arange(b - a, 0, -1))
              for a, b in zip(starts, stops)]
    threshold = fraction * float(min(depth.max() for depth in depths))
    core = np.zeros(tuple(int(n) for n in shape), dtype=bool)
    inside = np.ones((), dtype=bool)
    for axis, depth in enumerate(depths):  # the outer product of the per-axis conditions
        inside = np.expand_dims(inside, -1) & (depth >= threshold).reshape(
            (1,) * axis + (-1,))
    core[tuple(slice(a, b) for a, b in zip(starts, stops))] = inside
    return core


def _is_integer(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, np.integer)):
        return True
    return isinstance(value, (float, np.floating)) and math.isfinite(value) \
        and float(value).is_integer()


def region_core(region, fraction: float, *, box=None):
    """The core of a box's or lasso's region: its pixels at least ``fraction`` times the
    largest (Euclidean) distance from the region's outline (the image border counts as
    outline), a host bool (H, W).

    Parameters
    ----------
    region : array-like of bool (H, W)
        The allowed region (:func:`allowed_region`), NumPy or CuPy.
    fraction : float
        0 keeps the whole region, 1 only its deepest pixels.
    box : tuple of int, optional
        ``(row0, col0, row1, col1)`` when ``region`` is exactly that box (no lasso): the core
        is then a smaller box, found without a distance transform (:func:`box_core`).

    Returns
    -------
    numpy.ndarray of bool (H, W)

    Examples
    --------
    >>> import numpy as np
    >>> region = np.zeros((7, 7), bool); region[1:6, 1:6] = True
    >>> int(region_core(region, 0.5).sum())
    9
    """
    from scipy import ndimage

    from graphcut._arrays import to_host
    if box is not None:
        return box_core(tuple(region.shape), box, fraction)
    inside = np.asarray(to_host(region), dtype=bool)
    distance = ndimage.distance_transform_edt(np.pad(inside, 1))[(slice(1, -1),) * inside.ndim]
    return (distance >= fraction * distance.max()) & inside
