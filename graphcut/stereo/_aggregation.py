"""Aggregation of a raw matching-cost plane over each pixel's support region.

Two kinds, both exact integer arithmetic (the NumPy models here and the CUDA kernels of
``stereo_kernels.cu`` give identical arrays):

- ``"box"``: the rounded mean over a (2r+1) x (2r+1) box, border pixels repeated.
- ``"cross"``: cross-based support regions (Zhang, Lu and Lafruit 2009), built on the left
  image. Each pixel ``p`` gets four arms (left, right, up, down): an arm grows one pixel at a
  time while the next pixel lies in the image, differs from ``p`` by at most ``threshold`` grey
  levels in every channel (not tested for the first ``minimum`` steps), and the arm is at most
  ``length`` pixels long. The support of ``p``
  is the union of the horizontal segments of the pixels on its vertical segment; the
  aggregated cost is the rounded mean of the raw cost over that region:
  ``(total + count // 2) // count``. Regions stop at colour edges, so costs of a foreground
  object are not averaged with the background's (the box's "fattening").
"""

from __future__ import annotations

import numpy as np

AGGREGATIONS = ("box", "cross")

__all__ = ["AGGREGATIONS", "box_mean", "cross_arms", "cross_mean"]


def box_mean(plane: np.ndarray, r: int) -> np.ndarray:
    """NumPy model of ``box_rows`` + ``box_columns_mean``: the rounded integer mean over a
    (2r+1) x (2r+1) box, border pixels repeated."""
    if r == 0:
        return plane
    h, w = plane.shape
    padded = np.pad(plane, ((0, 0), (r, r)), mode="edge")
    rows = sum(padded[:, k:k + w] for k in range(2 * r + 1))
    padded = np.pad(rows, ((r, r), (0, 0)), mode="edge")
    total = sum(padded[k:k + h] for k in range(2 * r + 1))
    count = (2 * r + 1) ** 2
    return (total + count // 2) // count


def cross_arms(levels: np.ndarray, threshold: int, length: int,
               minimum: int = 0) -> np.ndarray:
    """NumPy model of ``cross_arms``: int32 (4, H, W) arm lengths (left, right, up, down) in
    pixels, 0..``length``, of the (H, W, C) integer grey levels ``levels``; the first
    ``minimum`` steps ignore the colour test (they stop only at the image border)."""
    h, w, _ = levels.shape
    arms = np.zeros((4, h, w), dtype=np.int32)
    for index, (dy, dx) in enumerate(((0, -1), (0, 1), (-1, 0), (1, 0))):
        alive = np.ones((h, w), dtype=bool)
        for k in range(1, length + 1):
            ys, xs = np.arange(h) + k * dy, np.arange(w) + k * dx
            inside = ((ys >= 0) & (ys < h))[:, None] & ((xs >= 0) & (xs < w))[None, :]
            neighbour = levels[np.clip(ys, 0, h - 1)][:, np.clip(xs, 0, w - 1)]
            close = (np.abs(neighbour - levels) <= threshold).all(axis=-1) | (k <= minimum)
            alive &= inside & close
            if not alive.any():
                break
            arms[index] += alive
    return arms


def _segment_sums(values: np.ndarray, before: np.ndarray, after: np.ndarray,
                  axis: int) -> np.ndarray:
    """Sums of ``values`` along ``axis`` over [i - before, i + after] (inside the array)."""
    prefix = np.cumsum(values, axis=axis, dtype=np.int64)
    prefix = np.concatenate([np.zeros_like(np.take(prefix, [0], axis=axis)), prefix], axis=axis)
    n = values.shape[axis]
    index = np.arange(n).reshape((-1, 1) if axis == 0 else (1, -1))
    high = np.take_along_axis(prefix, index + after + 1, axis=axis)
    low = np.take_along_axis(prefix, index - before, axis=axis)
    return high - low


def cross_count(arms: np.ndarray) -> np.ndarray:
    """Pixels in each cross-based support region, int64 (H, W)."""
    return _segment_sums(arms[0] + arms[1] + 1, arms[2], arms[3], axis=0)


def cross_mean(plane: np.ndarray, arms: np.ndarray, count: np.ndarray) -> np.ndarray:
    """NumPy model of ``cross_rows`` + ``cross_columns_mean``: the rounded integer mean of the
    (H, W) int32 ``plane`` over each pixel's cross-based support region (``arms`` from
    :func:`cross_arms`, ``count`` from :func:`cross_count`)."""
    rows = _segment_sums(plane, arms[0], arms[1], axis=1)
    total = _segment_sums(rows, arms[2], arms[3], axis=0)
    return ((total + count // 2) // count).astype(np.int32)
