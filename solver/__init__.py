"""Flow networks, file formats and min-cut backends (PyMaxflow on the CPU, CuPy on the GPU)."""

from .api import (DEVICES, BackendUnavailableError, cuda_status, min_cut, open_grid_solver,
                  resolve_device)
from .cut import cut_capacity
from .dimacs import DimacsError, read_dimacs, write_dimacs
from .incremental import IncrementalGridSolver
from .networks import CSRNetwork, GridNetwork
from .result import CutResult, SolveCancelled

__all__ = [
    "DEVICES", "BackendUnavailableError", "CSRNetwork", "CutResult", "DimacsError", "GridNetwork",
    "IncrementalGridSolver", "SolveCancelled", "cuda_status", "cut_capacity", "min_cut",
    "open_grid_solver", "read_dimacs", "resolve_device", "write_dimacs",
]
