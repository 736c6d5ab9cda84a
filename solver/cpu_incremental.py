"""The CPU backend of the incremental grid solver: PyMaxflow's Boykov-Kolmogorov graph, kept
between solves.

The graph is built by the one PyMaxflow grid builder, :func:`graphcut.solver.cpu.grid_graph`.
New terminal capacities are added as deltas (PyMaxflow's ``add_grid_tedges`` adds to the
t-links and keeps the flow) to the pixels whose capacities changed, and the search trees are
reused when few changed (``mark_grid_nodes`` + ``maxflow(reuse_trees=True)``). New n-link
capacities refill the same graph from zero flow: BK cannot lower an arc's capacity and keep
its flow.
"""

from __future__ import annotations

import time

import numpy as np

from .cpu import DEVICE_NAME, grid_blocks, grid_bytes, grid_graph, release_free_heap
from .incremental import IncrementalGridSolver
from .memory import require_host_memory
from .networks import GridNetwork
from .result import CutResult

__all__ = ["BKGridSolver", "REUSE_TREES_AT_MOST"]

# Reuse the search trees only when at most this share of the t-links changed: after a
# colour-model change (most strokes) most do, and rebuilding the trees from the kept flow
# measured 5-40 % faster than repairing them (4 MP, PyMaxflow 1.3).
REUSE_TREES_AT_MOST = 0.1


def _on_host(array) -> np.ndarray:
    """``array`` as a NumPy int32 array (a CuPy array is copied to the host)."""
    if hasattr(array, "get") and type(array).__module__.startswith("cupy"):
        array = array.get()
    return np.asarray(array, dtype=np.int32)


class BKGridSolver(IncrementalGridSolver):
    """:class:`~graphcut.solver.incremental.IncrementalGridSolver` on the CPU (PyMaxflow).

    Parameters
    ----------
    network : GridNetwork
        The grid (2-D or 3-D), its first n-links and terminal capacities (NumPy or CuPy).
    reuse_trees : bool or None
        Reuse BK's search trees after a terminal change: ``None`` (default) when at most
        :data:`REUSE_TREES_AT_MOST` of the pixels changed, else always (True) or never (False).

    Raises
    ------
    HostMemoryError
        PyMaxflow's graph would not fit in memory (checked before it is allocated: its
        allocator ends the process on failure).
    """

    backend = "cpu"
    device_name = DEVICE_NAME

    def __init__(self, network: GridNetwork, *, reuse_trees: bool | None = None):
        super().__init__(network)
        if reuse_trees not in (None, True, False):
            raise ValueError(f"reuse_trees must be None, True or False, got {reuse_trees!r}")
        self.reuse_trees = reuse_trees
        size = "x".join(str(n) for n in self.shape[::-1])
        require_host_memory(grid_bytes(self.shape), f"solving a {size} grid incrementally on "
                            "the CPU (PyMaxflow's graph)")
        release_free_heap()
        self._graph = None
        self._terminals = (_on_host(network.source), _on_host(network.sink))  # last set
        self._in_graph = None   # the terminal capacities the graph holds; None: none yet
        self._region = None     # where _terminals may differ from _in_graph (see _set_terminals)
        self._load(network.forward, network.backward)

    def _load(self, forward, backward) -> None:
        """Fill the graph (a new one, or the old one emptied) with these n-links, zero flow."""
        host = tuple(tuple(_on_host(a) for a in side) for side in (forward, backward))
        zero = np.broadcast_to(np.int32(0), self.shape)  # the builder reads no terminal
        graph, self._graph = self._graph, None  # unusable until filled again
        self._graph = grid_graph(GridNetwork.from_checked(zero, zero, *host), graph)
        self._in_graph = None

    def _set_terminals(self, source, sink, region) -> None:
        # _region: where the terminals set may differ from the graph's: () nowhere, None anywhere
        self._region = region if self._region == () else _union(self._region, region)
        self._terminals = (_on_host(source), _on_host(sink))

    def _set_nlinks(self, forward, backward) -> None:
        self._load(forward, backward)

    def _solve(self, cancel) -> CutResult:
        started = time.perf_counter()
        source, sink = self._terminals
        graph = self._graph
        incremental = self._in_graph is not None
        reuse_trees = False
        if not incremental:
            for block, ids in grid_blocks(self.shape):
                graph.add_grid_tedges(ids, source[block], sink[block])
            changed = source.size
        else:
            nodes, d_source, d_sink = self._changes(source, sink)
            changed = len(nodes)
            reuse_trees = (changed <= REUSE_TREES_AT_MOST * source.size
                           if self.reuse_trees is None else self.reuse_trees)
            if changed:
                graph.add_grid_tedges(nodes, d_source, d_sink)
                if reuse_trees:
                    graph.mark_grid_nodes(nodes)
        self._in_graph, self._region = (source, sink), ()
        tlinks = time.perf_counter()
        flow = int(graph.maxflow(reuse_trees=reuse_trees))
        solved = time.perf_counter()
        # PyMaxflow marks the sink side True; the nodes it leaves free are the source side:
        # exactly those that cannot reach t in the residual network
        source_side = np.empty(self.shape, dtype=bool)
        for block, ids in grid_blocks(self.shape):
            source_side[block] = ~graph.get_grid_segments(ids)
        done = time.perf_counter()
        stats = {"seconds": {"tlinks": tlinks - started, "solve": solved - tlinks,
                             "cut": done - solved, "total": done - started},
                 "device_name": DEVICE_NAME, "incremental": incremental,
                 "changed_terminals": changed, "reused_trees": reuse_trees,
                 "tlinks_seconds": tlinks - started, "maxflow_seconds": solved - tlinks,
                 "cut_seconds": done - solved}
        return CutResult(flow, source_side, "cpu", stats)

    def _changes(self, source, sink):
        """(node ids, source deltas, sink deltas) of the pixels whose terminals changed since
        the graph's, looking only inside the region given (if any)."""
        old_source, old_sink = self._in_graph
        region = self._region
        if region == ():  # nothing set since the last solve
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
        # both in [0, 2**31 - 1]: their difference fits in int32
        if region is None or all(r.start == 0 and r.stop >= n
                                 for r, n in zip(region, self.shape)):
            # the whole grid (a colour model's change): flat arrays, no 2-D fancy indexing
            d_source = np.subtract(source, old_source).reshape(-1)
            d_sink = np.subtract(sink, old_sink).reshape(-1)
            nodes = np.flatnonzero(d_source | d_sink)
            return nodes, d_source[nodes], d_sink[nodes]
        d_source = np.subtract(source[region], old_source[region])
        d_sink = np.subtract(sink[region], old_sink[region])
        where = np.nonzero((d_source != 0) | (d_sink != 0))
        offsets = tuple(w + s.start for w, s in zip(where, region))
        return np.ravel_multi_index(offsets, self.shape), d_source[where], d_sink[where]

    def _release(self) -> None:
        self._graph = None
        self._terminals = self._in_graph = None


def _union(a, b) -> tuple[slice, ...] | None:
    """The bounding box of two regions (None: anywhere)."""
    if a is None or b is None:
        return None
    return tuple(slice(min(x.start, y.start), max(x.stop, y.stop)) for x, y in zip(a, b))
