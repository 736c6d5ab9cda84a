"""Segment-based plane fitting: the pixels the left-right check rejects take their colour
segment's plane.

The left image is over-segmented by colour (Felzenszwalb and Huttenlocher's graph-based
segmentation, ``skimage.segmentation.felzenszwalb``): a segment of one colour is, most of the
time, part of one surface, and most surfaces of a scene are planes in disparity space (``d = a
x + b y + c`` for every plane of the scene). Each segment's plane is fitted robustly to its
pixels that passed the left-right check; the pixels that failed it (occluded, mismatched, or
in the left border strip the right camera does not see) take the plane's rounded disparity
where the fit is trustworthy (most of the segment passed the check and nearly all of those
pixels lie on the plane) and keep their current fill elsewhere. This is the plane fitting of
segment-based stereo (e.g. Klaus, Sormann and Karner 2006), applied to the rejected pixels
only. It runs on the host with NumPy after either backend, so it is the same on every backend.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import checked_int, checked_number, unpacked

__all__ = ["PlaneFill", "check_plane_fill", "colour_segments", "fit_segment_planes",
           "plane_fill"]


class PlaneFill(NamedTuple):
    """Settings of :func:`plane_fill` as :func:`~graphcut.stereo.disparity` applies it
    (``plane_fill=PlaneFill()``; off by default). Chosen on the development pairs of
    bench/bench_stereo.py only (docs/stereo.md).

    scale: Felzenszwalb's scale (larger: larger segments); min_segment: the smallest segment
    as a share of the image's pixels; min_valid_share: a segment's plane is used only when at
    least this share of its pixels passed the left-right check, min_inlier_share: and at
    least this share of those lie within ``tolerance`` pixels of disparity of the plane,
    min_support: and at least this many; max_slope: planes steeper than this (pixels of
    disparity per pixel, along x or y) are not used.
    """

    scale: float = 100.0
    min_segment: float = 6e-4
    min_valid_share: float = 0.5
    min_inlier_share: float = 0.9
    tolerance: float = 1.0
    max_slope: float = 1.0
    min_support: int = 20


def check_plane_fill(settings) -> PlaneFill:
    """``settings`` as a :class:`PlaneFill` after checking its values (ValueError)."""
    (scale, min_segment, valid_share, inlier_share, tolerance, max_slope,
     min_support) = unpacked(settings, "plane_fill", "PlaneFill", PlaneFill._fields)
    owner = "plane fill"
    scale = checked_number(owner, "scale", scale, 1e-3, 1e6, "0.001..1e6")
    min_segment = checked_number(owner, "min_segment", min_segment, 0, 1, "0..1")
    valid_share = checked_number(owner, "min_valid_share", valid_share, 0, 1, "0..1")
    inlier_share = checked_number(owner, "min_inlier_share", inlier_share, 0, 1, "0..1")
    tolerance = checked_number(owner, "tolerance", tolerance, 0, 1e3, "0..1000")
    max_slope = checked_number(owner, "max_slope", max_slope, 0, 1e3, "0..1000")
    min_support = checked_int(owner, "min_support", min_support, 3, 1 << 30, " pixels")
    return PlaneFill(scale, min_segment, valid_share, inlier_share, tolerance, max_slope,
                     min_support)


def colour_segments(image, *, scale: float = 100.0, min_segment: float = 6e-4) -> np.ndarray:
    """Felzenszwalb's graph-based over-segmentation of an image by colour.

    Parameters
    ----------
    image : (H, W) or (H, W, C) array
        Grey levels or colour on the 0..255 scale.
    scale : float
        ``skimage.segmentation.felzenszwalb``'s scale (larger: larger segments); Gaussian
        pre-smoothing sigma 0.8 pixels.
    min_segment : float
        The smallest segment as a share of the image's pixels (segments below are merged
        into a neighbour).

    Returns
    -------
    numpy.ndarray
        int64 (H, W) segment numbers 0..K-1.

    Examples
    --------
    >>> image = np.zeros((20, 20), dtype=np.uint8); image[:, 10:] = 200
    >>> colour_segments(image, min_segment=0.2)[0].tolist()
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    """
    from skimage.segmentation import felzenszwalb
    image = np.asarray(image, dtype=np.float64)
    colour = image.ndim == 3 and image.shape[2] > 1
    if image.ndim == 3 and not colour:
        image = image[..., 0]
    min_size = max(1, int(round(min_segment * image.shape[0] * image.shape[1])))
    labels = felzenszwalb(image / 255.0, scale=scale, sigma=0.8,
                          min_size=min_size, channel_axis=-1 if colour else None)
    return np.unique(labels, return_inverse=True)[1].reshape(labels.shape).astype(np.int64)


def fit_segment_planes(labels, valid, segments, *, tolerance: float = 1.0,
                       iterations: int = 4):
    """Robust plane ``d = a x + b y + c`` of ``labels`` over the ``valid`` pixels of each
    segment, all segments at once.

    Starts from the segment's median label (a fronto-parallel plane), then refits by least
    squares on the valid pixels within ``2 tolerance`` of the current plane (the first
    refit) or within ``tolerance`` (the others): a trimmed fit that ignores the pixels of
    another surface. A small ridge on the slopes (1e-3 per pixel, against the sum of the
    squared centred coordinates) keeps segments one pixel wide solvable; it shrinks slopes
    by about ``1e-3 / variance`` of the coordinates (1e-4 of the slope for a segment 10
    pixels wide).

    Parameters
    ----------
    labels : (H, W) integer or float array
        Disparities in pixels.
    valid : (H, W) bool array
        The pixels to fit (e.g. those that passed the left-right check).
    segments : (H, W) integer array
        Segment numbers 0..K-1 (e.g. :func:`colour_segments`).
    tolerance : float
        Inlier distance in pixels of disparity.
    iterations : int
        Refits after the median start.

    Returns
    -------
    tuple
        ``(planes, inliers, support)``: float64 (K, 3) ``(a, b, c)`` per segment (``x`` the
        column and ``y`` the row, in pixels; ``(0, 0, 0)`` for a segment without a valid
        pixel), int64 (K,) valid pixels within ``tolerance`` of the plane, int64 (K,) valid
        pixels.

    Examples
    --------
    >>> y, x = np.indices((6, 8))
    >>> planes, inliers, support = fit_segment_planes(
    ...     0.5 * x + 2 * y + 3, np.ones((6, 8), bool), np.zeros((6, 8), int))
    >>> np.round(planes, 2).tolist(), int(inliers[0]), int(support[0])
    ([[0.5, 2.0, 3.0]], 48, 48)
    """
    labels = np.asarray(labels)
    valid = np.asarray(valid, dtype=bool)
    segments = np.asarray(segments)
    if not labels.shape == valid.shape == segments.shape or labels.ndim != 2:
        raise ValueError(f"labels {labels.shape}, valid {valid.shape} and segments "
                         f"{segments.shape} must share one (H, W) shape")
    count = int(segments.max()) + 1 if segments.size else 0
    ys, xs = np.nonzero(valid)
    seg = segments[ys, xs].astype(np.int64)
    d = labels[ys, xs].astype(np.float64)
    support = np.bincount(seg, minlength=count)
    planes = np.zeros((count, 3))
    if seg.size == 0:
        return planes, np.zeros(count, dtype=np.int64), support
    # start: the median of each segment (sorted by segment, then label)
    order = np.lexsort((d, seg))
    starts = np.concatenate([[0], np.cumsum(support)[:-1]])
    has = support > 0
    offset = np.zeros(count)
    offset[has] = d[order][starts[has] + support[has] // 2]
    slope = np.zeros((count, 2))
    # coordinates centred on each segment's valid pixels keep the equations well conditioned
    centre_x = np.bincount(seg, xs, count) / np.maximum(support, 1)
    centre_y = np.bincount(seg, ys, count) / np.maximum(support, 1)
    x = xs - centre_x[seg]
    y = ys - centre_y[seg]
    for step in range(iterations):
        residual = d - (slope[seg, 0] * x + slope[seg, 1] * y + offset[seg])
        near = (np.abs(residual) <= (2 * tolerance if step == 0 else tolerance))
        weight = near.astype(np.float64)
        sxx, sxy, syy, sx, sy, n, sxd, syd, sd = (
            np.bincount(seg, weight * term, count)
            for term in (x * x, x * y, y * y, x, y, np.ones_like(x), x * d, y * d, d))
        ridge = 1e-6 + 1e-3 * n
        matrix = np.stack([np.stack([sxx + ridge, sxy, sx], -1),
                           np.stack([sxy, syy + ridge, sy], -1),
                           np.stack([sx, sy, n], -1)], -2)
        fitted = n >= 3
        if fitted.any():
            rhs = np.stack([sxd, syd, sd], -1)[fitted][..., np.newaxis]
            solution = np.linalg.solve(matrix[fitted], rhs)[..., 0]
            slope[fitted] = solution[:, :2]
            offset[fitted] = solution[:, 2]
    residual = d - (slope[seg, 0] * x + slope[seg, 1] * y + offset[seg])
    inliers = np.bincount(seg[np.abs(residual) <= tolerance], minlength=count)
    planes[:, :2] = slope
    planes[:, 2] = offset - slope[:, 0] * centre_x - slope[:, 1] * centre_y
    return planes, inliers, support


def plane_fill(labels, invalid, image, *, scale: float = 100.0, min_segment: float = 6e-4,
               min_valid_share: float = 0.5, min_inlier_share: float = 0.9,
               tolerance: float = 1.0, max_slope: float = 1.0, min_support: int = 20,
               max_label: int | None = None, segments=None) -> np.ndarray:
    """Replace the ``invalid`` pixels by their colour segment's plane where it is trusted.

    The left image is segmented by :func:`colour_segments` (``scale``, ``min_segment``);
    each segment's plane is fitted to its valid pixels by :func:`fit_segment_planes`
    (``tolerance``). A segment's plane is trusted when at least ``min_valid_share`` of the
    segment's pixels are valid, at least ``min_inlier_share`` of those and at least
    ``min_support`` pixels lie within ``tolerance`` of the plane, and both slopes are at most
    ``max_slope``. The invalid pixels of trusted segments take the plane's disparity at their
    position, rounded and clipped to ``0..max_label``; all other pixels keep their label.

    Parameters
    ----------
    labels : (H, W) integer array
        Disparity map, its invalid pixels already filled (e.g. by
        :func:`~graphcut.stereo.fill_from_background`).
    invalid : (H, W) bool array
        The pixels that failed the left-right check.
    image : (H, W) or (H, W, C) array
        The left image, 0..255.
    scale, min_segment, min_valid_share, min_inlier_share, tolerance, max_slope, min_support
        As in :class:`PlaneFill` (shares in 0..1, ``tolerance`` and slopes in pixels of
        disparity, per pixel for the slopes).
    max_label : int, optional
        The largest label (default: the map's maximum).
    segments : (H, W) integer array, optional
        A segmentation to use instead of :func:`colour_segments` of ``image`` (segment
        numbers 0..K-1).

    Returns
    -------
    numpy.ndarray
        A new map of ``labels``' dtype; valid pixels are unchanged.

    Raises
    ------
    ValueError
        On shapes that differ or settings out of range.

    Examples
    --------
    A slanted surface (half a pixel of disparity per column) whose first three columns failed
    the check and were filled with the nearest consistent value:

    >>> y, x = np.indices((20, 30))
    >>> truth = (x // 2 + 3).astype(np.int32)
    >>> invalid = x < 3
    >>> filled = np.where(invalid, 4, truth)
    >>> out = plane_fill(filled, invalid, np.full((20, 30), 128),
    ...                  segments=np.zeros((20, 30), int))
    >>> filled[0, :6].tolist(), out[0, :6].tolist(), truth[0, :6].tolist()
    ([4, 4, 4, 4, 5, 5], [3, 3, 4, 4, 5, 5], [3, 3, 4, 4, 5, 5])
    """
    labels = np.asarray(labels)
    invalid = np.asarray(invalid, dtype=bool)
    image = np.asarray(image)
    if labels.ndim != 2 or labels.shape != invalid.shape or image.shape[:2] != labels.shape:
        raise ValueError(f"labels {labels.shape}, invalid {invalid.shape} and image "
                         f"{image.shape} must share one (H, W) shape")
    settings = check_plane_fill(PlaneFill(scale, min_segment, min_valid_share,
                                          min_inlier_share, tolerance, max_slope,
                                          min_support))
    if segments is None:
        segments = colour_segments(image, scale=settings.scale,
                                   min_segment=settings.min_segment)
    segments = np.asarray(segments)
    if segments.shape != labels.shape:
        raise ValueError(f"segments {segments.shape} must have the labels' shape "
                         f"{labels.shape}")
    if not invalid.any():
        return labels.copy()
    planes, inliers, support = fit_segment_planes(labels, ~invalid, segments,
                                                  tolerance=settings.tolerance)
    sizes = np.bincount(segments.ravel(), minlength=planes.shape[0])
    trusted = ((support >= settings.min_valid_share * sizes)
               & (inliers >= settings.min_inlier_share * support)
               & (inliers >= settings.min_support)
               & (np.abs(planes[:, :2]) <= settings.max_slope).all(axis=1))
    ys, xs = np.nonzero(invalid & trusted[segments])
    seg = segments[ys, xs]
    values = planes[seg, 0] * xs + planes[seg, 1] * ys + planes[seg, 2]
    top = int(labels.max()) if max_label is None else int(max_label)
    result = labels.copy()
    result[ys, xs] = np.clip(np.rint(values), 0, top).astype(labels.dtype)
    return result
