"""How the GPU grid solver interleaves push-relabel launches with exact global relabels."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["FIRST_LAUNCHES", "Schedule", "recorded_event", "run_batch"]

INT32_MAX = int(np.iinfo(np.int32).max)

#: the default :attr:`Schedule.first_launches`: the first batch after the first global relabel
#: is this many launches, each later batch twice the last (up to ``launches_per_relabel``).
#: A solve that is done after a few launches (an expansion move that changes little) then
#: stops at an early relabel instead of spending the rest of a full batch relabelling pixels
#: whose excess can no longer reach the sink (they rise one step per operation until a global
#: relabel marks them). Measured on an H100 (bench/RESULTS.md, fifteenth session): several
#: objects' stroke at 4 MP (8 expansion moves from scratch) 0.171 s flat, 0.155 s from 1,
#: 0.146 s from 2. The interactive re-solves keep a flat schedule (``first_launches=None`` in
#: :data:`~graphcut.solver.cuda.incremental.INTERACTIVE_SCHEDULE`): there the ramp moved
#: nothing beyond the runs' spread. None: every batch is ``launches_per_relabel``.
FIRST_LAUNCHES = 2


@dataclass
class Schedule:
    """How the solver interleaves push-relabel work with exact global relabels.

    cycles: push/relabel operations each pixel's thread may do in one kernel launch (>= 1).
    launches_per_relabel: push-relabel launches between two global relabels (exact BFS; >= 1).
    bfs_passes_per_check: tile passes of the BFS launched between reads of its change flag
        (>= 1; odd values are handled by alternating the two tile-flag arrays).
    block_sync: step a tile's pixels together until the whole tile is idle (else each thread
        stops at its own pixel's first idle moment).
    graphs: replay each fixed batch of launches as a captured CUDA graph (fewer host calls).
    first_launches: launches in the first batch; each later batch doubles it, up to
        ``launches_per_relabel`` (:meth:`batch_launches`). None: every batch is
        ``launches_per_relabel``. Default: :data:`FIRST_LAUNCHES` when the schedule is made.

    Every accepted schedule gives the exact answer; only the speed depends on it.

    Examples
    --------
    >>> [Schedule(launches_per_relabel=16, first_launches=2).batch_launches(k) for k in range(5)]
    [2, 4, 8, 16, 16]
    >>> [Schedule(launches_per_relabel=16, first_launches=None).batch_launches(k) for k in range(2)]
    [16, 16]
    """

    cycles: int = 8
    launches_per_relabel: int = 16
    bfs_passes_per_check: int = 4
    block_sync: bool = True
    graphs: bool = True
    first_launches: int | None = field(default_factory=lambda: FIRST_LAUNCHES)

    def __post_init__(self):
        for name in ("cycles", "launches_per_relabel", "bfs_passes_per_check",
                     "first_launches"):
            value = getattr(self, name)
            if name == "first_launches" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"Schedule.{name} must be an int, got {value!r}")
            if not 1 <= value <= INT32_MAX:
                raise ValueError(f"Schedule.{name} must be in 1..{INT32_MAX}, got {value}")
        for name in ("block_sync", "graphs"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"Schedule.{name} must be a bool, got {getattr(self, name)!r}")

    def batch_launches(self, batch: int) -> int:
        """Push-relabel launches of batch ``batch`` (0 first) between two global relabels."""
        if self.first_launches is None or self.first_launches >= self.launches_per_relabel:
            return self.launches_per_relabel
        return min(self.launches_per_relabel, self.first_launches << min(batch, 31))


def run_batch(graphs: dict, key, launch, argument, use_graph: bool) -> None:
    """Enqueue a fixed batch of launches, ``launch(argument)``, on the current stream: directly,
    or (``use_graph``) by replaying the CUDA graph captured the first time under ``key`` in
    ``graphs`` (fewer host calls; the batch must enqueue the same launches every time)."""
    if not use_graph:
        launch(argument)
        return
    graph = graphs.get(key)
    if graph is None:
        import cupy
        stream = cupy.cuda.get_current_stream()
        stream.begin_capture()
        launch(argument)
        graph = stream.end_capture()
        graphs[key] = graph
    graph.launch()


def recorded_event():
    """A CUDA event recorded now on the current stream (for timing launch batches)."""
    import cupy
    event = cupy.cuda.Event()
    event.record()
    return event
