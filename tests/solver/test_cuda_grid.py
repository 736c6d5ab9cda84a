"""The GPU grid solver against PyMaxflow (flow, source side) and the cut certificate."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import GRID_KINDS, random_grid_network

from graphcut.solver import GridNetwork, cut_capacity, min_cut

pytestmark = pytest.mark.gpu


def assert_same_cut(network, repeats=1):
    expected = min_cut(network, device="cpu")
    for _ in range(repeats):
        got = min_cut(network, device="cuda")
        assert got.backend == "cuda"
        assert got.flow == expected.flow
        side = got.source_side.get() if hasattr(got.source_side, "get") else got.source_side
        np.testing.assert_array_equal(side, expected.source_side)
        assert cut_capacity(network, side) == got.flow


@pytest.mark.parametrize("kind", GRID_KINDS)
def test_random_grids_match_pymaxflow(kind):
    rng = np.random.default_rng(hash(kind) % 2**32)
    for _ in range(40):
        shape = tuple(int(v) for v in rng.integers(1, 40, size=2))
        assert_same_cut(random_grid_network(rng, shape, kind=kind))


@pytest.mark.parametrize("shape", [(1, 1), (1, 97), (97, 1), (2, 3), (31, 37), (64, 64),
                                   (127, 253), (257, 131)])
def test_odd_shapes_repeatable(shape):
    rng = np.random.default_rng(sum(shape))
    assert_same_cut(random_grid_network(rng, shape, max_capacity=1000), repeats=3)


def test_asymmetric_links_and_large_capacities():
    rng = np.random.default_rng(7)
    h, w = 60, 70
    big = np.iinfo(np.int32).max
    network = GridNetwork(
        source=rng.integers(big // 2, big, (h, w)), sink=rng.integers(big // 2, big, (h, w)),
        right=rng.integers(0, big, (h, w - 1)), down=rng.integers(0, big, (h - 1, w)),
        left=rng.integers(0, 3, (h, w - 1)), up=rng.integers(0, big, (h - 1, w)))
    result = min_cut(network, device="cuda")
    assert result.flow > 2**31
    assert_same_cut(network)


def test_segmentation_like_grid_larger():
    """A smooth two-region energy, large enough to need many global relabels."""
    rng = np.random.default_rng(3)
    h, w = 700, 900
    yy, xx = np.mgrid[:h, :w]
    inside = (yy - h / 2) ** 2 / (h / 3) ** 2 + (xx - w / 2) ** 2 / (w / 3) ** 2 < 1
    noise = rng.normal(0, 0.3, (h, w))
    score = np.where(inside, 1.0, -1.0) + noise
    source = np.clip(50 * score, 0, None).astype(np.int32)
    sink = np.clip(-50 * score, 0, None).astype(np.int32)
    right = rng.integers(20, 60, (h, w - 1))
    down = rng.integers(20, 60, (h - 1, w))
    assert_same_cut(GridNetwork(source, sink, right, down), repeats=2)


def test_cupy_inputs_give_cupy_side():
    import cupy
    rng = np.random.default_rng(11)
    network = random_grid_network(rng, (50, 60))
    on_gpu = GridNetwork(*(cupy.asarray(a) for a in (network.source, network.sink, network.right,
                                                      network.down, network.left, network.up)))
    result = min_cut(on_gpu, device="cuda")
    assert isinstance(result.source_side, cupy.ndarray)
    expected = min_cut(network, device="cpu")
    assert result.flow == expected.flow
    np.testing.assert_array_equal(result.source_side.get(), expected.source_side)


@pytest.mark.parametrize("name", ["camera", "astronaut", "coins", "coffee"])
@pytest.mark.parametrize("zoom", [0.5, 1.0, 2.0])
def test_sample_segmentation_grids(name, zoom):
    """The bundled samples' energies at several sizes: same flow and mask as PyMaxflow."""
    from pathlib import Path

    from skimage.transform import rescale

    import graphcut
    samples = Path(__file__).resolve().parents[2] / "samples"
    image = graphcut.read_image(samples / "images" / f"{name}.png")
    seeds = graphcut.read_seeds(samples / "seeds" / f"{name}.png", shape=image.shape[:2])
    if zoom != 1.0:
        channel_axis = -1 if image.ndim == 3 else None
        image = rescale(image, zoom, order=1, channel_axis=channel_axis, preserve_range=True,
                        anti_aliasing=False).astype(image.dtype)
        seeds = rescale(seeds, zoom, order=0, preserve_range=True,
                        anti_aliasing=False).astype(np.uint8)
    assert_same_cut(graphcut.build_network(image, seeds), repeats=2)


def test_too_large_for_gpu_memory(monkeypatch):
    from graphcut.solver import cuda
    from graphcut.solver.cuda import grid

    network = random_grid_network(np.random.default_rng(5), (20, 30))
    grid.release_cached_state()
    monkeypatch.setattr(grid, "STATE_BYTES_PER_PIXEL", 2**52)
    with pytest.raises(cuda.GPUMemoryError, match="GiB"):
        min_cut(network, device="cuda")
    fallback = min_cut(network, device="auto")
    assert fallback.backend == "cpu"
    assert fallback.flow == min_cut(network, device="cpu").flow


# -- feasibility of the returned state, schedules, dynamic re-solves ----------------------------

def _check_feasible_state(state, network):
    """The GPU state is a valid preflow of the network (capacities and conservation), so that
    ``cut_capacity == flow`` is a certificate of optimality, not only of the cut's value."""
    from preflow_model import net_outflow, nlink_capacities
    residual = state.residual.get().astype(np.int64)
    excess = state.excess.get()
    to_sink = state.to_sink.get().astype(np.int64)
    source_cap, sink_cap = state.source_capacity.get(), state.sink_capacity.get()
    capacities = nlink_capacities(network)
    assert (residual >= 0).all()
    # on each pixel pair the two residuals sum to the two capacities
    np.testing.assert_array_equal(residual[0, :, :-1] + residual[1, :, 1:],
                                  capacities[0, :, :-1] + capacities[1, :, 1:])
    np.testing.assert_array_equal(residual[2, :-1, :] + residual[3, 1:, :],
                                  capacities[2, :-1, :] + capacities[3, 1:, :])
    assert ((to_sink >= 0) & (to_sink <= sink_cap)).all()
    assert (excess >= 0).all()
    np.testing.assert_array_equal(
        excess, source_cap - (sink_cap - to_sink) - net_outflow(capacities, residual))


def _host(array):
    return array.get() if hasattr(array, "get") else np.asarray(array)


@pytest.mark.parametrize("kind", GRID_KINDS)
def test_final_state_is_a_feasible_preflow(kind):
    from graphcut.solver.cuda.grid import GridState
    rng = np.random.default_rng(17)
    for _ in range(8):
        shape = tuple(int(v) for v in rng.integers(1, 50, size=2))
        network = random_grid_network(rng, shape, kind=kind, max_capacity=2**31 - 1)
        state = GridState.from_network(network)
        state.solve()
        _check_feasible_state(state, network)
        expected = min_cut(network, device="cpu")
        assert state.true_flow() == expected.flow
        side = state.source_side().get()
        np.testing.assert_array_equal(side, expected.source_side)
        assert cut_capacity(network, side) == state.true_flow()


SCHEDULES = [dict(cycles=c, launches_per_relabel=k, bfs_passes_per_check=p, block_sync=b,
                  graphs=g)
             for c, k in ((1, 1), (3, 5), (8, 16), (40, 2))
             for p in (1, 2, 3, 4)
             for b in (True, False)
             for g in (True, False)] + [
    # the batches between global relabels: flat (the first as long as the rest), or ramping
    # from 3 up to 5
    dict(cycles=8, launches_per_relabel=16, bfs_passes_per_check=4, block_sync=True,
         graphs=True, first_launches=16),
    dict(cycles=1, launches_per_relabel=5, bfs_passes_per_check=1, block_sync=False,
         graphs=False, first_launches=3)]


@pytest.mark.parametrize("fields", SCHEDULES, ids=lambda f: "-".join(
    f"{k[:5]}{int(v)}" for k, v in f.items()))
def test_every_schedule_is_exact(fields):
    from graphcut.solver.cuda.grid import Schedule, grid_min_cut, release_cached_state
    rng = np.random.default_rng(abs(hash(tuple(fields.values()))) % 2**32)
    schedule = Schedule(**fields)
    release_cached_state()
    for kind in ("random", "sparse"):
        for _ in range(3):
            shape = tuple(int(v) for v in rng.integers(2, 90, size=2))
            network = random_grid_network(rng, shape, kind=kind, max_capacity=1000)
            got = grid_min_cut(network, schedule=schedule)
            expected = min_cut(network, device="cpu")
            assert got.flow == expected.flow
            np.testing.assert_array_equal(_host(got.source_side), expected.source_side)


@pytest.mark.parametrize("bad", [dict(cycles=0), dict(launches_per_relabel=-1),
                                 dict(bfs_passes_per_check=0), dict(cycles=2.5),
                                 dict(cycles=True), dict(graphs=1), dict(cycles=2**31),
                                 dict(first_launches=0), dict(first_launches=2.0)])
def test_invalid_schedules_are_rejected(bad):
    from graphcut.solver.cuda.grid import Schedule
    with pytest.raises((ValueError, TypeError), match="Schedule"):
        Schedule(**bad)


def test_change_terminals_restart_path_is_exact():
    """A 1x2 grid where keeping the flow would need a residual above int32: the state restarts
    from the capacities in force and still gives the oracle's flow (it gave twice it before)."""
    import cupy

    from graphcut.solver.cuda.grid import GridState
    big = 2**31 - 1
    network = GridNetwork(np.array([[big, 0]]), np.array([[0, big]]), np.array([[big]]),
                          np.zeros((0, 2), dtype=np.int64))
    state = GridState.from_network(network)
    state.solve()
    assert state.true_flow() == big
    edited = GridNetwork(np.array([[0, 0]]), np.array([[big, big]]), network.right, network.down)
    kept = state.change_terminals(cupy.asarray(edited.source), cupy.asarray(edited.sink))
    assert kept is False
    state.solve()
    expected = min_cut(edited, device="cpu")
    assert state.true_flow() == expected.flow
    np.testing.assert_array_equal(state.source_side().get(), expected.source_side)


@pytest.mark.parametrize("top", [1000, 2**31 - 1])
def test_large_capacity_edit_sequences_match_pymaxflow(top):
    import cupy

    from graphcut.solver.cuda.grid import GridState
    rng = np.random.default_rng(top % 997)
    restarts = 0
    for _ in range(10):
        shape = tuple(int(v) for v in rng.integers(1, 12, size=2))
        network = random_grid_network(rng, shape, max_capacity=top)
        state = GridState.from_network(network)
        state.solve()
        for _ in range(6):
            new = random_grid_network(rng, shape, max_capacity=top)
            keep = rng.random(shape) < 0.5
            network = GridNetwork(np.where(keep, network.source, new.source),
                                  np.where(keep, network.sink, new.sink),
                                  network.right, network.down, network.left, network.up)
            restarts += not state.change_terminals(cupy.asarray(network.source),
                                                   cupy.asarray(network.sink))
            state.solve()
            expected = min_cut(network, device="cpu")
            assert state.true_flow() == expected.flow
            np.testing.assert_array_equal(state.source_side().get(), expected.source_side)
            _check_feasible_state(state, network)
    if top > 10**6:
        assert restarts > 0


def test_segmenter_with_huge_lambda_matches_fresh_solves():
    """lam = 5e5 on a 6x6 image (capacities that validation accepts) took the broken branch in
    9 of 9 edits; every edit must equal a fresh CPU segmentation."""
    import graphcut
    rng = np.random.default_rng(5)
    image = rng.integers(0, 256, (6, 6, 3), dtype=np.uint8)
    session = graphcut.Segmenter(image, lam=5e5, device="cuda")
    for _ in range(12):
        seeds = np.zeros((6, 6), dtype=np.uint8)
        seeds.flat[rng.choice(36, 3, replace=False)] = [1, 2, 2]
        seeds[rng.integers(0, 6), rng.integers(0, 6)] = rng.integers(0, 3)
        if not ((seeds == 1).any() and (seeds == 2).any()):
            continue
        mask = session.update(seeds)
        expected_mask, expected = graphcut.segment(image, seeds, lam=5e5, device="cpu",
                                                   return_result=True)
        assert session.last_result.flow == expected.flow
        np.testing.assert_array_equal(mask, expected_mask)


# ---- new n-link capacities (a new lam) on a kept state: GridState.change_nlinks ------------------

@pytest.mark.parametrize("shape", [(1, 1), (1, 33), (17, 1), (12, 45), (70, 90), (1, 1, 9),
                                   (5, 9, 33), (12, 20, 24)])
def test_change_nlinks_sequences_match_pymaxflow(shape):
    """New lam (n-links scaled or drawn anew, zero and saturated arcs) and strokes
    interleaved on one kept state, images and volumes: every solve equals PyMaxflow's."""
    import cupy
    from test_volume_solver import check_nlink_edit_sequence

    from graphcut.solver.cuda import grid
    rng = np.random.default_rng(sum(shape) + len(shape))
    kept = 0
    for top in (60, 10**6, 2**31 - 1):
        kept += check_nlink_edit_sequence(grid, cupy, rng, shape, top)[0]
    assert kept > 0


@pytest.mark.parametrize("ndim", [2, 3])
def test_change_nlinks_restart_path_is_exact(ndim):
    import cupy
    from test_volume_solver import check_nlink_overflow_restarts

    from graphcut.solver.cuda import grid
    check_nlink_overflow_restarts(grid, cupy, ndim)


@pytest.mark.parametrize("shape", [(37, 53), (300, 257), (6, 17, 29)])
def test_change_nlinks_equals_the_numpy_model(shape):
    """The state after GridState.change_nlinks equals graphcut.solver.dynamic's
    reparameterize_nlinks applied to a copy of the solved state, bit for bit."""
    import cupy

    from graphcut.solver.cuda.grid import GridState
    from graphcut.solver.dynamic import reparameterize_nlinks
    rng = np.random.default_rng(sum(shape))
    network = random_grid_network(rng, shape, max_capacity=1000)
    state = GridState.from_network(network)
    state.solve()
    names = ("residual", "excess", "to_sink", "source_capacity", "sink_capacity")
    before = {name: getattr(state, name).get() for name in names}
    forward = [(a // 3).astype(np.int32) for a in network.forward]   # a smaller lam ...
    backward = [np.where(rng.random(a.shape) < 0.3, 0, a).astype(np.int32)  # ... and zeros
                for a in network.backward]
    expected = reparameterize_nlinks(before["residual"], before["excess"],
                                     before["to_sink"].astype(np.int64),
                                     before["source_capacity"], before["sink_capacity"],
                                     state.reparameterization,
                                     (network.forward, network.backward), (forward, backward))
    assert state.change_nlinks([cupy.asarray(a) for a in forward],
                               [cupy.asarray(a) for a in backward])
    assert expected.reparameterization > 0
    assert state.reparameterization == expected.reparameterization
    for name in names:
        np.testing.assert_array_equal(getattr(state, name).get(), getattr(expected, name),
                                      err_msg=name)
    state.solve()
    expected = min_cut(GridNetwork(network.source, network.sink, forward=forward,
                                   backward=backward), device="cpu")
    assert state.true_flow() == expected.flow
    np.testing.assert_array_equal(state.source_side().get(), expected.source_side)
