"""Launching the kernels of the labelling code (``expansion_kernels.cu`` beside this module,
loaded by the solver's one CUDA loader: the fatbin shipped in the wheel, else NVRTC). Imported
only on the GPU path."""

from __future__ import annotations

import cupy
import numpy as np

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
