"""Left-right consistency and occlusion filling (post-processing of a left disparity map).

Both run on the host with NumPy, after the labels have come back from whichever backend made
them, so they are the same on every backend.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import checked_int, checked_number, unpacked


class MedianFill(NamedTuple):
    """Settings of :func:`weighted_median_fill` as :func:`~graphcut.stereo.disparity` applies
    it to the background-filled occlusions (``median_fill=MedianFill()``; off by default). The
    defaults were chosen on the development pairs of bench/bench_stereo.py (the synthetic
    "office" and "stairs" scenes) only: see docs/benchmarks.md.

    radius: half the window's side in pixels; step: every step-th row and column of it;
    colour_sigma: grey levels; space_sigma: pixels.
    """

    radius: int = 24
    step: int = 4
    colour_sigma: float = 5.0
    space_sigma: float = 12.0

__all__ = ["MedianFill", "check_median_fill", "fill_from_background", "inconsistent_pixels", "weighted_median_fill"]


def inconsistent_pixels(left_labels, right_labels, *, tolerance: int = 1) -> np.ndarray:
    """Pixels of the left map that fail the left-right check.

    Left pixel ``(y, x)`` with disparity ``d`` matches right pixel ``(y, x - d)``; it is
    inconsistent when ``x - d < 0`` (its match lies outside the right image) or when the right
    view's disparity there differs from ``d`` by more than ``tolerance``. Such pixels are
    occluded in the right view (or mismatched).

    Returns
    -------
    numpy.ndarray
        bool (H, W), True = inconsistent.
    """
    left_labels = np.asarray(left_labels)
    right_labels = np.asarray(right_labels)
    if left_labels.shape != right_labels.shape or left_labels.ndim != 2:
        raise ValueError(f"left and right disparity maps must be 2-D of one shape, got "
                         f"{left_labels.shape} and {right_labels.shape}")
    w = left_labels.shape[1]
    matched = np.arange(w)[np.newaxis, :] - left_labels
    inside = matched >= 0
    right_there = np.take_along_axis(right_labels, np.clip(matched, 0, w - 1), axis=1)
    return ~inside | (np.abs(right_there - left_labels) > tolerance)


def fill_from_background(labels, invalid) -> np.ndarray:
    """Replace each invalid pixel by the smaller of the nearest valid values on its row, to its
    left and to its right (the farther surface: occluded pixels belong to the background).

    Rows without a valid pixel are left as they are. Returns a new array.
    """
    labels = np.asarray(labels)
    invalid = np.asarray(invalid, dtype=bool)
    if labels.shape != invalid.shape or labels.ndim != 2:
        raise ValueError(f"labels and invalid must be 2-D of one shape, got {labels.shape} and "
                         f"{invalid.shape}")
    w = labels.shape[1]
    valid = ~invalid
    values = labels.astype(np.int64)
    columns = np.arange(w)[np.newaxis, :]
    none = np.iinfo(np.int64).max
    before = np.maximum.accumulate(np.where(valid, columns, -1), axis=1)
    from_left = np.where(before >= 0,
                         np.take_along_axis(values, np.maximum(before, 0), axis=1), none)
    after = np.minimum.accumulate(np.where(valid, columns, w)[:, ::-1], axis=1)[:, ::-1]
    from_right = np.where(after < w,
                          np.take_along_axis(values, np.minimum(after, w - 1), axis=1), none)
    nearest = np.minimum(from_left, from_right)
    filled = np.where(nearest == none, labels, nearest).astype(labels.dtype)
    return np.where(valid, labels, filled)


def check_median_fill(settings) -> MedianFill:
    """``settings`` as a :class:`MedianFill` after checking its values (ValueError)."""
    radius, step, colour_sigma, space_sigma = unpacked(settings, "median_fill", "MedianFill",
                                                       MedianFill._fields)
    radius = checked_int("median fill", "radius", radius, 1, 256, " pixels")
    step = checked_int("median fill", "step", step, 1, (radius, f"radius ({radius})"))
    colour_sigma, space_sigma = (checked_number("median fill", name, value, 1e-3, 1e6,
                                                "0.001..1e6")
                                 for name, value in (("colour_sigma", colour_sigma),
                                                     ("space_sigma", space_sigma)))
    return MedianFill(radius, step, colour_sigma, space_sigma)


def weighted_median_fill(labels, invalid, image, *, radius: int = 9, colour_sigma: float = 10.0,
                         space_sigma: float = 9.0, step: int = 1,
                         max_label: int | None = None) -> np.ndarray:
    """Replace each invalid pixel by the weighted median of the labels around it.

    The weight of neighbour ``q`` of pixel ``p`` (within a (2 radius + 1)^2 window, inside the
    image) is ``exp(-|I_p - I_q| / colour_sigma - |p - q| / space_sigma)``: ``|I_p - I_q|`` the
    mean absolute difference over the channels of ``image`` (grey levels), ``|p - q|`` the
    Euclidean distance in pixels. Neighbours that are invalid themselves count with their
    current (e.g. background-filled) label. This is the edge-respecting smoothing of the
    filled occlusions of cost-volume filtering (Hosni et al. 2013): a filled streak takes the
    labels of the pixels of similar colour around it.

    Parameters
    ----------
    labels : (H, W) integer array
        Disparity map with its invalid pixels already filled (e.g. by
        :func:`fill_from_background`); labels must be >= 0.
    invalid : (H, W) bool array
        The pixels to replace.
    image : (H, W) or (H, W, C) array
        The left image on the 0..255 scale.
    radius : int
        Half the window's side in pixels (>= 1).
    step : int
        Sample every ``step``-th row and column of the window (>= 1; the centre is always
        sampled): a wider window for the same work.
    colour_sigma, space_sigma : float
        Decay of the weights in grey levels and in pixels (> 0).
    max_label : int, optional
        The largest label (default: the map's maximum).

    Returns
    -------
    numpy.ndarray
        A new map of ``labels``' dtype; valid pixels are unchanged.

    Raises
    ------
    ValueError
        On shapes that differ, negative labels or parameters out of range.

    Examples
    --------
    >>> labels = np.array([[5, 5, 0, 9, 9]])
    >>> image = np.array([[10, 10, 10, 200, 200]])
    >>> weighted_median_fill(labels, labels == 0, image, radius=2).tolist()
    [[5, 5, 5, 9, 9]]
    """
    labels = np.asarray(labels)
    invalid = np.asarray(invalid, dtype=bool)
    image = np.asarray(image, dtype=np.float32)
    if image.ndim == 2:
        image = image[..., np.newaxis]
    if labels.ndim != 2 or labels.shape != invalid.shape or image.shape[:2] != labels.shape:
        raise ValueError(f"labels {labels.shape}, invalid {invalid.shape} and image "
                         f"{image.shape} must share one (H, W) shape")
    check_median_fill(MedianFill(radius, step, colour_sigma, space_sigma))
    if labels.size and labels.min() < 0:
        raise ValueError("labels must be >= 0")
    rows, cols = np.nonzero(invalid)
    if rows.size == 0:
        return labels.copy()
    top = int(labels.max()) if max_label is None else int(max_label)
    bins = top + 1
    offsets = np.arange(-(radius // step) * step, radius + 1, step)
    # the window's samples, row by row: flat offsets in the image padded by `radius` (padding
    # pixels carry the extra label `bins`, whose weight is left out of every median) and
    # distances to the centre
    h, w = labels.shape
    width = w + 2 * radius
    padded_labels = np.pad(labels.astype(np.int64), radius, constant_values=bins).ravel()
    padded_image = np.pad(image, ((radius, radius), (radius, radius), (0, 0)))
    padded_image = padded_image.reshape(-1, image.shape[2])
    dy, dx = (a.ravel() for a in np.meshgrid(offsets, offsets, indexing="ij"))
    samples = dy * width + dx
    distance = np.hypot(dy.astype(np.float32), dx.astype(np.float32))
    centres = (rows.astype(np.int64) + radius) * width + cols + radius
    # pixels in chunks of about 2^21 window samples and 2^22 histogram bins (bounded memory)
    chunk = max(1, min(2 ** 21 // samples.size, 2 ** 22 // (bins + 1)))
    median = np.concatenate([
        _window_medians(padded_labels, padded_image, centres[i:i + chunk], samples, distance,
                        bins, colour_sigma, space_sigma)
        for i in range(0, centres.size, chunk)])
    result = labels.copy()
    result[rows, cols] = median.astype(labels.dtype)
    return result


def _window_medians(labels, image, centres, samples, distance, bins, colour_sigma,
                    space_sigma):
    """The weighted medians of :func:`weighted_median_fill` for the pixels at flat positions
    ``centres`` of the padded ``labels`` (flat) and ``image`` (flat, C)."""
    count = centres.size
    channels = image.shape[1]
    where = centres[:, np.newaxis] + samples[np.newaxis, :]
    colour = np.abs(image[where] - image[centres][:, np.newaxis, :]).sum(axis=2)
    weight = np.exp(colour * np.float32(-1 / (channels * colour_sigma))
                    - distance * np.float32(1 / space_sigma))
    index = labels[where] + (np.arange(count, dtype=np.int64) * (bins + 1))[:, np.newaxis]
    histogram = np.bincount(index.ravel(), weights=weight.ravel(), minlength=count * (bins + 1))
    cumulative = np.cumsum(histogram.reshape(count, bins + 1)[:, :bins], axis=1)
    return np.argmax(cumulative >= cumulative[:, -1:] / 2, axis=1)
