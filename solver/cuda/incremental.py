"""The GPU backend of the incremental grid solver: the push-relabel state (:class:`GridState`,
or :class:`~.grid.VolumeState` for a volume) kept in GPU memory between solves.

New terminal capacities are applied to the kept preflow with the Kohli-Torr
reparameterisation (``GridState.change_terminals``, one kernel) and phase I resumes from it;
new n-link capacities keep the flow as far as they allow (``GridState.change_nlinks``). A solve
polls its cancel request between launch batches.
"""

from __future__ import annotations

import time

import cupy

from ..incremental import IncrementalGridSolver
from ..networks import GridNetwork
from ..result import CutResult
from . import GPUMemoryError
from .grid import GridState, Schedule, device_name

__all__ = ["INTERACTIVE_SCHEDULE", "PushRelabelGridSolver"]

# 4 push/relabel cycles per launch, a global relabel every 32 launches, the BFS flag read
# every 4 passes: chosen with bench/bench_schedule.py on an H100 (2026-11-27, correcting
# strokes, median of 3 interleaved runs) from the best of 24 schedules: 59.5 ms a re-solve at
# 12 MP against 66.9 for the former (4, 16, 2), 23.4 against 24.1 at 4 MP; confirming strokes
# at 4 MP 16.3 against 15.9 (bench/RESULTS.md). Every batch is 32 launches: starting with 1 or
# 2 and doubling (``first_launches``, the fresh solves' default) gave 91.4 / 89.9 against 88.1
# ms a correcting stroke (fifteenth session, bench_schedule.py, H100). Every schedule gives the
# same answer.
INTERACTIVE_SCHEDULE = dict(cycles=4, launches_per_relabel=32, bfs_passes_per_check=4,
                            first_launches=None)


class PushRelabelGridSolver(IncrementalGridSolver):
    """:class:`~graphcut.solver.incremental.IncrementalGridSolver` on the GPU (CuPy).

    Parameters
    ----------
    network : GridNetwork
        The grid (2-D or 3-D), its first n-links and terminal capacities (NumPy: uploaded;
        CuPy: the state keeps references to its n-link arrays, as ``GridState.load`` does).
    schedule : Schedule, optional
        How push-relabel work and global relabels interleave; default
        :data:`INTERACTIVE_SCHEDULE`. Every schedule gives the same answer.

    Raises
    ------
    GPUMemoryError
        The state does not fit in the GPU's free memory.
    """

    backend = "cuda"

    def __init__(self, network: GridNetwork, *, schedule: Schedule | None = None):
        super().__init__(network)
        self.schedule = schedule or Schedule(**INTERACTIVE_SCHEDULE)
        self._terminals = (network.source, network.sink)  # to apply at the next solve
        self._applied = False   # False: the state holds zero n-link flow and no solve since
        self.nlink_change = None  # how the last set_nlinks went, reported by the next solve
        with _out_of_memory_as_gpu_error(self.shape):
            self._state = GridState.from_network(network)  # folds its terminals too

    @property
    def device_name(self) -> str:
        return device_name()

    def _set_terminals(self, source, sink, region) -> None:
        self._terminals = (source, sink)  # the kernel updates every pixel: region unused

    def _set_nlinks(self, forward, backward) -> None:
        if self._applied:
            kept = self._state.change_nlinks(forward, backward)
            self.nlink_change = "kept" if kept else "restarted"
            return
        zero = cupy.zeros(self.shape, dtype=cupy.int32)  # the next solve folds the terminals
        self._state.load(GridNetwork.from_checked(zero, zero, forward, backward))

    def _solve(self, cancel) -> CutResult:
        started = time.perf_counter()
        incremental = self._applied
        with _out_of_memory_as_gpu_error(self.shape):
            if self._terminals is not None:
                source, sink = self._terminals
                if self._applied:
                    self._state.change_terminals(source, sink)
                else:
                    self._state.set_terminals(source, sink)
                    self._applied = True
                self._terminals = None
            nlink_change, self.nlink_change = self.nlink_change, None
            counters = self._state.solve(self.schedule, cancel=cancel)
            flow = self._state.true_flow()
            solved = time.perf_counter()
            side = self._state.source_side()
        done = time.perf_counter()
        stats = {"seconds": {"solve": solved - started, "cut": done - solved,
                             "total": done - started},
                 "device_name": self.device_name, "incremental": incremental,
                 "nlink_change": nlink_change, **counters}
        return CutResult(flow, side, "cuda", stats)

    def _release(self) -> None:
        self._state = self._terminals = None


class _out_of_memory_as_gpu_error:
    """Turn CuPy's OutOfMemoryError into :class:`GPUMemoryError` naming the grid."""

    def __init__(self, shape):
        self.shape = shape

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is not None and issubclass(kind, cupy.cuda.memory.OutOfMemoryError):
            size = "x".join(str(n) for n in self.shape)
            raise GPUMemoryError(f"the GPU ran out of memory solving a {size} grid "
                                 f"incrementally: {error}") from error
        return False
