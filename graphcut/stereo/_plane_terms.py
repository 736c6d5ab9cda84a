"""The energy of slanted-plane disparity labels (local expansion moves, :mod:`._local_expansion`).

A label is a plane ``d = a x + b y + c`` (pixels of disparity; ``x``, ``y`` the column and row
of a pixel centre). Its data cost at pixel ``p`` is the matching cost aggregated over a support
window *along the plane* (each window pixel ``q`` uses ``d(q)``, a slanted support): the
weighted mean of the raw, unaggregated AD-census cost ``rho(q, d(q))``, interpolated linearly
between the two integer disparities around ``d(q)``. The support is either the left image's
cross-based regions (the default pipeline's, :func:`cross_support`) or a square window with
colour-similarity weights as in PatchMatch stereo (Bleyer, Rhemann and Rother 2011,
:func:`window_support`).

The pairwise term between 4-neighbours ``p``, ``q`` with planes ``f``, ``g`` is Taniai et al.'s
truncated plane disagreement (CVPR 2014 / TPAMI 2018), halved so that two fronto-parallel
planes cost what two integer labels cost in :func:`~graphcut.stereo.disparity`'s energy::

    psi(f, g) = w_pq min((|f(p) - g(p)| + |f(q) - g(q)|) / 2, tau)

It is a truncated pseudo-metric on planes (for fixed ``p``, ``q``), so ``psi(f, g) <= psi(f,
alpha) + psi(alpha, g)``: every expansion move is submodular and an exact minimum cut.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._aggregation import cross_arms

__all__ = ["Support", "cross_support", "edge_disparities", "pair_costs", "plane_data_costs",
           "plane_energy",
           "planes_at", "window_support"]

OUTSIDE_COST = 128.0  # a disparity outside 0..L-1: the largest raw AD-census cost


class Support(NamedTuple):
    """Aggregation windows of the plane data cost.

    offsets: (K, 2) int (dy, dx) of the window pixels; weights: (K, H, W) float32, the weight
    of pixel ``p + offsets[k]`` in ``p``'s window (0 outside the image or the region); total:
    (H, W) float64, the sum over ``k`` (at least the centre's weight, > 0).
    """

    offsets: np.ndarray
    weights: np.ndarray
    total: np.ndarray


def _inside(h: int, w: int, dy: int, dx: int) -> np.ndarray:
    ys, xs = np.arange(h) + dy, np.arange(w) + dx
    return ((ys >= 0) & (ys < h))[:, None] & ((xs >= 0) & (xs < w))[None, :]


def _shifted(values: np.ndarray, dy: int, dx: int) -> np.ndarray:
    """``values[y + dy, x + dx]`` with the indices clipped to the image."""
    h, w = values.shape[:2]
    ys = np.clip(np.arange(h) + dy, 0, h - 1)
    xs = np.clip(np.arange(w) + dx, 0, w - 1)
    return values[ys][:, xs]


def cross_support(levels: np.ndarray, threshold: int = 12, length: int = 3,
                  minimum: int = 1) -> Support:
    """The cross-based regions of :func:`~graphcut.stereo.census_costs` (union of the
    horizontal arms of the pixels on ``p``'s vertical arm) as 0/1 weights.

    ``levels``: (H, W, C) integer grey levels of the left image; the arms' ``threshold`` (grey
    levels), ``length`` and ``minimum`` (pixels) as in :class:`~graphcut.stereo.CensusParameters`.
    """
    arms = cross_arms(np.asarray(levels, dtype=np.int32), threshold, length, minimum)
    h, w = arms.shape[1:]
    offsets, weights = [], []
    for dy in range(-length, length + 1):
        vertical = arms[2] >= -dy if dy < 0 else arms[3] >= dy
        for dx in range(-length, length + 1):
            horizontal = (_shifted(arms[0], dy, 0) >= -dx if dx < 0
                          else _shifted(arms[1], dy, 0) >= dx)
            member = vertical & horizontal & _inside(h, w, dy, dx)
            if member.any():
                offsets.append((dy, dx))
                weights.append(member.astype(np.float32))
    weights = np.stack(weights)
    return Support(np.array(offsets, dtype=np.int64), weights, weights.sum(axis=0,
                                                                           dtype=np.float64))


def window_support(levels: np.ndarray, radius: int = 5, step: int = 1,
                   colour_sigma: float = 10.0) -> Support:
    """A (2 radius + 1)^2 window sampled every ``step`` pixels, weights
    ``exp(-mean_c |I_p - I_q| / colour_sigma)`` (grey levels of the left image, (H, W, C)),
    as PatchMatch stereo weights its windows."""
    levels = np.asarray(levels, dtype=np.float64)
    h, w = levels.shape[:2]
    offsets, weights = [], []
    for dy in range(-radius, radius + 1, step):
        for dx in range(-radius, radius + 1, step):
            difference = np.abs(_shifted(levels, dy, dx) - levels).mean(axis=-1)
            weight = np.exp(-difference / colour_sigma) * _inside(h, w, dy, dx)
            offsets.append((dy, dx))
            weights.append(weight.astype(np.float32))
    weights = np.stack(weights)
    return Support(np.array(offsets, dtype=np.int64), weights, weights.sum(axis=0,
                                                                           dtype=np.float64))


def planes_at(planes: np.ndarray, ys, xs) -> np.ndarray:
    """Disparities of ``planes`` (3, ...) = (a, b, c) at columns ``xs`` and rows ``ys``."""
    return planes[0] * xs + planes[1] * ys + planes[2]


def plane_data_costs(raw: np.ndarray, support: Support, ys: np.ndarray, xs: np.ndarray,
                     planes: np.ndarray, steps: int = 1) -> np.ndarray:
    """Data costs of one plane per pixel, aggregated along the plane.

    Parameters
    ----------
    raw
        (L, H, W) raw (unaggregated) matching costs at the disparities ``k / steps``,
        k = 0..L-1 (e.g. :func:`~graphcut.stereo._subpixel_costs.subpixel_census_costs`).
    support
        :func:`cross_support` or :func:`window_support` of the left image.
    ys, xs
        (n,) int rows and columns of the pixels.
    planes
        (3, n) float (a, b, c) of each pixel's plane, disparity ``a x + b y + c`` in pixels.
    steps
        volume samples per pixel of disparity.

    Returns
    -------
    numpy.ndarray
        (n,) float64, the weighted mean over each pixel's window of the raw cost at the
        plane's disparity there, linear between the two samples around it
        (:data:`OUTSIDE_COST` outside the volume's range; 0..128 for AD-census).
    """
    levels, h, w = raw.shape
    area = h * w
    flat = raw.reshape(-1)
    ys = np.asarray(ys, dtype=np.int64)
    xs = np.asarray(xs, dtype=np.int64)
    pixel = ys * w + xs
    n = pixel.size
    a = (steps * np.asarray(planes[0], dtype=np.float64)).astype(np.float32)
    b = (steps * np.asarray(planes[1], dtype=np.float64)).astype(np.float32)
    centre = (steps * planes_at(planes, ys, xs)).astype(np.float32)
    top = levels - 1
    total = np.zeros(n, dtype=np.float32)
    for k, (dy, dx) in enumerate(support.offsets):
        weight = np.take(support.weights[k].reshape(-1), pixel)
        use = np.flatnonzero(weight)
        if use.size == 0:
            continue
        if use.size < n:
            weight = weight[use]
            d = centre[use] + (a[use] * dx + b[use] * dy)
            q = pixel[use] + (dy * w + dx)
        else:
            d = centre + (a * dx + b * dy)
            q = pixel + (dy * w + dx)
        low = np.clip(np.floor(d), 0, max(top - 1, 0)).astype(np.int64)
        t = np.clip(d - low, 0.0, 1.0)
        base = low * area + q
        value = np.take(flat, base).astype(np.float32)
        if top > 0:
            value += t * (np.take(flat, base + area) - value)
        value[(d < -1e-4) | (d > top + 1e-4)] = OUTSIDE_COST
        if use.size < n:
            total[use] += weight * value
        else:
            total += weight * value
    return total.astype(np.float64) / np.take(support.total.reshape(-1), pixel)


def pair_costs(weight: np.ndarray, f_p, f_q, g_p, g_q, truncation: float) -> np.ndarray:
    """``weight * min((|f_p - g_p| + |f_q - g_q|) / 2, truncation)``: the pairwise cost of
    planes ``f`` and ``g`` on an edge (p, q), given their disparities at ``p`` and ``q``."""
    return weight * np.minimum(0.5 * (np.abs(f_p - g_p) + np.abs(f_q - g_q)), truncation)


def edge_disparities(planes: np.ndarray, axis: int):
    """Disparities of each pixel's plane at itself and at its next neighbour along ``axis``
    (1: right, 0: down): ``(f_p(p), f_p(q), f_q(p), f_q(q))`` for the grid's edges (p, q)."""
    h, w = planes.shape[1:]
    ys, xs = np.indices((h, w))
    head = np.s_[:, 1:] if axis == 1 else np.s_[1:, :]
    tail = np.s_[:, :-1] if axis == 1 else np.s_[:-1, :]
    p_plane = planes[(slice(None),) + tail]
    q_plane = planes[(slice(None),) + head]
    py, px, qy, qx = ys[tail], xs[tail], ys[head], xs[head]
    return (planes_at(p_plane, py, px), planes_at(p_plane, qy, qx),
            planes_at(q_plane, py, px), planes_at(q_plane, qy, qx))


def plane_energy(data: np.ndarray, planes: np.ndarray, weights, truncation) -> float:
    """The energy of a plane labelling: the sum of the (H, W) data costs ``data`` plus
    :func:`pair_costs` over the grid's edges (``weights`` = (horizontal (H, W-1), vertical
    (H-1, W)) as :func:`~graphcut.stereo.smoothness_weights` gives them; ``truncation`` a
    number or one array per direction, shaped like the weights)."""
    energy = float(np.sum(data, dtype=np.float64))
    truncations = truncation if isinstance(truncation, tuple) else (truncation, truncation)
    for axis, weight, truncation in ((1, weights[0], truncations[0]),
                                     (0, weights[1], truncations[1])):
        fp_p, fp_q, fq_p, fq_q = edge_disparities(planes, axis)
        energy += float(pair_costs(weight, fp_p, fp_q, fq_p, fq_q, truncation).sum())
    return energy
