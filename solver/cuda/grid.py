"""The GPU grid solver: push-relabel phase I on a 4-connected pixel grid.

Neighbours are implicit; residual capacities are stored per direction as separate (H, W) int32
arrays (zero at the border), excess as int64, heights as int32. Terminal arcs are folded in:
min(source, sink) of each pixel goes straight to the sink, the rest of the source capacity
becomes initial excess and the rest of the sink capacity the pixel's residual to the sink.

Memory: 33 bytes per pixel of solver state (excess 8, height 4, sink residual 4, four
direction residuals 16, one byte of residual-arc bits for the BFS), plus the network's own six
int32 arrays while a host network is uploaded (24 bytes per pixel). A 100-megapixel image needs
about 5.7 GB.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import cupy
import numpy as np

from ..networks import GridNetwork
from ..result import CutResult
from . import GPUMemoryError
from .module import kernel

SOURCE = "grid_kernels.cu"
STATE_BYTES_PER_PIXEL = 33
NETWORK_BYTES_PER_PIXEL = 24
RIGHT, LEFT, DOWN, UP = range(4)
PR_TILE = (32, 8)     # (width, height) of a push-relabel block's tile; matches the .cu file
BFS_TILE = 32


@dataclass
class Schedule:
    """How the solver interleaves push-relabel work with exact global relabels.

    cycles: push/relabel operations each pixel's thread may do in one kernel launch.
    launches_per_relabel: push-relabel launches between two global relabels (exact BFS).
    bfs_passes_per_check: tile passes of the BFS launched between reads of its change flag.
    """

    cycles: int = 16
    launches_per_relabel: int = 16
    bfs_passes_per_check: int = 4


def _event() -> cupy.cuda.Event:
    event = cupy.cuda.Event()
    event.record()
    return event


def device_name() -> str:
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    return props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])


def check_fits(num_pixels: int, extra_bytes_per_pixel: int = 0) -> None:
    """Raise GPUMemoryError when the solver state would not fit in the GPU's free memory."""
    need = num_pixels * (STATE_BYTES_PER_PIXEL + extra_bytes_per_pixel)
    free, _ = cupy.cuda.runtime.memGetInfo()
    free += cupy.get_default_memory_pool().free_bytes()
    if need > 0.95 * free:
        raise GPUMemoryError(
            f"a {num_pixels:,}-pixel grid needs {need / 2**30:.2f} GiB of GPU memory, "
            f"{free / 2**30:.2f} GiB are free")


@dataclass
class GridState:
    """Push-relabel state of one grid on the GPU; kept between solves for dynamic updates."""

    shape: tuple[int, int]
    excess: cupy.ndarray       # (H, W) int64
    height: cupy.ndarray       # (H, W) int32
    to_sink: cupy.ndarray      # (H, W) int32, residual of pixel -> t
    residual: cupy.ndarray     # (4, H, W) uint32, residual towards RIGHT, LEFT, DOWN, UP
    sink_capacity_total: int   # sum over pixels of the (folded-in) sink capacities
    arcs: cupy.ndarray = None  # (H, W) uint8, residual-arc bits, rebuilt by each global relabel
    pr_tiles: cupy.ndarray = None   # int32 flag per push-relabel tile: may hold active pixels
    bfs_dirty: tuple = ()           # two int32 flag arrays per BFS tile, used alternately
    counters: cupy.ndarray = None   # int32 [any BFS tile dirty, active pixel count]

    def __post_init__(self):
        h, w = self.shape
        self.arcs = cupy.empty((h, w), dtype=cupy.uint8)
        self.pr_tiles = cupy.ones(self._pr_grid()[::-1], dtype=cupy.int32)
        bfs_tiles = ((h + BFS_TILE - 1) // BFS_TILE, (w + BFS_TILE - 1) // BFS_TILE)
        self.bfs_dirty = (cupy.zeros(bfs_tiles, dtype=cupy.int32),
                          cupy.zeros(bfs_tiles, dtype=cupy.int32))
        self.counters = cupy.zeros(2, dtype=cupy.int32)

    def _pr_grid(self) -> tuple[int, int]:
        h, w = self.shape
        return ((w + PR_TILE[0] - 1) // PR_TILE[0], (h + PR_TILE[1] - 1) // PR_TILE[1])

    @property
    def inf(self) -> int:
        return self.shape[0] * self.shape[1] + 2

    @classmethod
    def from_network(cls, network: GridNetwork) -> "GridState":
        h, w = network.shape
        check_fits(h * w, 0 if network.on_gpu else NETWORK_BYTES_PER_PIXEL)
        source = cupy.asarray(network.source)
        sink = cupy.asarray(network.sink)
        residual = cupy.zeros((4, h, w), dtype=cupy.uint32)
        residual[RIGHT, :, :-1] = cupy.asarray(network.right)
        residual[LEFT, :, 1:] = cupy.asarray(network.left)
        residual[DOWN, :-1, :] = cupy.asarray(network.down)
        residual[UP, 1:, :] = cupy.asarray(network.up)
        state = cls((h, w), cupy.zeros((h, w), dtype=cupy.int64),
                    cupy.zeros((h, w), dtype=cupy.int32), cupy.zeros((h, w), dtype=cupy.int32),
                    residual, 0)
        state.set_terminals(source, sink)
        return state

    def set_terminals(self, source: cupy.ndarray, sink: cupy.ndarray) -> None:
        """Start from a zero flow on the n-links with the given terminal capacities."""
        through = cupy.minimum(source, sink)
        self.excess[...] = source.astype(cupy.int64) - through
        self.to_sink[...] = sink - through
        self.sink_capacity_total = int(sink.sum(dtype=cupy.int64))

    def flow(self) -> int:
        """Flow that has reached the sink so far."""
        return self.sink_capacity_total - int(self.to_sink.sum(dtype=cupy.int64))

    def source_side(self) -> cupy.ndarray:
        """After a global relabel: True where the sink is unreachable in the residual network."""
        return self.height >= self.inf

    # -- kernels ---------------------------------------------------------------------------

    def _args(self):
        h, w = self.shape
        return (np.int32(w), np.int32(h), np.int32(self.inf))

    def global_relabel(self, schedule: Schedule) -> tuple[int, int]:
        """Exact BFS distances to the sink; returns (active pixels, BFS tile passes).

        Also flags the push-relabel tiles that hold an active pixel.
        """
        h, w = self.shape
        n = h * w
        kernel(SOURCE, "bfs_init")(((n + 255) // 256,), (256,),
                                   (np.int32(n), np.int32(self.inf), self.to_sink,
                                    *self.residual, self.height, self.arcs))
        dirty, spare = self.bfs_dirty
        dirty.fill(1)
        grid = ((w + BFS_TILE - 1) // BFS_TILE, (h + BFS_TILE - 1) // BFS_TILE)
        bfs = kernel(SOURCE, "bfs_tile")
        any_dirty = self.counters[0:1]
        passes = 0
        while True:
            any_dirty.fill(0)
            for _ in range(schedule.bfs_passes_per_check):
                bfs(grid, (BFS_TILE, BFS_TILE),
                    (*self._args(), self.arcs, self.height, dirty, spare, any_dirty))
                dirty, spare = spare, dirty
                passes += 1
            if int(any_dirty.get()[0]) == 0:
                break
        count = self.counters[1:2]
        count.fill(0)
        kernel(SOURCE, "count_active")(self._pr_grid(), PR_TILE,
                                       (*self._args(), self.excess, self.height, self.pr_tiles,
                                        count))
        return int(count.get()[0]), passes

    def push_relabel(self, schedule: Schedule) -> None:
        kernel(SOURCE, "push_relabel")(
            self._pr_grid(), PR_TILE,
            (*self._args(), np.int32(schedule.cycles), self.excess, self.height, self.to_sink,
             *self.residual, self.pr_tiles))

    def solve(self, schedule: Schedule | None = None) -> dict:
        """Run phase I to a maximum preflow; the heights end as exact sink distances."""
        schedule = schedule or Schedule()
        relabels = launches = bfs_passes = 0
        marks = []  # CUDA events: start of each global relabel and of each push-relabel batch
        while True:
            marks.append(_event())
            active, passes = self.global_relabel(schedule)
            relabels += 1
            bfs_passes += passes
            if active == 0:
                break
            marks.append(_event())
            for _ in range(schedule.launches_per_relabel):
                self.push_relabel(schedule)
                launches += 1
        marks.append(_event())
        marks[-1].synchronize()
        spans = [cupy.cuda.get_elapsed_time(a, b) / 1e3 for a, b in zip(marks, marks[1:])]
        return {"global_relabels": relabels, "push_relabel_launches": launches,
                "iterations": launches * schedule.cycles, "bfs_passes": bfs_passes,
                "global_relabel_seconds": sum(spans[0::2]),
                "push_relabel_seconds": sum(spans[1::2])}


def grid_min_cut(network: GridNetwork, *, schedule: Schedule | None = None) -> CutResult:
    """Minimum cut of a GridNetwork on the GPU; same flow and source side as the CPU backend."""
    started = time.perf_counter()
    state = GridState.from_network(network)
    cupy.cuda.Device().synchronize()
    uploaded = time.perf_counter()
    counters = state.solve(schedule)
    flow = state.flow()
    solved = time.perf_counter()
    side = state.source_side()
    source_side = side if network.on_gpu else side.get()
    done = time.perf_counter()
    stats = {"seconds": {"upload": uploaded - started, "solve": solved - uploaded,
                         "cut": done - solved, "total": done - started},
             "device_name": device_name(), **counters}
    return CutResult(flow, source_side, "cuda", stats)
