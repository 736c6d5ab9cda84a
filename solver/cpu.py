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

from .memory import (GRID_BLOCK_PIXELS, bk_graph_bytes, csr_graph_bytes, grid_graph_bytes,
                     require_host_memory)
from .networks import CSRNetwork, GridNetwork, axis_slice
from .result import CutResult

DEVICE_NAME = "CPU (PyMaxflow, Boykov-Kolmogorov)"


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
    """Solve a GridNetwork (2-D, or a 3-D 6-connected volume) with BK; the source side is the
    set that cannot reach t.

    Raises:
        HostMemoryError: the graph would not fit in the memory available (checked before
            PyMaxflow allocates it: its allocator ends the process on failure).

    The graph is filled a block of rows (of slices, for a volume) at a time (about
    GRID_BLOCK_PIXELS pixels), so the index arrays stay small beside the graph. PyMaxflow's
    graph takes about 48 bytes per node and 64 per edge: 240 bytes per voxel on a volume
    (4 GB at 256^3).
    """
    network = network.to_numpy()
    require_host_memory(grid_bytes(network.shape),
                        f"solving a {_size_text(network.shape)} grid on the CPU (PyMaxflow's "
                        "graph)")
    release_free_heap()
    return cut_grid_graph(network)[0]


def cut_grid_graph(network: GridNetwork, graph=None):
    """The minimum cut of a host GridNetwork on a PyMaxflow graph built by :func:`grid_graph`
    (``graph``: one of the same shape to empty and fill again), without the memory check
    (the caller's). Returns ``(CutResult, graph)``: the source side is the set that cannot
    reach t."""
    started = time.perf_counter()
    graph = grid_graph(network, graph=graph)
    for block, ids in grid_blocks(network.shape):
        graph.add_grid_tedges(ids, network.source[block], network.sink[block])
    built = time.perf_counter()
    flow = int(graph.maxflow())
    solved = time.perf_counter()
    # PyMaxflow marks the sink side True; nodes it leaves free count as source side, which is
    # exactly "cannot reach t in the residual network".
    source_side = np.empty(network.shape, dtype=bool)
    for block, ids in grid_blocks(network.shape):
        source_side[block] = ~graph.get_grid_segments(ids)
    done = time.perf_counter()
    return CutResult(flow, source_side, "cpu", _stats(started, built, solved, done)), graph


def _size_text(shape) -> str:
    return "x".join(str(n) for n in shape[::-1])


def grid_bytes(shape) -> int:
    """Peak bytes the CPU solver adds to a GridNetwork of ``shape`` (2-D or 3-D)."""
    if len(shape) == 2:
        return grid_graph_bytes(*shape)
    pixels = int(np.prod(shape))
    edges = sum(pixels // n * (n - 1) for n in shape)
    # BK's graph with these edges, plus the per-pixel overhead of a grid of as many pixels
    return (bk_graph_bytes(pixels, edges) + grid_graph_bytes(1, pixels)
            - bk_graph_bytes(pixels, pixels - 1))


def grid_blocks(shape):
    """(index of a block of rows / slices along axis 0, their node ids) covering a grid of
    ``shape``, about GRID_BLOCK_PIXELS pixels each (node id = the pixel's ravel index)."""
    inner = int(np.prod(shape[1:]))
    rows = max(1, GRID_BLOCK_PIXELS // inner)
    for top in range(0, shape[0], rows):
        bottom = min(top + rows, shape[0])
        ids = np.arange(top * inner, bottom * inner, dtype=np.int64)
        yield slice(top, bottom), ids.reshape((bottom - top,) + tuple(shape[1:]))


def grid_graph(network: GridNetwork, graph=None):
    """A PyMaxflow graph with one node per pixel (voxel), node id = ravel index, and the
    grid's n-links, filled a block of rows (slices) at a time (:func:`grid_blocks`).

    ``graph``: a graph of this builder for the same shape to empty (``reset()``) and fill again
    instead of allocating a new one: about a third of the time (4 MP: 0.17 s instead of 0.55
    s; no fresh pages to fault in), and never two graphs at once. The terminal capacities are
    not added (the caller adds them with ``add_grid_tedges``)."""
    shape, ndim = network.shape, network.ndim
    pixels = int(np.prod(shape))
    if graph is None:
        graph = maxflow.Graph[int](pixels, sum(pixels // n * (n - 1) for n in shape))
    else:
        graph.reset()  # keeps the node and arc arrays, drops nodes, arcs and flow
    graph.add_nodes(pixels)
    inner = pixels // shape[0]
    for block, ids in grid_blocks(shape):
        for axis in reversed(range(1, ndim)):  # in-block links, x first
            if shape[axis] > 1:
                graph.add_edges(ids[axis_slice(ndim, axis, 0, -1)].ravel(),
                                ids[axis_slice(ndim, axis, 1, None)].ravel(),
                                network.forward[axis][block].ravel(),
                                network.backward[axis][block].ravel())
        down = min(block.stop, shape[0] - 1) - block.start  # links to the next row / slice
        if down > 0:
            tails = ids[:down].ravel()
            across = slice(block.start, block.start + down)
            graph.add_edges(tails, tails + inner, network.forward[0][across].ravel(),
                            network.backward[0][across].ravel())
    return graph


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
            "device_name": DEVICE_NAME}
