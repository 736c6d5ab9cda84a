"""``min_cut``: one entry point for every network type and backend."""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import shutil

from .networks import CSRNetwork, GridNetwork
from .result import CutResult

log = logging.getLogger("graphcut.solver")

DEVICES = ("auto", "cpu", "cuda")

# device="auto" solves CSR networks with fewer arcs than this on the CPU even when a GPU is
# there: below it the GPU's fixed cost (upload, pairing the arcs, one kernel launch: about 2-6 ms)
# exceeds BK's whole solve on every network measured (bench/bench_csr.py --crossover, H100,
# bench/RESULTS.md 2026-11-26: grids of 1.4-5.9 k arcs, genrmf and RLG of 0.2-2.2 k), while from
# 19 k arcs up the GPU won on every network but one 24 k-arc grid (lost by 1 ms there).
AUTO_CPU_BELOW_ARCS = 10_000


class BackendUnavailableError(RuntimeError):
    """The requested backend cannot run on this machine (no GPU, no CuPy, ...)."""


NOT_INSTALLED = "CuPy is not installed (pip install 'graphcut[gpu]')"
GPU_EXTRA_HINT = ("this machine has an NVIDIA GPU but CuPy is not installed: "
                  "pip install 'graphcut[gpu]' to segment on the GPU")


def nvidia_gpu_present() -> bool:
    """Whether an NVIDIA GPU driver is visible, without importing CuPy (driver files or
    nvidia-smi on the PATH)."""
    return (os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidia0")
            or shutil.which("nvidia-smi") is not None)


@functools.lru_cache(maxsize=1)
def gpu_hint() -> str | None:
    """A one-line hint when the GPU backend is missing only for want of CuPy, else None.
    (CuPy is looked for only where a GPU driver is visible.)"""
    if not nvidia_gpu_present():
        return None
    try:
        import cupy  # noqa: F401
    except ImportError:
        return GPU_EXTRA_HINT
    return None


@functools.lru_cache(maxsize=1)
def cuda_status() -> tuple[bool, str]:
    """Whether the CUDA backend can run here, and why not when it cannot (else the GPU's name).

    CuPy is imported only when it is installed and the CUDA driver reports a device (asked
    directly through the driver library), so a machine without a GPU never pays for it.
    """
    if not cupy_installed():
        return False, gpu_hint() or NOT_INSTALLED
    count, why = driver_device_count()
    if count is None:
        return False, f"no usable CUDA driver ({why})"
    if count == 0:
        return False, "the CUDA driver sees no device"
    try:
        import cupy
    except ImportError:
        return False, gpu_hint() or NOT_INSTALLED
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CuPy broken or built for another CUDA
        return False, f"CuPy cannot use the CUDA driver ({error})"
    if count == 0:
        return False, "CuPy sees no CUDA device"
    return True, cuda_device_name()


def cupy_installed() -> bool:
    """Whether a ``cupy`` package can be found (without importing it)."""
    return importlib.util.find_spec("cupy") is not None


def driver_device_count() -> tuple[int | None, str]:
    """Devices the CUDA driver reports (``cuInit`` + ``cuDeviceGetCount`` through ctypes, without
    importing CuPy), and a reason; ``None`` when there is no usable driver library."""
    import ctypes
    library = None
    for name in _DRIVER_LIBRARIES:
        try:
            library = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if library is None:
        return None, "the CUDA driver library (libcuda) is not installed"
    status = library.cuInit(0)
    if status == _CUDA_ERROR_NO_DEVICE:
        return 0, "no CUDA device"
    if status != 0:
        return None, f"cuInit failed with CUDA error {status}"
    count = ctypes.c_int(0)
    status = library.cuDeviceGetCount(ctypes.byref(count))
    if status != 0:
        return None, f"cuDeviceGetCount failed with CUDA error {status}"
    return count.value, f"{count.value} CUDA device(s)"


_DRIVER_LIBRARIES = ("libcuda.so.1", "libcuda.so", "nvcuda.dll")
_CUDA_ERROR_NO_DEVICE = 100


def cuda_device_name() -> str:
    import cupy
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def resolve_device(device: str) -> str:
    """Turn "auto" | "cpu" | "cuda" into the backend that will run, or raise.

    "auto" picks "cuda" when CuPy sees a GPU, else "cpu", and logs the choice.

    Examples
    --------
    >>> from graphcut.solver import resolve_device
    >>> resolve_device("cpu")
    'cpu'
    >>> resolve_device("auto") in ("cpu", "cuda")
    True
    >>> resolve_device("gpu")
    Traceback (most recent call last):
        ...
    ValueError: unknown device 'gpu'; expected one of auto, cpu, cuda
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


def auto_prefers_cpu(network) -> bool:
    """Whether ``device="auto"`` runs this network on the CPU although a GPU is available: CSR
    networks of fewer than :data:`AUTO_CPU_BELOW_ARCS` arcs (the measured crossover)."""
    return isinstance(network, CSRNetwork) and network.num_arcs < AUTO_CPU_BELOW_ARCS


def min_cut(network: GridNetwork | CSRNetwork, *, device: str = "auto") -> CutResult:
    """Maximum flow value and minimum cut of ``network``.

    Parameters
    ----------
    network
        a :class:`GridNetwork` or a :class:`CSRNetwork`.
    device
        "cuda" (the CuPy push-relabel core), "cpu" (PyMaxflow's Boykov-Kolmogorov) or
        "auto" (cuda when CuPy finds a GPU, else cpu; CSR networks of fewer than
        AUTO_CPU_BELOW_ARCS arcs always cpu). The backend that ran is reported in
        ``CutResult.backend``.

    Returns
    -------
    CutResult
        A :class:`CutResult`; ``source_side`` is the set of vertices that cannot reach the sink
        in the final residual network, identical across backends.

    Examples
    --------
    A 2 x 2 pixel grid: s feeds the top-left pixel, t drains the bottom-right one.

    >>> import numpy as np
    >>> from graphcut.solver import GridNetwork, min_cut
    >>> network = GridNetwork(source=np.array([[9, 0], [0, 0]]),
    ...                       sink=np.array([[0, 0], [0, 9]]),
    ...                       right=np.array([[3], [1]]),    # (y, x) -> (y, x + 1)
    ...                       down=np.array([[2, 2]]))       # (y, x) -> (y + 1, x)
    >>> result = min_cut(network, device="cpu")
    >>> result.flow, result.backend
    (3, 'cpu')
    >>> result.source_side
    array([[ True,  True],
           [ True, False]])

    The same network on the GPU gives the same flow and the same cut:

    >>> min_cut(network, device="cuda").flow  # doctest: +GPU
    3
    """
    if not isinstance(network, (GridNetwork, CSRNetwork)):
        raise TypeError(f"min_cut expects a GridNetwork or CSRNetwork, got "
                        f"{type(network).__name__}")
    backend = resolve_device(device)
    if device == "auto" and backend == "cuda" and auto_prefers_cpu(network):
        backend = "cpu"
        log.info("device='auto' chose cpu for a CSR network of %d arcs (< %d: the CPU is faster "
                 "there)", network.num_arcs, AUTO_CPU_BELOW_ARCS)
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
