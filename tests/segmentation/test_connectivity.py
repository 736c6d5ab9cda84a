"""8-connected n-links (``connectivity=8``): the cut against brute force over every labelling
of tiny grids, the weights against their formula, the option's checks."""

import itertools
import math

import numpy as np
import pytest

import graphcut
from graphcut.segmentation._neighbours import (cut_eight, diagonal_cut_capacity,
                                               diagonal_weights, estimate_sigma8)
from graphcut.solver import GridNetwork


def _energy(network, diagonals, s):
    """Cut capacity of source side ``s`` over the 8-connected grid, written out pair by pair
    (an independent count: no array slicing shared with the code under test)."""
    h, w = s.shape
    total = 0
    for y, x in itertools.product(range(h), range(w)):
        total += int(network.sink[y, x]) if s[y, x] else int(network.source[y, x])
        pairs = [((y, x + 1), network.right, (y, x)), ((y + 1, x), network.down, (y, x)),
                 ((y + 1, x + 1), diagonals[0], (y, x)),
                 ((y + 1, x - 1), diagonals[1], (y, x - 1))]
        for (qy, qx), capacities, index in pairs:
            if 0 <= qy < h and 0 <= qx < w and s[y, x] != s[qy, qx]:
                total += int(capacities[index])
    return total


def _random_network(rng, h, w):
    source = rng.integers(0, 30, (h, w)).astype(np.int32)
    sink = rng.integers(0, 30, (h, w)).astype(np.int32)
    right = rng.integers(0, 20, (h, w - 1)).astype(np.int32)
    down = rng.integers(0, 20, (h - 1, w)).astype(np.int32)
    diagonals = (rng.integers(0, 20, (h - 1, w - 1)).astype(np.int32),
                 rng.integers(0, 20, (h - 1, w - 1)).astype(np.int32))
    return GridNetwork(source, sink, right, down), diagonals


@pytest.mark.parametrize("seed", range(8))
def test_cut_eight_is_the_minimum_over_every_labelling(seed):
    rng = np.random.default_rng(seed)
    h, w = (3, 3) if seed % 2 else (2, 4)
    network, diagonals = _random_network(rng, h, w)
    result = cut_eight(network, diagonals)
    best = min(_energy(network, diagonals, np.array(bits, bool).reshape(h, w))
               for bits in itertools.product((False, True), repeat=h * w))
    assert result.flow == best
    assert _energy(network, diagonals, result.source_side) == best


def test_diagonal_links_change_the_cut():
    # two object pixels touching only by a corner: the diagonal link alone joins them
    network = GridNetwork(np.array([[9, 0], [0, 0]], np.int32),
                          np.array([[0, 0], [0, 9]], np.int32),
                          np.zeros((2, 1), np.int32), np.zeros((1, 2), np.int32))
    assert cut_eight(network, (np.zeros((1, 1), np.int32),) * 2).flow == 0
    assert cut_eight(network, (np.array([[4]], np.int32), np.zeros((1, 1), np.int32))).flow == 4


def test_diagonal_cut_capacity_counts_crossed_diagonals():
    rng = np.random.default_rng(3)
    network, diagonals = _random_network(rng, 3, 4)
    zero = GridNetwork(np.zeros((3, 4), np.int32), np.zeros((3, 4), np.int32),
                       np.zeros((3, 3), np.int32), np.zeros((2, 4), np.int32))
    for bits in itertools.islice(itertools.product((False, True), repeat=12), 0, 4096, 97):
        s = np.array(bits, bool).reshape(3, 4)
        assert diagonal_cut_capacity(diagonals, s) == _energy(zero, diagonals, s)


def test_weights_follow_the_formula():
    rng = np.random.default_rng(0)
    values = rng.random((4, 5, 3))
    sigma = 0.3
    down_right, down_left = diagonal_weights(values, sigma)
    y, x = 2, 1
    d = ((values[y, x] - values[y + 1, x + 1]) ** 2).sum()
    assert down_right[y, x] == pytest.approx(math.exp(-d / (2 * sigma ** 2)) / math.sqrt(2))
    d = ((values[y, x + 1] - values[y + 1, x]) ** 2).sum()
    assert down_left[y, x] == pytest.approx(math.exp(-d / (2 * sigma ** 2)) / math.sqrt(2))
    squares = []
    for (y, x), (dy, dx) in itertools.product(itertools.product(range(4), range(5)),
                                              ((0, 1), (1, 0), (1, 1), (1, -1))):
        if 0 <= y + dy < 4 and 0 <= x + dx < 5:
            squares.append(((values[y, x] - values[y + dy, x + dx]) ** 2).sum())
    assert estimate_sigma8(values) == pytest.approx(math.sqrt(np.mean(squares)))


def test_segment_with_connectivity_8_is_the_exact_minimum():
    """segment(connectivity=8, one cut) reports the minimum of the 8-connected energy: its
    flow is the cut capacity of its mask, and no labelling of the free pixels costs less."""
    rng = np.random.default_rng(5)
    image = rng.integers(0, 255, (3, 4, 3)).astype(np.uint8)
    seeds = np.zeros((3, 4), np.uint8)
    seeds[0, 0], seeds[2, 3] = 1, 2
    session = graphcut.Segmenter(image, model="gmm", iterations=0, connectivity=8,
                                 device="cpu", components=1)
    mask = session.update(seeds)
    assert session.last_result.flow > 0
    assert mask[0, 0] and not mask[2, 3]
    with pytest.raises(ValueError, match="connectivity must be 4 or 8"):
        graphcut.segment(image, seeds, connectivity=6, device="cpu")


def test_connectivity_8_box_segments_a_square():
    image = np.zeros((30, 30, 3), np.uint8)
    image[8:22, 8:22] = (200, 40, 40)
    image += np.random.default_rng(0).integers(0, 20, image.shape).astype(np.uint8)
    truth = np.zeros((30, 30), bool)
    truth[8:22, 8:22] = True
    mask = graphcut.segment(image, box=(4, 4, 26, 26), model="gmm", device="cpu",
                            connectivity=8)
    assert (mask == truth).all()


def test_connectivity_8_is_refused_for_volumes():
    with pytest.raises(ValueError, match="connectivity=8 is for images"):
        graphcut.Segmenter(np.zeros((3, 4, 4), np.uint8), channel_axis=None, connectivity=8,
                           device="cpu")


@pytest.mark.gpu
def test_connectivity_8_on_the_gpu_equals_the_cpu():
    pytest.importorskip("cupy")
    from graphcut.solver import cuda_status
    if not cuda_status()[0]:
        pytest.skip("no GPU")
    rng = np.random.default_rng(2)
    image = rng.integers(0, 255, (40, 50, 3)).astype(np.uint8)
    image[10:30, 12:40] //= 3
    masks = [graphcut.segment(image, box=(6, 8, 34, 44), model="gmm", iterations=0,
                              connectivity=8, device=device, return_result=True)
             for device in ("cpu", "cuda")]
    assert masks[0][1].flow == masks[1][1].flow       # the same minimum (ties may differ)
    assert (masks[0][0] == masks[1][0]).mean() > 0.99


def test_connectivity_8_refuses_several_objects():
    seeds = np.zeros((6, 6), np.uint8)
    seeds[0, 0], seeds[5, 5], seeds[0, 5] = 1, 2, 3
    with pytest.raises(ValueError, match="connectivity=8 segments one object"):
        graphcut.segment(np.zeros((6, 6), np.uint8), seeds, connectivity=8, device="cpu")


@pytest.mark.parametrize("seed", range(4))
def test_csr_form_of_the_8_connected_grid_has_the_same_minimum_cut(seed):
    """The GPU's route (the general CSR network) cut on the CPU equals PyMaxflow's grid cut,
    pinned pixels included."""
    from graphcut.segmentation._neighbours import eight_connected_csr
    from graphcut.solver import min_cut
    rng = np.random.default_rng(seed)
    network, diagonals = _random_network(rng, 5, 6)
    from graphcut.segmentation import seed_pins
    pin = seed_pins((network.right, network.down))          # as terminal_capacities pins
    network.source[0, 0], network.sink[0, 0] = pin[0, 0], 0
    network.source[4, 5], network.sink[4, 5] = 0, pin[4, 5]
    grid = cut_eight(network, diagonals)
    csr = min_cut(eight_connected_csr(network, diagonals), device="cpu")
    assert csr.flow == grid.flow
    side = np.asarray(csr.source_side)[:30].reshape(5, 6)
    assert _energy(network, diagonals, side) == grid.flow


def test_pinned_pixels_stay_pinned_against_heavy_diagonals():
    """A background seed pinned with the 4-connected grid's K_p = 1 (no straight links) must
    not join its object neighbour across a diagonal of capacity 100."""
    from graphcut.segmentation import terminal_capacities
    zero_right, zero_down = np.zeros((2, 1), np.int32), np.zeros((1, 2), np.int32)
    seeds = np.array([[2, 0], [0, 1]], np.uint8)
    source, sink = terminal_capacities(np.zeros((2, 2)), np.zeros((2, 2)),
                                       (zero_right, zero_down), seeds, scale=1)
    network = GridNetwork(source, sink, zero_right, zero_down)
    result = cut_eight(network, (np.array([[100]], np.int32), np.zeros((1, 1), np.int32)))
    assert not result.source_side[0, 0] and result.source_side[1, 1]
    assert result.flow == 100


def test_csr_form_takes_device_arrays(monkeypatch):
    """The GPU route's network arrive as CuPy arrays (here the NumPy stand-in for CuPy): they
    are copied to the host, and the CSR network is the one the NumPy arrays give."""
    import fake_cupy
    from graphcut.segmentation._neighbours import eight_connected_csr
    cupy = fake_cupy.fake_cupy_module(None)
    monkeypatch.setitem(__import__("sys").modules, "cupy", cupy)
    network, diagonals = _random_network(np.random.default_rng(7), 4, 5)
    on_device = GridNetwork(*(cupy.asarray(a) for a in (network.source, network.sink,
                                                         network.right, network.down)))
    host, device = eight_connected_csr(network, diagonals), eight_connected_csr(on_device,
                                                                                diagonals)
    assert host.num_arcs == device.num_arcs
    assert (np.asarray(host.heads) == np.asarray(device.heads)).all()
    assert (np.asarray(host.capacities) == np.asarray(device.capacities)).all()


def test_connectivity_8_follows_the_collapse_guards_lams():
    """The histogram's box updates cut at two automatic lams: the diagonals are quantised at
    the lam of each cut (a stale or missing set would fail or mismatch the straight links)."""
    image = np.zeros((30, 30, 3), np.uint8)
    image[8:22, 8:22] = (200, 40, 40)
    session = graphcut.Segmenter(image, model="histogram", connectivity=8, device="cpu")
    mask = session.update(None, box=(4, 4, 26, 26))
    assert mask[8:22, 8:22].all() and mask.sum() == 14 * 14
    assert session._diagonals is None or session._diagonals[0].max() == round(
        session.lam * session.scale / np.sqrt(2))
