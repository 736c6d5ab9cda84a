"""Multi-label energies on the 4-connected grid minimised by alpha-expansion (Boykov, Veksler
and Zabih) with exact graph cuts.

The energy of a labelling ``f`` (one label in ``0 .. L-1`` per pixel) is

    E(f) = sum_p D_p(f_p) + sum_{p~q} w_pq min(|f_p - f_q|, cap)

with integer data costs ``D`` (an ``(L, H, W)`` array), integer edge weights ``w`` on the
4-connected grid (:class:`PairWeights`) and ``cap = linear_truncation``: 1 gives the Potts model
(``w_pq [f_p != f_q]``), a larger ``cap`` the truncated linear model, which makes small label
steps (slanted surfaces in stereo) cheaper than jumps. Both are metrics, so every expansion move
is solved exactly by one minimum cut. Everything is an integer, so energies are exact (Python
ints, summed in int64).

An *expansion move* for label ``alpha`` lets every pixel either keep its label or switch to
``alpha``. :func:`alpha_expansion` runs moves for all labels in cycles until no move lowers the
energy (or ``max_cycles`` passes), accepting a move only when the exact energy decreases.

How a move becomes a :class:`~graphcut.solver.GridNetwork` (no auxiliary nodes)
-----------------------------------------------------------------------------------
Write ``y_p = 1`` when pixel ``p`` switches to ``alpha`` (it ends on the sink side of the cut)
and ``y_p = 0`` when it keeps its label (source side). A pixel pays its source capacity when it
is on the sink side and its sink capacity when it is on the source side. The unary term is
``D_p(f_p)`` for ``y_p = 0`` and ``D_p(alpha)`` for ``y_p = 1``. For an edge ``p~q`` (q to the
right of or below p) with ``V(a, b) = w_pq min(|a - b|, cap)`` the pairwise term has the values

    A = E(0,0) = V(f_p, f_q)   B = E(0,1) = V(f_p, alpha)
    C = E(1,0) = V(alpha, f_q) D = E(1,1) = 0

and ``V`` is a metric (triangle inequality), so ``A + D <= B + C`` (submodular). Kolmogorov and
Zabih's identity

    E(y_p, y_q) = A + (C - A) y_p + (D - C) y_q + (B + C - A - D) (1 - y_p) y_q

splits it into a constant, two unary terms (folded into the t-links) and one directed arc
``p -> q`` of capacity ``B + C - A - D >= 0``, cut exactly when ``y_p = 0, y_q = 1``. So only the
``right`` and ``down`` arcs carry capacity; ``left`` and ``up`` are zero. Finally each pixel's
two terminal capacities are reduced by their minimum, which moves into the constant, so at most
one t-link per pixel is non-zero. For every cut ``y``:

    E(labels after y) == constant + capacity(cut y),

hence the energy after the optimal move is ``constant + max flow`` exactly; the loop checks this
identity on every move. The cut's source side (the largest minimum-cut source set, see
:class:`~graphcut.solver.CutResult`) is the same on every backend, so the CPU and the GPU make
the same moves and end with the same labels.

On the GPU (``device="cuda"``) the whole loop stays there: costs, labels and weights live on the
device, each move's network, the proposal and its energy are computed by the kernels of
``expansion_kernels.cu`` (term by term the NumPy formulas of this module), and the only values
read back per move are the flow, three sums (constant, proposed energy, changed pixels) and
the few maxima and sums of the balancing. Both sides cut a move on its *balanced* network
(:func:`._balance.balanced`: the same minimum cuts, the flow less a known offset; less work
where a region of one label would otherwise hold terminal capacities on every pixel: BK's
max-flow about halves, push-relabel's moves are 10-20 % faster).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from graphcut.solver import CutResult, GridNetwork, resolve_device

from ._device_cuts import device_move_cut
from ._host_cuts import HostMoveCuts
from ._moves import (PairWeights, _array_module, _as_weights, _check_cap, _check_problem,
                     _energy, _energy_change, _gather, _move_network)

log = logging.getLogger("graphcut.labeling")

# A host move that changes at most 1 / SPARSE_SHARE of the pixels has its energy updated from
# theirs rather than summed over the image.
SPARSE_SHARE = 16


@dataclass(frozen=True)
class Move:
    """One solved expansion move.

    Attributes
    ----------
    index
        1-based position in the sequence of solved moves.
    cycle
        1-based cycle (pass over the labels) the move belongs to.
    alpha
        the label being expanded.
    flow
        the maximum flow of the move's network (exact int).
    constant
        the energy offset of the move: ``energy after = constant + flow``.
    energy_before, energy_after
        the exact energy of the labelling before the move and of
        the labelling the minimum cut proposes.
    accepted
        whether the proposal was kept (``energy_after < energy_before``).
    changed
        how many pixels switched to ``alpha`` (0 when rejected).
    backend
        the min-cut backend that solved it ("cpu" or "cuda").
    maxflow_seconds
        the backend's own timing of the whole min-cut call
        (``CutResult.seconds``: its graph setup, the max-flow and the cut).
    solve_seconds
        the backend's timing of the max-flow stage alone
        (``stats["seconds"]["solve"]``; equals ``maxflow_seconds`` when not reported).
    build_seconds
        wall time spent building the network (on the GPU: enqueueing it, the
        kernels run asynchronously and are waited for by the min-cut call).
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

    Attributes
    ----------
    labels
        (H, W) int32 NumPy array, the final labelling.
    energy
        its exact energy (int).
    initial_energy
        the energy of the starting labelling.
    moves
        every solved move, in order (:class:`Move`).
    cycles
        how many cycles ran.
    converged
        True when the last cycle found no improving move (a local minimum with
        respect to expansion moves), False when ``max_cycles`` stopped the run first.
    maxflow_seconds
        total min-cut seconds per backend, e.g. ``{"cpu": 1.7}`` (the sum of
        the moves' ``maxflow_seconds``).
    solve_seconds
        the same for the max-flow stage alone (moves' ``solve_seconds``).
    build_seconds
        total time spent building networks.
    seconds
        wall time of the whole run.
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


MoveCallback = Callable[[Move, GridNetwork, CutResult], object]


class _HostMoves:
    """The expansion loop's per-move arithmetic with NumPy."""

    def __init__(self, costs, weights, labels, cap):
        self.costs, self.weights, self.cap = costs, weights, cap
        self.labels = np.ascontiguousarray(labels)  # changed in place by sparse moves
        self.current = np.ascontiguousarray(_gather(costs, labels))  # their data costs

    def energy(self) -> int:
        self.now = _energy(self.current, self.weights, self.labels, self.cap)
        return self.now

    def network(self, alpha):
        return _move_network(self.costs[alpha], self.current, self.weights, self.labels, alpha,
                             self.cap)

    def propose(self, alpha, source_side, constant):
        """The cut's labelling; returns (constant, its exact energy, pixels changed). When few
        pixels change (later cycles' moves), the energy is the current one plus the change of
        their terms (:func:`._moves._energy_change`), else that of the whole new labelling."""
        switch = ~np.asarray(source_side)
        switch &= self.labels != alpha  # the pixels that change
        changed = int(np.count_nonzero(switch))
        self.sparse = None
        if changed * SPARSE_SHARE <= switch.size:
            indices = np.flatnonzero(switch)
            self.sparse = (alpha, indices)
            self.proposed = self.now + _energy_change(self.costs[alpha], self.current,
                                                      self.weights, self.labels, switch,
                                                      indices, alpha, self.cap)
            return constant, self.proposed, changed
        self.proposal = np.where(switch, np.int32(alpha), self.labels)
        self.proposal_cost = np.where(switch, self.costs[alpha], self.current)
        self.proposed = _energy(self.proposal_cost, self.weights, self.proposal, self.cap)
        return constant, self.proposed, changed

    def accept(self):
        if self.sparse is not None:  # the state's own arrays, changed in place
            alpha, indices = self.sparse
            self.labels.reshape(-1)[indices] = alpha
            self.current.reshape(-1)[indices] = self.costs[alpha].reshape(-1)[indices]
        else:
            self.labels, self.current = self.proposal, self.proposal_cost
        self.now = self.proposed

    def final_labels(self):
        return self.labels


class _DeviceMoves:
    """The same arithmetic on the GPU with the kernels of ``expansion_kernels.cu``."""

    def __init__(self, costs, weights, labels, cap):
        import cupy

        from ._cuda import kernel, launch_config
        self.cupy = cupy
        self.kernel, self.launch = kernel, launch_config
        self.costs, self.weights, self.cap = costs, weights, cap
        _, h, w = costs.shape
        self.shape = (h, w)
        self.labels = labels
        self.current = _gather(costs, labels).astype(np.int32)
        self.left, self.up = cupy.zeros((h, w - 1), np.int32), cupy.zeros((h - 1, w), np.int32)
        self.proposal = cupy.empty((h, w), dtype=np.int32)
        self.proposal_cost = cupy.empty((h, w), dtype=np.int32)
        self.offset = cupy.empty((h, w), dtype=np.int64)
        self.terms = cupy.empty((h, w), dtype=np.int64)
        self.changed = cupy.empty((h, w), dtype=np.int64)
        self.sums = cupy.empty(3, dtype=np.int64)
        self.args = (np.int32(cap), np.int32(h), np.int32(w))

    def energy(self) -> int:
        h, w = self.shape
        self.kernel("energy_terms")(*self.launch(h * w), (
            self.labels, self.current, *self.weights, *self.args, self.terms))
        return int(self.terms.sum())

    def network(self, alpha):
        """A new network per move (CuPy's memory pool makes that cheap), so that networks
        handed to callbacks are never overwritten by later moves."""
        cupy = self.cupy
        h, w = self.shape
        source, sink = cupy.empty((h, w), np.int32), cupy.empty((h, w), np.int32)
        right, down = cupy.empty((h, w - 1), np.int32), cupy.empty((h - 1, w), np.int32)
        self.kernel("expansion_network")(*self.launch(h * w), (
            self.costs[alpha], self.current, self.labels, *self.weights, np.int32(alpha),
            *self.args, source, sink, right, down, self.offset))
        self.sums[0] = self.offset.sum()
        # valid by construction, as the host's (_moves._move_network): no checking reductions
        network = GridNetwork.from_checked(source, sink, (down, right), (self.up, self.left))
        return network, None  # the constant is read back with the proposal's sums

    def propose(self, alpha, source_side, constant):
        h, w = self.shape
        self.kernel("apply_cut")(*self.launch(h * w), (
            source_side, self.labels, self.current, self.costs[alpha], *self.weights,
            np.int32(alpha), *self.args, self.proposal, self.proposal_cost, self.terms,
            self.changed))
        self.sums[1] = self.terms.sum()
        self.sums[2] = self.changed.sum()
        constant, energy, changed = (int(v) for v in self.sums.get())
        return constant, energy, changed

    def accept(self):
        self.labels, self.proposal = self.proposal, self.labels
        self.current, self.proposal_cost = self.proposal_cost, self.current

    def final_labels(self):
        return self.labels.get()


def _initial_labels(costs, initial_labels, xp):
    num_labels = costs.shape[0]
    if initial_labels is None:  # the first cheapest label, as numpy.argmin
        if xp is np:
            return np.argmin(costs, axis=0).astype(np.int32)
        from ._cuda import cheapest_labels
        return cheapest_labels(costs)[0]
    labels = xp.array(initial_labels, dtype=np.int32)  # a copy: never modify the input
    if labels.shape != costs.shape[1:]:
        raise ValueError(f"initial_labels must have shape {costs.shape[1:]}, got {labels.shape}")
    if labels.size and (int(labels.min()) < 0 or int(labels.max()) >= num_labels):
        raise ValueError(f"initial_labels must lie in 0..{num_labels - 1}")
    return labels


def alpha_expansion(costs, smoothness_weights: PairWeights, *, device: str = "auto",
                    max_cycles: int = 20, initial_labels=None,
                    callback: MoveCallback | None = None,
                    linear_truncation: int = 1, cuts=None) -> ExpansionResult:
    """Minimise ``sum D_p(f_p) + sum w_pq min(|f_p - f_q|, linear_truncation)`` over labels
    ``0 .. L-1`` by expansion moves.

    Parameters
    ----------
    costs
        (L, H, W) non-negative integer data costs, NumPy or CuPy.
    smoothness_weights
        :class:`PairWeights` ``(horizontal (H, W-1), vertical (H-1, W))``
        of non-negative integers.
    device
        min-cut backend for every move: "auto", "cpu" (PyMaxflow BK) or "cuda". With
        "cuda" the whole loop runs on the GPU (networks, proposals, energies).
    max_cycles
        stop after this many passes over the labels even if not converged.
    initial_labels
        (H, W) starting labelling; default: the per-pixel cheapest label
        (winner-takes-all, the first one on ties), which needs fewer cycles than a constant
        start.
    callback
        called as ``callback(move, network, cut)`` after every solved move, with
        the :class:`Move` record, the move's :class:`GridNetwork` and its
        :class:`CutResult` (used to dump instances, report progress, ...).
    linear_truncation
        ``cap`` of the pairwise cost ``w min(|a - b|, cap)``; 1 (the
        default) is the Potts model.
    cuts
        with ``device="cpu"``: the :class:`HostMoveCuts` that cuts the moves; a caller
        running many expansions on one grid keeps one, so that its PyMaxflow graph is
        allocated once (:class:`graphcut.Segmenter` does). None: a new one for this run.

    Returns
    -------
    ExpansionResult
        :class:`ExpansionResult` (labels on the host). Inputs are not modified.

    Notes
    -----
    Moves run for labels 0, 1, ..., L-1 in each cycle. A label whose move failed is skipped
    until some other move changes the labelling (its problem would be the same), and so is a
    label whose move was just accepted (its next move, from the labelling it made, is among
    the moves it chose from: it cannot lower the energy). The run converges when no label's
    move lowers the energy.

    Examples
    --------
    Three pixels in a row, two labels; a smoothness weight of 5 between neighbours pulls the
    middle pixel, whose data prefers neither strongly, to its cheaper side:

    >>> import numpy as np
    >>> from graphcut.labeling import PairWeights, alpha_expansion
    >>> costs = np.array([[[0, 4, 9]],                        # label 0
    ...                   [[9, 5, 0]]], np.int32)             # label 1, shape (L, H, W)
    >>> weights = PairWeights(horizontal=np.array([[5, 5]]), vertical=np.zeros((0, 3), int))
    >>> result = alpha_expansion(costs, weights, device="cpu")
    >>> result.labels, result.energy                          # 0 + 4 + 0 data, 5 smoothness
    (array([[0, 0, 1]]...), 9)
    """
    started = time.perf_counter()
    backend = resolve_device(device)
    if isinstance(max_cycles, bool) or not isinstance(max_cycles, (int, np.integer)) \
            or max_cycles < 1:
        raise ValueError(f"max_cycles must be a positive int, got {max_cycles!r}")
    cap = _check_cap(linear_truncation)
    xp = np
    if backend == "cuda":
        import cupy as xp
    elif _array_module(costs) is not np:  # CuPy arrays for the CPU backend
        costs = costs.get()
    weights = PairWeights(*(w.get() if xp is np and _array_module(w) is not np else w
                            for w in smoothness_weights))
    if _array_module(costs) is np:
        costs = np.asarray(costs)
    _check_problem(costs, weights, cap)
    costs = xp.ascontiguousarray(xp.asarray(costs), dtype=np.int32)
    weights = _as_weights(weights, xp)
    labels = _initial_labels(costs, initial_labels, xp)
    state = (_DeviceMoves if xp is not np else _HostMoves)(costs, weights, labels, cap)
    num_labels = costs.shape[0]

    energy = initial_energy = state.energy()
    solve_move = (cuts or HostMoveCuts()) if backend == "cpu" else device_move_cut
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
            network, constant = state.network(alpha)
            build_seconds = time.perf_counter() - built
            build_total += build_seconds
            cut = solve_move(network, alpha)
            solve = float(cut.stats.get("seconds", {}).get("solve", cut.seconds))
            maxflow_seconds[cut.backend] = maxflow_seconds.get(cut.backend, 0.0) + cut.seconds
            solve_seconds[cut.backend] = solve_seconds.get(cut.backend, 0.0) + solve
            constant, proposed_energy, changed = state.propose(alpha, cut.source_side,
                                                               constant)
            if proposed_energy != constant + cut.flow:
                raise RuntimeError(
                    f"move {len(moves) + 1} (alpha={alpha}): the {cut.backend} backend "
                    f"returned flow {cut.flow}, but its cut gives energy {proposed_energy} != "
                    f"constant {constant} + flow; the min-cut result is inconsistent")
            accepted = proposed_energy < energy
            move = Move(len(moves) + 1, cycle, alpha, cut.flow, constant, energy,
                        proposed_energy, accepted, changed if accepted else 0, cut.backend,
                        cut.seconds, solve, build_seconds)
            moves.append(move)
            if accepted:
                state.accept()
                energy = proposed_energy
                version += 1
                # alpha's move from the new labelling cannot lower the energy: its moves are a
                # subset of the ones just solved (a pixel is alpha already or keeps the label
                # it could have kept), among which the new labelling is a minimum
                failed_at[alpha] = version
            else:
                failed_at[alpha] = version
            log.debug("move %d cycle %d alpha %d: flow %d energy %d -> %d %s", move.index,
                      cycle, alpha, cut.flow, move.energy_before, proposed_energy,
                      "accepted" if accepted else "rejected")
            if callback is not None:
                callback(move, network, cut)
        converged = all(failed_at.get(label) == version for label in range(num_labels))
    return ExpansionResult(state.final_labels(), energy, initial_energy, moves, cycle,
                           converged, maxflow_seconds, solve_seconds, build_total,
                           time.perf_counter() - started)
