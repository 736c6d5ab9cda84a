"""Left-right consistency and occlusion filling (post-processing of a left disparity map).

Both run on the host with NumPy, after the labels have come back from whichever backend made
them, so they are the same on every backend.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fill_from_background", "inconsistent_pixels"]


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
