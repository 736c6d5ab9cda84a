"""The energy of a labelling and the network of one expansion move (alpha-expansion's
algebra, see :mod:`._expansion` for the derivation): the truncated-linear Potts-like pair
term, the move's graph construction (Kolmogorov-Zabih), and the checks of a problem."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from graphcut.solver import GridNetwork

INT32_MAX = int(np.iinfo(np.int32).max)


class PairWeights(NamedTuple):
    """Smoothness weights of the 4-connected grid's edges (integers >= 0).

    ``horizontal[y, x]`` joins ``(y, x)`` and ``(y, x + 1)``: shape (H, W - 1).
    ``vertical[y, x]`` joins ``(y, x)`` and ``(y + 1, x)``: shape (H - 1, W).
    """

    horizontal: np.ndarray
    vertical: np.ndarray


def _array_module(array):
    if type(array).__module__.startswith("cupy"):
        import cupy
        return cupy
    return np


def _check_cap(linear_truncation) -> int:
    if isinstance(linear_truncation, bool) or not isinstance(linear_truncation,
                                                             (int, np.integer)) \
            or not 1 <= linear_truncation <= INT32_MAX:
        raise ValueError(f"linear_truncation must be an int >= 1 (1 = Potts), got "
                         f"{linear_truncation!r}")
    return int(linear_truncation)


def _check_problem(costs, weights, cap: int) -> None:
    """Shapes, dtypes and value ranges of a problem; raises ValueError/TypeError."""
    if costs.ndim != 3 or min(costs.shape) < 1:
        raise ValueError(f"costs must be a non-empty (L, H, W) array, got shape {costs.shape}")
    if costs.dtype.kind not in "iu":
        raise TypeError(f"costs must hold integers, got dtype {costs.dtype}")
    _, h, w = costs.shape
    horizontal, vertical = weights
    largest_weight = 0
    for name, array, shape in (("horizontal", horizontal, (h, w - 1)),
                               ("vertical", vertical, (h - 1, w))):
        if array.shape != shape:
            raise ValueError(f"smoothness weights {name} must have shape {shape} for costs of "
                             f"shape {costs.shape}, got {array.shape}")
        if array.dtype.kind not in "iu":
            raise TypeError(f"smoothness weights {name} must hold integers, got {array.dtype}")
        if array.size:
            if int(array.min()) < 0:
                raise ValueError(f"smoothness weights {name} must be >= 0")
            largest_weight = max(largest_weight, int(array.max()))
    if int(costs.min()) < 0:
        raise ValueError("costs must be >= 0")
    # a terminal capacity is at most a data cost plus 2 w cap for each of 4 edges
    largest_pair = largest_weight * min(cap, costs.shape[0] - 1 or 1)
    if int(costs.max()) + 8 * largest_pair > INT32_MAX:
        raise ValueError(f"costs up to {int(costs.max())} with pairwise costs up to "
                         f"{largest_pair} overflow int32 capacities; rescale them")


def _as_weights(weights, xp) -> PairWeights:
    """The two weight arrays as contiguous int32 arrays of module ``xp`` (after
    :func:`_check_problem`)."""
    return PairWeights(*(xp.ascontiguousarray(xp.asarray(w), dtype=np.int32) for w in weights))


# ----------------------------------------------------------------- NumPy model of the kernels

def _pair_cost(weight, a, b, cap):
    """``weight * min(|a - b|, cap)`` as int64 (a, b label arrays or ints)."""
    xp = _array_module(weight)
    if cap == 1 and xp is np:  # Potts on the host
        return weight.astype(np.int64) * (a != b)
    return weight.astype(np.int64) * xp.minimum(xp.abs(a - b), cap)


def _gather(costs, labels):
    """``costs[labels[y, x], y, x]`` for every pixel."""
    xp = _array_module(costs)
    return xp.take_along_axis(costs, labels[xp.newaxis].astype(np.intp), axis=0)[0]


def _energy(data_term, weights, labels, cap: int) -> int:
    """Exact energy given the per-pixel data cost of ``labels`` (``data_term``)."""
    horizontal, vertical = weights
    total = int(data_term.sum(dtype=np.int64))
    total += int(_pair_cost(horizontal, labels[:, :-1], labels[:, 1:], cap).sum())
    total += int(_pair_cost(vertical, labels[:-1, :], labels[1:, :], cap).sum())
    return total


def _energy_change(cost_alpha, current, weights, labels, moved, changed, alpha: int,
                   cap: int) -> int:
    """How the exact energy changes when the pixels ``changed`` (flat indices; ``moved`` the
    same as a bool (H, W) mask; none labelled ``alpha``) switch to ``alpha``: their data terms
    and the pair terms of the edges that touch them (NumPy; a few pixels' work, not the
    image's)."""
    h, w = labels.shape
    flat = labels.reshape(-1)
    moved = moved.reshape(-1)
    total = int(cost_alpha.reshape(-1)[changed].sum(dtype=np.int64)) \
        - int(current.reshape(-1)[changed].sum(dtype=np.int64))
    horizontal, vertical = weights
    cols = changed % w
    rows = changed // w
    for weight, firsts, step, across in (
            (horizontal, np.concatenate([changed[cols < w - 1], changed[cols > 0] - 1]), 1,
             True),
            (vertical, np.concatenate([changed[rows < h - 1], changed[rows > 0] - w]), w,
             False)):
        first = np.unique(firsts)  # each edge (first, first + step) once
        if not first.size:
            continue
        second = first + step
        # (H, W - 1) weights: edge (y, x)-(y, x + 1) is at y * (W - 1) + x; (H - 1, W): at p
        edge = first - first // w if across else first
        old_a, old_b = flat[first], flat[second]
        new_a = np.where(moved[first], alpha, old_a)
        new_b = np.where(moved[second], alpha, old_b)
        difference = (np.minimum(np.abs(new_a - new_b), cap)
                      - np.minimum(np.abs(old_a - old_b), cap))
        total += int((weight.reshape(-1)[edge].astype(np.int64) * difference).sum())
    return total


def _pair_cost32(weight, a, b, cap):
    """``weight * min(|a - b|, cap)`` as int32: exact for a problem that passed
    :func:`_check_problem` (every pair cost, and a data cost plus 8 of them, fits in int32)."""
    xp = _array_module(weight)
    if cap == 1 and xp is np:  # Potts on the host: two passes instead of five
        return weight.astype(np.int32, copy=False) * (a != b)
    return weight.astype(np.int32, copy=False) * xp.minimum(xp.abs(a - b), cap).astype(np.int32)


def _move_network(cost_alpha, current, weights, labels, alpha: int, cap: int):
    """The move's network arrays and constant from whole-array operations (NumPy or CuPy), in
    int32 (bounded by :func:`_check_problem`; the constant is summed in int64)."""
    xp = _array_module(labels)
    horizontal, vertical = weights
    keep = current.astype(np.int32, copy=False)
    change = cost_alpha.astype(np.int32)  # a copy: changed in place below
    constant = 0
    arcs = []
    for weight, p, q, tail, head in (
            (horizontal, labels[:, :-1], labels[:, 1:], np.s_[:, :-1], np.s_[:, 1:]),
            (vertical, labels[:-1, :], labels[1:, :], np.s_[:-1, :], np.s_[1:, :])):
        a = _pair_cost32(weight, p, q, cap)
        c = _pair_cost32(weight, alpha, q, cap)
        change[head] -= c
        c -= a  # c - a
        change[tail] += c
        constant += int(a.sum(dtype=np.int64))
        del a
        c += _pair_cost32(weight, p, alpha, cap)  # b + c - a
        arcs.append(c)
    shared = xp.minimum(keep, change)
    constant += int(shared.sum(dtype=np.int64))
    right, down = arcs
    change -= shared
    # valid by construction (int32, contiguous, >= 0, bounded by _check_problem): no checking
    # passes over the arrays on every move
    network = GridNetwork.from_checked(
        change, keep - shared, (down, right),
        (xp.zeros(down.shape, dtype=np.int32), xp.zeros(right.shape, dtype=np.int32)))
    return network, constant


def expansion_network(costs, weights, labels, alpha: int, *,
                      linear_truncation: int = 1) -> tuple[GridNetwork, int]:
    """The min-cut network of the expansion move for ``alpha`` from ``labels``.

    Source side = keep the current label, sink side = switch to ``alpha`` (see the module
    docstring for the construction). NumPy or CuPy arrays in; the network lives on the same
    side.

    Returns
    -------
    tuple[GridNetwork, int]
        ``(network, constant)`` with ``labeling_energy(after cut y) == constant + capacity of
        y`` for every cut ``y``; in particular the optimal move's energy is
        ``constant + max flow``.
    """
    xp = _array_module(costs)
    cap = _check_cap(linear_truncation)
    _check_problem(costs, PairWeights(*weights), cap)
    weights = _as_weights(weights, xp)
    labels = xp.asarray(labels, dtype=np.int32)
    return _move_network(costs[alpha], _gather(costs, labels), weights, labels, int(alpha),
                         cap)


def labeling_energy(costs, weights, labels, *, linear_truncation: int = 1) -> int:
    """Exact energy of ``labels`` (H, W) under data ``costs`` (L, H, W) and pairwise
    ``weights`` with ``V = w min(|a - b|, linear_truncation)``.

    NumPy or CuPy arrays (all of one kind). Returns a Python int.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.labeling import PairWeights, labeling_energy
    >>> costs = np.array([[[0, 4, 9]], [[9, 5, 0]]])             # (L, H, W)
    >>> weights = PairWeights(horizontal=np.array([[5, 5]]), vertical=np.zeros((0, 3), int))
    >>> labeling_energy(costs, weights, np.array([[0, 0, 1]]))   # 0 + 4 + 0, one jump of 5
    9
    >>> labeling_energy(costs, weights, np.array([[0, 1, 1]]))   # 0 + 5 + 0, one jump of 5
    10
    """
    xp = _array_module(costs)
    cap = _check_cap(linear_truncation)
    labels = xp.asarray(labels)
    weights = PairWeights(*(xp.asarray(w) for w in weights))
    return _energy(_gather(costs, labels), weights, labels, cap)


# --------------------------------------------------------------------------- the two loops


__all__ = ["PairWeights", "expansion_network", "labeling_energy"]
