"""Benchmark generators: structure, determinism, and flows equal across solvers."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import scipy_min_cut

from graphcut.solver import CSRNetwork, GridNetwork, cut_capacity, min_cut
from graphcut.solver.generators import acyclic_dense, genrmf, random_grid, washington_rlg

SMALL = {
    "washington_rlg": lambda seed: washington_rlg(5, 7, max_capacity=50, seed=seed),
    "genrmf": lambda seed: genrmf(3, 4, c1=2, c2=40, seed=seed),
    "acyclic_dense": lambda seed: acyclic_dense(15, max_capacity=30, seed=seed),
    "random_grid": lambda seed: random_grid((12, 17), seed=seed),
    "random_grid_asymmetric": lambda seed: random_grid((9, 11), seed=seed, symmetric=False),
}


def arrays(network):
    if isinstance(network, GridNetwork):
        return [network.source, network.sink, network.right, network.down, network.left,
                network.up]
    return [network.offsets, network.heads, network.capacities,
            np.array([network.num_vertices, network.source, network.sink])]


def same(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(arrays(a), arrays(b), strict=True))


@pytest.mark.parametrize("family", list(SMALL))
def test_deterministic_per_seed(family):
    make = SMALL[family]
    assert same(make(1), make(1))
    assert not same(make(1), make(2))


@pytest.mark.parametrize("family", list(SMALL))
def test_flows_agree_across_solvers(family):
    for seed in range(4):
        network = SMALL[family](seed)
        result = min_cut(network, device="cpu")
        flow, side = scipy_min_cut(network)
        assert result.flow == flow > 0
        assert cut_capacity(network, result.source_side) == flow
        np.testing.assert_array_equal(result.source_side, side)


@pytest.mark.gpu
@pytest.mark.parametrize("family", list(SMALL))
def test_flows_agree_on_the_gpu(family):
    for seed in range(2):
        network = SMALL[family](seed)
        gpu, cpu = min_cut(network, device="cuda"), min_cut(network, device="cpu")
        assert gpu.backend == "cuda"
        assert gpu.flow == cpu.flow
        np.testing.assert_array_equal(gpu.source_side, cpu.source_side)


def test_washington_rlg_structure():
    rows, cols, top = 6, 5, 40
    network = washington_rlg(rows, cols, max_capacity=top, seed=3)
    n = rows * cols + 2
    assert (network.num_vertices, network.source, network.sink) == (n, 0, n - 1)
    assert network.num_arcs == 2 * rows + 3 * rows * (cols - 1)
    tails, heads, caps = network.arcs()
    from_s, to_t = tails == 0, heads == n - 1
    assert heads[from_s].tolist() == list(range(1, rows + 1))
    assert tails[to_t].tolist() == list(range(n - 1 - rows, n - 1))
    assert (caps[from_s | to_t] == 3 * top).all()
    inner = ~(from_s | to_t)
    level = (tails[inner] - 1) // rows
    assert ((heads[inner] - 1) // rows == level + 1).all()  # arcs go to the next level
    assert (np.bincount(tails[inner], minlength=n)[1:n - 1 - rows] == 3).all()  # 3 distinct
    assert 1 <= caps[inner].min() and caps[inner].max() <= top


def test_genrmf_structure():
    a, b, c1, c2 = 4, 5, 3, 60
    network = genrmf(a, b, c1=c1, c2=c2, seed=7)
    frame = a * a
    n = frame * b
    assert (network.num_vertices, network.source, network.sink) == (n, 0, n - 1)
    assert network.num_arcs == 4 * a * (a - 1) * b + frame * (b - 1)
    tails, heads, caps = network.arcs()
    between = heads // frame != tails // frame
    assert (heads[between] // frame == tails[between] // frame + 1).all()
    # Each frame pair is joined by a permutation: every vertex has one arc out and one in.
    assert (np.bincount(tails[between], minlength=n)[:n - frame] == 1).all()
    assert (np.bincount(heads[between], minlength=n)[frame:] == 1).all()
    assert (caps[~between] == c2 * frame).all()
    assert c1 <= caps[between].min() and caps[between].max() <= c2
    # In-frame arcs join 4-neighbours, both ways.
    y, x = (tails[~between] % frame) // a, tails[~between] % a
    hy, hx = (heads[~between] % frame) // a, heads[~between] % a
    assert (np.abs(y - hy) + np.abs(x - hx) == 1).all()


def test_acyclic_dense_structure():
    network = acyclic_dense(9, max_capacity=5, seed=1)
    tails, heads, caps = network.arcs()
    assert network.num_arcs == 9 * 8 // 2
    assert (tails < heads).all()
    assert 1 <= caps.min() and caps.max() <= 5
    assert (network.source, network.sink) == (0, 8)


def test_random_grid_is_segmentation_like():
    grid = random_grid((40, 50), seed=2, noise=0.05)
    assert grid.shape == (40, 50)
    np.testing.assert_array_equal(grid.left, grid.right)
    np.testing.assert_array_equal(grid.up, grid.down)
    assert (grid.source + grid.sink <= 101).all()
    side = min_cut(grid, device="cpu").source_side
    assert 0.1 < side.mean() < 0.9  # both an object and a background
    asymmetric = random_grid((40, 50), seed=2, symmetric=False)
    assert not np.array_equal(asymmetric.left, asymmetric.right)


@pytest.mark.parametrize("make, message", [
    (lambda: washington_rlg(2, 5), "rows >= 3"),
    (lambda: washington_rlg(4, 1), "cols >= 2"),
    (lambda: washington_rlg(4, 4, max_capacity=2**30), "int32"),
    (lambda: genrmf(0, 3), "a >= 1"),
    (lambda: genrmf(3, 3, c1=5, c2=2), "c1 <= c2"),
    (lambda: genrmf(1000, 2, c2=10_000), "int32"),
    (lambda: acyclic_dense(1), "n >= 2"),
    (lambda: random_grid((0, 4)), "positive"),
])
def test_bad_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_networks_are_plain_csr():
    for family in ("washington_rlg", "genrmf", "acyclic_dense"):
        assert isinstance(SMALL[family](0), CSRNetwork)
