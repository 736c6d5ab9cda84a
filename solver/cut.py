"""Independent checks of a cut: its capacity, and the residual-reachability source side."""

from __future__ import annotations

import numpy as np

from .networks import CSRNetwork, GridNetwork, axis_slice


def cut_capacity(network: GridNetwork | CSRNetwork, source_side) -> int:
    """Total capacity of the arcs leaving ``source_side`` (True = source side, s included).

    For a GridNetwork, ``source_side`` is a bool array shaped like the grid (pixels or
    voxels); s is on the source side and t on the sink side by definition. Returns an exact
    Python int.

    Examples
    --------
    The capacity of the cut a solver returns equals its flow (max-flow min-cut theorem):

    >>> from graphcut.solver import CSRNetwork, cut_capacity, min_cut
    >>> network = CSRNetwork.from_arcs(4, 0, 3, [0, 0, 1, 2], [1, 2, 3, 3], [3, 2, 1, 3])
    >>> result = min_cut(network, device="cpu")
    >>> cut_capacity(network, result.source_side) == result.flow == 3
    True
    >>> cut_capacity(network, [True, False, False, False])   # cut right after s
    5
    """
    side = np.asarray(source_side, dtype=bool)
    if isinstance(network, GridNetwork):
        g = network.to_numpy()
        if side.shape != g.shape:
            raise ValueError(f"source_side has shape {side.shape}, expected {g.shape}")
        total = int(g.source[~side].sum(dtype=np.int64)) + int(g.sink[side].sum(dtype=np.int64))
        for axis in range(g.ndim):
            lower = side[axis_slice(g.ndim, axis, 0, -1)]
            upper = side[axis_slice(g.ndim, axis, 1, None)]
            total += int(g.forward[axis][lower & ~upper].sum(dtype=np.int64))
            total += int(g.backward[axis][upper & ~lower].sum(dtype=np.int64))
        return total
    if side.shape != (network.num_vertices,):
        raise ValueError(f"source_side has shape {side.shape}, expected ({network.num_vertices},)")
    tails, heads, caps = network.arcs()
    crossing = side[tails] & ~side[heads]
    return int(caps[crossing].sum(dtype=np.int64))
