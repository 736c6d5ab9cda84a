"""The state of an expansion run between its moves (:func:`._expansion.alpha_expansion`): the
current labels and their data costs, each move's network, the proposal a cut makes and its
exact energy, on the host (:class:`HostMoves`, NumPy) or the GPU (:class:`DeviceMoves`, the
kernels of ``expansion_kernels.cu``)."""

from __future__ import annotations

import numpy as np

from graphcut.solver import GridNetwork

from ._moves import _energy, _energy_change, _gather, _move_network

# A host move that changes at most 1 / SPARSE_SHARE of the pixels has its energy updated from
# theirs rather than summed over the image.
SPARSE_SHARE = 16


class HostMoves:
    """The expansion loop's per-move arithmetic with NumPy."""

    def __init__(self, costs, weights, labels, cap):
        self.costs, self.weights, self.cap = costs, weights, cap
        self.labels = np.ascontiguousarray(labels)  # changed in place by sparse moves
        self.current = np.ascontiguousarray(_gather(costs, labels))  # their data costs

    def energy(self) -> int:
        self.now = _energy(self.current, self.weights, self.labels, self.cap)
        return self.now

    def network(self, alpha):
        return _move_network(self.costs[alpha], self.current, self.weights, self.labels, alpha,
                             self.cap)

    def propose(self, alpha, source_side, constant):
        """The cut's labelling; returns (constant, its exact energy, pixels changed). When few
        pixels change (later cycles' moves), the energy is the current one plus the change of
        their terms (:func:`._moves._energy_change`), else that of the whole new labelling."""
        switch = ~np.asarray(source_side)
        switch &= self.labels != alpha  # the pixels that change
        changed = int(np.count_nonzero(switch))
        self.sparse = None
        if changed * SPARSE_SHARE <= switch.size:
            indices = np.flatnonzero(switch)
            self.sparse = (alpha, indices)
            self.proposed = self.now + _energy_change(self.costs[alpha], self.current,
                                                      self.weights, self.labels, switch,
                                                      indices, alpha, self.cap)
            return constant, self.proposed, changed
        self.proposal = np.where(switch, np.int32(alpha), self.labels)
        self.proposal_cost = np.where(switch, self.costs[alpha], self.current)
        self.proposed = _energy(self.proposal_cost, self.weights, self.proposal, self.cap)
        return constant, self.proposed, changed

    def accept(self):
        if self.sparse is not None:  # the state's own arrays, changed in place
            alpha, indices = self.sparse
            self.labels.reshape(-1)[indices] = alpha
            self.current.reshape(-1)[indices] = self.costs[alpha].reshape(-1)[indices]
        else:
            self.labels, self.current = self.proposal, self.proposal_cost
        self.now = self.proposed

    def final_labels(self):
        return self.labels


class DeviceMoves:
    """The same arithmetic on the GPU with the kernels of ``expansion_kernels.cu``."""

    def __init__(self, costs, weights, labels, cap):
        import cupy

        from ._cuda import kernel, launch_config
        self.cupy = cupy
        self.kernel, self.launch = kernel, launch_config
        self.costs, self.weights, self.cap = costs, weights, cap
        _, h, w = costs.shape
        self.shape = (h, w)
        self.labels = labels
        self.current = _gather(costs, labels).astype(np.int32)
        self.left, self.up = cupy.zeros((h, w - 1), np.int32), cupy.zeros((h - 1, w), np.int32)
        self.proposal = cupy.empty((h, w), dtype=np.int32)
        self.proposal_cost = cupy.empty((h, w), dtype=np.int32)
        self.offset = cupy.empty((h, w), dtype=np.int64)
        self.terms = cupy.empty((h, w), dtype=np.int64)
        self.changed = cupy.empty((h, w), dtype=np.int64)
        self.sums = cupy.empty(3, dtype=np.int64)
        self.args = (np.int32(cap), np.int32(h), np.int32(w))

    def energy(self) -> int:
        h, w = self.shape
        self.kernel("energy_terms")(*self.launch(h * w), (
            self.labels, self.current, *self.weights, *self.args, self.terms))
        return int(self.terms.sum())

    def network(self, alpha):
        """A new network per move (CuPy's memory pool makes that cheap), so that networks
        handed to callbacks are never overwritten by later moves."""
        cupy = self.cupy
        h, w = self.shape
        source, sink = cupy.empty((h, w), np.int32), cupy.empty((h, w), np.int32)
        right, down = cupy.empty((h, w - 1), np.int32), cupy.empty((h - 1, w), np.int32)
        self.kernel("expansion_network")(*self.launch(h * w), (
            self.costs[alpha], self.current, self.labels, *self.weights, np.int32(alpha),
            *self.args, source, sink, right, down, self.offset))
        self.sums[0] = self.offset.sum()
        # valid by construction, as the host's (_moves._move_network): no checking reductions
        network = GridNetwork.from_checked(source, sink, (down, right), (self.up, self.left))
        return network, None  # the constant is read back with the proposal's sums

    def propose(self, alpha, source_side, constant):
        h, w = self.shape
        self.kernel("apply_cut")(*self.launch(h * w), (
            source_side, self.labels, self.current, self.costs[alpha], *self.weights,
            np.int32(alpha), *self.args, self.proposal, self.proposal_cost, self.terms,
            self.changed))
        self.sums[1] = self.terms.sum()
        self.sums[2] = self.changed.sum()
        constant, energy, changed = (int(v) for v in self.sums.get())
        return constant, energy, changed

    def accept(self):
        self.labels, self.proposal = self.proposal, self.labels
        self.current, self.proposal_cost = self.proposal_cost, self.current

    def final_labels(self):
        return self.labels.get()


__all__ = ["DeviceMoves", "HostMoves", "SPARSE_SHARE"]
