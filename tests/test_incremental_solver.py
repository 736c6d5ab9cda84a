"""The incremental grid solver (graphcut.solver.open_grid_solver): after every change of terminal
or n-link capacities its solve must give the flow value and the source side of a fresh solve of
the network with those capacities. The CPU backend (PyMaxflow keeping its graph) is checked
against fresh PyMaxflow solves and scipy's maximum flow; the GPU backend's host code runs on
the NumPy model of its kernels (tests/gpu_model.py) and, marked ``gpu``, on a real GPU."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from oracle import random_grid_network, scipy_min_cut

import gpu_model
from graphcut.solver import (GridNetwork, IncrementalGridSolver, SolveCancelled, min_cut,
                             open_grid_solver)

SHAPES = [(1, 1), (5, 7), (9, 40), (3, 5, 7), (2, 9, 33)]


def _edit(rng, network, *, share=0.3, top=100, region=None):
    """``network`` with new t-links on a random ``share`` of its pixels (inside ``region``)."""
    shape = network.shape
    pick = rng.random(shape) < share
    if region is not None:
        inside = np.zeros(shape, bool)
        inside[region] = True
        pick &= inside
    source = np.where(pick, rng.integers(0, top + 1, shape), network.source).astype(np.int32)
    sink = np.where(pick, rng.integers(0, top + 1, shape), network.sink).astype(np.int32)
    return GridNetwork(source, sink, forward=network.forward, backward=network.backward)


def _relinked(rng, network, scale):
    """``network`` with its n-links scaled by ``scale`` (another lambda), randomly rounded."""
    def draw(links):
        return tuple(np.floor(a * scale + rng.random(a.shape)).astype(np.int32) for a in links)
    return GridNetwork(network.source, network.sink, forward=draw(network.forward),
                       backward=draw(network.backward))


def _assert_fresh(result, network):
    expected = min_cut(network, device="cpu")
    assert result.flow == expected.flow
    side = result.source_side  # a CuPy array from the GPU backend: compared on the host
    side = side.get() if hasattr(side, "get") else np.asarray(side)
    np.testing.assert_array_equal(side, expected.source_side)


def _run_sequence(open_solver, seed, shape, steps=8):
    """Random terminal edits (some with a region), n-link changes and plain re-solves."""
    rng = np.random.default_rng(seed)
    network = random_grid_network(rng, shape, max_capacity=60)
    solver = open_solver(network)
    assert isinstance(solver, IncrementalGridSolver) and solver.shape == shape
    first = solver.solve()
    _assert_fresh(first, network)
    assert first.stats["incremental"] is False
    for step in range(steps):
        kind = step % 4
        if kind == 3:
            network = _relinked(rng, network, rng.choice([0.3, 0.9, 1.7]))
            solver.set_nlinks(network.forward, network.backward)
        else:
            region = None
            if kind == 1:
                region = tuple(slice(n // 3, n // 3 + 1 + n // 2) for n in shape)
            network = _edit(rng, network, share=rng.choice([0.02, 0.5]), region=region)
            solver.set_terminals(network.source, network.sink, region=region)
        _assert_fresh(solver.solve(), network)
    _assert_fresh(solver.solve(), network)  # nothing changed: the same answer again
    solver.close()
    assert solver.closed


# ---- CPU backend ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_cpu_edit_sequences_match_fresh_solves(shape):
    _run_sequence(lambda net: open_grid_solver(net, device="cpu"), SHAPES.index(shape), shape)


@pytest.mark.parametrize("reuse_trees", [None, True, False])
def test_cpu_tree_reuse_choices_agree_with_scipy(reuse_trees):
    rng = np.random.default_rng(5)
    network = random_grid_network(rng, (6, 11), max_capacity=30)
    solver = open_grid_solver(network, device="cpu", reuse_trees=reuse_trees)
    assert solver.backend == "cpu" and "PyMaxflow" in solver.device_name
    solver.solve()
    for share in (0.01, 0.05, 0.8):
        network = _edit(rng, network, share=share, top=30)
        solver.set_terminals(network.source, network.sink)
        result = solver.solve()
        flow, side = scipy_min_cut(network)
        assert result.flow == flow
        np.testing.assert_array_equal(result.source_side, side)
        changed = result.stats["changed_terminals"]
        expected_reuse = changed <= 0.1 * 66 if reuse_trees is None else reuse_trees
        assert result.stats["reused_trees"] == expected_reuse
        assert result.stats["incremental"] is True


def test_cpu_several_regions_before_one_solve():
    """Two edits in two regions, then one solve: both are applied (their bounding box)."""
    rng = np.random.default_rng(9)
    network = random_grid_network(rng, (12, 20), max_capacity=40)
    solver = open_grid_solver(network, device="cpu")
    solver.solve()
    for region in [(slice(0, 3), slice(0, 4)), (slice(8, 12), slice(15, 20))]:
        network = _edit(rng, network, share=1.0, region=region)
        solver.set_terminals(network.source, network.sink, region=region)
    _assert_fresh(solver.solve(), network)


def test_cpu_nlinks_before_the_first_solve():
    rng = np.random.default_rng(2)
    network = random_grid_network(rng, (7, 9))
    solver = open_grid_solver(network, device="cpu")
    network = _relinked(rng, network, 2.5)
    solver.set_nlinks(network.forward, network.backward)
    _assert_fresh(solver.solve(), network)


def test_cpu_symmetric_nlinks_default_backward():
    rng = np.random.default_rng(3)
    network = random_grid_network(rng, (6, 8), symmetric=True)
    solver = open_grid_solver(network, device="cpu")
    solver.solve()
    new = _relinked(rng, network, 0.5)
    solver.set_nlinks(new.forward)  # backward None: the same as forward
    _assert_fresh(solver.solve(), GridNetwork(new.source, new.sink, forward=new.forward))


def test_bad_arguments_are_rejected():
    rng = np.random.default_rng(0)
    network = random_grid_network(rng, (4, 5))
    with pytest.raises(TypeError, match="GridNetwork"):
        open_grid_solver(network.to_csr(), device="cpu")
    with pytest.raises(ValueError, match="unknown device"):
        open_grid_solver(network, device="tpu")
    with pytest.raises(ValueError, match="reuse_trees"):
        open_grid_solver(network, device="cpu", reuse_trees="sometimes")
    solver = open_grid_solver(network, device="cpu")
    with pytest.raises(ValueError, match=r"source capacities must have the grid's shape \(4, 5\)"):
        solver.set_terminals(np.zeros((5, 4), np.int32), network.sink)
    with pytest.raises(TypeError, match="tuple of 2 slices"):
        solver.set_terminals(network.source, network.sink, region=(slice(0, 2),))
    with pytest.raises(ValueError, match="step 1"):
        solver.set_terminals(network.source, network.sink, region=(slice(0, 4, 2), slice(None)))
    with pytest.raises(ValueError, match="2 forward and 2 backward"):
        solver.set_nlinks(network.forward[:1])
    with pytest.raises(ValueError, match=r"forward\[1\] must have shape \(4, 4\)"):
        solver.set_nlinks((network.forward[0], np.zeros((4, 5), np.int32)))
    _assert_fresh(solver.solve(), network)  # the rejected calls changed nothing
    solver.close()
    solver.close()  # twice is fine
    for call in (solver.solve, lambda: solver.set_terminals(network.source, network.sink),
                 lambda: solver.set_nlinks(network.forward)):
        with pytest.raises(RuntimeError, match="closed"):
            call()


def test_context_manager_closes():
    network = random_grid_network(np.random.default_rng(1), (3, 3))
    with open_grid_solver(network, device="cpu") as solver:
        _assert_fresh(solver.solve(), network)
    assert solver.closed


def test_cpu_ignores_cancel_requests():
    """PyMaxflow cannot be interrupted: a cancel request does not stop a CPU solve, and is
    dropped once that solve ends."""
    network = random_grid_network(np.random.default_rng(4), (5, 6))
    solver = open_grid_solver(network, device="cpu")
    solver.cancel()
    _assert_fresh(solver.solve(cancel=lambda: True), network)


# ---- GPU backend on the NumPy model of its kernels ------------------------------------------


@pytest.fixture
def model_backend(monkeypatch):
    """solver/cuda/incremental.py imported against the CuPy stand-in, kernels the model's."""
    with gpu_model.cuda_modules_on_model() as load:
        grid = load("graphcut.solver.cuda.grid")
        monkeypatch.setattr(grid, "kernel", gpu_model.model_kernel)
        grid.release_cached_state()
        yield load("graphcut.solver.cuda.incremental")


@pytest.mark.parametrize("shape", SHAPES)
def test_model_gpu_edit_sequences_match_fresh_solves(model_backend, shape):
    def open_model(network):
        solver = model_backend.PushRelabelGridSolver(network)
        assert solver.backend == "cuda"
        return solver
    _run_sequence(open_model, 20 + SHAPES.index(shape), shape, steps=6)


def test_model_gpu_nlink_changes_report_kept_flow(model_backend):
    rng = np.random.default_rng(11)
    network = random_grid_network(rng, (6, 35), max_capacity=40)
    solver = model_backend.PushRelabelGridSolver(network)
    solver.solve()
    network = _relinked(rng, network, 1.5)  # larger capacities hold the whole flow
    solver.set_nlinks(network.forward, network.backward)
    result = solver.solve()
    _assert_fresh(result, network)
    assert result.stats["nlink_change"] == "kept" and result.stats["incremental"] is True


def test_model_gpu_cancel_then_continue(model_backend):
    """A cancelled solve raises SolveCancelled; the next solve gives the fresh answer, and a
    cancel request made with cancel() is dropped once the solve it stopped ends."""
    rng = np.random.default_rng(12)
    network = random_grid_network(rng, (9, 40), max_capacity=50)
    solver = model_backend.PushRelabelGridSolver(network)
    with pytest.raises(SolveCancelled):
        solver.solve(cancel=lambda: True)
    network = _edit(rng, network)
    solver.set_terminals(network.source, network.sink)
    solver.cancel()
    with pytest.raises(SolveCancelled):
        solver.solve()
    _assert_fresh(solver.solve(), network)
    cupy = sys.modules["cupy"]  # the stand-in: device arrays are accepted too
    network = _edit(rng, network)
    solver.set_terminals(cupy.asarray(network.source), cupy.asarray(network.sink))
    _assert_fresh(solver.solve(), network)


# ---- GPU backend on a GPU -------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SHAPES + [(200, 300), (20, 40, 50)])
def test_gpu_edit_sequences_match_fresh_solves(shape):
    def open_gpu(network):
        solver = open_grid_solver(network, device="cuda")
        assert solver.backend == "cuda"
        return solver
    _run_sequence(open_gpu, 40 + len(shape) + shape[0], shape)


@pytest.mark.gpu
def test_gpu_cancel_then_continue():
    rng = np.random.default_rng(13)
    network = random_grid_network(rng, (300, 400), max_capacity=200)
    solver = open_grid_solver(network, device="cuda")
    solver.cancel()
    with pytest.raises(SolveCancelled):
        solver.solve()
    result = solver.solve()
    _assert_fresh(result, network)
    assert type(result.source_side).__module__.startswith("cupy")
