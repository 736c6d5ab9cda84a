"""``min_cut``: one entry point for every network type and backend."""

from __future__ import annotations

import functools
import logging
import os
import shutil

from .networks import CSRNetwork, GridNetwork
from .result import CutResult

log = logging.getLogger("graphcut.solver")

DEVICES = ("auto", "cpu", "cuda")


class BackendUnavailableError(RuntimeError):
    """The requested backend cannot run on this machine (no GPU, no CuPy, ...)."""


GPU_EXTRA_HINT = ("this machine has an NVIDIA GPU but CuPy is not installed: "
                  "pip install 'graphcut[gpu]' to segment on the GPU")


def nvidia_gpu_present() -> bool:
    """Whether an NVIDIA GPU driver is visible, without importing CuPy (driver files or
    nvidia-smi on the PATH)."""
    return (os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidia0")
            or shutil.which("nvidia-smi") is not None)


@functools.lru_cache(maxsize=1)
def gpu_hint() -> str | None:
    """A one-line hint when the GPU backend is missing only for want of CuPy, else None."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        return GPU_EXTRA_HINT if nvidia_gpu_present() else None
    return None


@functools.lru_cache(maxsize=1)
def cuda_status() -> tuple[bool, str]:
    """Whether the CUDA backend can run here, and why not when it cannot."""
    try:
        import cupy
    except ImportError:
        return False, gpu_hint() or "CuPy is not installed (pip install 'graphcut[gpu]')"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CUDA driver missing or broken
        return False, f"CuPy found no usable CUDA driver ({error})"
    if count == 0:
        return False, "CuPy sees no CUDA device"
    try:
        from . import cuda  # noqa: F401
    except ImportError as error:
        return False, f"the CUDA backend is not available ({error})"
    return True, cuda_device_name()


def cuda_device_name() -> str:
    import cupy
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def resolve_device(device: str) -> str:
    """Turn "auto" | "cpu" | "cuda" into the backend that will run, or raise.

    "auto" picks "cuda" when CuPy sees a GPU, else "cpu", and logs the choice.
    """
    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r}; expected one of {', '.join(DEVICES)}")
    if device == "cpu":
        return "cpu"
    ok, why = cuda_status()
    if device == "cuda":
        if not ok:
            raise BackendUnavailableError(f"device='cuda' requested but {why}")
        return "cuda"
    chosen = "cuda" if ok else "cpu"
    log.info("device='auto' chose %s (%s)", chosen, why)
    if not ok and gpu_hint():
        _warn_once(gpu_hint())
    return chosen


@functools.lru_cache(maxsize=None)
def _warn_once(message: str) -> None:
    log.warning(message)


def min_cut(network: GridNetwork | CSRNetwork, *, device: str = "auto") -> CutResult:
    """Maximum flow value and minimum cut of ``network``.

    Args:
        network: a :class:`GridNetwork` or a :class:`CSRNetwork`.
        device: "cuda" (the CuPy push-relabel core), "cpu" (PyMaxflow's Boykov-Kolmogorov) or
            "auto" (cuda when CuPy finds a GPU, else cpu). The backend that ran is reported in
            ``CutResult.backend``.

    Returns:
        A :class:`CutResult`; ``source_side`` is the set of vertices that cannot reach the sink
        in the final residual network, identical across backends.
    """
    if not isinstance(network, (GridNetwork, CSRNetwork)):
        raise TypeError(f"min_cut expects a GridNetwork or CSRNetwork, got "
                        f"{type(network).__name__}")
    backend = resolve_device(device)
    if backend == "cuda":
        from . import cuda
        try:
            if isinstance(network, GridNetwork):
                return cuda.grid_min_cut(network)
            return cuda.csr_min_cut(network)
        except (cuda.GPUMemoryError, BackendUnavailableError) as error:
            if device != "auto":
                raise
            log.warning("%s; falling back to the CPU backend", error)
    from . import cpu
    if isinstance(network, GridNetwork):
        return cpu.grid_min_cut(network)
    return cpu.csr_min_cut(network)
