"""The solver's exceptions that several of its modules raise (no imports: any module may use
them without an import cycle)."""

from __future__ import annotations

__all__ = ["BackendUnavailableError", "DimacsError", "GPUMemoryError"]


class BackendUnavailableError(RuntimeError):
    """The requested backend cannot run on this machine (no GPU, no CuPy, ...)."""


class GPUMemoryError(MemoryError):
    """The network does not fit in the GPU's free memory."""


class DimacsError(ValueError):
    """A malformed DIMACS file. ``path`` and ``line`` (1-based, or None) say where."""

    def __init__(self, path, line: int | None, reason: str):
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")
