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
                     model_grid.Schedule(bfs_passes_per_check=2),
                     model_grid.Schedule(first_launches=None),
                     model_grid.Schedule(cycles=1, launches_per_relabel=7, first_launches=3)):
        assert_model_matches_cpu(model_grid, net, schedule)


def test_model_batches_ramp_up(model_grid):
    """The batches between global relabels follow Schedule.batch_launches: a solve that one
    launch finishes stops after it with the ramp (1, 2, 4, ...), after a full batch without;
    a long solve launches the ramp's batches in order. Same answer either way."""
    source = np.zeros((1, 40), np.int32)
    sink = np.zeros((1, 40), np.int32)
    source[0, 0], sink[0, 1] = 5, 5          # one push next door: done in one launch
    links = (np.zeros((0, 40), np.int32), np.full((1, 39), 9, np.int32))  # down, right
    short = GridNetwork(source, sink, forward=links)
    ramp = model_grid.Schedule(cycles=1, launches_per_relabel=16, first_launches=1)
    flat = model_grid.Schedule(cycles=1, launches_per_relabel=16, first_launches=None)
    assert assert_model_matches_cpu(model_grid, short, ramp).stats["push_relabel_launches"] == 1
    assert assert_model_matches_cpu(model_grid, short, flat).stats["push_relabel_launches"] == 16
    source, sink = np.zeros((1, 40), np.int32), np.zeros((1, 40), np.int32)
    source[0, 0], sink[0, -1] = 5, 5          # 39 steps along the row: several batches
    long = GridNetwork(source, sink, forward=links)
    got = assert_model_matches_cpu(model_grid, long, ramp)
    relabels, launches = got.stats["global_relabels"], got.stats["push_relabel_launches"]
    assert relabels >= 3
    assert launches == sum(ramp.batch_launches(k) for k in range(relabels - 1))


@pytest.mark.parametrize("bad", [dict(first_launches=0), dict(first_launches=1.5),
                                 dict(first_launches=True)])
def test_model_invalid_first_launches(model_grid, bad):
    with pytest.raises((ValueError, TypeError), match="first_launches"):
        model_grid.Schedule(**bad)


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
    from graphcut.solver.cuda.grid import VolumeState
    from graphcut.solver.cuda.grid3d import STATE_BYTES_PER_VOXEL
    free = 8 * 2**30  # the stand-in's free memory
    side = int((free / STATE_BYTES_PER_VOXEL) ** (1 / 3)) + 1
    with pytest.raises(GPUMemoryError, match=f"{side}x{side}x{side} volume"):
        VolumeState.allocate((side, side, side))
    with pytest.raises(GPUMemoryError, match="32-bit"):
        VolumeState.allocate((2048, 1024, 1024))


# ---- n-link changes (a new lam) on a kept state; shared with test_cuda_grid.py on the GPU ------

def check_nlink_edit_sequence(grid, xp, rng, shape, top, steps=6) -> tuple[int, int]:
    """On one kept ``grid.GridState``: new n-links (scaled as by a lam change, or drawn anew
    with zero and saturated arcs) and new terminals (strokes) interleaved, each followed by a
    solve that must give PyMaxflow's fresh flow and cut. ``xp`` puts arrays on the device.
    Returns (n-link changes that kept the flow, that restarted)."""
    from preflow_model import random_links
    network = random_grid_network(rng, shape, max_capacity=top, symmetric=bool(rng.integers(2)))
    state = grid.GridState.from_network(network)
    state.solve()
    kept = restarted = 0
    for step in range(steps):
        if step % 3 == 2:
            new = random_grid_network(rng, shape, max_capacity=top)
            keep = rng.random(shape) < 0.5
            network = GridNetwork(np.where(keep, network.source, new.source),
                                  np.where(keep, network.sink, new.sink),
                                  forward=network.forward, backward=network.backward)
            state.change_terminals(xp.asarray(network.source), xp.asarray(network.sink))
        else:
            if rng.random() < 0.6:
                factor = float(rng.choice([0.0, 0.4, 2.5]))
                forward, backward = (tuple(np.minimum(np.rint(a * factor), top).astype(np.int32)
                                           for a in side)
                                     for side in (network.forward, network.backward))
            else:
                forward, backward = random_links(rng, shape, top)
            symmetric = step % 2 == 0
            network = GridNetwork(network.source, network.sink, forward=forward,
                                  backward=None if symmetric else backward)
            done = state.change_nlinks([xp.asarray(a) for a in network.forward],
                                       None if symmetric else
                                       [xp.asarray(a) for a in network.backward])
            kept += done
            restarted += not done
        state.solve()
        expected = min_cut(network, device="cpu")
        assert state.true_flow() == expected.flow, f"step {step}"
        side = state.source_side().get()
        np.testing.assert_array_equal(side, expected.source_side)
        assert cut_capacity(network, side) == expected.flow
    return kept, restarted


def check_nlink_overflow_restarts(grid, xp, ndim):
    """p -> q -> r carrying 2**31 - 1 while q's sink arc (raised by a stroke) is unused:
    cutting p -> q would leave q's residual to t above int32, so change_nlinks restarts, and
    the next solve is still exact."""
    top = 2**31 - 1
    shape = (1,) * (ndim - 1) + (3,)
    line = np.array([top, top]).reshape((1,) * (ndim - 1) + (2,))
    forward = [np.zeros(tuple(n - (a == axis) for a, n in enumerate(shape)), np.int64)
               for axis in range(ndim - 1)] + [line]
    source = np.array([top, 0, 0]).reshape(shape)
    network = GridNetwork(source, np.array([0, 0, top]).reshape(shape), forward=forward)
    state = grid.GridState.from_network(network)
    state.solve()
    assert state.true_flow() == top
    network = GridNetwork(source, np.array([0, top, top]).reshape(shape), forward=forward)
    assert state.change_terminals(xp.asarray(network.source), xp.asarray(network.sink))
    cut = forward[:-1] + [np.array([0, top]).reshape(line.shape)]
    network = GridNetwork(network.source, network.sink, forward=cut)
    assert state.change_nlinks([xp.asarray(a) for a in cut]) is False
    state.solve()
    assert state.true_flow() == min_cut(network, device="cpu").flow == 0


@pytest.mark.parametrize("shape", [(1, 1), (6, 1), (5, 37), (9, 40), (1, 1, 4), (3, 5, 34)])
def test_model_nlink_changes_equal_fresh_solves(model_grid, shape):
    """GridState.change_nlinks (the GPU Segmenter's new lam) on images and volumes."""
    rng = np.random.default_rng(sum(shape))
    kept = 0
    for top in (60, 2**31 - 1):
        kept += check_nlink_edit_sequence(model_grid, sys.modules["cupy"], rng, shape, top)[0]
    assert kept > 0


@pytest.mark.parametrize("ndim", [2, 3])
def test_model_nlink_change_that_cannot_be_kept_restarts(model_grid, ndim):
    check_nlink_overflow_restarts(model_grid, sys.modules["cupy"], ndim)


def test_model_change_nlinks_checks_shapes(model_grid):
    network = random_grid_network(np.random.default_rng(1), (4, 5))
    state = model_grid.GridState.from_network(network)
    with pytest.raises(ValueError, match=r"forward\[1\] must have shape \(4, 4\)"):
        state.change_nlinks([network.down, network.down])
    with pytest.raises(ValueError, match="2 forward and 2 backward"):
        state.change_nlinks([network.down])


@pytest.mark.parametrize("shape", [(9, 40), (4, 6, 33)])
def test_model_session_solver_keeps_the_flow_across_lam_changes(model_grid, shape, monkeypatch):
    """The GPU Segmenter's solver (graphcut.segmentation.GridCuts): set_nlinks after a solve
    keeps the flow (change_nlinks) and the next solve, with new terminals as after a lam
    change, equals PyMaxflow's fresh one; before any solve it loads the n-links afresh."""
    import graphcut.segmentation._solving as solving
    from graphcut.segmentation import GridCuts
    from graphcut.solver.cuda.incremental import PushRelabelGridSolver
    monkeypatch.setattr(solving, "open_grid_solver",  # the model GPU has no CUDA driver
                        lambda network, device: PushRelabelGridSolver(network))
    cupy = sys.modules["cupy"]
    rng = np.random.default_rng(len(shape))
    ndim = len(shape)
    weights = [rng.uniform(0.1, 1.0, tuple(n - (a == axis) for a, n in enumerate(shape)))
               for axis in reversed(range(ndim))]  # last axis first, as the Segmenter's

    def nlinks(lam):
        return tuple(cupy.asarray(np.rint(lam * w).astype(np.int32)) for w in weights)

    def terminals():
        score = rng.normal(0, 1, shape)
        return (np.clip(40 * score, 0, None).astype(np.int32),
                np.clip(-40 * score, 0, None).astype(np.int32))

    solver = GridCuts(shape, nlinks(10.0), "cuda")
    solver.set_nlinks(nlinks(20.0))  # not solved yet: a fresh load
    source, sink = terminals()
    for lam in (20.0, 50.0, 3.0, 0.0, 9.0):
        if lam != 20.0:
            solver.set_nlinks(nlinks(lam))
            source, sink = terminals()
        cut = solver.solve(cupy.asarray(source), cupy.asarray(sink))
        flow, mask = cut.flow, cut.source_side
        assert cut.stats["nlink_change"] == (None if lam == 20.0 else "kept")
        links = [a.get() for a in nlinks(lam)][::-1]
        expected = min_cut(GridNetwork(source, sink, forward=links), device="cpu")
        assert flow == expected.flow
        np.testing.assert_array_equal(np.asarray(mask), expected.source_side)
