"""The incremental grid solver's interface: one grid, many capacity changes, each answered by a
re-solve that starts from what the last solve left.

:func:`graphcut.solver.open_grid_solver` opens one for a :class:`~graphcut.solver.GridNetwork`
on a backend:

- ``"cuda"``: push-relabel on the GPU keeping its preflow (``solver/cuda/incremental.py``):
  new terminal capacities are applied with the Kohli-Torr reparameterisation and phase I
  resumes from the kept flow; new n-link capacities (another smoothness weight) keep the flow as
  far as they allow. The solve can be cancelled between launch batches.
- ``"cpu"``: Boykov-Kolmogorov (PyMaxflow) keeping its graph and its flow
  (``solver/cpu_incremental.py``): t-link changes are added as deltas to the pixels whose
  capacities changed and the search trees are reused when few changed. New n-link capacities
  rebuild the graph in the same memory (BK cannot lower a capacity and keep its flow).

Either way every :meth:`IncrementalGridSolver.solve` returns the flow value and the source side
of a fresh :func:`~graphcut.solver.min_cut` of the network with the capacities last set.

This module holds only what the backends share (argument checks, cancel requests, closing);
it imports neither PyMaxflow nor CuPy.
"""

from __future__ import annotations

import threading

from .networks import GridNetwork
from .result import CutResult

__all__ = ["IncrementalGridSolver", "check_region"]


class IncrementalGridSolver:
    """Max-flow / min-cut of one grid whose capacities change between solves.

    Do not construct it directly: :func:`graphcut.solver.open_grid_solver` picks the backend.
    Not thread-safe, except :meth:`cancel`, which any thread may call during :meth:`solve`.

    Attributes
    ----------
    backend : str
        ``"cpu"`` (PyMaxflow, Boykov-Kolmogorov) or ``"cuda"`` (CuPy push-relabel).
    shape : tuple of int
        The grid's shape, NumPy axis order: (H, W) or (D, H, W).
    device_name : str
        What solves, e.g. ``"NVIDIA H100 80GB HBM3"`` or ``"CPU (PyMaxflow, ...)"``.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.solver import GridNetwork, open_grid_solver
    >>> source = np.array([[5, 0]], np.int32); sink = np.array([[0, 5]], np.int32)
    >>> right = np.array([[3]], np.int32); down = np.zeros((0, 2), np.int32)
    >>> with open_grid_solver(GridNetwork(source, sink, right, down), device="cpu") as solver:
    ...     first = solver.solve().flow
    ...     solver.set_terminals(np.array([[5, 0]], np.int32), np.array([[0, 1]], np.int32))
    ...     second = solver.solve().flow
    >>> first, second
    (3, 1)
    """

    backend = ""
    device_name = ""

    def __init__(self, network: GridNetwork):
        if not isinstance(network, GridNetwork):
            raise TypeError(f"an incremental grid solver needs a GridNetwork, got "
                            f"{type(network).__name__}")
        self.shape = tuple(int(n) for n in network.shape)
        self._cancel_requested = threading.Event()
        self._closed = False

    # -- the interface ---------------------------------------------------------------------

    def set_terminals(self, source, sink, *, region=None) -> None:
        """Use these terminal capacities from the next :meth:`solve` on.

        Parameters
        ----------
        source, sink : array of int32, the grid's shape
            Capacities of s -> pixel and pixel -> t, in 0 .. 2**31 - 1 (the range is not
            checked: these come from the caller's already checked energy). NumPy or CuPy;
            the solver may keep references to them until the next call, and never modifies
            them.
        region : tuple of slice, optional
            One slice per axis (step 1) containing every pixel whose capacities changed since
            the capacities last set (e.g. a stroke's bounding box). The CPU backend then
            compares only that part; the GPU backend updates every pixel in one kernel anyway.
            ``None``: any pixel may have changed.

        Raises
        ------
        ValueError
            The arrays do not have the grid's shape, or ``region`` is malformed.
        RuntimeError
            The solver was closed.
        """
        self._check_open()
        for name, array in (("source", source), ("sink", sink)):
            if tuple(getattr(array, "shape", ())) != self.shape:
                raise ValueError(f"{name} capacities must have the grid's shape {self.shape}, "
                                 f"got {tuple(getattr(array, 'shape', ()))}")
        if region is not None:
            region = check_region(region, self.shape)
        self._set_terminals(source, sink, region)

    def set_nlinks(self, forward, backward=None) -> None:
        """Use these n-link capacities from the next :meth:`solve` on (e.g. another lambda).

        Parameters
        ----------
        forward : sequence of int32 arrays, one per NumPy axis
            ``forward[a]`` is the capacity of p -> p + e_a, shaped like the grid with one less
            along axis ``a`` (:class:`~graphcut.solver.GridNetwork`'s convention: for an image
            ``(down, right)``), in 0 .. 2**31 - 1 (not checked). NumPy or CuPy.
        backward : sequence of int32 arrays, optional
            The capacities of p + e_a -> p, alike; ``None``: the same as ``forward``.

        Notes
        -----
        The GPU backend keeps the flow as far as the new capacities allow (Kohli-Torr); the CPU
        backend refills its graph in the same memory and solves the next time from zero flow.

        Raises
        ------
        ValueError
            Wrong number of arrays or a wrong shape.
        RuntimeError
            The solver was closed.
        """
        self._check_open()
        forward = tuple(forward)
        backward = forward if backward is None else tuple(backward)
        ndim = len(self.shape)
        if len(forward) != ndim or len(backward) != ndim:
            raise ValueError(f"a {ndim}-D grid needs {ndim} forward and {ndim} backward n-link "
                             f"arrays (one per axis), got {len(forward)} and {len(backward)}")
        for name, side in (("forward", forward), ("backward", backward)):
            for axis, array in enumerate(side):
                expected = tuple(n - (a == axis) for a, n in enumerate(self.shape))
                got = tuple(getattr(array, "shape", ()))
                if got != expected:
                    raise ValueError(f"{name}[{axis}] must have shape {expected} for a grid of "
                                     f"shape {self.shape}, got {got}")
        self._set_nlinks(forward, backward)

    def solve(self, *, cancel=None) -> CutResult:
        """The maximum flow and minimum cut with the capacities last set.

        Parameters
        ----------
        cancel : callable, optional
            Polled without arguments between the GPU's launch batches (about every
            millisecond); when it returns True the solve stops. PyMaxflow cannot be
            interrupted: the CPU backend ignores it.

        Returns
        -------
        CutResult
            ``flow`` (exact int), ``source_side`` (bool, the grid's shape: CuPy from the GPU
            backend, NumPy from the CPU one), ``backend`` and ``stats``: ``"seconds"`` by
            stage, ``"device_name"``, ``"incremental"`` (False for the first solve after the
            n-links were loaded from zero flow) and the backend's counters.

        Raises
        ------
        SolveCancelled
            ``cancel`` returned True or :meth:`cancel` was called. The state stays valid: the
            next solve continues from where this one stopped.
        RuntimeError
            The solver was closed.
        """
        self._check_open()
        try:
            return self._solve(self._poll(cancel))
        finally:
            self._cancel_requested.clear()

    def cancel(self) -> None:
        """Ask the solve in progress (or, if none, the next one) to stop with
        :class:`~graphcut.solver.SolveCancelled`. Safe to call from another thread."""
        self._cancel_requested.set()

    def close(self) -> None:
        """Release the solver's memory (PyMaxflow's graph, the GPU state); later calls raise
        RuntimeError. Closing twice is allowed."""
        self._closed = True
        self._release()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> "IncrementalGridSolver":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- what each backend implements ------------------------------------------------------

    def _set_terminals(self, source, sink, region) -> None:
        raise NotImplementedError

    def _set_nlinks(self, forward, backward) -> None:
        raise NotImplementedError

    def _solve(self, cancel) -> CutResult:
        raise NotImplementedError

    def _release(self) -> None:
        raise NotImplementedError

    # -- helpers ---------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"this {self.backend} incremental grid solver was closed")

    def _poll(self, cancel):
        requested = self._cancel_requested

        def poll() -> bool:
            return requested.is_set() or (cancel is not None and bool(cancel()))
        return poll


def check_region(region, shape) -> tuple[slice, ...]:
    """``region`` as a tuple of slices (one per axis, step 1), clipped to ``shape``.

    Parameters
    ----------
    region : sequence of slice
        One slice per axis of ``shape`` (``(rows, cols)`` for an image).
    shape : tuple of int
        The grid's shape.

    Returns
    -------
    tuple of slice
        ``slice(start, stop)`` with ``0 <= start <= stop <= n`` on each axis.

    Raises
    ------
    TypeError
        ``region`` is not one slice per axis.
    ValueError
        A slice has a step other than 1.

    Examples
    --------
    >>> from graphcut.solver.incremental import check_region
    >>> check_region((slice(2, 50), slice(None)), (10, 4))
    (slice(2, 10, None), slice(0, 4, None))
    """
    try:
        region = tuple(region)
        if len(region) != len(shape):
            raise ValueError
        bounds = [s.indices(n) for s, n in zip(region, shape)]
    except (TypeError, ValueError, AttributeError):
        raise TypeError(f"region must be a tuple of {len(shape)} slices, one per axis "
                        f"((rows, cols) for an image), got {region!r}") from None
    if any(step != 1 for _, _, step in bounds):
        raise ValueError(f"region slices must have step 1, got {region!r}")
    return tuple(slice(start, max(start, stop)) for start, stop, _ in bounds)
