"""The one place where the segmentation meets the solver: an incremental grid solver
(:func:`graphcut.solver.open_grid_solver`) for one image's grid, opened when first needed.

The segmentation orders n-links last axis first (``(right, down)`` for an image, as
:func:`~graphcut.segmentation.nlink_weights` returns them); the solver takes them in NumPy axis
order. Everything else passes through: the solver keeps its flow between solves (Kohli-Torr on
the GPU, BK's graph and trees on the CPU) and every solve equals a fresh minimum cut.
"""

from __future__ import annotations

import time

from graphcut.solver import CutResult, GridNetwork, open_grid_solver


class GridCuts:
    """Minimum cuts of one grid whose terminal (and n-link) capacities change between cuts.

    Parameters
    ----------
    shape : tuple of int
        The grid, (H, W) or (D, H, W).
    nlinks : tuple of int32 arrays
        Symmetric n-link capacities, last axis first (``(right, down)`` for an image), on the
        device of ``backend``.
    backend : {"cpu", "cuda"}
        Where the solver runs (already resolved, e.g. by
        :func:`graphcut.solver.resolve_device`).

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.segmentation import GridCuts
    >>> right, down = np.array([[3]], np.int32), np.zeros((0, 2), np.int32)
    >>> cuts = GridCuts((1, 2), (right, down), "cpu")
    >>> cuts.solve(np.array([[5, 0]], np.int32), np.array([[0, 5]], np.int32)).flow
    3
    """

    def __init__(self, shape, nlinks, backend: str):
        self.shape = tuple(shape)
        self.backend = backend
        self._nlinks = tuple(nlinks)
        self._solver = None
        self._moves = None  # the expansion moves' cutter (CPU, several objects)
        #: several objects: lam -> (objects, label indices) the last update ended with, the
        #: next update's start (``_pipeline.kept_start``); a one-object cut empties it
        self.starts = {}
        self._key = None    # set_nlinks's key of the current n-links (None: not kept)
        self._kept = {}     # CPU: key -> the solver of other n-links, kept with its flow

    @property
    def device_name(self) -> str:
        """What solves (the GPU's name, or the CPU backend's)."""
        return self.open().device_name

    def open(self):
        """The incremental solver, opened now if it was not yet (its memory allocated, the
        n-links loaded, zero terminal capacities). Returns it."""
        if self._solver is None:
            self._moves = None  # one PyMaxflow graph at a time
            xp = _array_module_of(self._nlinks[0])
            zero = xp.zeros(self.shape, dtype=xp.int32)
            network = GridNetwork.from_checked(zero, zero, self._nlinks[::-1])
            try:
                self._solver = open_grid_solver(network, device=self.backend)
            except MemoryError:
                if not self._kept:
                    raise
                self._close_kept()  # the memory of a kept graph, rather than no cut at all
                self._solver = open_grid_solver(network, device=self.backend)
        return self._solver

    def moves(self):
        """The cutter of the alpha-expansion moves of several objects, kept between calls, or
        None.

        On the CPU a :class:`~graphcut.labeling.HostMoveCuts`, whose PyMaxflow graph is
        allocated once for all strokes; the incremental solver's graph is closed first (the
        next one-object cut opens it again and drops the cutter), so that one graph is held at
        a time. On the GPU None: each move is a fresh ``min_cut`` (measured faster than a
        push-relabel state kept per label, which also took 4.3 times one object's memory),
        and the incremental solver's state is released too (the moves' solver keeps its
        own; the next one-object cut opens it again), so one push-relabel state is held.
        """
        self.close()
        if self.backend != "cpu":
            return None
        if self._moves is None:
            from graphcut.labeling import HostMoveCuts
            self._moves = HostMoveCuts()
        return self._moves

    def set_nlinks(self, nlinks, key=None) -> None:
        """Use these n-link capacities (last axis first) from the next cut on.

        ``key`` (CPU only; e.g. the lam they were made with): the solver of the n-links being
        replaced is kept, with its flow, under their own key, and the one kept under ``key``
        (if any) is used again, so that cuts alternating between two sets of n-links (the
        histogram's automatic lam with a box: two lams per update) stay incremental. At most
        one solver is kept besides the current one (the oldest is closed); ``key`` None
        closes them all. On the GPU the solver keeps its flow through any change anyway
        (Kohli-Torr), so ``key`` is ignored there."""
        nlinks = tuple(nlinks)
        if key is None or self.backend != "cpu":
            self._close_kept()
            self._nlinks, self._key = nlinks, None
            if self._solver is not None:
                self._solver.set_nlinks(nlinks[::-1])
            return
        if key != self._key:
            if self._solver is not None and self._key is None:
                self._solver.close()  # n-links of no key: nothing to come back to
            elif self._solver is not None:
                self._kept[self._key] = self._solver
            self._solver = self._kept.pop(key, None)
            while len(self._kept) > 1:
                self._kept.pop(next(iter(self._kept))).close()
        self._nlinks, self._key = nlinks, key

    def solve(self, source, sink, *, cancel=None, region=None) -> CutResult:
        """The minimum cut with these terminal capacities (int32, the grid's shape, on the
        solver's device); ``region`` optionally bounds the pixels that changed since the last
        cut. Returns the solver's :class:`~graphcut.solver.CutResult` (``source_side`` on the
        solver's device); ``stats["seconds"]["total"]`` is the time spent here."""
        started = time.perf_counter()
        self.starts = {}  # a one-object update: the next several-object one starts afresh
        solver = self.open()
        solver.set_terminals(source, sink, region=region)
        result = solver.solve(cancel=cancel)
        seconds = {**result.stats.get("seconds", {}), "total": time.perf_counter() - started}
        return CutResult(result.flow, result.source_side, result.backend,
                         {**result.stats, "seconds": seconds})

    def cut(self, network) -> CutResult:
        """:meth:`solve` with the terminal capacities of ``network`` (a
        :class:`~graphcut.solver.GridNetwork` whose n-links are this grid's)."""
        return self.solve(network.source, network.sink)

    def close(self) -> None:
        """Release the solver's memory (and any kept by :meth:`set_nlinks`); a later cut
        opens a new one."""
        self._close_kept()
        if self._solver is not None:
            self._solver.close()
            self._solver = None

    def _close_kept(self) -> None:
        while self._kept:
            self._kept.popitem()[1].close()


def _array_module_of(array):
    from graphcut._arrays import array_module
    return array_module(array)


__all__ = ["GridCuts"]
