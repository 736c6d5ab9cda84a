"""Flow networks, file formats and min-cut backends (PyMaxflow on the CPU, CuPy on the GPU)."""

from .api import (DEVICES, cuda_device_name, cuda_status, gpu_hint, min_cut, open_grid_solver,
                  prepare_gpu_process, require_gpu_memory, resolve_device)
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
    "SolveCancelled", "cuda_device_name", "cuda_status", "cut_capacity", "gpu_hint", "min_cut",
    "open_grid_solver", "prepare_gpu_process", "read_dimacs", "require_gpu_memory",
    "resolve_device", "write_dimacs",
]
