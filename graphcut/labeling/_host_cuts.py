"""CPU minimum cuts of the expansion moves on one PyMaxflow graph, emptied and filled again
for every move (one image-sized graph per run instead of one per move: no fresh pages to
fault in, about a third of a new graph's setup, see :func:`graphcut.solver.cpu.grid_graph`).

The cut is the one :func:`graphcut.solver.min_cut` gives on the CPU: the source side is the set
of pixels that cannot reach the sink in the residual network, the same for every maximum
flow, so a reused graph and a fresh one give the same flow and the same cut.
"""

from __future__ import annotations

from graphcut.solver import CutResult, GridNetwork
from graphcut.solver.cpu import cut_grid_graph, grid_bytes
from graphcut.solver.memory import require_host_memory


class HostMoveCuts:
    """``cuts(network) -> CutResult`` for 2-D grid networks of one shape, on one graph."""

    def __init__(self):
        self._graph = None
        self._shape = None

    def __call__(self, network: GridNetwork) -> CutResult:
        network = network.to_numpy()
        if network.shape != self._shape:
            require_host_memory(grid_bytes(network.shape),
                                f"solving a {network.shape} expansion move on the CPU")
            self._graph, self._shape = None, network.shape
        result, self._graph = cut_grid_graph(network, graph=self._graph)
        return result
