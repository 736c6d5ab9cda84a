"""The solver's exceptions that several of its modules raise (no imports: any module may use
them without an import cycle)."""

from __future__ import annotations

__all__ = ["BackendUnavailableError", "GPUMemoryError"]


class BackendUnavailableError(RuntimeError):
    """The requested backend cannot run on this machine (no GPU, no CuPy, ...)."""


class GPUMemoryError(MemoryError):
    """The network does not fit in the GPU's free memory."""
