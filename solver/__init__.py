"""Flow networks, file formats and min-cut backends (PyMaxflow on the CPU, CuPy on the GPU)."""

from .api import DEVICES, BackendUnavailableError, cuda_status, min_cut, resolve_device
from .cut import cut_capacity
from .dimacs import DimacsError, read_dimacs, write_dimacs
from .networks import CSRNetwork, GridNetwork
from .result import CutResult, SolveCancelled

__all__ = [
    "DEVICES", "BackendUnavailableError", "CSRNetwork", "CutResult", "DimacsError", "GridNetwork",
    "SolveCancelled", "cuda_status", "cut_capacity", "min_cut", "read_dimacs", "resolve_device", "write_dimacs",
]
