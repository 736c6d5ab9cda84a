"""Energy terms for stereo: matching cost volumes and contrast-sensitive smoothness weights.

Conventions (shared with the rest of :mod:`graphcut.stereo`):

- The pair is rectified; disparity ``d`` matches left pixel ``(y, x)`` with right pixel
  ``(y, x - d)``. Labels are the integer disparities ``0 .. max_disparity``.
- Intensities are measured in grey levels on the 0..255 scale whatever the input dtype
  (integer images are scaled by their dtype's range, float images are taken as 0..1, as
  :func:`skimage.util.img_as_float` does).
- All costs and weights are non-negative integers, so every energy is an exact integer.

Two data terms:

- :func:`census_costs` (the default of :func:`~graphcut.stereo.disparity`): AD-census (Mei et
  al. 2011). The census transform of a 9 x 7 window (one bit per neighbour: darker than the
  centre or not) is robust to gain and bias changes between the views and matches texture; the
  absolute colour difference separates similar textures of different colour. Each part goes
  through ``round(scale (1 - exp(-x / lambda)))``, which bounds the pull of outliers
  (occlusions, specularities), and the sum is averaged over a (2r+1) x (2r+1) box or over a
  cross-based support region that stops at colour edges (:mod:`._aggregation`). The volume
  is computed by the same integer arithmetic on the GPU (CuPy kernels, ``stereo_kernels.cu``)
  or on the CPU (NumPy), so both give identical arrays.
- :func:`data_costs`: the per-pixel Birchfield-Tomasi or absolute difference, truncated.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from skimage.util import img_as_float

from graphcut.labeling import PairWeights

from ._aggregation import AGGREGATIONS, box_mean, cross_arms, cross_count, cross_mean

__all__ = ["CensusParameters", "PairWeights", "as_grey_levels", "census_costs", "data_costs",
           "right_view_labels", "smoothness_weights"]

INT32_MAX = int(np.iinfo(np.int32).max)


class CensusParameters(NamedTuple):
    """Settings of :func:`census_costs`. The window, scale and aggregation radius were chosen on
    the motorcycle pair and the synthetic "office" scene; the two lambdas (15, formerly 20) on
    the four development pairs of bench/bench_stereo.py only (lowest mean bad-pixel rate of a
    one-parameter sweep), then scored on the held-out pairs and the motorcycle (8.29 -> 7.96 %
    bad pixels there): see docs/benchmarks.md. The cross aggregation and its three settings
    were chosen on the four development pairs only (docs/stereo.md).

    window: (width, height) of the census window, odd, at most 64 pixels in all.
    census_lambda: ``lambda`` of the census part, in differing bits.
    colour_lambda: ``lambda`` of the colour part, in grey levels (mean over the channels).
    scale: each part is at most this, so a raw cost is at most ``2 scale``.
    aggregation_radius: "box" costs are averaged over (2r+1) x (2r+1) boxes; 0 = none.
    aggregation: "box" or "cross" (cross-based support regions on the left image).
    cross_threshold: "cross" arms stop before a pixel differing from the anchor by more than
        this many grey levels (0..255) in some channel.
    cross_length: "cross" arms are at most this many pixels long.
    cross_minimum: "cross" arms are at least this long (inside the image), whatever the colours.
    """

    window: tuple[int, int] = (9, 7)
    census_lambda: float = 15.0
    colour_lambda: float = 15.0
    scale: int = 64
    aggregation_radius: int = 2
    aggregation: str = "cross"
    cross_threshold: int = 12
    cross_length: int = 3
    cross_minimum: int = 1


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
    levels = (img_as_float(array) * 255.0).astype(np.float32)
    if not np.isfinite(levels).all():
        raise ValueError(f"{name} holds NaN or infinite values")
    return levels


def _check_max_disparity(max_disparity, width: int) -> int:
    if isinstance(max_disparity, bool) or not isinstance(max_disparity, (int, np.integer)):
        raise TypeError(f"max_disparity must be an int, got {max_disparity!r}")
    if not 0 <= max_disparity < width:
        raise ValueError(f"max_disparity must be in 0..{width - 1} (the image is {width} pixels "
                         f"wide), got {max_disparity}")
    return int(max_disparity)


def check_pair(left, right, channel_axis, max_disparity):
    """Both images as grey levels (:func:`as_grey_levels`) after checking they match."""
    left_levels = as_grey_levels(left, channel_axis=channel_axis, name="left")
    right_levels = as_grey_levels(right, channel_axis=channel_axis, name="right")
    if left_levels.shape != right_levels.shape:
        raise ValueError(f"left and right images differ in size: {np.shape(left)} vs "
                         f"{np.shape(right)}")
    _check_max_disparity(max_disparity, left_levels.shape[1])
    return left_levels, right_levels


def check_census_parameters(parameters: CensusParameters) -> CensusParameters:
    parameters = CensusParameters(*parameters)
    window = tuple(parameters.window)
    if len(window) != 2 or any(isinstance(s, bool) or not isinstance(s, (int, np.integer))
                               or s < 1 or s % 2 == 0 for s in window) \
            or window[0] * window[1] - 1 > 64:
        raise ValueError(f"census window must be two odd positive ints with at most 65 pixels "
                         f"in all, got {parameters.window!r}")
    for name in ("census_lambda", "colour_lambda"):
        value = getattr(parameters, name)
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
                or not math.isfinite(value) or not 1e-3 <= value <= 1e6:
            raise ValueError(f"{name} must be a finite number in 0.001..1e6, got {value!r}")
    if parameters.aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, got "
                         f"{parameters.aggregation!r}")
    for name, top in (("scale", 1 << 20), ("aggregation_radius", 15),
                      ("cross_threshold", 255), ("cross_length", 64),
                      ("cross_minimum", 64)):
        value = getattr(parameters, name)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or not 0 <= value <= top or (name == "scale" and value < 1):
            raise ValueError(f"{name} must be an int in {int(name == 'scale')}..{top}, got "
                             f"{value!r}")
    return parameters._replace(window=(int(window[0]), int(window[1])))


# ---------------------------------------------------------------------------- AD-census

def _integer_levels(levels: np.ndarray) -> np.ndarray:
    """(H, W, C) float grey levels as rounded int32 (exact for 8-bit images)."""
    return np.rint(levels).astype(np.int32)


def _tables(parameters: CensusParameters, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """Lookup tables of the census part (by Hamming distance) and of the colour part (by the
    sum over channels of absolute differences)."""
    bits = np.arange(65, dtype=np.float64)
    census = np.rint(parameters.scale * (1 - np.exp(-bits / parameters.census_lambda)))
    difference = np.arange(255 * channels + 1, dtype=np.float64) / channels
    colour = np.rint(parameters.scale * (1 - np.exp(-difference / parameters.colour_lambda)))
    return census.astype(np.int32), colour.astype(np.int32)


def _census_codes_numpy(grey: np.ndarray, window: tuple[int, int]) -> np.ndarray:
    """NumPy model of ``census_codes`` in stereo_kernels.cu (same bit order)."""
    rx, ry = window[0] // 2, window[1] // 2
    h, w = grey.shape
    padded = np.pad(grey, ((ry, ry), (rx, rx)), mode="edge")
    code = np.zeros((h, w), dtype=np.uint64)
    one = np.uint64(1)
    for dy in range(-ry, ry + 1):
        for dx in range(-rx, rx + 1):
            if dx == 0 and dy == 0:
                continue
            neighbour = padded[ry + dy:ry + dy + h, rx + dx:rx + dx + w]
            code = (code << one) | (neighbour < grey).astype(np.uint64)
    return code


if hasattr(np, "bitwise_count"):  # NumPy >= 2.0
    _popcount = np.bitwise_count
else:  # pragma: no cover - NumPy 1.x
    _BYTE_COUNTS = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)

    def _popcount(values):
        return _BYTE_COUNTS[values.view(np.uint8).reshape(*values.shape, 8)].sum(axis=-1)


def _census_costs_numpy(left, right, max_disparity, parameters, census_table, colour_table):
    h, w, _ = left.shape
    left_code = _census_codes_numpy(left.sum(axis=-1), parameters.window)
    right_code = _census_codes_numpy(right.sum(axis=-1), parameters.window)
    border = parameters.scale
    cross = parameters.aggregation == "cross"
    arms = (cross_arms(left, parameters.cross_threshold, parameters.cross_length,
                       parameters.cross_minimum) if cross else None)
    count = cross_count(arms) if cross else None
    costs = np.empty((max_disparity + 1, h, w), dtype=np.int32)
    for d in range(max_disparity + 1):
        raw = np.full((h, w), border, dtype=np.int32)
        hamming = _popcount(left_code[:, d:] ^ right_code[:, :w - d]).astype(np.intp)
        difference = np.abs(left[:, d:] - right[:, :w - d]).sum(axis=-1)
        raw[:, d:] = census_table[hamming] + colour_table[difference]
        costs[d] = cross_mean(raw, arms, count) if cross else \
            box_mean(raw, parameters.aggregation_radius)
    return costs


def _census_costs_cupy(left, right, max_disparity, parameters, census_table, colour_table):
    import cupy

    from ._cuda import kernel, launch_config
    h, w, channels = left.shape
    left, right = cupy.asarray(left), cupy.asarray(right)
    codes = []
    for image in (left, right):
        code = cupy.empty((h, w), dtype=cupy.uint64)
        kernel("census_codes")(*launch_config(h * w), (
            image.sum(axis=-1, dtype=cupy.int32), np.int32(h), np.int32(w),
            np.int32(parameters.window[0] // 2), np.int32(parameters.window[1] // 2), code))
        codes.append(code)
    census_table, colour_table = cupy.asarray(census_table), cupy.asarray(colour_table)
    labels = max_disparity + 1
    costs = cupy.empty((labels, h, w), dtype=cupy.int32)
    cross = parameters.aggregation == "cross"
    r = parameters.aggregation_radius
    aggregate = cross or r > 0
    if cross:
        arms = cupy.empty((4, h, w), dtype=cupy.int32)
        kernel("cross_arms")(*launch_config(h * w), (
            left, np.int32(channels), np.int32(h), np.int32(w),
            np.int32(parameters.cross_threshold), np.int32(parameters.cross_length),
            np.int32(parameters.cross_minimum), arms))
    chunk = min(labels, _AGGREGATION_CHUNK)
    raw = cupy.empty((chunk, h, w), dtype=cupy.int32) if aggregate else None
    rows = cupy.empty((chunk, h, w), dtype=cupy.int32) if aggregate else None
    for first in range(0, labels, chunk):
        planes = min(chunk, labels - first)
        target = raw[:planes] if aggregate else costs[first:first + planes]
        kernel("matching_costs")(*launch_config(planes * h * w), (
            *codes, left, right, np.int32(channels), np.int32(h), np.int32(w),
            np.int32(first), np.int32(planes), census_table, colour_table,
            np.int32(parameters.scale), target))
        if cross:
            kernel("cross_rows")(*launch_config(planes * h * w), (
                raw, np.int32(planes), np.int32(h), np.int32(w), arms, rows))
            kernel("cross_columns_mean")(*launch_config(planes * h * w), (
                rows, np.int32(planes), np.int32(h), np.int32(w), arms,
                costs[first:first + planes]))
        elif r:
            kernel("box_rows")(*launch_config(planes * h * w), (
                raw, np.int32(planes), np.int32(h), np.int32(w), np.int32(r), rows))
            kernel("box_columns_mean")(*launch_config(planes * h * w), (
                rows, np.int32(planes), np.int32(h), np.int32(w), np.int32(r),
                np.int32((2 * r + 1) ** 2), costs[first:first + planes]))
    return costs


_AGGREGATION_CHUNK = 16  # planes of the GPU volume aggregated at a time (bounds the temporaries)


def census_bytes(shape: tuple[int, int], max_disparity: int, device: str) -> int:
    """Peak memory of :func:`census_costs` for an (H, W) pair on ``device`` ("cpu"/"cuda"),
    in bytes: the int32 volume plus the temporaries (two 16-plane chunks and the arms on the
    GPU; per-disparity arrays, the int64 sums of "cross" included, on the CPU)."""
    h, w = shape
    labels = max_disparity + 1
    volume = 4 * labels * h * w
    if device == "cuda":
        return volume + 2 * 4 * min(labels, _AGGREGATION_CHUNK) * h * w + 64 * h * w
    return volume + 160 * h * w


def census_costs(left, right, *, max_disparity: int, channel_axis=None,
                 parameters: CensusParameters = CensusParameters(), device: str = "cpu"):
    """AD-census matching costs of every pixel of ``left`` at every disparity.

    Parameters
    ----------
    left, right
        the rectified pair, same shape; grey (H, W) or colour with
        ``channel_axis``. Grey levels are rounded to integers (exact for 8-bit images).
    max_disparity
        the largest disparity label; labels are 0 .. max_disparity (pixels).
    parameters
        :class:`CensusParameters`.
    device
        "cpu" (NumPy; returns a NumPy array) or "cuda" (CuPy; returns a CuPy array
        that stays on the GPU). Both give the same integers.

    Returns
    -------
    numpy.ndarray
        int32 (max_disparity + 1, H, W): ``costs[d, y, x]`` matches left ``(y, x)`` with right
        ``(y, x - d)``; where ``x - d < 0`` the raw cost is ``parameters.scale`` (half the
        largest). Values are in 0 .. 2 * scale.
    """
    parameters = check_census_parameters(parameters)
    left_levels, right_levels = check_pair(left, right, channel_axis, max_disparity)
    return census_costs_from_levels(left_levels, right_levels, int(max_disparity), parameters,
                                    device)


def census_costs_from_levels(left_levels, right_levels, max_disparity: int,
                             parameters: CensusParameters, device: str):
    """:func:`census_costs` of checked (H, W, C) grey levels (:func:`check_pair`)."""
    left_levels, right_levels = _integer_levels(left_levels), _integer_levels(right_levels)
    census_table, colour_table = _tables(parameters, left_levels.shape[2])
    compute = _census_costs_cupy if device == "cuda" else _census_costs_numpy
    return compute(left_levels, right_levels, max_disparity, parameters, census_table,
                   colour_table)


def right_view_labels(costs):
    """The right view's cheapest disparity from a left-view cost volume (L, H, W).

    Right pixel ``(y, x)`` matches left ``(y, x + d)``, so its cost at ``d`` is
    ``costs[d, y, x + d]`` for ``x + d < W``; the smallest ``d`` wins ties. NumPy in, NumPy
    out; CuPy in, CuPy out (same values).
    """
    if type(costs).__module__.startswith("cupy"):
        import cupy

        from ._cuda import kernel, launch_config
        num_labels, h, w = costs.shape
        labels = cupy.empty((h, w), dtype=cupy.int32)
        kernel("right_view_labels")(*launch_config(h * w), (
            cupy.ascontiguousarray(costs, dtype=cupy.int32), np.int32(num_labels),
            np.int32(h), np.int32(w), labels))
        return labels
    costs = np.asarray(costs)
    num_labels, h, w = costs.shape
    best = costs[0].copy()
    labels = np.zeros((h, w), dtype=np.int32)
    for d in range(1, min(num_labels, w)):
        candidate = costs[d, :, d:]
        better = candidate < best[:, :w - d]
        best[:, :w - d][better] = candidate[better]
        labels[:, :w - d][better] = d
    return labels


# ----------------------------------------------------------- Birchfield-Tomasi / difference

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
    """Truncated per-pixel matching cost of every pixel of ``left`` at every disparity.

    Parameters
    ----------
    left, right
        the rectified pair, same shape; grey (H, W) or colour with
        ``channel_axis``.
    max_disparity
        the largest disparity label; labels are 0 .. max_disparity (pixels).
    truncation
        costs are clipped to this many grey levels (0..255 scale), which limits the
        pull of occluded and specular pixels.
    birchfield_tomasi
        use the Birchfield-Tomasi sampling-insensitive dissimilarity (the
        smaller of the distances from each pixel to the other image's linearly
        interpolated signal within half a pixel) instead of the plain absolute difference.
    channel_axis
        None for grey images, else the axis of the colour channels.

    Returns
    -------
    numpy.ndarray
        int32 NumPy array (max_disparity + 1, H, W): ``costs[d, y, x]`` is the rounded
        dissimilarity of left ``(y, x)`` and right ``(y, x - d)``, averaged over channels and
        clipped to ``truncation``. Where ``x - d < 0`` the cost is ``truncation``.
    """
    left_levels, right_levels = check_pair(left, right, channel_axis, max_disparity)
    if isinstance(truncation, bool) or not isinstance(truncation, (int, np.integer)) \
            or not 0 <= truncation <= 255:
        raise ValueError(f"truncation must be an int in 0..255 (grey levels), got "
                         f"{truncation!r}")
    return data_costs_from_levels(left_levels, right_levels, int(max_disparity), truncation,
                                  birchfield_tomasi)


def data_costs_from_levels(left_levels, right_levels, max_disparity: int, truncation: int,
                           birchfield_tomasi: bool) -> np.ndarray:
    """:func:`data_costs` of checked (H, W, C) grey levels (:func:`check_pair`)."""
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
        dissimilarity = dissimilarity.mean(axis=-1) if channels > 1 else dissimilarity[..., 0]
        costs[d, :, d:] = np.rint(np.minimum(dissimilarity, truncation))
    return costs


# ------------------------------------------------------------------------------- smoothness

def smoothness_weights(image, *, weight: int = 8, edge_threshold: float = 8.0,
                       flat_factor: int = 4, channel_axis=None) -> PairWeights:
    """Contrast-sensitive weights of the grid's edges, from the (left) image.

    Neighbours whose colours differ by at most ``edge_threshold`` grey levels (largest
    difference over the channels, 0..255 scale) get ``weight * flat_factor``; across stronger
    edges they get ``weight``. Depth discontinuities usually coincide with intensity edges, so
    labels change more cheaply there (the weighting of Boykov, Veksler and Zabih).

    Returns
    -------
    PairWeights
        :class:`PairWeights` of int32 NumPy arrays.
    """
    for name, value, top in (("weight", weight, 1 << 20), ("flat_factor", flat_factor, 1024)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or not 0 <= value <= top:
            raise ValueError(f"{name} must be an int in 0..{top}, got {value!r}")
    if isinstance(edge_threshold, bool) or not isinstance(
            edge_threshold, (int, float, np.number)) or not 0 <= edge_threshold <= 255:
        raise ValueError(f"edge_threshold must be a number in 0..255 (grey levels), got "
                         f"{edge_threshold!r}")
    return smoothness_from_levels(as_grey_levels(image, channel_axis=channel_axis),
                                  int(weight), float(edge_threshold), int(flat_factor))


def smoothness_from_levels(levels, weight: int, edge_threshold: float,
                           flat_factor: int) -> PairWeights:
    """:func:`smoothness_weights` of checked (H, W, C) grey levels."""
    flat = weight * flat_factor

    def weights(difference):
        contrast = np.abs(difference).max(axis=-1)
        return np.where(contrast <= edge_threshold, flat, weight).astype(np.int32)

    return PairWeights(weights(levels[:, 1:] - levels[:, :-1]),
                       weights(levels[1:, :] - levels[:-1, :]))
