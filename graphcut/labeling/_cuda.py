"""Launching the kernels of the labelling code (``expansion_kernels.cu`` beside this module,
loaded by the solver's one CUDA loader: the fatbin shipped in the wheel, else NVRTC). Imported
only on the GPU path."""

from __future__ import annotations

import cupy
import numpy as np

from graphcut.solver import GridNetwork
from graphcut.solver.kernels import kernel as source_kernel
from graphcut.solver.kernels import launch_grid

SOURCE = "labeling/expansion_kernels.cu"
MAX_BLOCKS = 65535


def kernel(name: str) -> cupy.RawKernel:
    """Kernel ``name`` of expansion_kernels.cu."""
    return source_kernel(SOURCE, name)


def launch_config(n: int) -> tuple[tuple[int], tuple[int]]:
    """(grid, block) for a grid-stride kernel over ``n`` items."""
    return launch_grid(n, max_blocks=MAX_BLOCKS)


def cheapest_labels(costs: cupy.ndarray) -> tuple[cupy.ndarray, cupy.ndarray]:
    """Per pixel of an (L, H, W) int32 volume: the first cheapest label and its cost."""
    num_labels, h, w = costs.shape
    labels = cupy.empty((h, w), dtype=np.int32)
    cost = cupy.empty((h, w), dtype=np.int32)
    kernel("cheapest_label")(*launch_config(h * w), (costs, np.int32(num_labels),
                                                     np.int64(h * w), labels, cost))
    return labels, cost


def balanced_network(network):
    """:func:`._balance.balanced` of a CuPy network in one kernel (``balance_network``) and one
    read: the same arrays and offset, or None when a netted terminal capacity leaves int32
    (the NumPy version's bound is looser: it may answer None where this one does not; the
    caller's cut is the same either way)."""
    h, w = network.shape
    arrays = [cupy.ascontiguousarray(a, dtype=np.int32) for a in (
        network.source, network.sink, *network.forward[:1], *network.backward[:1],
        network.forward[1], network.backward[1])]  # source, sink, down, up, right, left
    new = [cupy.empty_like(a) for a in arrays]
    removed = cupy.empty((h, w), dtype=np.int64)
    overflow = cupy.zeros(1, dtype=np.int32)
    kernel("balance_network")(*launch_config(h * w), (
        *arrays, np.int32(h), np.int32(w), *new, removed, overflow))
    totals = cupy.empty(2, dtype=np.int64)
    totals[0] = removed.sum()
    totals[1] = overflow[0]
    offset, overflowed = (int(v) for v in totals.get())
    if overflowed:
        return None
    source, sink, down, up, right, left = new
    return GridNetwork.from_checked(source, sink, (down, right), (up, left)), offset
