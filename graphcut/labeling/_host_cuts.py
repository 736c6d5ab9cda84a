"""CPU minimum cuts of the expansion moves on one PyMaxflow graph, emptied and filled again
for every move (one image-sized graph per run instead of one per move: no fresh pages to
fault in, about a third of a new graph's setup, see :func:`graphcut.solver.cpu.grid_graph`).

The cut is the one :func:`graphcut.solver.min_cut` gives on the CPU: the source side is the set
of pixels that cannot reach the sink in the residual network, the same for every maximum
flow, so a reused graph and a fresh one give the same flow and the same cut.
"""

from __future__ import annotations

import time

import numpy as np

from graphcut.solver import CutResult, GridNetwork
from graphcut.solver.cpu import grid_blocks, grid_graph
from graphcut.solver.memory import require_host_memory


class HostMoveCuts:
    """``cuts(network) -> CutResult`` for 2-D grid networks of one shape, on one graph."""

    def __init__(self):
        self._graph = None
        self._shape = None

    def __call__(self, network: GridNetwork) -> CutResult:
        network = network.to_numpy()
        if network.shape != self._shape:
            from graphcut.solver.cpu import grid_bytes
            require_host_memory(grid_bytes(network.shape),
                                f"solving a {network.shape} expansion move on the CPU")
            self._graph, self._shape = None, network.shape
        started = time.perf_counter()
        graph = self._graph = grid_graph(network, graph=self._graph)
        for block, ids in grid_blocks(network.shape):
            graph.add_grid_tedges(ids, network.source[block], network.sink[block])
        built = time.perf_counter()
        flow = int(graph.maxflow())
        solved = time.perf_counter()
        source_side = np.empty(network.shape, dtype=bool)
        for block, ids in grid_blocks(network.shape):
            source_side[block] = ~graph.get_grid_segments(ids)
        done = time.perf_counter()
        seconds = {"build": built - started, "solve": solved - built, "cut": done - solved,
                   "total": done - started}
        return CutResult(flow, source_side, "cpu", {"seconds": seconds})
