"""Independent checks of a cut: its capacity, and the residual-reachability source side."""

from __future__ import annotations

import numpy as np

from .networks import CSRNetwork, GridNetwork


def cut_capacity(network: GridNetwork | CSRNetwork, source_side) -> int:
    """Total capacity of the arcs leaving ``source_side`` (True = source side, s included).

    For a GridNetwork, ``source_side`` is an (H, W) bool array over the pixels; s is on the
    source side and t on the sink side by definition. Returns an exact Python int.
    """
    side = np.asarray(source_side, dtype=bool)
    if isinstance(network, GridNetwork):
        g = network.to_numpy()
        if side.shape != g.shape:
            raise ValueError(f"source_side has shape {side.shape}, expected {g.shape}")
        total = int(g.source[~side].sum(dtype=np.int64)) + int(g.sink[side].sum(dtype=np.int64))
        total += int(g.right[side[:, :-1] & ~side[:, 1:]].sum(dtype=np.int64))
        total += int(g.left[side[:, 1:] & ~side[:, :-1]].sum(dtype=np.int64))
        total += int(g.down[side[:-1, :] & ~side[1:, :]].sum(dtype=np.int64))
        total += int(g.up[side[1:, :] & ~side[:-1, :]].sum(dtype=np.int64))
        return total
    if side.shape != (network.num_vertices,):
        raise ValueError(f"source_side has shape {side.shape}, expected ({network.num_vertices},)")
    tails, heads, caps = network.arcs()
    crossing = side[tails] & ~side[heads]
    return int(caps[crossing].sum(dtype=np.int64))
