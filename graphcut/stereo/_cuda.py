"""The kernels of ``stereo_kernels.cu`` beside this module (the solver's one CUDA loader: a
shipped fatbin, else NVRTC). Imported only on the GPU path."""

from __future__ import annotations

from graphcut.solver.kernels import kernel as source_kernel
from graphcut.solver.kernels import launch_grid

SOURCE = "stereo/stereo_kernels.cu"
MAX_BLOCKS = 65535

__all__ = ["kernel", "launch_config"]


def kernel(name: str):
    """Kernel ``name`` of stereo_kernels.cu."""
    return source_kernel(SOURCE, name)


def launch_config(n: int) -> tuple[tuple[int], tuple[int]]:
    """(grid, block) for a grid-stride kernel over ``n`` items."""
    return launch_grid(n, max_blocks=MAX_BLOCKS)
