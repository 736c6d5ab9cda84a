"""The CPU backend: PyMaxflow's Boykov-Kolmogorov solver.

PyMaxflow's allocator ends the process with ``exit(1)`` and no message when it runs out of
memory, so both solvers check the memory their graph needs first (:mod:`.memory`) and raise
:class:`~.memory.HostMemoryError` instead.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import time

import maxflow
import numpy as np

from .memory import GRID_BLOCK_PIXELS, csr_graph_bytes, grid_graph_bytes, require_host_memory
from .networks import CSRNetwork, GridNetwork
from .result import CutResult


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    """glibc's ``malloc_trim``, or None elsewhere."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None).malloc_trim
    except (OSError, AttributeError):
        return None


def release_free_heap() -> None:
    """Give the heap memory freed by earlier steps back to the system (glibc only).

    Building a segmentation network frees several image-sized temporaries; glibc keeps them in
    the heap, where PyMaxflow's graph (one large block, mapped separately) cannot use them. For
    an RGB image this is about 50 bytes per pixel that would otherwise add to the peak.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def grid_min_cut(network: GridNetwork) -> CutResult:
    """Solve a GridNetwork with BK; the source side is the set that cannot reach t.

    Raises:
        HostMemoryError: the graph would not fit in the memory available (checked before
            PyMaxflow allocates it: its allocator ends the process on failure).

    The graph is filled a block of rows at a time (about GRID_BLOCK_PIXELS pixels), so the
    index arrays stay small beside the graph.
    """
    network = network.to_numpy()
    h, w = network.shape
    require_host_memory(grid_graph_bytes(h, w),
                        f"solving a {w}x{h} grid on the CPU (PyMaxflow's graph)")
    release_free_heap()
    started = time.perf_counter()
    edges = h * (w - 1) + (h - 1) * w
    graph = maxflow.Graph[int](h * w, edges)
    graph.add_nodes(h * w)
    rows = max(1, GRID_BLOCK_PIXELS // w)
    for top in range(0, h, rows):
        bottom = min(top + rows, h)
        ids = np.arange(top * w, bottom * w, dtype=np.int64).reshape(bottom - top, w)
        if w > 1:
            graph.add_edges(ids[:, :-1].ravel(), ids[:, 1:].ravel(),
                            network.right[top:bottom].ravel(), network.left[top:bottom].ravel())
        down_rows = min(bottom, h - 1) - top
        if down_rows > 0:
            tails = ids[:down_rows].ravel()
            graph.add_edges(tails, tails + w, network.down[top:top + down_rows].ravel(),
                            network.up[top:top + down_rows].ravel())
        graph.add_grid_tedges(ids, network.source[top:bottom], network.sink[top:bottom])
    del ids
    built = time.perf_counter()
    flow = int(graph.maxflow())
    solved = time.perf_counter()
    # PyMaxflow marks the sink side True; nodes it leaves free count as source side, which is
    # exactly "cannot reach t in the residual network".
    source_side = np.empty((h, w), dtype=bool)
    for top in range(0, h, rows):
        bottom = min(top + rows, h)
        ids = np.arange(top * w, bottom * w, dtype=np.int64).reshape(bottom - top, w)
        source_side[top:bottom] = ~graph.get_grid_segments(ids)
    done = time.perf_counter()
    return CutResult(flow, source_side, "cpu",
                     _stats(started, built, solved, done))


def csr_min_cut(network: CSRNetwork) -> CutResult:
    """Solve a CSRNetwork with BK. Arcs at s and t become terminal edges; s -> t arcs add flow.

    Raises:
        HostMemoryError: the graph would not fit in the memory available (checked before
            PyMaxflow allocates it).
    """
    n, s, t = network.num_vertices, network.source, network.sink
    require_host_memory(csr_graph_bytes(n, network.num_arcs),
                        f"solving a network of {n} vertices and {network.num_arcs} arcs on the "
                        "CPU (PyMaxflow's graph)")
    release_free_heap()
    started = time.perf_counter()
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
