"""Minimum cuts of expansion moves on one incremental grid solver per label, each keeping its
flow from that label's previous move (:func:`graphcut.solver.open_grid_solver`).

Consecutive moves of one label differ where the labelling changed between them (n-links and
t-links) and where the data costs changed (t-links only). On the GPU the push-relabel state
takes both changes with the Kohli-Torr reparameterisation and resumes from its preflow, so a
move whose network barely changed since that label's last move (a stroke's update started
from the previous labelling) costs a fraction of a fresh solve. Every cut equals a fresh
:func:`graphcut.solver.min_cut`'s: the same flow and the same (largest) source side.
"""

from __future__ import annotations

from graphcut.solver import CutResult, GridNetwork, open_grid_solver


class IncrementalMoveCuts:
    """Minimum cuts of expansion-move networks, one incremental solver per label.

    Call it as ``cuts(network, label)`` with a 2-D :class:`~graphcut.solver.GridNetwork`; it
    returns the :class:`~graphcut.solver.CutResult` that ``min_cut(network, device=device)``
    returns (the same flow and source side), solved by the solver kept for ``label``, which
    starts from the flow of that label's previous move. A new shape closes every solver.

    Parameters
    ----------
    device : {"cuda", "cpu"}
        The solvers' backend. "cuda" (push-relabel, Kohli-Torr updates of the n-links and
        t-links) is what it is for; "cpu" (PyMaxflow, whose graph is refilled from zero
        flow when the n-links change) gives the same cuts and serves as its reference.

    Notes
    -----
    Holds one solver state per label seen (on the GPU about the memory of one one-object
    incremental solver each); :meth:`close` releases them all.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.labeling import IncrementalMoveCuts, PairWeights, expansion_network
    >>> costs = np.array([[[0, 4, 9]], [[9, 5, 0]]], np.int32)
    >>> weights = PairWeights(np.array([[5, 5]]), np.zeros((0, 3), int))
    >>> network, constant = expansion_network(costs, weights, np.zeros((1, 3), np.int32), 1)
    >>> cuts = IncrementalMoveCuts(device="cpu")
    >>> cut = cuts(network, 1)
    >>> constant + cut.flow, cut.source_side.tolist()
    (9, [[True, True, False]])
    >>> cuts.close()
    """

    def __init__(self, device: str = "cuda"):
        if device not in ("cuda", "cpu"):
            raise ValueError(f"device must be 'cuda' or 'cpu', got {device!r}")
        self.device = device
        self._solvers = {}
        self._shape = None

    def __call__(self, network: GridNetwork, label=None) -> CutResult:
        if network.shape != self._shape:
            self.close()
            self._shape = network.shape
        solver = self._solvers.get(label)
        if solver is None:
            solver = open_grid_solver(network, device=self.device)
            self._solvers[label] = solver
        else:
            solver.set_nlinks(network.forward, network.backward)
            solver.set_terminals(network.source, network.sink)
        return solver.solve()

    @property
    def labels(self) -> tuple:
        """The labels whose solver is held."""
        return tuple(self._solvers)

    def close(self) -> None:
        """Release every solver (the next move of a label opens a new one)."""
        while self._solvers:
            self._solvers.popitem()[1].close()
        self._shape = None


__all__ = ["IncrementalMoveCuts"]
