"""Independent oracles and random networks for the solver tests.

Nothing here uses the project's solvers: maximum flows come from
``scipy.sparse.csgraph.maximum_flow`` (Dinic) and the minimum cut from a reverse breadth-first
search over the residual network of scipy's flow, so that PyMaxflow and the CUDA core can both be
checked against them.

int32 safety: scipy stores capacities and flows as int32 and forms residuals ``cap - flow``
internally. A single arc's flow never exceeds its capacity, but for an antiparallel pair u <-> v
the residual of v -> u can reach ``cap(v, u) + flow(u, v)``, which overflows when the two
capacities sum past 2**31 - 1. Such pairs are split before calling scipy: the arc v -> u becomes
v -> w -> u through a new vertex w (same capacity on both halves), which changes neither the
maximum flow nor which original vertices can reach t. The flow value scipy returns is an int64,
so flows above 2**31 are exact.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

from graphcut.solver import CSRNetwork, GridNetwork

INT32_MAX = int(np.iinfo(np.int32).max)

GRID_KINDS = ("random", "sparse", "zero", "saturated")


def _as_csr(network) -> CSRNetwork:
    if isinstance(network, GridNetwork):
        return network.to_csr()
    if isinstance(network, CSRNetwork):
        return network
    raise TypeError(f"expected a GridNetwork or CSRNetwork, got {type(network).__name__}")


def _scipy_solve(network) -> tuple[CSRNetwork, int, np.ndarray]:
    """(csr, flow value, can_reach_t over the csr's vertices) from scipy's maximum flow."""
    csr = _as_csr(network)
    n, s, t = csr.num_vertices, csr.source, csr.sink
    tails, heads, caps = (a.astype(np.int64) for a in csr.arcs())
    # Split an antiparallel arc v -> u (v > u) when the pair's capacities could overflow int32.
    key = tails * n + heads
    reverse_key = heads * n + tails
    if key.size:
        pos = np.minimum(np.searchsorted(key, reverse_key), key.size - 1)
        has_reverse = key[pos] == reverse_key  # key is sorted: arcs are sorted by (tail, head)
        reverse_cap = np.where(has_reverse, caps[pos], 0)
    else:
        has_reverse, reverse_cap = np.zeros(0, dtype=bool), caps
    split = has_reverse & (tails > heads) & (caps + reverse_cap > INT32_MAX)
    k = int(split.sum())
    mids = np.arange(n, n + k, dtype=np.int64)
    all_tails = np.concatenate([tails[~split], tails[split], mids])
    all_heads = np.concatenate([heads[~split], mids, heads[split]])
    all_caps = np.concatenate([caps[~split], caps[split], caps[split]])
    size = n + k
    graph = sp.csr_array((all_caps.astype(np.int32), (all_tails, all_heads)), shape=(size, size))
    result = maximum_flow(graph, s, t, method="dinic")
    flow = int(result.flow_value)

    # Residual network: cap - flow on every stored pair (reverse pairs have cap 0), in int64.
    flows = sp.coo_array(result.flow)
    capacity = sp.csr_array((all_caps, (all_tails, all_heads)), shape=(size, size))
    residual = sp.coo_array(capacity - flows.astype(np.int64).tocsr())
    positive = residual.data > 0
    # Transposed residual graph: an edge v -> u for every residual arc u -> v.
    reverse = sp.csr_array((np.ones(int(positive.sum()), dtype=np.int8),
                            (residual.col[positive], residual.row[positive])), shape=(size, size))
    reached = breadth_first_order(reverse, t, directed=True, return_predecessors=False)
    can_reach_t = np.zeros(size, dtype=bool)
    can_reach_t[reached] = True
    return csr, flow, can_reach_t[:n]


def scipy_min_cut(network) -> tuple[int, np.ndarray]:
    """``(scipy_max_flow(network), residual_source_side(network))`` from a single solve."""
    csr, flow, can_reach_t = _scipy_solve(network)
    return flow, _shape_side(network, ~can_reach_t)


def _shape_side(network, side: np.ndarray) -> np.ndarray:
    if isinstance(network, GridNetwork):
        return side[: int(np.prod(network.shape))].reshape(network.shape)
    return side


def scipy_max_flow(network) -> int:
    """Maximum flow value of a GridNetwork or CSRNetwork, from scipy (exact Python int)."""
    return _scipy_solve(network)[1]


def residual_source_side(network) -> np.ndarray:
    """The vertices that cannot reach t in the residual network of scipy's maximum flow.

    This set does not depend on which maximum flow is taken: it is the largest minimum-cut source
    set. Returns a bool array shaped (H, W) for a GridNetwork (pixels only) and (n,) for a
    CSRNetwork (s is True, t is False).
    """
    return _shape_side(network, ~_scipy_solve(network)[2])


def _capacities(rng, shape, kind: str, max_capacity: int) -> np.ndarray:
    if kind == "random":
        return rng.integers(0, max_capacity + 1, size=shape)
    if kind == "sparse":
        values = rng.integers(1, max_capacity + 1, size=shape)
        return np.where(rng.random(shape) < 0.25, values, 0)
    if kind == "zero":
        return np.zeros(shape, dtype=np.int64)
    if kind == "saturated":
        return np.full(shape, max_capacity, dtype=np.int64)
    raise ValueError(f"unknown capacity kind {kind!r}; expected one of {', '.join(GRID_KINDS)}")


def random_grid_network(rng: np.random.Generator, shape, *, kind: str = "random",
                        terminal_kind: str | None = None, max_capacity: int = 100,
                        terminal_max: int | None = None, symmetric: bool = False) -> GridNetwork:
    """A random GridNetwork of ``shape``: (H, W), or (D, H, W) for a 6-connected volume.

    Args:
        kind: how n-link capacities are drawn: "random" (uniform 0..max_capacity), "sparse"
            (75 % zero), "zero" or "saturated" (all max_capacity).
        terminal_kind: the same for the t-links (defaults to ``kind``, except that "saturated"
            n-links get random t-links so the flow is not trivial).
        max_capacity: the largest n-link capacity; ``terminal_max`` the largest t-link capacity
            (defaults to ``max_capacity``).
        symmetric: when True, left/up equal right/down; otherwise they are drawn independently.
    """
    shape = tuple(shape)
    terminal_max = max_capacity if terminal_max is None else terminal_max
    if terminal_kind is None:
        terminal_kind = "random" if kind == "saturated" else kind
    source = _capacities(rng, shape, terminal_kind, terminal_max)
    sink = _capacities(rng, shape, terminal_kind, terminal_max)
    if len(shape) == 3:
        link_shapes = [shape[:a] + (shape[a] - 1,) + shape[a + 1:] for a in range(3)]
        forward = [_capacities(rng, s, kind, max_capacity) for s in link_shapes]
        backward = None if symmetric else [_capacities(rng, s, kind, max_capacity)
                                           for s in link_shapes]
        return GridNetwork(source, sink, forward=forward, backward=backward)
    h, w = shape
    right = _capacities(rng, (h, w - 1), kind, max_capacity)
    down = _capacities(rng, (h - 1, w), kind, max_capacity)
    if symmetric:
        return GridNetwork(source, sink, right, down)
    left = _capacities(rng, (h, w - 1), kind, max_capacity)
    up = _capacities(rng, (h - 1, w), kind, max_capacity)
    return GridNetwork(source, sink, right, down, left, up)


def random_csr_network(rng: np.random.Generator, n: int, m: int, *, max_capacity: int = 100,
                       min_capacity: int = 0, source: int | None = None, sink: int | None = None,
                       source_degree: int = 0, sink_degree: int = 0) -> CSRNetwork:
    """A random directed network with ``n`` vertices and ``m`` random arcs (before merging).

    Arcs are uniform over ordered pairs, so parallel arcs, antiparallel pairs, self-loops (dropped
    by CSRNetwork), arcs into s and out of t all occur. ``source``/``sink`` default to 0 and
    n - 1. ``source_degree``/``sink_degree`` add that many extra arcs s -> random vertex and
    random vertex -> t so that flow is likely. Capacities are uniform in
    ``min_capacity..max_capacity`` (at most 2**31 - 1; parallel arcs must not sum past it, so keep
    ``max_capacity`` small when ``m`` is large relative to n*n).
    """
    s = 0 if source is None else source
    t = n - 1 if sink is None else sink
    tails = [rng.integers(0, n, size=m), np.full(source_degree, s),
             rng.integers(0, n, size=sink_degree)]
    heads = [rng.integers(0, n, size=m), rng.integers(0, n, size=source_degree),
             np.full(sink_degree, t)]
    total = m + source_degree + sink_degree
    caps = rng.integers(min_capacity, max_capacity + 1, size=total)
    return CSRNetwork.from_arcs(n, s, t, np.concatenate(tails), np.concatenate(heads), caps)


def random_labeling_problem(rng: np.random.Generator, shape, *, labels: int = 4,
                            max_cost: int = 59, max_weight: int = 24):
    """A random multi-label problem on an (H, W) grid: int32 data costs (labels, H, W) in
    0..max_cost and the pairwise weights ``(horizontal (H, W-1), vertical (H-1, W))`` in
    0..max_weight (int64), as ``graphcut.labeling.alpha_expansion`` takes them."""
    costs = rng.integers(0, max_cost + 1, (labels, *shape)).astype(np.int32)
    weights = (rng.integers(0, max_weight + 1, (shape[0], shape[1] - 1)),
               rng.integers(0, max_weight + 1, (shape[0] - 1, shape[1])))
    return costs, weights
