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
"""

from __future__ import annotations

import numpy as np

from graphcut._arrays import to_host

from ._regions import region_core

#: the ring is at most this many pixels deep
RING_PIXELS = 4.0


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


def with_ring(samples, region, is_object, share, xp, *, box=None, reach=0.35):
    """``(object sample, background sample)`` with the region's inner ring (:func:`ring_of`,
    object seeds left out) added to the background's, weighing ``share`` times its total.

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

    Returns
    -------
    tuple of two arrays
        The object's sample unchanged and the background's as float weights (a float64
        background sample is changed in place: no copy held through the cut).
    """
    ring = xp.asarray(ring_of(region, box=box, reach=reach)) & ~is_object
    count = int(ring.sum())
    if share <= 0 or not count:
        return samples
    background = samples[1]  # float weights: the pipeline's own array, changed in place
    if background.dtype != xp.float64:
        background = background.astype(xp.float64)
    background[ring] += share * float(background.sum()) / count
    return samples[0], background


__all__ = ["RING_PIXELS", "ring_of", "with_ring"]
