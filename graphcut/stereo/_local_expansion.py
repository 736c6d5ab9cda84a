"""Slanted-plane disparities by local expansion moves (Taniai, Matsushita, Sato and Naemura,
CVPR 2014 / TPAMI 2018), started from an integer disparity map. A CPU prototype.

Every pixel carries a plane ``d = a x + b y + c``; the energy (:mod:`._plane_terms`) is the
data cost aggregated along each pixel's plane plus the truncated plane disagreement between
4-neighbours, weighted by :func:`~graphcut.stereo.smoothness_weights`. The image is cut into
square cells; a cell's *expansion region* is the 3 x 3 cells around it. For one cell size the
cells are split into 16 groups (cell row and column modulo 4), whose regions are disjoint and
never touch; each move takes one group, gives every region of the group one proposal plane
(from its centre cell) and lets every pixel of the regions keep its plane or switch to its
region's proposal, by one exact minimum cut (``graphcut.labeling.HostMoveCuts``) of a
:class:`~graphcut.solver.GridNetwork` over the image, the other pixels fixed. Proposals, per
group and pass:

- ``fit``: the least-squares plane of the region's current disparities, refitted once to the
  pixels within 1 pixel of the first fit (a slanted floor's plane from its staircase);
- ``propagate``: the plane of a random pixel of the centre cell (PatchMatch's propagation);
- ``perturb``: a random pixel's plane with its disparity there moved by up to ``delta`` pixels
  and its slopes by up to ``slope_delta``, both halved at every perturbation and pass
  (PatchMatch's refinement).

Moves never raise the (rounded) energy: the current labelling is always a feasible cut.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from graphcut.labeling import HostMoveCuts
from graphcut.solver import GridNetwork

from ._checks import checked_int, checked_number, unpacked
from ._plane_terms import (Support, edge_disparities, pair_costs, plane_data_costs,
                           plane_energy, planes_at)

__all__ = ["LocalExpansion", "PlaneResult", "local_expansion_planes", "planes_fill"]

GROUPS = 4          # cells of one group are GROUPS cells apart along each axis
ENERGY_SCALE = 16   # the move networks' integer capacities: energy terms times this, rounded


class LocalExpansion(NamedTuple):
    """Settings of :func:`local_expansion_planes` (a prototype). Cells 15 and 5, two passes,
    truncation 1 and slope cost 16 were the best of a few tried on the development pairs at
    half size (docs/stereo.md, "Slanted-plane labels"); at full size they lose to the
    integer pipeline.

    cell_sizes: cell sides in pixels, one pass each per iteration; iterations: passes over all
    cell sizes; truncation: ``tau`` of the plane disagreement (pixels of disparity);
    flat_truncation: ``tau`` of the edges whose weight is above the smallest (no colour
    edge between the pixels) when > 0; slope_cost: added to a pixel's data cost per unit of
    ``|a| + |b|`` (a soft fronto-parallel prior; 0: none);
    perturbations: ``perturb`` proposals per group and pass; delta, slope_delta: their first
    ranges (pixels, pixels per pixel); max_slope: proposals steeper than this are clipped;
    seed: of the random proposals.
    """

    cell_sizes: tuple = (15, 5)
    iterations: int = 2
    truncation: float = 1.0
    flat_truncation: float = 0.0
    slope_cost: float = 16.0
    perturbations: int = 2
    delta: float = 2.0
    slope_delta: float = 0.5
    max_slope: float = 1.5
    seed: int = 0


class PlaneResult(NamedTuple):
    """The outcome of :func:`local_expansion_planes`.

    planes: (3, H, W) float64 (a, b, c); disparity: (H, W) float64, the planes at the pixel
    centres; data: (H, W) float64, each pixel's data cost; energies: the energy before the
    first move and after every pass; moves, switched: moves solved and pixels switched in all;
    seconds: wall time.
    """

    planes: np.ndarray
    disparity: np.ndarray
    data: np.ndarray
    energies: list
    moves: int
    switched: int
    seconds: float


def move_network(current: np.ndarray, proposal: np.ndarray, free: np.ndarray,
                 keep_cost: np.ndarray, switch_cost: np.ndarray, weights,
                 truncation) -> tuple[GridNetwork, float]:
    """The network of one local expansion move and its constant (float energy units).

    Pixels where ``free`` is True keep their plane of ``current`` (3, H, W) (source side) or
    switch to their plane of ``proposal`` (sink side); the others keep theirs. Two free
    neighbours must share their proposal (one region). Every capacity is the energy term
    times :data:`ENERGY_SCALE`, rounded: ``constant + flow / ENERGY_SCALE`` is the move's
    energy up to that rounding.
    """
    keep = np.where(free, keep_cost, 0.0)
    switch = np.where(free, switch_cost, 0.0)
    constant = float(np.sum(np.where(free, 0.0, keep_cost)))
    arcs = []
    truncations = truncation if isinstance(truncation, tuple) else (truncation, truncation)
    for axis, weight, truncation in ((1, weights[0], truncations[0]),
                                     (0, weights[1], truncations[1])):
        tail = np.s_[:, :-1] if axis == 1 else np.s_[:-1, :]
        head = np.s_[:, 1:] if axis == 1 else np.s_[1:, :]
        fp_p, fp_q, fq_p, fq_q = edge_disparities(current, axis)
        ap_p, ap_q, aq_p, aq_q = edge_disparities(proposal, axis)
        fp, fq = free[tail], free[head]
        a = pair_costs(weight, fp_p, fp_q, fq_p, fq_q, truncation)   # keep, keep
        b = pair_costs(weight, fp_p, fp_q, aq_p, aq_q, truncation)   # keep, switch
        c = pair_costs(weight, ap_p, ap_q, fq_p, fq_q, truncation)   # switch, keep
        both = fp & fq
        only_p, only_q = fp & ~fq, ~fp & fq
        # one side fixed: a unary term of the free one
        keep[tail] += np.where(only_p, a, 0.0)
        switch[tail] += np.where(only_p, c, 0.0)
        keep[head] += np.where(only_q, a, 0.0)
        switch[head] += np.where(only_q, b, 0.0)
        # both free (one region, one proposal: psi(alpha, alpha) = 0):
        # E = a + (c - a) x_p - c x_q + (b + c - a) (1 - x_p) x_q
        constant += float(np.sum(np.where(both, a, 0.0)))
        switch[tail] += np.where(both, c - a, 0.0)
        switch[head] -= np.where(both, c, 0.0)
        arcs.append(np.where(both, b + c - a, 0.0))
        constant += float(np.sum(np.where(~fp & ~fq, a, 0.0)))
    shared = np.minimum(keep, switch)
    constant += float(shared.sum())
    scaled = [np.rint(ENERGY_SCALE * v).astype(np.int32) for v in (
        switch - shared, keep - shared, arcs[0], arcs[1])]
    source, sink, right, down = scaled
    right, down = np.maximum(right, 0), np.maximum(down, 0)  # >= 0 up to the rounding
    network = GridNetwork(source=source, sink=sink, right=right, down=down,
                          left=np.zeros_like(right), up=np.zeros_like(down))  # one-way arcs
    return network, constant


def check_local_expansion(settings) -> LocalExpansion:
    """``settings`` as a :class:`LocalExpansion` after checking its values (ValueError)."""
    values = unpacked(settings, "settings", "LocalExpansion", LocalExpansion._fields)
    settings = LocalExpansion(*values)
    owner = "local expansion"
    sizes = settings.cell_sizes
    if not isinstance(sizes, (tuple, list)) or not sizes or any(
            isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1 for c in sizes):
        raise ValueError(f"{owner} cell_sizes must be a non-empty tuple of ints >= 1 "
                         f"(pixels), got {sizes!r}")
    checked_int(owner, "iterations", settings.iterations, 0, 1000)
    checked_int(owner, "perturbations", settings.perturbations, 0, 100)
    checked_int(owner, "seed", settings.seed, 0, 2 ** 63 - 1)
    for name, low, high in (("truncation", 1e-6, 1e6), ("flat_truncation", 0, 1e6),
                            ("delta", 0, 1e6), ("slope_delta", 0, 1e3),
                            ("max_slope", 0, 1e3), ("slope_cost", 0, 1e6)):
        checked_number(owner, name, getattr(settings, name), low, high, f"{low}..{high:g}")
    return settings._replace(cell_sizes=tuple(int(c) for c in sizes))


def _cells(shape, size: int):
    """Per pixel its cell row and column, and the number of cell rows and columns."""
    h, w = shape
    return (np.arange(h) // size, np.arange(w) // size, -(-h // size), -(-w // size))


def _centre(index: np.ndarray, group: int, count: int) -> np.ndarray:
    """The centre cell (along one axis) of the group-``group`` region holding cell ``index``,
    or -1: cells ``c - 1 .. c + 1`` around each centre ``c == group (mod GROUPS)``."""
    offset = (index - group) % GROUPS
    centre = np.where(offset == 0, index, np.where(offset == 1, index - 1,
                                                   np.where(offset == GROUPS - 1, index + 1,
                                                            -1)))
    return np.where((centre >= 0) & (centre < count), centre, -1)


def _fit(values, ys, xs, region, count, inliers=None):
    """Least-squares planes (3, count) of ``values`` over the pixels of each region id (-1: none),
    optionally only where ``inliers``; NaN where a region has fewer than 3 pixels."""
    use = region >= 0 if inliers is None else (region >= 0) & inliers
    r = region[use]
    x, y, v = xs[use].astype(float), ys[use].astype(float), values[use]
    terms = [np.ones_like(x), x, y]
    moments = np.empty((count, 3, 3))
    rhs = np.empty((count, 3))
    for i, s in enumerate(terms):
        for j, t in enumerate(terms):
            moments[:, i, j] = np.bincount(r, s * t, minlength=count)
        rhs[:, i] = np.bincount(r, s * v, minlength=count)
    out = np.full((3, count), np.nan)
    good = (moments[:, 0, 0] >= 3) & (np.abs(np.linalg.det(moments)) > 1e-6)
    if good.any():
        solved = np.linalg.solve(moments[good], rhs[good][..., None])[..., 0]  # (c, a, b)
        out[:, good] = solved[:, [1, 2, 0]].T
    return out


def _proposals(kind: str, planes, disparity, region_map, centre_rows, centre_cols,
               size, shape, rng, delta, slope_delta, max_slope):
    """One proposal plane (3, count) per region of the group."""
    h, w = shape
    count = centre_rows.size
    ys, xs = np.indices(shape)
    if kind == "fit":
        first = _fit(disparity.ravel(), ys.ravel(), xs.ravel(), region_map.ravel(), count)
        fitted = np.where(region_map >= 0, planes_at(first[:, np.maximum(region_map, 0)], ys,
                                                     xs), np.nan)
        inliers = np.abs(fitted - disparity) <= 1.0
        second = _fit(disparity.ravel(), ys.ravel(), xs.ravel(), region_map.ravel(), count,
                      inliers.ravel())
        proposal = np.where(np.isnan(second), first, second)
    else:
        py = np.minimum(centre_rows * size + rng.integers(0, size, count), h - 1)
        px = np.minimum(centre_cols * size + rng.integers(0, size, count), w - 1)
        proposal = planes[:, py, px].copy()
        if kind == "perturb":
            a = proposal[0] + slope_delta * rng.uniform(-1, 1, count)
            b = proposal[1] + slope_delta * rng.uniform(-1, 1, count)
            d = planes_at(proposal, py, px) + delta * rng.uniform(-1, 1, count)
            proposal = np.stack([a, b, d - a * px - b * py])
    a = np.clip(proposal[0], -max_slope, max_slope)
    b = np.clip(proposal[1], -max_slope, max_slope)
    return np.stack([a, b, proposal[2]])


def local_expansion_planes(raw: np.ndarray, support: Support, weights, initial,
                           settings: LocalExpansion = LocalExpansion(), *, steps: int = 1,
                           callback=None) -> PlaneResult:
    """Minimise the plane energy of :mod:`._plane_terms` by local expansion moves.

    Parameters
    ----------
    raw
        (L, H, W) raw matching costs at the disparities ``k / steps``, k = 0..L-1 (e.g.
        :func:`~graphcut.stereo._subpixel_costs.subpixel_census_costs`).
    support
        the data cost's windows (``cross_support`` or ``window_support`` of the left image).
    weights
        (horizontal (H, W-1), vertical (H-1, W)) pairwise weights, e.g.
        :func:`~graphcut.stereo.smoothness_weights` of the left image.
    initial
        (H, W) disparities to start from (fronto-parallel planes), or (3, H, W) planes.
    settings
        :class:`LocalExpansion`.
    steps
        volume samples per pixel of disparity.
    callback
        called as ``callback(pass_index, result_so_far_energy)`` after every pass (optional).

    Returns
    -------
    PlaneResult
        the planes, the disparities at the pixel centres, the energies.
    """
    started = time.perf_counter()
    settings = check_local_expansion(settings)
    levels, h, w = raw.shape
    initial = np.asarray(initial, dtype=np.float64)
    if initial.shape == (h, w):
        planes = np.stack([np.zeros((h, w)), np.zeros((h, w)), initial])
    elif initial.shape == (3, h, w):
        planes = initial.copy()
    else:
        raise ValueError(f"initial must be (H, W) disparities or (3, H, W) planes of the "
                         f"volume's {h}x{w} pixels, got shape {initial.shape}")
    weights = tuple(np.asarray(v, dtype=np.float64) for v in weights)
    ys, xs = np.indices((h, w))
    data = plane_data_costs(raw, support, ys.ravel(), xs.ravel(),
                            planes.reshape(3, -1), steps).reshape(h, w)
    data += settings.slope_cost * (np.abs(planes[0]) + np.abs(planes[1]))
    truncation = settings.truncation
    if settings.flat_truncation > 0:
        lowest = min(float(v.min()) for v in weights if v.size)
        truncation = tuple(np.where(v > lowest, settings.flat_truncation, settings.truncation)
                           for v in weights)
    energies = [plane_energy(data, planes, weights, truncation)]
    rng = np.random.default_rng(settings.seed)
    cuts = HostMoveCuts()
    moves = switched = 0
    kinds = ["fit", "propagate"] + ["perturb"] * settings.perturbations
    for iteration in range(settings.iterations):
        for size in settings.cell_sizes:
            rows, cols, n_rows, n_cols = _cells((h, w), size)
            order = rng.permutation(GROUPS * GROUPS)
            for group in order:
                gy, gx = divmod(int(group), GROUPS)
                centre_r, centre_c = _centre(rows, gy, n_rows), _centre(cols, gx, n_cols)
                centres_r = np.arange(gy, n_rows, GROUPS)
                centres_c = np.arange(gx, n_cols, GROUPS)
                if not centres_r.size or not centres_c.size:
                    continue
                # region id of each pixel: index of its centre among the group's centres
                rid_r = np.where(centre_r >= 0, (centre_r - gy) // GROUPS, -1)
                rid_c = np.where(centre_c >= 0, (centre_c - gx) // GROUPS, -1)
                region = np.where((rid_r[:, None] >= 0) & (rid_c[None, :] >= 0),
                                  rid_r[:, None] * centres_c.size + rid_c[None, :], -1)
                free = region >= 0
                grid_r = np.repeat(centres_r, centres_c.size)
                grid_c = np.tile(centres_c, centres_r.size)
                shrink = 1.0
                for kind in kinds:
                    if kind == "perturb":
                        shrink *= 0.5
                    disparity = planes_at(planes, ys, xs)
                    scale = shrink * 0.5 ** iteration
                    proposal_planes = _proposals(
                        kind, planes, disparity, region, grid_r, grid_c, size, (h, w), rng,
                        settings.delta * scale * 2, settings.slope_delta * scale * 2,
                        settings.max_slope)
                    ok = ~np.isnan(proposal_planes).any(axis=0)
                    region_ok = free & ok[np.maximum(region, 0)]
                    proposal = np.where(region_ok[None],
                                        proposal_planes[:, np.maximum(region, 0)], planes)
                    region_ok &= (proposal != planes).any(axis=0)  # a new plane only
                    fy, fx = np.nonzero(region_ok)
                    proposal_data = data.copy()
                    proposal_data[fy, fx] = plane_data_costs(raw, support, fy, fx,
                                                             proposal[:, fy, fx], steps)
                    proposal_data[fy, fx] += settings.slope_cost * (
                        np.abs(proposal[0, fy, fx]) + np.abs(proposal[1, fy, fx]))
                    network, _ = move_network(planes, proposal, region_ok, data,
                                              proposal_data, weights, truncation)
                    cut = cuts(network)
                    switch = region_ok & ~np.asarray(cut.source_side)
                    moves += 1
                    if switch.any():
                        planes[:, switch] = proposal[:, switch]
                        data[switch] = proposal_data[switch]
                        switched += int(switch.sum())
            energies.append(plane_energy(data, planes, weights, truncation))
            if callback is not None:
                callback(len(energies) - 1, energies[-1])
    return PlaneResult(planes, planes_at(planes, ys, xs), data, energies, moves, switched,
                       time.perf_counter() - started)


def planes_fill(planes: np.ndarray, invalid: np.ndarray, max_disparity: float) -> np.ndarray:
    """Disparities (H, W) of ``planes`` where ``invalid`` is False; each invalid pixel takes the
    smaller of the disparities that the planes of the nearest valid pixels on its row, left
    and right, give at it (the background's plane, extrapolated: Taniai et al.'s filling),
    clipped to ``0..max_disparity``. Rows without a valid pixel keep their own planes."""
    h, w = invalid.shape
    ys, xs = np.indices((h, w))
    own = planes_at(planes, ys, xs)
    valid = ~invalid
    columns = np.arange(w)[None, :]
    before = np.maximum.accumulate(np.where(valid, columns, -1), axis=1)
    after = np.minimum.accumulate(np.where(valid, columns, w)[:, ::-1], axis=1)[:, ::-1]
    candidates = []
    for source, exists in ((before, before >= 0), (after, after < w)):
        index = np.clip(source, 0, w - 1)
        plane = planes[:, ys, index]
        candidates.append(np.where(exists, planes_at(plane, ys, xs), np.inf))
    nearest = np.minimum(*candidates)
    filled = np.where(np.isfinite(nearest), nearest, own)
    return np.clip(np.where(valid, own, filled), 0.0, float(max_disparity))
