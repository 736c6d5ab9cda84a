"""The CUDA backend: push-relabel (phase I) kernels loaded with cupy.RawModule.

Importing this package needs CuPy; graphcut.solver.api imports it only when a GPU is present.
"""

from __future__ import annotations

import cupy  # noqa: F401  (ImportError here means: no CUDA backend)


class GPUMemoryError(MemoryError):
    """The network does not fit in the GPU's free memory."""


def grid_min_cut(network):
    from .grid import grid_min_cut as solve
    return solve(network)


def csr_min_cut(network):
    from .csr import csr_min_cut as solve
    return solve(network)
