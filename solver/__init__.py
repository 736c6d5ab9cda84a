"""Flow networks, file formats and min-cut backends (PyMaxflow on the CPU, CuPy on the GPU).

The public names below, and the modules :mod:`graphcut.solver.kernels` (the CUDA loader and
launch helpers for the library's own kernels), are what the library and the app may use;
``graphcut.solver.cuda`` is internal (an import contract in pyproject.toml checks it)."""

from .api import (DEVICES, cuda_device_name, cuda_status, gpu_hint, min_cut, open_grid_solver,
                  prepare_gpu_process, require_gpu_memory, resolve_device)
from .arrays import array_module
from .cut import cut_capacity
from .dimacs import DimacsError, read_dimacs, write_dimacs
from .errors import BackendUnavailableError, GPUMemoryError
from .incremental import IncrementalGridSolver
from .memory import HostMemoryError
from .networks import CSRNetwork, GridNetwork
from .result import CutResult, SolveCancelled

__all__ = [
    "DEVICES", "BackendUnavailableError", "CSRNetwork", "CutResult", "DimacsError",
    "GPUMemoryError", "GridNetwork", "HostMemoryError", "IncrementalGridSolver",
    "SolveCancelled", "array_module", "cuda_device_name", "cuda_status", "cut_capacity",
    "gpu_hint", "min_cut", "open_grid_solver", "prepare_gpu_process", "read_dimacs",
    "require_gpu_memory", "resolve_device", "write_dimacs",
]
