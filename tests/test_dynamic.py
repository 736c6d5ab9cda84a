"""The Kohli-Torr terminal update (graphcut.solver.dynamic) on NumPy states, against oracles.

The GPU grid solver applies this very function to its state (GridState.change_terminals); here
the kept preflow comes from a plain-Python push-relabel (tests/preflow_model.py) and every
result is checked against scipy's maximum flow, with capacities up to the int32 limit.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import scipy_min_cut
from preflow_model import max_preflow, net_outflow, nlink_capacities, source_side

from graphcut.solver import GridNetwork
from graphcut.solver.dynamic import INT32_MAX, fresh_terminals, reparameterize_terminals


def _finish(state, residual):
    """Run phase I to the end from ``state`` (in place); returns (true flow, source side)."""
    assert (state.excess >= 0).all()
    max_preflow(residual, state.excess, state.to_sink)
    flow = int((state.sink_capacity - state.to_sink).sum()) - state.reparameterization
    return flow, source_side(residual, state.to_sink)


def _check_preflow(network, state, capacities, residual):
    """Capacity and conservation constraints of the reparameterised network."""
    delta_source = state.source_capacity - network.source
    delta_sink = state.sink_capacity - network.sink
    np.testing.assert_array_equal(delta_source, delta_sink)
    assert (delta_source >= 0).all()
    assert int(delta_source.sum()) == state.reparameterization
    assert (state.excess >= 0).all()
    assert ((state.to_sink >= 0) & (state.to_sink <= state.sink_capacity)).all()
    assert (state.to_sink <= INT32_MAX).all()
    assert (residual >= 0).all()
    sink_flow = state.sink_capacity - state.to_sink
    np.testing.assert_array_equal(
        state.excess, state.source_capacity - sink_flow - net_outflow(capacities, residual))


def _random_network(rng, shape, top):
    h, w = shape
    def draw(s):
        values = rng.integers(0, top + 1, size=s, dtype=np.int64)
        return np.where(rng.random(s) < 0.2, 0, values)
    return GridNetwork(draw((h, w)), draw((h, w)), draw((h, w - 1)), draw((h - 1, w)),
                       draw((h, w - 1)), draw((h - 1, w)))


@pytest.mark.parametrize("top", [50, 10**6, INT32_MAX])
def test_edit_sequences_match_scipy(top):
    rng = np.random.default_rng(top % 1000)
    restarts = 0
    for trial in range(12):
        shape = tuple(int(v) for v in rng.integers(1, 6, size=2))
        network = _random_network(rng, shape, top)
        capacities = nlink_capacities(network)
        residual = capacities.copy()
        state = fresh_terminals(network.source, network.sink)
        assert _finish(state, residual)[0] == scipy_min_cut(network)[0]
        for _ in range(4):
            new = _random_network(rng, shape, top)
            keep = rng.random(shape) < 0.5
            edited = GridNetwork(np.where(keep, network.source, new.source),
                                 np.where(keep, network.sink, new.sink),
                                 network.right, network.down, network.left, network.up)
            update = reparameterize_terminals(state.excess, state.to_sink, state.source_capacity,
                                              state.sink_capacity, edited.source, edited.sink)
            if update is None:  # restart from the capacities in force, as GridState does
                restarts += 1
                residual = capacities.copy()
                update = fresh_terminals(edited.source, edited.sink)
            _check_preflow(edited, update, capacities, residual)
            state = update
            expected_flow, expected_side = scipy_min_cut(edited)
            flow, side = _finish(state, residual)
            assert flow == expected_flow
            np.testing.assert_array_equal(side, expected_side)
            network = edited
    if top == INT32_MAX:
        assert restarts > 0, "no edit reached the restart path"


def test_large_net_outflow_cannot_be_kept():
    """A pixel pushing ~2**31 into its neighbour: raising its sink by the same amount would
    leave int32, so the update asks for a restart (GridState then reloads the capacities)."""
    network = GridNetwork(np.array([[INT32_MAX, 0]]), np.array([[0, INT32_MAX]]),
                          np.array([[INT32_MAX]]), np.zeros((0, 2), dtype=np.int64))
    capacities = nlink_capacities(network)
    residual = capacities.copy()
    state = fresh_terminals(network.source, network.sink)
    assert _finish(state, residual)[0] == INT32_MAX
    new_source, new_sink = np.array([[0, 0]]), np.array([[INT32_MAX, INT32_MAX]])
    assert reparameterize_terminals(state.excess, state.to_sink, state.source_capacity,
                                    state.sink_capacity, new_source, new_sink) is None
