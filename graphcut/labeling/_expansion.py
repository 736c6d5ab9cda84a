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
from ._move_states import DeviceMoves, HostMoves
from ._moves import PairWeights, _array_module, _as_weights, _check_cap, _check_problem

log = logging.getLogger("graphcut.labeling")

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
                    linear_truncation: int = 1, cuts=None,
                    device_labels: bool = False) -> ExpansionResult:
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
    device_labels
        with "cuda": the result's labels stay on the GPU (a CuPy array; no copy to the host,
        for a caller that works on with them there).

    Returns
    -------
    ExpansionResult
        :class:`ExpansionResult` (labels on the host unless ``device_labels``). Inputs are
        not modified.

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
    state = (DeviceMoves if xp is not np else HostMoves)(costs, weights, labels, cap)
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
    labels = state.labels if device_labels and xp is not np else state.final_labels()
    return ExpansionResult(labels, energy, initial_energy, moves, cycle,
                           converged, maxflow_seconds, solve_seconds, build_total,
                           time.perf_counter() - started)
