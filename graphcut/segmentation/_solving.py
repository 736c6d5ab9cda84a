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
    >>> cuts = GridCuts((1, 2), (np.array([[3]], np.int32), np.zeros((0, 2), np.int32)), "cpu")
    >>> cuts.solve(np.array([[5, 0]], np.int32), np.array([[0, 5]], np.int32)).flow
    3
    """

    def __init__(self, shape, nlinks, backend: str):
        self.shape = tuple(shape)
        self.backend = backend
        self._nlinks = tuple(nlinks)
        self._solver = None

    @property
    def device_name(self) -> str:
        """What solves (the GPU's name, or the CPU backend's)."""
        return self.open().device_name

    def open(self):
        """The incremental solver, opened now if it was not yet (its memory allocated, the
        n-links loaded, zero terminal capacities). Returns it."""
        if self._solver is None:
            xp = _array_module_of(self._nlinks[0])
            zero = xp.zeros(self.shape, dtype=xp.int32)
            network = GridNetwork.from_checked(zero, zero, self._nlinks[::-1])
            self._solver = open_grid_solver(network, device=self.backend)
        return self._solver

    def set_nlinks(self, nlinks) -> None:
        """Use these n-link capacities (last axis first) from the next cut on."""
        self._nlinks = tuple(nlinks)
        if self._solver is not None:
            self._solver.set_nlinks(self._nlinks[::-1])

    def solve(self, source, sink, *, cancel=None, region=None) -> CutResult:
        """The minimum cut with these terminal capacities (int32, the grid's shape, on the
        solver's device); ``region`` optionally bounds the pixels that changed since the last
        cut. Returns the solver's :class:`~graphcut.solver.CutResult` (``source_side`` on the
        solver's device); ``stats["seconds"]["total"]`` is the time spent here."""
        started = time.perf_counter()
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
        """Release the solver's memory; a later cut opens a new one."""
        if self._solver is not None:
            self._solver.close()
            self._solver = None


def _array_module_of(array):
    from graphcut._arrays import array_module
    return array_module(array)


__all__ = ["GridCuts"]
