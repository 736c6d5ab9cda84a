"""Flow networks, file formats and min-cut backends (PyMaxflow on the CPU, CuPy on the GPU)."""

from .api import DEVICES, BackendUnavailableError, cuda_status, min_cut, resolve_device
from .cut import cut_capacity
from .networks import CSRNetwork, GridNetwork
from .result import CutResult

__all__ = [
    "DEVICES", "BackendUnavailableError", "CSRNetwork", "CutResult", "GridNetwork",
    "cuda_status", "cut_capacity", "min_cut", "resolve_device",
]
