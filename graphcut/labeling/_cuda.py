"""Loading the CUDA sources of the labelling and stereo code (CuPy RawModule, compiled once per
process) and launching their grid-stride kernels. Imported only on the GPU path."""

from __future__ import annotations

import functools
from pathlib import Path

import cupy
import numpy as np

SOURCE = Path(__file__).resolve().parent / "expansion_kernels.cu"
THREADS = 256


@functools.cache
def _module(path: Path) -> cupy.RawModule:
    return cupy.RawModule(code=path.read_text(), options=("-std=c++17",))


def source_kernel(path: Path, name: str) -> cupy.RawKernel:
    """Kernel ``name`` of the .cu file at ``path`` (compiled on first use)."""
    return _module(Path(path)).get_function(name)


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
