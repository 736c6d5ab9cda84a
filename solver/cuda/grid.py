"""The GPU grid solver: push-relabel phase I on a 4-connected pixel grid (:class:`GridState`)
or a 6-connected voxel grid (:class:`VolumeState`, with the geometry of :mod:`.grid3d`).

Neighbours are implicit; residual capacities are stored per direction as separate (H, W) int32
arrays (zero at the border), excess as int64, heights as int32. Terminal arcs are folded in:
min(source, sink) of each pixel goes straight to the sink, the rest of the source capacity
becomes initial excess and the rest of the sink capacity the pixel's residual to the sink.

Memory: 49 bytes per pixel of solver state (excess 8, height 4, sink residual 4, four
direction residuals 16, one byte of residual-arc bits for the BFS, and the two terminal
capacities in force, 16, kept for dynamic re-solves), plus the terminal capacities of a host
network while it is uploaded (8 bytes per pixel; its n-links are copied straight into the
residuals, see transfer.py). A 100-megapixel image needs about 5.7 GB of GPU memory.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import cupy
import numpy as np

from ..networks import GridNetwork
from ..dynamic import TerminalUpdate
from .launch import constant, launch_grid
from ..result import CutResult, SolveCancelled
from . import GPUMemoryError, device_name, grid3d, require_free_memory
from .module import kernel
from .schedule import Schedule, recorded_event, run_batch
from .transfer import (DOWN, LEFT, RIGHT, UP, change_nlinks, checked_links, cut_side,
                       fill_int32, fold_terminals, int32_on_gpu, load_residuals, prepare_staging,
                       reparameterize, sum_nonnegative, to_host, upload_grid)

SOURCE = "grid_kernels.cu"
STATE_BYTES_PER_PIXEL = 49
INT32_MAX = 2**31 - 1
NETWORK_BYTES_PER_PIXEL = 8  # int32 source and sink staged on the GPU during an upload
PR_TILE = (constant("PR_TILE_2D_X"), constant("PR_TILE_2D_Y"))  # (width, height)
BFS_TILE = constant("BFS_TILE_2D_X")  # == BFS_TILE_2D_Y, compiled in


def check_fits(num_pixels: int, extra_bytes_per_pixel: int = 0) -> None:
    """Raise GPUMemoryError when the solver state would not fit in the GPU's free memory."""
    require_free_memory(num_pixels * (STATE_BYTES_PER_PIXEL + extra_bytes_per_pixel),
                        f"a {num_pixels:,}-pixel grid", headroom=0.95)


@dataclass
class GridState:
    """Push-relabel state of one grid on the GPU; kept between solves for dynamic updates."""

    shape: tuple[int, int]
    excess: cupy.ndarray       # (H, W) int64
    height: cupy.ndarray       # (H, W) int32
    to_sink: cupy.ndarray      # (H, W) int32, residual of pixel -> t
    residual: cupy.ndarray     # (4, H, W) uint32, residual towards RIGHT, LEFT, DOWN, UP
    sink_capacity_total: int   # sum over pixels of the (folded-in) sink capacities
    source_capacity: cupy.ndarray = None  # (H, W) int64 terminal capacities in force
    sink_capacity: cupy.ndarray = None    # (H, W) int64
    reparameterization: int = 0           # sum of the deltas added to both terminal arcs
    arcs: cupy.ndarray = None  # (H, W) uint8, residual-arc bits, rebuilt by each global relabel
    pr_tiles: cupy.ndarray = None   # int32 flag per push-relabel tile: may hold active pixels
    bfs_dirty: tuple = ()           # two int32 flag arrays per BFS tile, used alternately
    counters: cupy.ndarray = None   # int32 [any BFS tile dirty, active pixel count]
    nlinks: tuple = None  # (right, left, down, up) capacities in force, for restarts

    # Geometry of the kernels (VolumeState overrides it for volumes): block shapes
    # (x first) of the push-relabel and BFS tiles, and the suffix of the kernels' names.
    PR_BLOCK = PR_TILE
    BFS_BLOCK = (BFS_TILE, BFS_TILE)
    KERNEL_SUFFIX = ""

    def __post_init__(self):
        self._stream = cupy.cuda.Stream(non_blocking=True)
        self._graphs = {}  # captured CUDA graphs of launch batches, by batch key
        self.arcs = cupy.empty(self.shape, dtype=cupy.uint8)
        self.pr_tiles = cupy.empty(self._pr_grid()[::-1], dtype=cupy.int32)
        fill_int32(self.pr_tiles, 1)
        bfs_tiles = self._bfs_grid()[::-1]
        self.bfs_dirty = (cupy.zeros(bfs_tiles, dtype=cupy.int32),
                          cupy.zeros(bfs_tiles, dtype=cupy.int32))
        self.counters = cupy.zeros(2, dtype=cupy.int32)
        self._bfs_parity = 0  # which of bfs_dirty the next BFS pass reads

    def _tiles(self, block) -> tuple[int, ...]:
        """Blocks along x, y(, z) covering the grid with tiles of ``block`` (x first)."""
        return tuple(-(-n // t) for n, t in zip(reversed(self.shape), block))

    def _pr_grid(self) -> tuple[int, ...]:
        return self._tiles(self.PR_BLOCK)

    def _bfs_grid(self) -> tuple[int, ...]:
        return self._tiles(self.BFS_BLOCK)

    def _kernel(self, name: str):
        return kernel(SOURCE, name + self.KERNEL_SUFFIX)

    @property
    def inf(self) -> int:
        return int(np.prod(self.shape)) + 2

    @classmethod
    def allocate(cls, shape: tuple[int, int], *, network_on_host: bool = False) -> "GridState":
        """An empty state for an H x W grid (GPUMemoryError when it does not fit)."""
        h, w = shape
        check_fits(h * w, NETWORK_BYTES_PER_PIXEL if network_on_host else 0)
        return cls((h, w), cupy.zeros((h, w), dtype=cupy.int64),
                   cupy.zeros((h, w), dtype=cupy.int32), cupy.zeros((h, w), dtype=cupy.int32),
                   cupy.zeros((4, h, w), dtype=cupy.uint32), 0)

    @classmethod
    def from_network(cls, network: GridNetwork) -> "GridState":
        """A state loaded with ``network``: the one :func:`warm_up` (or the last
        :func:`grid_min_cut`) kept for this shape if there is one, else a new one (a
        :class:`VolumeState` for a volume)."""
        if network.ndim == 3 and cls is GridState:  # a volume: the 6-connected kernels
            return VolumeState.from_network(network)
        state = _reusable.pop((cupy.cuda.Device().id, network.shape), None)
        if state is None or type(state) is not cls:
            state = cls.allocate(network.shape, network_on_host=not network.on_gpu)
        state.load(network)
        return state

    def load(self, network: GridNetwork) -> None:
        """Start over on ``network`` (same shape): its capacities, zero flow on the n-links.

        The state keeps references to the network's n-link arrays (no copy) so that
        :meth:`change_terminals` can restart from them when it must.
        """
        if network.shape != self.shape:
            raise ValueError(f"network shape {network.shape} differs from the state's {self.shape}")
        self.nlinks = (network.right, network.left, network.down, network.up)
        upload_grid(self, network)  # pinned staging from the host, no CuPy kernels (transfer.py)

    def _load_nlinks(self) -> None:
        """Residuals = the n-link capacities in force (copies into the residual planes; their
        borders stay zero)."""
        load_residuals(self)

    def set_terminals(self, source: cupy.ndarray, sink: cupy.ndarray) -> None:
        """Start from a zero flow on the n-links with the given terminal capacities (int32
        (H, W) on the GPU; ``graphcut.solver.dynamic.fresh_terminals``, in one kernel).

        Only valid right after the n-link residuals were reset to their capacities (:meth:`load`).
        """
        fold_terminals(self, int32_on_gpu(source), int32_on_gpu(sink),
                       cupy.cuda.get_current_stream())

    def _apply(self, update: TerminalUpdate) -> None:
        self.excess[...] = update.excess
        self.to_sink[...] = update.to_sink
        self.source_capacity = update.source_capacity
        self.sink_capacity = update.sink_capacity
        self.sink_capacity_total = int(update.sink_capacity.sum(dtype=cupy.int64))
        self.reparameterization = update.reparameterization

    def change_terminals(self, source: cupy.ndarray, sink: cupy.ndarray) -> bool:
        """New terminal capacities, keeping the flow on the n-links (dynamic re-solve).

        Kohli-Torr reparameterisation (:func:`graphcut.solver.dynamic.reparameterize_terminals`):
        the minimum cuts and, once the reparameterisation is subtracted (:meth:`true_flow`), the
        flow value are those of the network with the new capacities. Heights are stale
        afterwards: :meth:`solve` starts with a global relabel.

        Returns True when the kept flow could be used, False when the state restarted from the
        n-link capacities in force with zero flow (when a residual would leave int32); either
        way the next :meth:`solve` gives the exact answer.
        """
        source, sink = int32_on_gpu(source), int32_on_gpu(sink)
        if reparameterize(self, source, sink):  # one kernel, in place
            return True
        if self.nlinks is None:
            raise RuntimeError("this GridState cannot restart: its n-link capacities were "
                               "released; load() a network first")
        self._load_nlinks()
        self.set_terminals(source, sink)
        return False

    def change_nlinks(self, forward, backward=None) -> bool:
        """New n-link capacities, keeping the flow on the n-links as far as they allow (a
        dynamic re-solve after a change of the smoothness weight).

        Args:
            forward, backward: the new capacities as :class:`~graphcut.solver.GridNetwork`
                holds them, one int32 array per NumPy axis (for an image ``(down, right)`` and
                ``(up, left)``), CuPy (or NumPy, then uploaded); ``backward`` None: the same as
                ``forward`` (symmetric n-links). Capacities must be in 0 .. 2**31 - 1 (not
                checked here). The state keeps references to them, as :meth:`load` does.

        Kohli-Torr reparameterisation, in one kernel
        (:func:`graphcut.solver.dynamic.reparameterize_nlinks`): each arc pair keeps its net
        flow where the new capacities hold it and is cut to them elsewhere; a pixel whose
        inflow was cut below its outflow gets the deficit added to both terminal capacities
        (tracked in :attr:`reparameterization`, so :meth:`true_flow` and the minimum cuts are
        those of the new network). Heights are stale afterwards: :meth:`solve` starts with a
        global relabel.

        Returns True when the kept flow could be used, False when a residual to the sink would
        have left int32 and the state restarted from zero n-link flow with the new capacities
        and the terminal capacities in force; either way the next :meth:`solve` is exact.
        """
        if self.nlinks is None or self.source_capacity is None:
            raise RuntimeError("this GridState holds no network (or released its n-link "
                               "capacities); load() one before changing its n-links")
        new = self._checked_links(forward, forward if backward is None else backward)
        old = tuple(tuple(int32_on_gpu(a) for a in side) for side in self._links())
        deltas, overflows = change_nlinks(self, old, new)  # one kernel, in place
        self.reparameterization += deltas
        self.sink_capacity_total += deltas
        self._keep_links(*new)
        if not overflows:
            return True
        change_nlinks(self, new, new, restart=True)  # the capacities in force, folded afresh
        return False

    def _links(self) -> tuple[tuple, tuple]:
        """The n-link capacities in force as ``(forward, backward)``, one array per axis."""
        right, left, down, up = self.nlinks
        return (down, right), (up, left)

    def _keep_links(self, forward, backward) -> None:
        self.nlinks = (forward[1], backward[1], forward[0], backward[0])

    def _checked_links(self, forward, backward) -> tuple[tuple, tuple]:
        """``(forward, backward)`` as int32 device arrays, their shapes checked."""
        return checked_links(self.shape, forward, backward)

    def flow(self) -> int:
        """Flow that has reached the sink so far, in the network as given to the solver (the
        reparameterised one after :meth:`change_terminals`, see :meth:`true_flow`)."""
        return self.sink_capacity_total - sum_nonnegative(self.to_sink)

    def true_flow(self) -> int:
        """Flow value of the network with the capacities last set, reparameterisation removed."""
        return self.flow() - self.reparameterization

    def source_side(self) -> cupy.ndarray:
        """After a global relabel: True where the sink is unreachable in the residual network."""
        return cut_side(self.height, self.inf)

    # -- kernels ---------------------------------------------------------------------------

    def _args(self):
        return (*(np.int32(n) for n in reversed(self.shape)), np.int32(self.inf))

    def global_relabel(self, schedule: Schedule) -> tuple[int, int]:
        """Exact BFS distances to the sink; returns (active pixels, BFS tile passes).

        Also flags the push-relabel tiles that hold an active pixel. Runs on the current stream.
        """
        n = int(np.prod(self.shape))
        self._kernel("bfs_init")(*launch_grid(n, max_blocks=INT32_MAX),
                                   (np.int32(n), np.int32(self.inf), self.to_sink,
                                    *self.residual, self.height, self.arcs))
        self._bfs_parity = 0
        fill_int32(self.bfs_dirty[0], 1)
        self.bfs_dirty[1].fill(0)
        passes = 0
        while True:
            self._run_batch(("bfs", schedule.bfs_passes_per_check, self._bfs_parity),
                            self._bfs_passes, schedule.bfs_passes_per_check, schedule.graphs)
            # each pass reads one flag array and flags the next pass's tiles in the other
            self._bfs_parity ^= schedule.bfs_passes_per_check & 1
            passes += schedule.bfs_passes_per_check
            if int(self.counters[0:1].get()[0]) == 0:
                break
        count = self.counters[1:2]
        count.fill(0)
        self._kernel("count_active")(self._pr_grid(), self.PR_BLOCK,
                                       (*self._args(), self.excess, self.height, self.pr_tiles,
                                        count))
        return int(count.get()[0]), passes

    def _bfs_passes(self, passes: int) -> None:
        """Clears the change flag, then `passes` BFS tile passes, the first reading the flag
        array of the current parity."""
        self.counters[0:1].fill(0)
        dirty, spare = self.bfs_dirty[::-1] if self._bfs_parity else self.bfs_dirty
        for _ in range(passes):
            self._kernel("bfs_tile")(
                self._bfs_grid(), self.BFS_BLOCK,
                (*self._args(), self.arcs, self.height, dirty, spare, self.counters[0:1]))
            dirty, spare = spare, dirty

    def _push_relabel_launches(self, batch: tuple[Schedule, int]) -> None:
        schedule, count = batch
        for _ in range(count):
            self._kernel("push_relabel")(
                self._pr_grid(), self.PR_BLOCK,
                (*self._args(), np.int32(schedule.cycles), np.int32(schedule.block_sync),
                 self.excess, self.height, self.to_sink, *self.residual, self.pr_tiles))

    def _run_batch(self, key, launch, argument, use_graph: bool) -> None:
        """Enqueue a fixed batch of launches, replaying a captured CUDA graph of it if asked."""
        run_batch(self._graphs, key, launch, argument, use_graph)

    def solve(self, schedule: Schedule | None = None, *, cancel=None) -> dict:
        """Run phase I to a maximum preflow; the heights end as exact sink distances.

        ``cancel``: an optional callable checked before each global relabel (between launch
        batches, about every millisecond); when it returns True the solve stops with
        :class:`~graphcut.solver.SolveCancelled`, leaving a valid preflow that a later
        :meth:`change_terminals` + :meth:`solve` continues from.
        """
        schedule = schedule or Schedule()
        relabels = launches = bfs_passes = 0
        marks = []  # CUDA events: start of each global relabel and of each push-relabel batch
        cupy.cuda.Device().synchronize()  # the state was written on the default stream
        with self._stream:
            while True:
                if cancel is not None and cancel():
                    self._stream.synchronize()  # the last batch must end before the state moves
                    raise SolveCancelled("the solve was cancelled")
                marks.append(recorded_event())
                active, passes = self.global_relabel(schedule)
                relabels += 1
                bfs_passes += passes
                if active == 0:
                    break
                marks.append(recorded_event())
                count = schedule.batch_launches(relabels - 1)
                self._run_batch(("pr", schedule.cycles, count, schedule.block_sync),
                                self._push_relabel_launches, (schedule, count), schedule.graphs)
                launches += count
            marks.append(recorded_event())
        marks[-1].synchronize()
        spans = [cupy.cuda.get_elapsed_time(a, b) / 1e3 for a, b in zip(marks, marks[1:])]
        return {"global_relabels": relabels, "push_relabel_launches": launches,
                "iterations": launches * schedule.cycles, "bfs_passes": bfs_passes,
                "global_relabel_seconds": sum(spans[0::2]),
                "push_relabel_seconds": sum(spans[1::2])}


class VolumeState(GridState):
    """Push-relabel state of one volume on the GPU (see :class:`GridState`; the geometry is
    :mod:`.grid3d`'s); ``shape`` is (D, H, W) and ``residual`` (6, D, H, W)."""

    PR_BLOCK = grid3d.PR_TILE_3D
    BFS_BLOCK = grid3d.BFS_TILE_3D
    KERNEL_SUFFIX = "_3d"

    @classmethod
    def allocate(cls, shape, *, network_on_host: bool = False) -> "VolumeState":
        """An empty state for a D x H x W volume (GPUMemoryError when it does not fit)."""
        arrays = grid3d.allocate_volume(shape, network_on_host=network_on_host)
        return cls(tuple(int(n) for n in shape), *arrays, 0)

    def load(self, network: GridNetwork) -> None:
        """As :meth:`GridState.load`: the network's capacities, zero flow on the n-links."""
        if network.shape != self.shape:
            raise ValueError(f"network shape {network.shape} differs from the state's {self.shape}")
        self.nlinks = (tuple(network.forward), tuple(network.backward))
        self._load_nlinks()
        # terminals folded by the shipped kernel of the 2-D upload (transfer.py)
        fold_terminals(self, cupy.asarray(network.source), cupy.asarray(network.sink),
                       cupy.cuda.get_current_stream())

    def _links(self) -> tuple[tuple, tuple]:
        return self.nlinks

    def _keep_links(self, forward, backward) -> None:
        self.nlinks = (tuple(forward), tuple(backward))

    def _load_nlinks(self) -> None:
        grid3d.load_volume_residuals(self.residual, *self.nlinks)


_reusable: dict = {}  # the last GridState of grid_min_cut, by (device, shape)


def release_cached_state() -> None:
    """Drop the GridState that grid_min_cut keeps for the next solve of the same shape."""
    _reusable.clear()


def warm_up(shape: tuple[int, int], *, schedule: Schedule | None = None) -> float:
    """Make the first solve of an H x W grid cost what later ones do; returns the seconds spent.

    Loads the grid kernels (the shipped fatbin, else NVRTC), allocates the solver state and the
    page-locked staging buffers, and captures the CUDA graphs of the launch batches by solving
    a tiny network of that shape (one unit of flow over one n-link). The state is kept, like
    :func:`grid_min_cut`'s, for the next :func:`grid_min_cut` or :meth:`GridState.from_network`
    of that shape on this device. Raises GPUMemoryError when the grid does not fit.
    """
    started = time.perf_counter()
    h, w = (int(n) for n in shape)
    if h < 1 or w < 1:
        raise ValueError(f"shape must be (H, W) with H, W >= 1, got {shape}")
    source, sink = np.zeros((h, w), np.int32), np.zeros((h, w), np.int32)
    right, down = np.zeros((h, w - 1), np.int32), np.zeros((h - 1, w), np.int32)
    source[0, 0] = 1
    if w > 1:
        sink[0, 1] = right[0, 0] = 1
    elif h > 1:
        sink[1, 0] = down[0, 0] = 1
    else:
        sink[0, 0] = 1
    prepare_staging()
    result = grid_min_cut(GridNetwork(source, sink, right, down), schedule=schedule)
    if result.flow != 1:  # a unit path: anything else means the kernels are broken here
        raise RuntimeError(f"the GPU grid solver's warm-up solve gave flow {result.flow}, not 1")
    return time.perf_counter() - started


def grid_min_cut(network: GridNetwork, *, schedule: Schedule | None = None) -> CutResult:
    """Minimum cut of a GridNetwork on the GPU; same flow and source side as the CPU backend.

    The solver state of the last shape solved is kept (:func:`release_cached_state` frees it),
    so that a sequence of same-shape solves (batches, stereo moves) reuses its memory and its
    captured CUDA graphs.
    """
    started = time.perf_counter()
    key = (cupy.cuda.Device().id, network.shape)
    state = _reusable.pop(key, None)
    _reusable.clear()
    try:
        if state is None:
            state = GridState.from_network(network)
        else:
            state.load(network)
        _reusable[key] = state
        cupy.cuda.Device().synchronize()
        uploaded = time.perf_counter()
        counters = state.solve(schedule)
        state.nlinks = None  # only dynamic re-solves need them; do not hold the caller's arrays
        flow = state.true_flow()
        solved = time.perf_counter()
        side = state.source_side()
    except cupy.cuda.memory.OutOfMemoryError as error:
        _reusable.clear()
        size = "x".join(str(n) for n in network.shape)
        raise GPUMemoryError(f"the GPU ran out of memory solving a {size} grid: {error}") \
            from error
    source_side = side if network.on_gpu else to_host(side)
    done = time.perf_counter()
    stats = {"seconds": {"upload": uploaded - started, "solve": solved - uploaded,
                         "cut": done - solved, "total": done - started},
             "device_name": device_name(), **counters}
    return CutResult(flow, source_side, "cuda", stats)
