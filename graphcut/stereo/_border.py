"""The left image's border strip that the right camera does not see: linear extrapolation.

Left pixel ``(y, x)`` at disparity ``d`` matches right ``(y, x - d)``; in the first columns of
the left image that match lies outside the right image, so these pixels have no data term
worth the name and fail the left-right check. Unlike occlusions there is no nearer object in
front of them: they belong to the surface seen just to their right. Filling them with that
surface's nearest disparity (:func:`~graphcut.stereo.fill_from_background`) is right for a
fronto-parallel surface and wrong by up to ``slope x width`` pixels for a slanted one (a wall
or a floor running away from the camera); this extends the surface's row-wise slope instead.
Runs on the host with NumPy after either backend, so it is the same on every backend.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from ._checks import checked_int, checked_number, unpacked

__all__ = ["BorderExtrapolation", "check_border_extrapolation", "extrapolate_left_border"]


class BorderExtrapolation(NamedTuple):
    """Settings of :func:`extrapolate_left_border` as :func:`~graphcut.stereo.disparity`
    applies it (``border_extrapolation=BorderExtrapolation()``; off by default, see
    docs/stereo.md). Chosen on the real development pairs of bench/bench_stereo.py (Middlebury
    teddy and venus) only.

    fit_width: the slope of a row is fitted over this many columns (pixels) starting at its
    first consistent pixel; min_valid: at least this many of them must be consistent;
    rows: the slope used is the median of the fitted slopes of the rows within this many rows
    (pixels) above and below; max_slope: its magnitude is capped at this (pixels of
    disparity per pixel).
    """

    fit_width: int = 30
    min_valid: int = 8
    rows: int = 10
    max_slope: float = 0.5


def check_border_extrapolation(settings) -> BorderExtrapolation:
    """``settings`` as a :class:`BorderExtrapolation` after checking its values (ValueError)."""
    fit_width, min_valid, rows, max_slope = unpacked(
        settings, "border_extrapolation", "BorderExtrapolation", BorderExtrapolation._fields)
    owner = "border extrapolation"
    fit_width = checked_int(owner, "fit_width", fit_width, 2, 1 << 16)
    min_valid = checked_int(owner, "min_valid", min_valid, 2, 1 << 16)
    rows = checked_int(owner, "rows", rows, 0, 1 << 16)
    if min_valid > fit_width:
        raise ValueError(f"border extrapolation min_valid ({min_valid}) must be at most "
                         f"fit_width ({fit_width})")
    max_slope = checked_number(owner, "max_slope", max_slope, 0, 1e3, "0..1000")
    return BorderExtrapolation(fit_width, min_valid, rows, max_slope)


def row_slopes(labels, valid, *, fit_width: int, min_valid: int):
    """Least-squares slope of ``labels`` along each row over the valid pixels among the
    ``fit_width`` columns starting at the row's first valid pixel, up to the first jump of
    more than one label between successive valid pixels (the end of the surface).

    Returns
    -------
    tuple
        ``(first, slopes)``: int (H,) column of each row's first valid pixel (W where there is
        none) and float64 (H,) slopes in label units per pixel (NaN where fewer than
        ``min_valid`` of those columns are valid or the row has no valid pixel).
    """
    labels = np.asarray(labels)
    valid = np.asarray(valid, dtype=bool)
    h, w = labels.shape
    any_valid = valid.any(axis=1)
    first = np.where(any_valid, valid.argmax(axis=1), w)
    columns = first[:, np.newaxis] + np.arange(fit_width)[np.newaxis, :]
    inside = columns < w
    columns = np.minimum(columns, w - 1)
    mask = inside & np.take_along_axis(valid, columns, axis=1) & any_valid[:, np.newaxis]
    values = np.take_along_axis(labels, columns, axis=1).astype(np.int64)
    # the surface ends at the first jump of more than one label between successive valid
    # pixels: only the pixels before it are fitted
    last = np.maximum.accumulate(np.where(mask, np.arange(fit_width), 0), axis=1)
    previous = np.take_along_axis(values, np.concatenate(
        [np.zeros((h, 1), dtype=np.int64), last[:, :-1]], axis=1), axis=1)
    jump = mask & (np.abs(values - previous) > 1)
    mask &= ~np.logical_or.accumulate(jump, axis=1)
    x = np.where(mask, columns, 0).astype(np.float64)
    y = np.where(mask, values, 0).astype(np.float64)
    n = mask.sum(axis=1).astype(np.float64)
    sx, sy = x.sum(axis=1), y.sum(axis=1)
    sxx, sxy = (x * x).sum(axis=1), (x * y).sum(axis=1)
    spread = n * sxx - sx * sx
    enough = (n >= min_valid) & (spread > 0)
    slopes = np.full(h, np.nan)
    slopes[enough] = (n * sxy - sx * sy)[enough] / spread[enough]
    return first, slopes


def extrapolate_left_border(labels, invalid, *, fit_width: int = 30, min_valid: int = 8,
                            rows: int = 10, max_slope: float = 0.5,
                            max_label: int | None = None) -> np.ndarray:
    """Replace each row's leading run of invalid pixels by the line through its first valid
    pixel with the slope of the surface to its right.

    For row ``y`` with first valid pixel ``x0`` and value ``v``, pixel ``x < x0`` becomes
    ``clip(round(v + s (x - x0)), 0, max_label)``: ``s`` is the median of the least-squares
    slopes (:func:`row_slopes` over ``fit_width`` columns from each row's first valid pixel,
    up to the first jump of more than one label; rows with fewer than ``min_valid`` such
    pixels left out) of the rows within ``rows``
    of ``y``, capped at ``+-max_slope``. Rows without a usable slope nearby, and every pixel
    after a row's first valid pixel, keep their labels.

    Parameters
    ----------
    labels : (H, W) integer array
        A disparity map, e.g. after :func:`~graphcut.stereo.fill_from_background`.
    invalid : (H, W) bool array
        Pixels that failed the left-right check.
    fit_width, min_valid, rows : int
        See above (pixels); ``fit_width`` >= ``min_valid`` >= 2.
    max_slope : float
        Largest slope magnitude, in disparity pixels per pixel (>= 0; 0 = constant fill).
    max_label : int, optional
        The largest label (default: no upper bound).

    Returns
    -------
    numpy.ndarray
        A new map of ``labels``' dtype.

    Raises
    ------
    ValueError
        On shapes that differ or parameters out of range.

    Examples
    --------
    A floor whose disparity falls by one pixel every two columns; its first four columns are
    not seen by the right camera:

    >>> truth = np.tile(40 - np.arange(40) // 2, (3, 1))
    >>> invalid = np.zeros(truth.shape, bool)
    >>> invalid[:, :4] = True
    >>> labels = np.where(invalid, truth[:, 4:5], truth)      # the background fill
    >>> extrapolate_left_border(labels, invalid)[0, :6].tolist()  # truth: 40 40 39 39 38 38
    [40, 39, 39, 38, 38, 38]
    """
    labels = np.asarray(labels)
    invalid = np.asarray(invalid, dtype=bool)
    if labels.ndim != 2 or labels.shape != invalid.shape:
        raise ValueError(f"labels {labels.shape} and invalid {invalid.shape} must share one "
                         f"(H, W) shape")
    fit_width, min_valid, rows, max_slope = check_border_extrapolation(
        BorderExtrapolation(fit_width, min_valid, rows, max_slope))
    h, w = labels.shape
    result = labels.copy()
    if labels.size == 0:
        return result
    first, slopes = row_slopes(labels, ~invalid, fit_width=fit_width, min_valid=min_valid)
    padded = np.concatenate([np.full(rows, np.nan), slopes, np.full(rows, np.nan)])
    window = np.lib.stride_tricks.sliding_window_view(padded, 2 * rows + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows with no slope nearby
        slope = np.clip(np.nanmedian(window, axis=1), -max_slope, max_slope)
    top = np.inf if max_label is None else int(max_label)
    columns = np.arange(w)[np.newaxis, :]
    lead = (columns < first[:, np.newaxis]) & (first < w)[:, np.newaxis] \
        & np.isfinite(slope)[:, np.newaxis]
    start = np.take_along_axis(labels, np.minimum(first, w - 1)[:, np.newaxis], axis=1)
    line = start + np.nan_to_num(slope)[:, np.newaxis] * (columns - first[:, np.newaxis])
    extended = np.clip(np.rint(line), 0, max(top, 0)).astype(labels.dtype)
    result[lead] = extended[lead]
    return result
