"""The CPU backend: PyMaxflow's Boykov-Kolmogorov solver."""

from __future__ import annotations

import time

import maxflow
import numpy as np

from .networks import CSRNetwork, GridNetwork
from .result import CutResult


def grid_min_cut(network: GridNetwork) -> CutResult:
    """Solve a GridNetwork with BK; the source side is the set that cannot reach t."""
    network = network.to_numpy()
    started = time.perf_counter()
    h, w = network.shape
    graph = maxflow.Graph[int](h * w, 2 * h * w)
    ids = graph.add_grid_nodes((h, w))
    if w > 1:
        graph.add_edges(ids[:, :-1].ravel(), ids[:, 1:].ravel(),
                        network.right.ravel(), network.left.ravel())
    if h > 1:
        graph.add_edges(ids[:-1, :].ravel(), ids[1:, :].ravel(),
                        network.down.ravel(), network.up.ravel())
    graph.add_grid_tedges(ids, network.source, network.sink)
    built = time.perf_counter()
    flow = int(graph.maxflow())
    solved = time.perf_counter()
    # PyMaxflow marks the sink side True; nodes it leaves free count as source side, which is
    # exactly "cannot reach t in the residual network".
    source_side = ~graph.get_grid_segments(ids)
    done = time.perf_counter()
    return CutResult(flow, source_side, "cpu",
                     _stats(started, built, solved, done))


def csr_min_cut(network: CSRNetwork) -> CutResult:
    """Solve a CSRNetwork with BK. Arcs at s and t become terminal edges; s -> t arcs add flow."""
    started = time.perf_counter()
    n, s, t = network.num_vertices, network.source, network.sink
    tails, heads, caps = network.arcs()
    caps = caps.astype(np.int64)
    direct = int(caps[(tails == s) & (heads == t)].sum())
    # Arcs into s or out of t never carry flow in a maximum flow; drop them with s -> t arcs.
    inner = (tails != s) & (tails != t) & (heads != s) & (heads != t)
    from_s = (tails == s) & (heads != t)
    to_t = (heads == t) & (tails != s)
    graph = maxflow.Graph[int](n, int(inner.sum()))
    graph.add_nodes(n)
    if inner.any():
        graph.add_edges(tails[inner], heads[inner], caps[inner], np.zeros(int(inner.sum()),
                                                                           dtype=np.int64))
    terminal_source = np.zeros(n, dtype=np.int64)
    terminal_sink = np.zeros(n, dtype=np.int64)
    np.add.at(terminal_source, heads[from_s], caps[from_s])
    np.add.at(terminal_sink, tails[to_t], caps[to_t])
    graph.add_grid_tedges(np.arange(n), terminal_source, terminal_sink)
    built = time.perf_counter()
    flow = int(graph.maxflow()) + direct
    solved = time.perf_counter()
    source_side = ~graph.get_grid_segments(np.arange(n))
    source_side[s] = True
    source_side[t] = False
    done = time.perf_counter()
    return CutResult(flow, source_side, "cpu", _stats(started, built, solved, done))


def _stats(started: float, built: float, solved: float, done: float) -> dict:
    return {"seconds": {"build": built - started, "solve": solved - built,
                        "cut": done - solved, "total": done - started},
            "device_name": "CPU (PyMaxflow, Boykov-Kolmogorov)"}
