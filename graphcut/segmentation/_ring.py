"""A box's inner ring as background: the learned model's extra background sample.

A box drawn around an object with a margin holds background along its sides; around a small
nucleus that margin is most of the box. The classifier learns the object from the box's core
and the background from the outside, so the blurred halo between them, brighter than the
background, is taken for object: the masks of the small dev nuclei were 1.3-2.8 times their
truth (docs/appearance-microscopy.md, tenth session). The ring, the region's pixels within
``min(reach * d_max, pixels)`` of its outline (``d_max`` the largest such distance; the
outline cost's reach, capped at a few pixels), is added to the background's sample, weighing
``ring`` times the rest of that sample; object seeds are never in it. Models without a
``ring`` knob (histogram, GMM) are unchanged.

Since the sixteenth session an image's box also has a *near band* outside it: the pixels
outside the box within :data:`NEAR_WIDTH` times its smaller side of it (a frame, clipped to
the image), already background, weigh ``near`` (the model's attribute, default
:data:`NEAR_SHARE`) times the rest of the background's sample more. The classifier then
learns the box's own surroundings (a neighbouring nucleus reaching into the box, the local
background's level) rather than the whole image's: the small dev nuclei's box IoU 0.770 ->
0.777, and no worse with the box drawn 1, 2 or 5 pixels out (bench/RESULTS.md, sixteenth
session, box16).
"""

from __future__ import annotations

import numpy as np

from graphcut._arrays import to_host

from ._regions import region_core

#: the ring is at most this many pixels deep
RING_PIXELS = 4.0
#: the near band's total weight as a share of the background sample's (0: no band)
NEAR_SHARE = 1.0
#: the near band's width, a share of the box's smaller side (rounded to whole pixels)
NEAR_WIDTH = 0.5


def ring_of(region, *, box=None, reach=0.35, pixels=RING_PIXELS):
    """The inner ring of a box's or lasso's region, host bool (H, W) (or a volume's).

    Parameters
    ----------
    region : array of bool
        The region (:func:`~._regions.allowed_region`), NumPy or CuPy.
    box : tuple of int, optional
        The box when ``region`` is exactly a box (closed form, no distance transform).
    reach : float
        Share of the largest distance from the outline.
    pixels : float
        The ring's depth at most, pixels.

    Returns
    -------
    numpy.ndarray of bool
        The region's pixels at most ``min(reach * d_max, pixels)`` from its outline (a pixel
        next to the outside is 1 away).

    Examples
    --------
    >>> import numpy as np
    >>> region = np.zeros((12, 12), bool)
    >>> region[1:11, 1:11] = True
    >>> ring = ring_of(region, box=(1, 1, 11, 11), pixels=1)
    >>> int(ring.sum()), bool(ring[5, 5])
    (36, False)
    """
    from scipy import ndimage
    if box is not None:
        ndim = len(region.shape)
        d_max = float((min(int(b) - int(a) for a, b in zip(box[:ndim], box[ndim:])) + 1) // 2)
    else:
        inside = np.asarray(to_host(region), dtype=bool)
        d_max = float(ndimage.distance_transform_edt(np.pad(inside, 1)).max())
    if d_max <= 0:
        return np.zeros(region.shape, bool)
    depth = min(reach * d_max, pixels)
    core = region_core(region, min(1.0, (depth + 1e-9) / d_max), box=box)
    return np.asarray(to_host(region), dtype=bool) & ~core


def near_frame(shape, box, width=NEAR_WIDTH):
    """The near band of an image's ``box``: the slices of the (up to four) strips of pixels
    outside it within ``round(width * smaller side)`` pixels of it, clipped to the image.

    Parameters
    ----------
    shape : tuple of int
        The image's (H, W).
    box : tuple of int
        ``(row0, col0, row1, col1)``, half-open.
    width : float
        The band's width as a share of the box's smaller side.

    Returns
    -------
    list of tuple of slice
        Disjoint ``(rows, columns)`` slices (none when the band is empty).

    Examples
    --------
    >>> import numpy as np
    >>> band = np.zeros((10, 10), int)
    >>> for strip in near_frame((10, 10), (4, 4, 8, 8)):
    ...     band[strip] += 1
    >>> int(band.sum()), int(band.max()), int(band[4:8, 4:8].sum()), int(band[0:2].sum())
    (48, 1, 0, 0)
    """
    h, w = (int(n) for n in shape)
    r0, c0, r1, c1 = (int(v) for v in box)
    pixels = int(round(width * min(r1 - r0, c1 - c0)))
    if pixels <= 0:
        return []
    top, bottom = max(r0 - pixels, 0), min(r1 + pixels, h)
    left, right = max(c0 - pixels, 0), min(c1 + pixels, w)
    strips = [(slice(top, r0), slice(left, right)), (slice(r1, bottom), slice(left, right)),
              (slice(r0, r1), slice(left, c0)), (slice(r0, r1), slice(c1, right))]
    return [(rows, cols) for rows, cols in strips
            if rows.stop > rows.start and cols.stop > cols.start]


def with_ring(samples, region, is_object, share, xp, *, box=None, reach=0.35,
              near=None, near_width=None):
    """``(object sample, background sample)`` with the region's inner ring (:func:`ring_of`,
    object seeds left out) added to the background's, weighing ``share`` times its total;
    first, for an image's box, its near band (:func:`near_frame`) weighing ``near`` times
    the background's total more.

    Parameters
    ----------
    samples : tuple of two arrays
        The object's and the background's samples (bool masks or float weights), on ``xp``.
    region : array of bool
        The box's or lasso's region.
    is_object : array of bool
        The object seeds (never in the ring).
    share : float
        The ring's total weight as a share of the background sample's.
    xp : module
        NumPy or CuPy.
    box : tuple of int, optional
        The box, when ``region`` is exactly one.
    reach : float
        As for :func:`ring_of`.
    near : float, optional
        The near band's added weight as a share of the background sample's total (0: none;
        None: :data:`NEAR_SHARE`).
    near_width : float, optional
        As for :func:`near_frame` (None: :data:`NEAR_WIDTH`).

    Returns
    -------
    tuple of two arrays
        The object's sample unchanged and the background's as float weights (a float64
        background sample is changed in place: no copy held through the cut).
    """
    near = NEAR_SHARE if near is None else float(near)
    near_width = NEAR_WIDTH if near_width is None else float(near_width)
    background = samples[1]  # float weights: the pipeline's own array, changed in place
    strips = near_frame(region.shape, box, near_width) if near > 0 and box is not None \
        and len(box) == 4 else []
    ring = xp.asarray(ring_of(region, box=box, reach=reach)) & ~is_object
    count = int(ring.sum()) if share > 0 else 0
    if not (strips or count):
        return samples
    if background.dtype != xp.float64:
        background = background.astype(xp.float64)
    total = float(background.sum())  # one reduction (one wait on a GPU) for both
    if strips:  # slices of the device array: nothing (H, W) made on the host
        width = sum((rows.stop - rows.start) * (cols.stop - cols.start) for rows, cols in strips)
        for strip in strips:
            background[strip] += near * total / width
        total *= 1.0 + near  # the band's weight added: the ring's share is of the new total
    if count:
        background[ring] += share * total / count
    return samples[0], background


__all__ = ["NEAR_SHARE", "NEAR_WIDTH", "RING_PIXELS", "near_frame", "ring_of", "with_ring"]
