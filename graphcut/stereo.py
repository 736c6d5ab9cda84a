"""Stereo disparity by alpha-expansion (Boykov, Veksler and Zabih) with graph cuts.

The energy of a labelling ``f`` (one disparity per pixel of the left image) is

    E(f) = sum_p D_p(f_p) + sum_{p~q} w_pq [f_p != f_q]

with data costs ``D`` from :func:`data_costs` and contrast-sensitive Potts weights ``w`` on the
4-connected grid from :func:`smoothness_weights`. Everything is an integer, so energies are
exact (Python ints, summed in int64).

An *expansion move* for label ``alpha`` lets every pixel either keep its label or switch to
``alpha``; the best such move is one minimum cut. :func:`alpha_expansion` runs moves for all
labels in cycles until no move lowers the energy, accepting a move only when the exact energy
decreases.

How a move becomes a :class:`~graphcut.solver.GridNetwork` (no auxiliary nodes)
-----------------------------------------------------------------------------------
Write ``y_p = 1`` when pixel ``p`` switches to ``alpha`` (it ends on the sink side of the cut)
and ``y_p = 0`` when it keeps its label (source side). A pixel pays its source capacity when
it is on the sink side and its sink capacity when it is on the source side. The unary term is
``D_p(f_p)`` for ``y_p = 0`` and ``D_p(alpha)`` for ``y_p = 1``. For an edge ``p~q`` (q to
the right of or below p) the pairwise term has the four values

    A = E(0,0) = w [f_p != f_q]   B = E(0,1) = w [f_p != alpha]
    C = E(1,0) = w [alpha != f_q] D = E(1,1) = 0

and Potts is a metric, so ``A + D <= B + C`` (submodular). Kolmogorov and Zabih's identity

    E(y_p, y_q) = A + (C - A) y_p + (D - C) y_q + (B + C - A - D) (1 - y_p) y_q

splits it into a constant, two unary terms (folded into the t-links) and one directed arc
``p -> q`` of capacity ``B + C - A - D >= 0``, which is cut exactly when ``y_p = 0, y_q = 1``.
So only the ``right`` and ``down`` arcs carry capacity; ``left`` and ``up`` are zero. This
reparameterisation is equivalent to BVZ's graph with an auxiliary node on each edge whose
ends carry different labels, without the extra nodes. Finally each pixel's two terminal
capacities are reduced by their minimum, which moves into the constant, so at most one t-link
per pixel is non-zero. For every cut ``y``:

    E(labels after y) == constant + capacity(cut y),

hence the energy after the optimal move is ``constant + max flow`` exactly; the code checks
this identity on every move. Pixels already labelled ``alpha`` get equal costs on both sides and
a zero arc, so they need no special case. The cut's source side (the largest minimum-cut source
set, see :class:`~graphcut.solver.CutResult`) keeps as many pixels as possible unchanged.

Networks are built with whole-array operations on NumPy arrays, or on CuPy arrays when the
move is solved on the GPU, so that building costs little next to the max-flow itself.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from graphcut.solver import CutResult, GridNetwork, min_cut, resolve_device
from graphcut.solver.networks import INT32_MAX

from .stereo_costs import PairWeights, as_grey_levels, data_costs, smoothness_weights

__all__ = [
    "ExpansionResult", "Move", "PairWeights", "alpha_expansion", "as_grey_levels",
    "bad_pixel_rate", "data_costs", "disparity", "expansion_network", "labeling_energy",
    "smoothness_weights",
]

log = logging.getLogger("graphcut.stereo")


def _array_module(array):
    if type(array).__module__.startswith("cupy"):
        import cupy
        return cupy
    return np


@dataclass(frozen=True)
class Move:
    """One solved expansion move.

    Attributes:
        index: 1-based position in the sequence of solved moves.
        cycle: 1-based cycle (pass over the labels) the move belongs to.
        alpha: the label being expanded.
        flow: the maximum flow of the move's network (exact int).
        constant: the energy offset of the move: ``energy after = constant + flow``.
        energy_before, energy_after: the exact energy of the labelling before the move and of
            the labelling the minimum cut proposes.
        accepted: whether the proposal was kept (``energy_after < energy_before``).
        changed: how many pixels switched to ``alpha`` (0 when rejected).
        backend: the min-cut backend that solved it ("cpu" or "cuda").
        maxflow_seconds: the backend's own timing of the whole min-cut call
            (``CutResult.seconds``: its graph setup, the max-flow and the cut).
        solve_seconds: the backend's timing of the max-flow stage alone
            (``stats["seconds"]["solve"]``; equals ``maxflow_seconds`` when not reported).
        build_seconds: wall time spent building the network.
    """

    index: int
    cycle: int
    alpha: int
    flow: int
    constant: int
    energy_before: int
    energy_after: int
    accepted: bool
    changed: int
    backend: str
    maxflow_seconds: float
    solve_seconds: float
    build_seconds: float


@dataclass(frozen=True)
class ExpansionResult:
    """The outcome of :func:`alpha_expansion`.

    Attributes:
        labels: (H, W) int32 NumPy array, the final labelling (disparities in pixels).
        energy: its exact energy (int).
        initial_energy: the energy of the starting labelling.
        moves: every solved move, in order (:class:`Move`).
        cycles: how many cycles ran.
        converged: True when the last cycle found no improving move (a local minimum with
            respect to expansion moves), False when ``max_cycles`` stopped the run first.
        maxflow_seconds: total min-cut seconds per backend, e.g. ``{"cpu": 1.7}`` (the sum of
            the moves' ``maxflow_seconds``).
        solve_seconds: the same for the max-flow stage alone (moves' ``solve_seconds``).
        build_seconds: total time spent building networks.
        seconds: wall time of the whole run.
    """

    labels: np.ndarray
    energy: int
    initial_energy: int
    moves: list[Move] = field(repr=False)
    cycles: int
    converged: bool
    maxflow_seconds: dict[str, float]
    solve_seconds: dict[str, float]
    build_seconds: float
    seconds: float

    @property
    def num_moves(self) -> int:
        return len(self.moves)

    @property
    def accepted_moves(self) -> int:
        return sum(move.accepted for move in self.moves)


def _check_problem(costs, weights):
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
    # a pixel's terminal capacity is at most its data cost plus 2 w for each of 4 edges
    if int(costs.max()) + 8 * largest_weight > INT32_MAX:
        raise ValueError(f"costs up to {int(costs.max())} with weights up to {largest_weight} "
                         f"overflow int32 capacities; rescale them")


def _energy(data_term, weights, labels) -> int:
    """Exact energy given the per-pixel data cost of ``labels`` (``data_term``)."""
    horizontal, vertical = weights
    total = int(data_term.sum(dtype=np.int64))
    total += int((horizontal * (labels[:, 1:] != labels[:, :-1])).sum(dtype=np.int64))
    total += int((vertical * (labels[1:, :] != labels[:-1, :])).sum(dtype=np.int64))
    return total


def _gather(costs, labels):
    """``costs[labels[y, x], y, x]`` for every pixel."""
    xp = _array_module(costs)
    return xp.take_along_axis(costs, labels[xp.newaxis].astype(np.intp), axis=0)[0]


def labeling_energy(costs, weights, labels) -> int:
    """Exact energy of ``labels`` (H, W) under data ``costs`` (L, H, W) and Potts ``weights``.

    NumPy or CuPy arrays (all of one kind). Returns a Python int.
    """
    xp = _array_module(costs)
    labels = xp.asarray(labels)
    return _energy(_gather(costs, labels), weights, labels)


def _pairwise(weight, label_p, label_q, alpha):
    """For one family of edges p~q: A, (C - A), -C and B + C - A (see the module docstring)."""
    a = weight * (label_p != label_q)
    c = weight * (label_q != alpha)
    return a, c - a, -c, weight * (label_p != alpha) + c - a


def _move_network(costs_alpha, current, weights, labels, alpha):
    """:func:`expansion_network` given ``costs[alpha]`` and the data cost of the current
    labels (``current``), both (H, W). Values fit int32 (checked by :func:`_check_problem`)."""
    xp = _array_module(labels)
    horizontal, vertical = weights
    keep = current.astype(np.int32)           # copies: both are updated in place below
    switch = costs_alpha.astype(np.int32)
    a, unary_p, unary_q, right = _pairwise(horizontal, labels[:, :-1], labels[:, 1:], alpha)
    constant = int(a.sum(dtype=np.int64))
    switch[:, :-1] += unary_p
    switch[:, 1:] += unary_q
    a, unary_p, unary_q, down = _pairwise(vertical, labels[:-1, :], labels[1:, :], alpha)
    constant += int(a.sum(dtype=np.int64))
    switch[:-1, :] += unary_p
    switch[1:, :] += unary_q
    shared = xp.minimum(keep, switch)
    constant += int(shared.sum(dtype=np.int64))
    keep -= shared
    switch -= shared
    network = GridNetwork(source=switch, sink=keep, right=right, down=down,
                          left=xp.zeros(right.shape, dtype=np.int32),
                          up=xp.zeros(down.shape, dtype=np.int32))
    return network, constant


def expansion_network(costs, weights, labels, alpha: int) -> tuple[GridNetwork, int]:
    """The min-cut network of the expansion move for ``alpha`` from ``labels``.

    Source side = keep the current label, sink side = switch to ``alpha`` (see the module
    docstring for the construction). NumPy or CuPy arrays in; the network lives on the same
    side.

    Returns:
        ``(network, constant)`` with ``labeling_energy(after cut y) == constant + capacity of
        y`` for every cut ``y``; in particular the optimal move's energy is
        ``constant + max flow``.
    """
    xp = _array_module(costs)
    _check_problem(costs, PairWeights(*weights))
    weights = _as_weights(weights, xp)
    labels = xp.asarray(labels, dtype=np.int32)
    return _move_network(costs[alpha], _gather(costs, labels), weights, labels, alpha)


def _as_weights(weights, xp) -> PairWeights:
    """The two weight arrays as int32 arrays of module ``xp`` (after :func:`_check_problem`)."""
    return PairWeights(*(xp.asarray(w).astype(np.int32, copy=False) for w in weights))


MoveCallback = Callable[[Move, GridNetwork, CutResult], object]


def alpha_expansion(costs, smoothness_weights: PairWeights, *, device: str = "auto",
                    max_cycles: int = 20, initial_labels=None,
                    callback: MoveCallback | None = None) -> ExpansionResult:
    """Minimise the Potts energy over labels ``0 .. L-1`` by expansion moves.

    Args:
        costs: (L, H, W) non-negative integer data costs (e.g. from :func:`data_costs`).
        smoothness_weights: :class:`PairWeights` ``(horizontal (H, W-1), vertical (H-1, W))``
            of non-negative integers (e.g. from :func:`smoothness_weights`).
        device: min-cut backend for every move: "auto", "cpu" (PyMaxflow BK) or "cuda". With
            "cuda" the networks are also built on the GPU.
        max_cycles: stop after this many passes over the labels even if not converged.
        initial_labels: (H, W) starting labelling; default: the per-pixel cheapest label
            (winner-takes-all), which needs fewer cycles than a constant start.
        callback: called as ``callback(move, network, cut)`` after every solved move, with
            the :class:`Move` record, the move's :class:`GridNetwork` and its
            :class:`CutResult` (used to dump instances, report progress, ...).

    Moves run for labels 0, 1, ..., L-1 in each cycle. A label whose move failed is skipped
    until some other move changes the labelling (its problem would be the same). The run
    converges when no label's move lowers the energy.

    Returns:
        :class:`ExpansionResult`. Inputs are not modified.
    """
    started = time.perf_counter()
    backend = resolve_device(device)
    if isinstance(max_cycles, bool) or not isinstance(max_cycles, (int, np.integer)) \
            or max_cycles < 1:
        raise ValueError(f"max_cycles must be a positive int, got {max_cycles!r}")
    costs = np.asarray(costs) if _array_module(costs) is np else costs
    weights = PairWeights(*smoothness_weights)
    _check_problem(costs, weights)
    xp = np
    if backend == "cuda":
        import cupy as xp
    costs = xp.asarray(costs)
    weights = _as_weights(weights, xp)
    num_labels = costs.shape[0]
    if initial_labels is None:
        labels = xp.argmin(costs, axis=0).astype(np.int32)
    else:
        labels = xp.array(initial_labels, dtype=np.int32)  # a copy: never modify the input
        if labels.shape != costs.shape[1:]:
            raise ValueError(f"initial_labels must have shape {costs.shape[1:]}, got "
                             f"{labels.shape}")
        if labels.size and (int(labels.min()) < 0 or int(labels.max()) >= num_labels):
            raise ValueError(f"initial_labels must lie in 0..{num_labels - 1}")

    current = _gather(costs, labels)  # data cost of the current labels, kept up to date
    energy = initial_energy = _energy(current, weights, labels)
    moves: list[Move] = []
    maxflow_seconds: dict[str, float] = {}
    solve_seconds: dict[str, float] = {}
    build_total = 0.0
    version = 0                      # bumps whenever a move is accepted
    failed_at: dict[int, int] = {}   # label -> version at which its move last failed
    converged = False
    cycle = 0
    while cycle < max_cycles and not converged:
        cycle += 1
        for alpha in range(num_labels):
            if failed_at.get(alpha) == version:
                continue
            built = time.perf_counter()
            network, constant = _move_network(costs[alpha], current, weights, labels, alpha)
            build_seconds = time.perf_counter() - built
            build_total += build_seconds
            cut = min_cut(network, device=backend)
            solve = float(cut.stats.get("seconds", {}).get("solve", cut.seconds))
            maxflow_seconds[cut.backend] = maxflow_seconds.get(cut.backend, 0.0) + cut.seconds
            solve_seconds[cut.backend] = solve_seconds.get(cut.backend, 0.0) + solve
            switch = xp.asarray(~cut.source_side)
            proposal = xp.where(switch, np.int32(alpha), labels)
            proposal_data = xp.where(switch, costs[alpha], current)
            proposed_energy = _energy(proposal_data, weights, proposal)
            if proposed_energy != constant + cut.flow:
                raise RuntimeError(
                    f"move {len(moves) + 1} (alpha={alpha}): the {cut.backend} backend "
                    f"returned flow {cut.flow}, but its cut gives energy {proposed_energy} != "
                    f"constant {constant} + flow; the min-cut result is inconsistent")
            accepted = proposed_energy < energy
            changed = int((proposal != labels).sum()) if accepted else 0
            move = Move(len(moves) + 1, cycle, alpha, cut.flow, constant, energy,
                        proposed_energy, accepted, changed, cut.backend, cut.seconds, solve,
                        build_seconds)
            moves.append(move)
            if accepted:
                labels, current, energy = proposal, proposal_data, proposed_energy
                version += 1
            else:
                failed_at[alpha] = version
            log.debug("move %d cycle %d alpha %d: flow %d energy %d -> %d %s", move.index,
                      cycle, alpha, cut.flow, move.energy_before, proposed_energy,
                      "accepted" if accepted else "rejected")
            if callback is not None:
                callback(move, network, cut)
        converged = all(failed_at.get(label) == version for label in range(num_labels))
    labels = labels.get() if xp is not np else labels
    return ExpansionResult(labels, energy, initial_energy, moves, cycle, converged,
                           maxflow_seconds, solve_seconds, build_total,
                           time.perf_counter() - started)


def disparity(left, right, *, max_disparity: int, truncation: int = 20,
              birchfield_tomasi: bool = True, smoothness: int = 6, edge_threshold: float = 8.0,
              flat_factor: int = 2, channel_axis=None, device: str = "auto",
              max_cycles: int = 20, callback: MoveCallback | None = None) -> ExpansionResult:
    """Disparity map of the left image of a rectified pair, by alpha-expansion.

    Combines :func:`data_costs` (``truncation``, ``birchfield_tomasi``),
    :func:`smoothness_weights` of the left image (``smoothness`` is the Potts weight across
    intensity edges, ``flat_factor`` times it inside flat regions, ``edge_threshold`` in grey
    levels) and :func:`alpha_expansion` (``device``, ``max_cycles``, ``callback``).

    Returns:
        :class:`ExpansionResult`; ``labels`` is the disparity in pixels (left ``(y, x)``
        matches right ``(y, x - d)``), 0 .. max_disparity.
    """
    costs = data_costs(left, right, max_disparity=max_disparity, truncation=truncation,
                       birchfield_tomasi=birchfield_tomasi, channel_axis=channel_axis)
    weights = smoothness_weights(left, weight=smoothness, edge_threshold=edge_threshold,
                                 flat_factor=flat_factor, channel_axis=channel_axis)
    return alpha_expansion(costs, weights, device=device, max_cycles=max_cycles,
                           callback=callback)


def bad_pixel_rate(estimate, ground_truth, *, threshold: float = 1.0, valid=None) -> float:
    """Fraction of valid pixels where ``|estimate - ground_truth| > threshold``.

    Pixels are valid where ``ground_truth`` is finite (and ``valid`` is True, if given).
    """
    estimate = np.asarray(estimate, dtype=np.float64)
    ground_truth = np.asarray(ground_truth, dtype=np.float64)
    if estimate.shape != ground_truth.shape:
        raise ValueError(f"estimate {estimate.shape} and ground truth {ground_truth.shape} "
                         "differ in shape")
    mask = np.isfinite(ground_truth)
    if valid is not None:
        mask &= np.asarray(valid, dtype=bool)
    if not mask.any():
        raise ValueError("no valid ground-truth pixel")
    return float(np.mean(np.abs(estimate[mask] - ground_truth[mask]) > threshold))

