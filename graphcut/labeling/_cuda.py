"""Launching the kernels of the labelling code (``solver/cuda/expansion_kernels.cu``, loaded by
the package's one CUDA loader: the fatbin shipped in the wheel, else NVRTC). Imported only on
the GPU path."""

from __future__ import annotations

import cupy
import numpy as np

from graphcut.solver.cuda._loader import kernel as _loader_kernel

SOURCE = "expansion_kernels.cu"
THREADS = 256


def source_kernel(source: str, name: str) -> cupy.RawKernel:
    """Kernel ``name`` of the .cu file ``source`` of solver/cuda (loaded once per process)."""
    return _loader_kernel(source, name)


def kernel(name: str) -> cupy.RawKernel:
    """Kernel ``name`` of expansion_kernels.cu."""
    return source_kernel(SOURCE, name)


def launch_config(n: int) -> tuple[tuple[int], tuple[int]]:
    """(grid, block) for a grid-stride kernel over ``n`` items."""
    return (max(1, min((n + THREADS - 1) // THREADS, 65535)),), (THREADS,)


def cheapest_labels(costs: cupy.ndarray) -> tuple[cupy.ndarray, cupy.ndarray]:
    """Per pixel of an (L, H, W) int32 volume: the first cheapest label and its cost."""
    num_labels, h, w = costs.shape
    labels = cupy.empty((h, w), dtype=np.int32)
    cost = cupy.empty((h, w), dtype=np.int32)
    kernel("cheapest_label")(*launch_config(h * w), (costs, np.int32(num_labels),
                                                     np.int64(h * w), labels, cost))
    return labels, cost
