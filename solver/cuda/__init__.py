"""The CUDA backend: push-relabel (phase I) kernels loaded with cupy.RawModule.

Importing this package does not import CuPy (so :class:`GPUMemoryError` can be caught without
it); its solver modules (``grid``, ``csr``) do. graphcut.solver.api uses them only when a GPU is
present.
"""

from __future__ import annotations

import functools

from ..errors import GPUMemoryError

__all__ = ["GPUMemoryError", "csr_min_cut", "device_name", "grid_min_cut", "require_free_memory"]


def require_free_memory(need_bytes: int, what: str, *, headroom: float = 0.9) -> None:
    """Raise GPUMemoryError unless ``need_bytes`` fit in ``headroom`` of the GPU's free memory
    (the driver's free memory plus what CuPy's pool holds unused). ``what`` names the job."""
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    free += cupy.get_default_memory_pool().free_bytes()
    if need_bytes > headroom * free:
        raise GPUMemoryError(f"{what} needs about {need_bytes / 2**30:.2f} GiB of GPU memory, "
                             f"{free / 2**30:.2f} GiB are free")


def device_name() -> str:
    """Name of the current CUDA device, e.g. "NVIDIA H100 80GB HBM3" (imports CuPy)."""
    import cupy
    return _device_name(cupy.cuda.Device().id)


@functools.cache
def _device_name(device_id: int) -> str:
    import cupy
    name = cupy.cuda.runtime.getDeviceProperties(device_id)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def grid_min_cut(network):
    from .grid import grid_min_cut as solve
    return solve(network)


def csr_min_cut(network):
    from .csr import csr_min_cut as solve
    return solve(network)
