"""The Kohli-Torr terminal and n-link updates (graphcut.solver.dynamic) on NumPy states, against
oracles.

The GPU grid solver applies the terminal function to its state (GridState.change_terminals) and
does the n-link one per pixel in a kernel (GridState.change_nlinks; test_energy_kernels.py checks
it equals the function bit for bit); here the kept preflow comes from a plain-Python push-relabel
(tests/preflow_model.py) and every result is checked against scipy's maximum flow (and
PyMaxflow), with capacities up to the int32 limit.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import scipy_min_cut
from oracle import GRID_KINDS, random_grid_network
from preflow_model import max_preflow, net_outflow, nlink_capacities, source_side

from graphcut.solver import GridNetwork, min_cut
from graphcut.solver.dynamic import (INT32_MAX, fresh_terminals, reparameterize_nlinks,
                                     reparameterize_terminals, restart_nlinks)


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


# ---- n-link changes (a new smoothness weight) ----------------------------------------------------

def _links(network):
    return network.forward, network.backward


def _with_links(network, links):
    return GridNetwork(network.source, network.sink, forward=links[0], backward=links[1])


def _with_terminals(network, source, sink):
    return GridNetwork(source, sink, forward=network.forward, backward=network.backward)


def _change_nlinks(state, residual, old, new):
    """The n-link update of graphcut.solver.dynamic, restarting when it cannot keep the flow
    (as GridState.change_nlinks does); returns (state, residual, whether it restarted)."""
    update = reparameterize_nlinks(residual, state.excess, state.to_sink, state.source_capacity,
                                   state.sink_capacity, state.reparameterization, old, new)
    restarted = update is None
    if restarted:
        update = restart_nlinks(new, state.source_capacity, state.sink_capacity,
                                state.reparameterization, residual.dtype)
    return update, update.residual, restarted


def _scaled_links(rng, links, top):
    """New n-links like a lam change (all scaled by one factor, clipped to int32) or, now and
    then, drawn anew with zeros and saturated arcs."""
    if rng.random() < 0.7:
        factor = float(rng.choice([0.0, 0.3, 0.5, 2.0, 7.0]))
        return tuple(tuple(np.minimum(np.rint(a * factor), INT32_MAX).astype(np.int64)
                           for a in side) for side in links)
    def draw(a):
        values = rng.integers(0, top + 1, size=a.shape)
        kind = rng.random(a.shape)
        return np.where(kind < 0.2, 0, np.where(kind < 0.35, top, values))
    return tuple(tuple(draw(a) for a in side) for side in links)


@pytest.mark.parametrize("top", [50, 10**6, INT32_MAX])
def test_nlink_and_terminal_edit_sequences_match_scipy(top):
    """Random small grids (odd shapes, zero and saturated capacities): n-link changes and
    terminal changes interleaved on a kept preflow, each finished by push-relabel, give
    scipy's flow and minimum cut; the state stays a valid preflow of the reparameterised
    network."""
    rng = np.random.default_rng(top % 1009)
    restarts = kept = 0
    for trial in range(14):
        shape = tuple(int(v) for v in rng.integers(1, 7, size=2))
        kind = GRID_KINDS[trial % len(GRID_KINDS)]
        network = random_grid_network(rng, shape, kind=kind, max_capacity=top,
                                      symmetric=bool(trial % 2))
        residual = nlink_capacities(network)
        state = fresh_terminals(network.source, network.sink)
        assert _finish(state, residual)[0] == scipy_min_cut(network)[0]
        for step in range(6):
            if step % 3 == 2:  # a stroke: new terminal capacities
                new = random_grid_network(rng, shape, max_capacity=top)
                keep = rng.random(shape) < 0.5
                edited = _with_terminals(network, np.where(keep, network.source, new.source),
                                         np.where(keep, network.sink, new.sink))
                update = reparameterize_terminals(state.excess, state.to_sink,
                                                  state.source_capacity, state.sink_capacity,
                                                  edited.source, edited.sink)
                if update is None:
                    restarts += 1
                    residual = nlink_capacities(edited)
                    update = fresh_terminals(edited.source, edited.sink)
                state = update
            else:  # a lam change: new n-link capacities
                edited = _with_links(network, _scaled_links(rng, _links(network), top))
                state, residual, restarted = _change_nlinks(state, residual, _links(network),
                                                            _links(edited))
                restarts += restarted
                kept += not restarted
            _check_preflow(edited, state, nlink_capacities(edited), residual)
            expected_flow, expected_side = scipy_min_cut(edited)
            flow, side = _finish(state, residual)
            assert flow == expected_flow, f"trial {trial} step {step}"
            np.testing.assert_array_equal(side, expected_side)
            network = edited
    assert kept > 0
    if top == INT32_MAX:
        assert restarts > 0, "no edit reached the restart path"


def test_nlink_changes_on_a_larger_grid_match_pymaxflow():
    """A segmentation-like 24 x 31 grid: lam up, down, to zero and back, each equal to
    PyMaxflow's fresh solve."""
    rng = np.random.default_rng(4)
    shape = (24, 31)
    score = rng.normal(0, 1, shape) + np.where(np.add.outer(np.arange(24), np.arange(31)) > 27,
                                               1.0, -1.0)
    source = np.clip(40 * score, 0, None).astype(np.int64)
    sink = np.clip(-40 * score, 0, None).astype(np.int64)
    weights = (rng.uniform(0.2, 1.0, (24, 30)), rng.uniform(0.2, 1.0, (23, 31)))
    def network_for(lam):
        right, down = (np.rint(lam * w).astype(np.int64) for w in weights)
        return GridNetwork(source, sink, right, down)
    network = network_for(10.0)
    residual = nlink_capacities(network)
    state = fresh_terminals(source, sink)
    _finish(state, residual)
    for lam in (30.0, 3.0, 0.0, 12.0, 12.5):
        edited = network_for(lam)
        state, residual, restarted = _change_nlinks(state, residual, _links(network),
                                                    _links(edited))
        assert not restarted
        expected = min_cut(edited, device="cpu")
        flow, side = _finish(state, residual)
        assert flow == expected.flow
        np.testing.assert_array_equal(side, expected.source_side)
        network = edited


def test_larger_nlinks_keep_the_whole_flow():
    """Raising every n-link capacity keeps every flow: nothing is cut, nothing is
    reparameterised, and the flow value is unchanged before the re-solve."""
    rng = np.random.default_rng(11)
    network = random_grid_network(rng, (5, 6), max_capacity=100, symmetric=True)
    residual = nlink_capacities(network)
    state = fresh_terminals(network.source, network.sink)
    flow, _ = _finish(state, residual)
    bigger = _with_links(network, tuple(tuple(a * 3 for a in side) for side in _links(network)))
    update, new_residual, restarted = _change_nlinks(state, residual, _links(network),
                                                     _links(bigger))
    assert not restarted and update.reparameterization == 0
    np.testing.assert_array_equal(update.excess, state.excess)
    np.testing.assert_array_equal(nlink_capacities(bigger) - new_residual,
                                  nlink_capacities(network) - residual)  # same flows
    assert int((update.sink_capacity - update.to_sink).sum()) == flow


def test_cut_nlink_flow_reparameterises_the_head():
    """One unit path s -> p -> q -> t: setting c(p, q) to 0 returns the unit to p and leaves q
    one short, so q's terminal capacities both rise by 1 (true flow 0 after the re-solve)."""
    network = GridNetwork(np.array([[1, 0]]), np.array([[0, 1]]), np.array([[1]]),
                          np.zeros((0, 2), dtype=np.int64))
    residual = nlink_capacities(network)
    state = fresh_terminals(network.source, network.sink)
    assert _finish(state, residual)[0] == 1
    cut = _with_links(network, ((np.zeros((0, 2), np.int64), np.array([[0]])),
                                (np.zeros((0, 2), np.int64), np.array([[1]]))))
    update, residual, restarted = _change_nlinks(state, residual, _links(network), _links(cut))
    assert not restarted
    np.testing.assert_array_equal(update.excess, [[1, 0]])
    np.testing.assert_array_equal(update.source_capacity, [[1, 1]])
    np.testing.assert_array_equal(update.sink_capacity, [[0, 2]])
    assert update.reparameterization == 1
    np.testing.assert_array_equal(residual[:, 0, :], [[0, 0], [0, 1], [0, 0], [0, 0]])
    assert _finish(update, residual)[0] == 0


def test_nlink_cut_that_cannot_be_kept_restarts():
    """p pushes 2**31 - 1 through q to r while q's own sink arc is unused: cutting p -> q
    would leave q's residual to t at 2 * (2**31 - 1), so the update asks for a restart, and the
    restart from the (reparameterised) capacities in force is exact."""
    top = INT32_MAX
    right = np.array([[top, top]])
    network = GridNetwork(np.array([[top, 0, 0]]), np.array([[0, top, top]]), right,
                          np.zeros((0, 3), dtype=np.int64))
    capacities = nlink_capacities(network)
    residual = capacities.copy()
    residual[0, 0, :2] = 0            # p -> q -> r carry top
    residual[1, 0, 1:] = 2 * top      # their reverse residuals
    state = fresh_terminals(network.source, network.sink)
    state.excess[0, 0] = 0
    state.to_sink[0, 2] = 0           # r's sink arc saturated, q's unused
    _check_preflow(network, state, capacities, residual)
    cut = _with_links(network, ((np.zeros((0, 3), np.int64), np.array([[0, top]])),
                                (np.zeros((0, 3), np.int64), np.array([[0, top]]))))
    assert reparameterize_nlinks(residual, state.excess, state.to_sink, state.source_capacity,
                                 state.sink_capacity, 0, _links(network), _links(cut)) is None
    update, residual, restarted = _change_nlinks(state, residual, _links(network), _links(cut))
    assert restarted
    assert _finish(update, residual)[0] == scipy_min_cut(cut)[0] == 0
