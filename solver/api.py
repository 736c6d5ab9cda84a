"""``min_cut``: one entry point for every network type and backend."""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import shutil

from .errors import BackendUnavailableError
from .incremental import IncrementalGridSolver
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
    """Name of the current CUDA device, e.g. ``"NVIDIA H100 80GB HBM3"`` (imports CuPy).

    Examples
    --------
    >>> from graphcut.solver import cuda_device_name
    >>> cuda_device_name()  # doctest: +GPU
    'NVIDIA H100 80GB HBM3'
    """
    from .cuda import device_name
    return device_name()


def prepare_gpu_process(sources=None) -> float:
    """Get this process's GPU ready while it does something else (e.g. decodes an image).

    Creates the CUDA context and CuPy's memory pool and loads the kernel modules a
    segmentation uses (the shipped fatbins, else NVRTC), so that the first GPU segmentation
    starts with everything loaded.

    Parameters
    ----------
    sources : sequence of str, optional
        Kernel sources to load (their plain builds; names as for
        :func:`graphcut.solver.kernels.kernel`). Default: the segmentation's (energy, solver
        state, push-relabel).

    Returns
    -------
    float
        The seconds it took.

    Raises
    ------
    Exception
        What CuPy raises when the GPU cannot be used (a caller that only wants a head start
        may ignore it: the real work raises it again).
    """
    from .cuda import startup
    if sources is None:
        return startup.prepare_process()
    return startup.prepare_process(sources)


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


def require_gpu_memory(need_bytes: int, what: str, *, headroom: float = 0.9) -> None:
    """Refuse a GPU job up front when it would not fit in the GPU's free memory.

    Parameters
    ----------
    need_bytes : int
        The job's estimated peak GPU memory, in bytes.
    what : str
        The job, for the message (e.g. ``"segmenting photo.png (4000x3000 RGB)"``).
    headroom : float
        The share of the free memory (the driver's free memory plus what CuPy's pool holds
        unused) the job may use.

    Raises
    ------
    GPUMemoryError
        ``need_bytes`` exceed ``headroom`` times the free memory; the message gives both in GiB.

    Examples
    --------
    >>> from graphcut.solver import require_gpu_memory
    >>> require_gpu_memory(2**20, "a 1 MiB test")  # doctest: +GPU
    """
    from . import cuda
    cuda.require_free_memory(need_bytes, what, headroom=headroom)


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


def open_grid_solver(network: GridNetwork, *, device: str = "auto",
                     reuse_trees: bool | None = None) -> IncrementalGridSolver:
    """An incremental solver for ``network``: solve, change capacities, solve again, each
    re-solve starting from what the last one left.

    Parameters
    ----------
    network : GridNetwork
        The grid (2-D 4-connected or 3-D 6-connected) with its first capacities. The solver
        may keep references to its arrays and never modifies them.
    device : {"auto", "cpu", "cuda"}
        "cuda": push-relabel on the GPU keeping its preflow; "cpu": PyMaxflow's BK keeping
        its graph, flow and search trees; "auto": cuda when CuPy finds a GPU, else cpu. The
        choice is in the solver's ``backend``. There is no fallback: a GPU without room raises.
    reuse_trees : bool or None
        CPU only: reuse BK's search trees after a terminal change. None (default): when at
        most 10 % of the pixels changed (measured the faster choice).

    Returns
    -------
    IncrementalGridSolver
        With ``set_terminals``, ``set_nlinks``, ``solve``, ``cancel``, ``close``,
        ``backend``, ``shape`` and ``device_name``.

    Raises
    ------
    TypeError
        ``network`` is not a GridNetwork.
    BackendUnavailableError
        ``device="cuda"`` on a machine where the CUDA backend cannot run.
    HostMemoryError, GPUMemoryError
        The solver's state would not fit (checked before it is allocated).

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.solver import GridNetwork, open_grid_solver
    >>> net = GridNetwork(np.array([[4, 0]], np.int32), np.array([[0, 4]], np.int32),
    ...                   right=np.array([[2]], np.int32), down=np.zeros((0, 2), np.int32))
    >>> solver = open_grid_solver(net, device="cpu")
    >>> solver.solve().flow
    2
    >>> solver.set_nlinks((np.zeros((0, 2), np.int32), np.array([[3]], np.int32)))
    >>> solver.solve().flow
    3
    >>> solver.close()
    """
    if not isinstance(network, GridNetwork):
        raise TypeError(f"open_grid_solver expects a GridNetwork, got {type(network).__name__}")
    backend = resolve_device(device)
    if backend == "cuda":
        from .cuda.incremental import PushRelabelGridSolver
        return PushRelabelGridSolver(network)
    from .cpu_incremental import BKGridSolver
    return BKGridSolver(network, reuse_trees=reuse_trees)
