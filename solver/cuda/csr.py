"""The GPU push-relabel core for general flow networks (phase I, minimum cut).

``csr_min_cut(network)`` uploads a :class:`~graphcut.solver.CSRNetwork`, pairs its arcs into a
residual CSR on the GPU (:mod:`.csr_build`), saturates the arcs out of s and runs one persistent
cooperative kernel (``csr_kernels.cu``) that alternates exact global relabels (a BFS from t over
residual arcs) with sweeps over a worklist of active vertices, until a BFS finds no active
vertex. The flow value is t's excess, read off t's residual slots; the source side is the set of
vertices that the last BFS did not reach (they cannot reach t), the same set the CPU backend
reports.

GPU memory: about 16 bytes per residual slot (at most 2 per arc) and 44 per vertex while
solving; building the slots needs about 96 bytes per arc for a moment. Networks that do not fit
in the free memory raise :class:`GPUMemoryError` before anything is allocated.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import cupy
import numpy as np

from ..networks import CSRNetwork
from ..result import CutResult
from ..errors import BackendUnavailableError
from . import GPUMemoryError, require_free_memory
from ._loader import load_module
from .csr_build import build_residual_graph, residual_sum, slot_range
from .csr_instrument import LOG_CAP, instrument_buffer, instrument_stats

SOURCE = Path(__file__).resolve().parent / "csr_kernels.cu"
THREADS = 512           # threads per block of the persistent kernel (its __launch_bounds__)
SATURATE_THREADS = 512
CTL_SIZE = 48
OUT_SIZE = 16
OUT_FIELDS = ("status", "sweeps", "global_relabels", "bfs_levels", "pushes", "relabels",
              "ns_global_relabel", "ns_push_relabel", "work", "solo_sweeps", "solo_levels")
TRACE_CAP = 4096        # global relabels traced (csr_kernels.cu's TRACE_CAP)
TRACE_FIELDS = ("levels", "active", "alive_before", "sweeps_after", "ns_bfs", "ns_sweeps")


@dataclass(frozen=True)
class Schedule:
    """Tuning knobs of the phase-I kernel (defaults chosen by bench/bench_csr.py).

    cycles: push/relabel operations a vertex's thread may do each time it is taken from the
        worklist.
    heavy_degree: vertices with more residual slots than this are discharged (and expanded in
        the BFS) by a whole warp with a shuffle reduction; others by one thread.
    solo_threshold: worklists and BFS frontiers of at most this many vertices are processed by
        one thread block with block barriers instead of grid-wide barriers (0 = never), its
        lists in shared memory.
    relabel_min_sweeps, relabel_max_sweeps: bounds on the sweeps between two global relabels.
    relabel_levels_factor: a global relabel is due after this many sweeps per level of the last
        BFS (balances the time in sweeps against the time in the BFS, which is about one grid
        barrier per level; 0.5 beat 1.0 and 2.0 on the four instances tried, bench/RESULTS.md).
    relabel_work_factor: if > 0, a global relabel is also due once the worklists since the last
        one add up to this many times n vertices.
    bfs_early_stop: a global relabel's BFS stops at the level where it has found every active
        vertex of height < n; the vertices beyond get max(old height, that level + 1), which
        keeps the labelling valid. The BFS that finds no active vertex (the last one, which
        gives the cut) always runs to the end.
    blocks_per_sm: resident blocks per multiprocessor (1: 113 registers per thread, no spills;
        2: 64 registers with a few spills); lowered to what the kernel's occupancy allows.
    max_sweeps: the kernel stops with an error after this many worklist sweeps (None: the
        FIFO push-relabel bound 4 n^2 + 1024, so a correct run never reaches it).
    time_limit_seconds: the kernel stops with an error after this long (None: 60 s plus 2 us
        per vertex and arc). A watchdog against livelock, far above any measured solve.
    tail_threshold: tail mode (0 = off, the default). When > 0, block 0 runs the sweeps alone
        while the worklist has at most max(solo_threshold, tail_threshold) vertices and, when a
        global relabel comes due there, runs that relabel (the same BFS) alone with block
        barriers too, handing back to the whole grid only when the active set outgrows the
        bound (a relabel meeting a BFS frontier wider than the bound is given up, heights put
        back, and the grid relabels from then on). Same exact result; it trades grid barriers
        for one block's throughput.
    bfs_solo_threshold: BFS frontiers of at most this many vertices are expanded by block 0
        alone (None: ``solo_threshold``; 0 = never, the default: with tiles and spread warps
        the grid's levels beat block 0's on every instance measured, bench/RESULTS.md).
    bfs_tiles: expand BFS frontiers by tiles of one block's width: the slots of a tile's
        vertices are listed as one sequence (a prefix sum of the degrees) and spread over the
        block's threads, neighbouring threads reading neighbouring slots, so a level costs the
        same few dependent memory round trips whatever the degrees (False: one frontier vertex
        per thread, vertices of more than ``heavy_degree`` slots per warp). Same BFS labels.
        On by default (issue 27: 1.1-1.5x on the RLG and genrmf instances with
        ``spread_warps`` and ``bfs_solo_threshold=0``, bench/RESULTS.md).
    spread_warps: grid-wide steps (sweeps, BFS levels) number their warps across the blocks
        first, so a list of a few thousand vertices is spread over every multiprocessor instead
        of the first few (which then each serve 16 warps of scattered loads) while the others
        wait at the grid barrier. Same result. On by default.
    instrument: record, per sweep, the worklist size and its nanoseconds (grid-wide sweeps,
        block 0's sweeps, tail relabels) in ``stats["instrument"]`` (:mod:`.csr_instrument`).
        Off by default: then the kernel reads no extra clock and writes nothing more.

    The kernel is always launched cooperatively (all blocks resident at once, as its grid
    barriers require); where cooperative launches are not supported the CUDA backend is
    unavailable for CSR networks (``device="auto"`` then uses the CPU).
    """

    cycles: int = 1
    heavy_degree: int = 32
    solo_threshold: int = 512
    relabel_min_sweeps: int = 4
    relabel_max_sweeps: int = 1 << 30
    relabel_levels_factor: float = 0.5
    relabel_work_factor: float = 0.0
    bfs_early_stop: bool = True
    blocks_per_sm: int = 1
    max_sweeps: int | None = None
    time_limit_seconds: float | None = None
    tail_threshold: int = 0
    bfs_solo_threshold: int | None = 0
    bfs_tiles: bool = True
    spread_warps: bool = True
    instrument: bool = False

    @property
    def bfs_threshold(self) -> int:
        """The BFS frontier size up to which block 0 expands levels alone."""
        value = self.solo_threshold if self.bfs_solo_threshold is None else \
            self.bfs_solo_threshold
        return max(0, min(int(value), 2**31 - 1))

    def limits(self, num_vertices: int, num_arcs: int) -> tuple[int, float]:
        """(max_sweeps, time_limit_seconds) in force for a network of this size."""
        sweeps = self.max_sweeps
        if sweeps is None:
            sweeps = min(4 * num_vertices * num_vertices + 1024, 2**62)
        seconds = self.time_limit_seconds
        if seconds is None:
            seconds = 60.0 + 2e-6 * (num_vertices + num_arcs)
        if sweeps < 1 or not seconds > 0:
            raise ValueError(f"max_sweeps and time_limit_seconds must be positive, got {sweeps} "
                             f"and {seconds}")
        return int(sweeps), float(seconds)


class SolverStalledError(RuntimeError):
    """The CSR kernel reached its sweep or time limit (a solver bug: never expected)."""


def bytes_needed(num_vertices: int, num_arcs: int) -> int:
    """Peak GPU memory of :func:`csr_min_cut` for a network of this size (an estimate, bytes)."""
    n, m = int(num_vertices), int(num_arcs)
    inputs = 8 * (n + 1) + 8 * m
    build = 96 * m + 16 * n
    state = 32 * m + 52 * n + 8 * TRACE_CAP * len(TRACE_FIELDS) + 4096
    return inputs + max(build, state)


def check_fits(num_vertices: int, num_arcs: int) -> None:
    """Raise GPUMemoryError when the network would not fit in the GPU's free memory."""
    require_free_memory(bytes_needed(num_vertices, num_arcs),
                        f"a network of {num_vertices:,} vertices and {num_arcs:,} arcs")


def _module(blocks_per_sm: int) -> cupy.RawModule:
    """The kernels built for this schedule (a shipped fatbin, else NVRTC: see ``_loader``)."""
    return load_module(SOURCE.name, {"MIN_BLOCKS": int(blocks_per_sm)}, cooperative=True)


@functools.cache
def _device_info() -> tuple[str, int]:
    device = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(device.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    return name, int(device.attributes["MultiProcessorCount"])


def _cooperative_blocks(kernel: cupy.RawKernel, blocks_per_sm: int, sms: int) -> int:
    """The largest grid of at most ``blocks_per_sm`` per multiprocessor that can be resident at
    once (the occupancy the compiled kernel allows). The cooperative launch checks this again
    (CuPy shrinks a grid that would not be resident), so the barrier is always safe."""
    try:
        resident = int(cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, THREADS, 0))
    except AttributeError:  # an older CuPy without the occupancy query
        resident = int(blocks_per_sm)
    if resident < 1:
        raise BackendUnavailableError("the CSR push-relabel kernel cannot be resident on this "
                                      "GPU (occupancy 0); use device='cpu'")
    return sms * min(int(blocks_per_sm), resident)


def _launch_phase1(schedule: Schedule, sms: int, args) -> int:
    """Launch the persistent kernel cooperatively; returns the number of blocks."""
    if not cupy.cuda.Device().attributes.get("CooperativeLaunch", 1):
        raise BackendUnavailableError("this GPU does not support cooperative kernel launches, "
                                      "which the CSR push-relabel kernel needs; use device='cpu'")
    kernel = _module(schedule.blocks_per_sm).get_function("phase1")
    blocks = _cooperative_blocks(kernel, schedule.blocks_per_sm, sms)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # CuPy shrinks an oversized cooperative grid
            kernel((blocks,), (THREADS,), args)  # cooperative: the module enables it
    except cupy.cuda.driver.CUDADriverError as error:
        raise BackendUnavailableError(f"the cooperative launch of the CSR push-relabel kernel "
                                      f"failed ({error}); use device='cpu'") from error
    return blocks


def csr_min_cut(network: CSRNetwork, *, schedule: Schedule | None = None) -> CutResult:
    """Maximum flow value and minimum cut of a CSRNetwork on the GPU (push-relabel phase I).

    Args:
        network: the flow network; its arrays may be NumPy (uploaded) or CuPy (used in place,
            never modified).
        schedule: tuning knobs, see :class:`Schedule`.

    Returns:
        A CutResult with ``backend="cuda"``; ``source_side`` (bool (n,), CuPy when the network's
        arrays are CuPy, else NumPy) marks the vertices that cannot reach t in the final residual
        network (s True, t False). ``stats`` holds
        "seconds" (upload, build, solve, cut, total: wall seconds, synchronised), "iterations"
        (worklist sweeps), "global_relabels", "bfs_levels", "pushes", "relabels",
        "kernel_seconds" (time inside the kernel spent in global relabels and in sweeps),
        "trace" (per global relabel, the first TRACE_CAP: NumPy arrays "levels", "active"
        found, "alive_before" (0 unless bfs_early_stop), "sweeps_after", "ns_bfs",
        "ns_sweeps"),
        "device_name", "blocks", "threads" and the schedule; with ``schedule.instrument``
        also "instrument" (per-sweep worklist sizes and times, see :mod:`.csr_instrument`).

    Raises:
        GPUMemoryError: the network does not fit in the GPU's free memory.
        SolverStalledError: the kernel stopped at its sweep or time limit (a bug, never expected).
        BackendUnavailableError: the GPU cannot launch the kernel cooperatively.
    """
    schedule = schedule or Schedule()
    if not isinstance(network, CSRNetwork):
        raise TypeError(f"csr_min_cut expects a CSRNetwork, got {type(network).__name__}")
    n, s, t = network.num_vertices, network.source, network.sink
    m = network.num_arcs
    if n + 2 > np.iinfo(np.int32).max:
        raise ValueError(f"{n:,} vertices exceed the int32 height range of the GPU kernels")
    check_fits(n, m)
    name, sms = _device_info()
    on_gpu = isinstance(network.heads, cupy.ndarray)
    stream = cupy.cuda.get_current_stream()
    started = time.perf_counter()
    try:
        offsets = cupy.asarray(network.offsets)
        heads = cupy.asarray(network.heads)
        capacities = cupy.asarray(network.capacities)
        stream.synchronize()
        uploaded = time.perf_counter()

        graph = build_residual_graph(n, offsets, heads, capacities, cupy)
        del offsets, heads, capacities
        t_first, t_end = slot_range(graph, t)
        s_first, s_end = slot_range(graph, s)
        sink_base = residual_sum(graph.rcap, t_first, t_end, cupy)
        rcap = graph.rcap
        capsum = rcap + rcap[graph.twin]  # a pair's residuals always add up to this (< 2**32)
        excess = cupy.zeros(n, dtype=cupy.int64)
        height = cupy.zeros(n, dtype=cupy.int32)
        stamp = cupy.zeros(n, dtype=cupy.int32)
        hold = cupy.empty(n if schedule.bfs_early_stop else 1, dtype=cupy.int32)
        lists = [cupy.empty(n, dtype=cupy.int32) for _ in range(4)]
        ctl = cupy.zeros(CTL_SIZE, dtype=cupy.int32)
        out = cupy.zeros(OUT_SIZE, dtype=cupy.int64)
        trace = cupy.zeros(TRACE_CAP * len(TRACE_FIELDS), dtype=cupy.int64)
        instr = instrument_buffer(cupy) if schedule.instrument else None
        stream.synchronize()
        built = time.perf_counter()

        if s_end > s_first:
            grid = min(4 * sms, math.ceil((s_end - s_first) / SATURATE_THREADS))
            _module(schedule.blocks_per_sm).get_function("saturate_source")(
                (grid,), (SATURATE_THREADS,),
                (graph.offsets, graph.heads, graph.twin, rcap, excess, np.int32(s), np.int32(t)))
        max_sweeps, time_limit = schedule.limits(n, m)
        args = (np.int32(n), np.int32(s), np.int32(t), graph.offsets, graph.heads, graph.twin,
                capsum, rcap, excess, height, stamp, hold, *lists, ctl, out, trace,
                np.int32(schedule.cycles), np.int32(schedule.heavy_degree),
                np.int32(schedule.solo_threshold), np.int32(schedule.relabel_min_sweeps),
                np.int32(min(schedule.relabel_max_sweeps, 2**31 - 1)),
                np.float32(schedule.relabel_levels_factor),
                np.float32(schedule.relabel_work_factor), np.int32(schedule.bfs_early_stop),
                np.int64(max_sweeps), np.uint64(int(time_limit * 1e9)),
                np.int32(max(schedule.tail_threshold, 0)),
                instr if instr is not None else np.uintp(0), np.int32(LOG_CAP),
                np.int32(schedule.bfs_threshold), np.int32(schedule.bfs_tiles),
                np.int32(schedule.spread_warps))
        blocks = _launch_phase1(schedule, sms, args)
        counters = dict(zip(OUT_FIELDS, (int(x) for x in cupy.asnumpy(out))))
        solved = time.perf_counter()
        rounds = min(counters["global_relabels"], TRACE_CAP)
        trace_rows = cupy.asnumpy(trace[:rounds * len(TRACE_FIELDS)]).reshape(rounds, -1)
        if counters["status"] != 0:
            limit = (f"its sweep limit ({max_sweeps:,} sweeps)" if counters["status"] == 1
                     else f"its time limit ({time_limit:.3g} s)")
            raise SolverStalledError(
                f"the CSR push-relabel kernel stopped at {limit} after {counters['sweeps']:,} "
                f"sweeps and {counters['global_relabels']:,} global relabels on a network of "
                f"{n:,} vertices and {m:,} arcs; this is a solver bug, please report it with the "
                "network (device='cpu' solves it)")

        flow = residual_sum(rcap, t_first, t_end, cupy) - sink_base
        source_side = height >= n
        if not on_gpu:
            source_side = cupy.asnumpy(source_side)
        done = time.perf_counter()
    except cupy.cuda.memory.OutOfMemoryError as error:
        raise GPUMemoryError(f"the GPU ran out of memory for a network of {n:,} vertices and "
                             f"{m:,} arcs: {error}") from error

    stats = {
        "seconds": {"upload": uploaded - started, "build": built - uploaded,
                    "solve": solved - built, "cut": done - solved, "total": done - started},
        "iterations": counters["sweeps"],
        "global_relabels": counters["global_relabels"],
        "bfs_levels": counters["bfs_levels"],
        "pushes": counters["pushes"],
        "relabels": counters["relabels"],
        "worklist_total": counters["work"],
        "solo_sweeps": counters["solo_sweeps"],
        "solo_levels": counters["solo_levels"],
        "kernel_seconds": {"global_relabel": counters["ns_global_relabel"] * 1e-9,
                           "push_relabel": counters["ns_push_relabel"] * 1e-9},
        "trace": {name: trace_rows[:, k] for k, name in enumerate(TRACE_FIELDS)},
        "residual_slots": graph.num_slots,
        "device_name": name,
        "blocks": blocks,
        "threads": THREADS,
        "schedule": asdict(schedule),
    }
    if instr is not None:
        stats["instrument"] = instrument_stats(cupy.asnumpy(instr))
    return CutResult(int(flow), source_side, "cuda", stats)
