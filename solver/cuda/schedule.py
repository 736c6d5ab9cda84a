"""How the GPU grid solver interleaves push-relabel launches with exact global relabels."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Schedule", "recorded_event", "run_batch"]

INT32_MAX = int(np.iinfo(np.int32).max)


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

    Every accepted schedule gives the exact answer; only the speed depends on it.
    """

    cycles: int = 8
    launches_per_relabel: int = 16
    bfs_passes_per_check: int = 4
    block_sync: bool = True
    graphs: bool = True

    def __post_init__(self):
        for name in ("cycles", "launches_per_relabel", "bfs_passes_per_check"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"Schedule.{name} must be an int, got {value!r}")
            if not 1 <= value <= INT32_MAX:
                raise ValueError(f"Schedule.{name} must be in 1..{INT32_MAX}, got {value}")
        for name in ("block_sync", "graphs"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"Schedule.{name} must be a bool, got {getattr(self, name)!r}")


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
