"""Energy terms for stereo: per-pixel data costs and contrast-sensitive Potts weights.

Conventions (shared with :mod:`graphcut.stereo`):

- The pair is rectified; disparity ``d`` matches left pixel ``(y, x)`` with right pixel
  ``(y, x - d)``. Labels are the integer disparities ``0 .. max_disparity``.
- Intensities are measured in grey levels on the 0..255 scale whatever the input dtype
  (integer images are scaled by their dtype's range, float images are taken as 0..1, as
  :func:`skimage.util.img_as_float` does). Colour differences are averaged over the channels.
- All costs and weights are non-negative integers, so every energy is an exact integer.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from skimage.util import img_as_float


class PairWeights(NamedTuple):
    """Potts weights of the 4-connected grid's edges (int32, >= 0).

    ``horizontal[y, x]`` joins ``(y, x)`` and ``(y, x + 1)``: shape (H, W - 1).
    ``vertical[y, x]`` joins ``(y, x)`` and ``(y + 1, x)``: shape (H - 1, W).
    """

    horizontal: np.ndarray
    vertical: np.ndarray


def as_grey_levels(image, *, channel_axis=None, name="image") -> np.ndarray:
    """``image`` as float32 (H, W, C) on the 0..255 scale (C = 1 for a grey image)."""
    array = np.asarray(image)
    if channel_axis is None:
        if array.ndim != 2:
            raise ValueError(f"{name} must be a 2-D grey image when channel_axis is None, got "
                             f"shape {array.shape}; pass channel_axis=-1 for a colour image")
        array = array[..., np.newaxis]
    else:
        if array.ndim != 3:
            raise ValueError(f"{name} must be a 3-D colour image with channel_axis="
                             f"{channel_axis}, got shape {array.shape}")
        array = np.moveaxis(array, channel_axis, -1)
    if array.shape[0] < 1 or array.shape[1] < 1 or array.shape[2] < 1:
        raise ValueError(f"{name} is empty (shape {array.shape})")
    if array.dtype.kind == "b" or array.dtype.kind not in "uif":
        raise TypeError(f"{name} must hold numbers (unsigned/signed integers or floats), got "
                        f"dtype {array.dtype}")
    return (img_as_float(array) * 255.0).astype(np.float32)


def _check_pair(left, right, channel_axis, max_disparity):
    left_levels = as_grey_levels(left, channel_axis=channel_axis, name="left")
    right_levels = as_grey_levels(right, channel_axis=channel_axis, name="right")
    if left_levels.shape != right_levels.shape:
        raise ValueError(f"left and right images differ in size: {np.shape(left)} vs "
                         f"{np.shape(right)}")
    width = left_levels.shape[1]
    if isinstance(max_disparity, bool) or not isinstance(max_disparity, (int, np.integer)):
        raise TypeError(f"max_disparity must be an int, got {max_disparity!r}")
    if not 0 <= max_disparity < width:
        raise ValueError(f"max_disparity must be in 0..{width - 1} (the image is {width} pixels "
                         f"wide), got {max_disparity}")
    return left_levels, right_levels


def _half_sample_range(levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of the linearly interpolated signal over [x - 1/2, x + 1/2] along rows."""
    padded = np.pad(levels, ((0, 0), (1, 1), (0, 0)), mode="edge")
    before = np.float32(0.5) * (padded[:, :-2] + levels)
    after = np.float32(0.5) * (padded[:, 2:] + levels)
    low = np.minimum(np.minimum(before, after), levels)
    high = np.maximum(np.maximum(before, after), levels)
    return low, high


def data_costs(left, right, *, max_disparity: int, truncation: int = 20,
               birchfield_tomasi: bool = True, channel_axis=None) -> np.ndarray:
    """Truncated matching cost of every pixel of ``left`` at every disparity.

    Args:
        left, right: the rectified pair, same shape; grey (H, W) or colour with
            ``channel_axis``.
        max_disparity: the largest disparity label; labels are 0 .. max_disparity (pixels).
        truncation: costs are clipped to this many grey levels (0..255 scale), which limits the
            pull of occluded and specular pixels.
        birchfield_tomasi: use the Birchfield-Tomasi sampling-insensitive dissimilarity (the
            smaller of the distances from each pixel to the other image's linearly
            interpolated signal within half a pixel) instead of the plain absolute difference.
        channel_axis: None for grey images, else the axis of the colour channels.

    Returns:
        int32 array (max_disparity + 1, H, W): ``costs[d, y, x]`` is the rounded dissimilarity
        of left ``(y, x)`` and right ``(y, x - d)``, averaged over channels and clipped to
        ``truncation``. Where ``x - d < 0`` (no match inside the right image) the cost is
        ``truncation``.
    """
    left_levels, right_levels = _check_pair(left, right, channel_axis, max_disparity)
    if isinstance(truncation, bool) or not isinstance(truncation, (int, np.integer)) \
            or truncation < 0:
        raise ValueError(f"truncation must be a non-negative int, got {truncation!r}")
    h, w, channels = left_levels.shape
    costs = np.full((max_disparity + 1, h, w), truncation, dtype=np.int32)
    if birchfield_tomasi:
        left_low, left_high = _half_sample_range(left_levels)
        right_low, right_high = _half_sample_range(right_levels)
    for d in range(max_disparity + 1):
        lv, rv = left_levels[:, d:], right_levels[:, :w - d]
        if birchfield_tomasi:
            to_right = np.maximum(lv - right_high[:, :w - d], right_low[:, :w - d] - lv)
            to_left = np.maximum(rv - left_high[:, d:], left_low[:, d:] - rv)
            dissimilarity = np.maximum(np.minimum(to_right, to_left), 0)
        else:
            dissimilarity = np.abs(lv - rv)
        if channels > 1:
            dissimilarity = dissimilarity.mean(axis=-1)
        else:
            dissimilarity = dissimilarity[..., 0]
        costs[d, :, d:] = np.rint(np.minimum(dissimilarity, truncation))
    return costs


def smoothness_weights(image, *, weight: int = 6, edge_threshold: float = 8.0,
                       flat_factor: int = 2, channel_axis=None) -> PairWeights:
    """Contrast-sensitive Potts weights of the grid's edges, from the (left) image.

    Neighbours whose colours differ by at most ``edge_threshold`` grey levels (largest
    difference over the channels, 0..255 scale) get ``weight * flat_factor``; across stronger
    edges they get ``weight``. Depth discontinuities usually coincide with intensity edges, so
    labels change more cheaply there (the weighting of Boykov, Veksler and Zabih).

    Returns:
        :class:`PairWeights` of int32 arrays.
    """
    for name, value in (("weight", weight), ("flat_factor", flat_factor)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    if not edge_threshold >= 0:
        raise ValueError(f"edge_threshold must be >= 0, got {edge_threshold!r}")
    levels = as_grey_levels(image, channel_axis=channel_axis)
    flat = int(weight) * int(flat_factor)
    if flat > np.iinfo(np.int32).max // 4:
        raise ValueError(f"weight * flat_factor = {flat} is too large for int32 capacities")

    def weights(difference):
        contrast = np.abs(difference).max(axis=-1)
        return np.where(contrast <= edge_threshold, flat, int(weight)).astype(np.int32)

    return PairWeights(weights(levels[:, 1:] - levels[:, :-1]),
                       weights(levels[1:, :] - levels[:-1, :]))
