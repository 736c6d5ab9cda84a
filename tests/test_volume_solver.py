"""3-D grids: GridNetwork, the CPU backend against scipy's maximum flow, and the GPU solver's
host code (solver/cuda/grid.py, grid3d.py) run on the NumPy model of its kernels
(tests/gpu_model.py) against PyMaxflow, for volumes and, through the same templated kernels'
2-D entry points, for images."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest
from oracle import GRID_KINDS, random_grid_network, scipy_min_cut

import gpu_model
from graphcut.solver import GridNetwork, cut_capacity, min_cut

# ---- GridNetwork --------------------------------------------------------------------------------


def test_volume_network_shapes_and_defaults():
    d, h, w = 2, 3, 4
    forward = [np.ones((d - 1, h, w), int), np.full((d, h - 1, w), 2), np.full((d, h, w - 1), 3)]
    net = GridNetwork(np.zeros((d, h, w), int), np.zeros((d, h, w), int), forward=forward)
    assert net.shape == (2, 3, 4) and net.ndim == 3 and net.num_vertices == 26
    assert all(b is f or np.array_equal(b, f) for b, f in zip(net.backward, net.forward))
    assert net.right.shape == (2, 3, 3) and net.down.shape == (2, 2, 4)
    assert net.to_csr().num_arcs == 2 * (1 * 3 * 4 + 2 * 2 * 4 + 2 * 3 * 3)


def test_2d_forward_form_equals_named_form():
    rng = np.random.default_rng(1)
    net = random_grid_network(rng, (5, 7))
    other = GridNetwork(net.source, net.sink, forward=(net.down, net.right),
                        backward=(net.up, net.left))
    for a, b in zip((net.right, net.left, net.down, net.up),
                    (other.right, other.left, other.down, other.up)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("call,error,match", [
    (lambda z: GridNetwork(z, z, z[0, :, 1:], z[0, 1:, :]), TypeError, "forward="),
    (lambda z: GridNetwork(z, z, forward=[z[1:], z[:, 1:]]), ValueError, "3 forward"),
    (lambda z: GridNetwork(z, z, forward=[z[1:], z[:, 1:], z]), ValueError,
     r"forward\[2\] must have shape \(2, 3, 3\)"),
    (lambda z: GridNetwork(z, z, forward=[z[1:], z[:, 1:], -1 - z[:, :, 1:]]), ValueError,
     "negative"),
    (lambda z: GridNetwork(z[None], z[None], forward=[z] * 4), ValueError, "2-D .* or 3-D"),
])
def test_bad_volume_networks_are_rejected(call, error, match):
    with pytest.raises(error, match=match):
        call(np.zeros((2, 3, 4), dtype=np.int32))


# ---- CPU backend --------------------------------------------------------------------------------

VOLUME_SHAPES = [(1, 1, 1), (1, 1, 9), (9, 1, 1), (1, 7, 1), (2, 3, 4), (3, 5, 7), (4, 1, 6),
                 (5, 6, 3)]


@pytest.mark.parametrize("kind", GRID_KINDS)
def test_cpu_volumes_match_scipy(kind):
    rng = np.random.default_rng(sum(map(ord, kind)))
    for shape in VOLUME_SHAPES:
        for symmetric in (True, False):
            net = random_grid_network(rng, shape, kind=kind, symmetric=symmetric)
            result = min_cut(net, device="cpu")
            flow, side = scipy_min_cut(net)
            assert result.flow == flow
            np.testing.assert_array_equal(result.source_side, side)
            assert cut_capacity(net, result.source_side) == flow


def test_cpu_volume_large_capacities_exact():
    rng = np.random.default_rng(4)
    big = np.iinfo(np.int32).max
    net = random_grid_network(rng, (3, 4, 5), max_capacity=big, terminal_max=big)
    result = min_cut(net, device="cpu")
    assert result.flow > 2**31
    assert result.flow == scipy_min_cut(net)[0]


# ---- GPU host code on the kernel model ----------------------------------------------------------

@pytest.fixture
def model_grid(monkeypatch):
    """graphcut.solver.cuda.grid imported against the CuPy stand-in, its kernels the model's.

    Yields the module; afterwards the real modules (or their absence) are restored."""
    with gpu_model.cuda_modules_on_model() as load:
        grid = load("graphcut.solver.cuda.grid")
        monkeypatch.setattr(grid, "kernel", gpu_model.model_kernel)
        grid.release_cached_state()
        yield grid


def assert_model_matches_cpu(grid, network, schedule=None):
    expected = min_cut(network, device="cpu")
    got = grid.grid_min_cut(network, schedule=schedule)
    assert got.backend == "cuda"
    assert got.flow == expected.flow
    np.testing.assert_array_equal(np.asarray(got.source_side), expected.source_side)
    return got


@pytest.mark.parametrize("kind", GRID_KINDS)
def test_model_volumes_match_pymaxflow(model_grid, kind):
    """Odd shapes, 1-voxel-thick volumes, and volumes crossing the 32x4x2 push-relabel and
    32x8x4 BFS tiles along every axis."""
    rng = np.random.default_rng(10 + GRID_KINDS.index(kind))
    shapes = [(1, 1, 1), (1, 1, 40), (6, 1, 1), (1, 9, 1), (3, 5, 7), (5, 9, 3), (9, 10, 35)]
    for shape in shapes:
        assert_model_matches_cpu(model_grid, random_grid_network(rng, shape, kind=kind))


def test_model_volume_asymmetric_large_capacities(model_grid):
    rng = np.random.default_rng(3)
    big = np.iinfo(np.int32).max
    net = random_grid_network(rng, (3, 6, 34), max_capacity=big, terminal_max=big)
    assert assert_model_matches_cpu(model_grid, net).flow > 2**31


def test_model_images_match_pymaxflow(model_grid):
    """The 2-D entry points of the same kernels (tiles 32x8 and 32x32)."""
    rng = np.random.default_rng(5)
    for shape, kind in [((1, 1), "random"), ((9, 40), "sparse"), ((40, 9), "saturated"),
                        ((35, 70), "random")]:
        assert_model_matches_cpu(model_grid, random_grid_network(rng, shape, kind=kind))


def test_model_schedules(model_grid):
    """Graphs off, no block synchronisation, one step per launch: same answer."""
    rng = np.random.default_rng(6)
    net = random_grid_network(rng, (4, 9, 33))
    for schedule in (model_grid.Schedule(graphs=False),
                     model_grid.Schedule(block_sync=False, cycles=1, launches_per_relabel=3),
                     model_grid.Schedule(bfs_passes_per_check=2)):
        assert_model_matches_cpu(model_grid, net, schedule)


def test_model_dynamic_resolve_equals_fresh_solve(model_grid):
    """change_terminals on a kept VolumeState, then solve: the fresh solve's flow and cut."""
    rng = np.random.default_rng(8)
    shape = (4, 7, 33)
    net = random_grid_network(rng, shape, max_capacity=50)
    state = model_grid.GridState.from_network(net)
    assert type(state).__name__ == "VolumeState"
    state.solve()
    for _ in range(4):
        source = np.where(rng.random(shape) < 0.3, rng.integers(0, 100, shape), net.source)
        sink = np.where(rng.random(shape) < 0.3, rng.integers(0, 100, shape), net.sink)
        net = GridNetwork(source, sink, forward=net.forward, backward=net.backward)
        cupy = sys.modules["cupy"]  # the stand-in
        state.change_terminals(cupy.asarray(source), cupy.asarray(sink))
        state.solve()
        expected = min_cut(net, device="cpu")
        assert state.true_flow() == expected.flow
        np.testing.assert_array_equal(state.source_side().get(), expected.source_side)


def test_model_state_is_reused_for_the_same_shape(model_grid):
    rng = np.random.default_rng(9)
    first = random_grid_network(rng, (3, 5, 6))
    assert_model_matches_cpu(model_grid, first)
    kept = next(iter(model_grid._reusable.values()))
    assert_model_matches_cpu(model_grid, random_grid_network(rng, (3, 5, 6), kind="sparse"))
    assert next(iter(model_grid._reusable.values())) is kept


def test_model_volume_too_large_for_gpu_memory(model_grid):
    from graphcut.solver.cuda import GPUMemoryError
    from graphcut.solver.cuda.grid3d import STATE_BYTES_PER_VOXEL, VolumeState
    free = 8 * 2**30  # the stand-in's free memory
    side = int((free / STATE_BYTES_PER_VOXEL) ** (1 / 3)) + 1
    with pytest.raises(GPUMemoryError, match=f"{side}x{side}x{side} volume"):
        VolumeState.allocate((side, side, side))
    with pytest.raises(GPUMemoryError, match="32-bit"):
        VolumeState.allocate((2048, 1024, 1024))
