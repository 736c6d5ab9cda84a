"""Slanted-plane labels and local expansion moves (graphcut.stereo._local_expansion): the
pairwise term's submodularity, one move's network against brute force, sub-pixel recovery of
a slanted plane that integer labels cannot follow, shapes, flat input, bad input."""

import itertools

import numpy as np
import pytest
from scipy import ndimage

from graphcut.labeling import HostMoveCuts
from graphcut.stereo import (CensusParameters, LocalExpansion, alpha_expansion, census_costs,
                             cross_support, local_expansion_planes, plane_data_costs,
                             plane_disparity, plane_energy, planes_fill, smoothness_weights,
                             subpixel_census_costs, window_support)
from graphcut.stereo._local_expansion import ENERGY_SCALE, move_network
from graphcut.stereo._plane_terms import pair_costs


def _random_planes(rng, shape):
    return np.stack([rng.uniform(-0.6, 0.6, shape), rng.uniform(-0.6, 0.6, shape),
                     rng.uniform(0, 6, shape)])


def test_plane_disagreement_is_a_truncated_metric_so_moves_are_submodular():
    rng = np.random.default_rng(3)
    p, q = np.array([4.0, 7.0]), np.array([5.0, 7.0])  # (x, y) of two neighbours
    worst = -np.inf
    for _ in range(2000):
        f, g, alpha = (np.append(rng.uniform(-1, 1, 2), rng.uniform(-5, 15)) for _ in range(3))
        tau = rng.choice([0.5, 1.0, 3.0])
        at = lambda plane, point: plane[0] * point[0] + plane[1] * point[1] + plane[2]  # noqa: E731
        psi = lambda u, v: pair_costs(1.0, at(u, p), at(u, q), at(v, p), at(v, q), tau)  # noqa: E731
        # expansion submodularity: psi(f, g) + psi(alpha, alpha) <= psi(f, alpha) + psi(alpha, g)
        worst = max(worst, psi(f, g) + psi(alpha, alpha) - psi(f, alpha) - psi(alpha, g))
        assert psi(alpha, alpha) == 0
    assert worst <= 1e-9
    # fronto-parallel planes cost what integer labels cost in the default energy
    assert pair_costs(8.0, 3.0, 3.0, 5.0, 5.0, 3.0) == 16.0
    assert pair_costs(8.0, 3.0, 3.0, 9.0, 9.0, 3.0) == 24.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_move_network_gives_the_energy_of_every_cut_and_the_brute_force_minimum(seed):
    rng = np.random.default_rng(seed)
    h, w, levels = 2, 5, 7
    raw = rng.integers(0, 129, (levels, h, w)).astype(np.uint8)
    support = window_support(rng.integers(0, 256, (h, w, 3)), radius=1)
    ys, xs = np.indices((h, w))
    current = _random_planes(rng, (h, w))
    # two regions (columns 0-1 and 3-4) with their own proposals; column 2 fixed
    free = np.ones((h, w), bool)
    free[:, 2] = False
    proposal = current.copy()
    for columns, plane in ((np.s_[:, :2], (0.2, -0.1, 2.5)), (np.s_[:, 3:], (-0.3, 0.0, 4.0))):
        for k in range(3):
            proposal[k][columns] = plane[k]
    weights = (rng.integers(1, 33, (h, w - 1)).astype(float),
               rng.integers(1, 33, (h - 1, w)).astype(float))
    data = {name: plane_data_costs(raw, support, ys.ravel(), xs.ravel(),
                                   planes.reshape(3, -1)).reshape(h, w)
            for name, planes in (("keep", current), ("switch", proposal))}
    network, constant = move_network(current, proposal, free, data["keep"], data["switch"],
                                     weights, 3.0)
    rounding = (2 * h * w + network.right.size + network.down.size) / (2 * ENERGY_SCALE)
    capacities, energies = {}, {}
    cells = np.flatnonzero(free.ravel())
    for bits in itertools.product([0, 1], repeat=cells.size):
        switch = np.zeros(h * w, bool)
        switch[cells] = bits
        switch = switch.reshape(h, w)
        labelling = np.where(switch[None], proposal, current)
        energies[bits] = plane_energy(np.where(switch, data["switch"], data["keep"]),
                                      labelling, weights, 3.0)
        # the network's cut capacity for this assignment (source side = keep)
        capacities[bits] = int(network.source[switch].sum() + network.sink[~switch].sum()
                               + network.right[~switch[:, :-1] & switch[:, 1:]].sum()
                               + network.down[~switch[:-1, :] & switch[1:, :]].sum())
        assert abs(constant + capacities[bits] / ENERGY_SCALE - energies[bits]) <= rounding
    cut = HostMoveCuts()(network)
    assert cut.flow == min(capacities.values())          # the exact minimum cut
    switch = free & ~np.asarray(cut.source_side)
    found = plane_energy(np.where(switch, data["switch"], data["keep"]),
                         np.where(switch[None], proposal, current), weights, 3.0)
    assert found <= min(energies.values()) + 2 * rounding
    assert found <= energies[(0,) * cells.size] + rounding  # never worse than keeping


def _slanted_pair(h=40, w=64, seed=0):
    """A smooth random texture on the plane d = 4 + 0.12 y + 0.05 x (no occlusion inside
    the columns scored), as uint8 colour images."""
    rng = np.random.default_rng(seed)
    texture = ndimage.gaussian_filter(rng.uniform(0, 255, (h, w + 40)), 1.0)
    texture = (texture - texture.min()) / np.ptp(texture) * 255
    ys, xs = np.indices((h, w))
    truth = 4 + 0.12 * ys + 0.05 * xs
    grid = np.arange(w + 40)
    left = np.stack([np.interp(xs[y] + 20 - truth[y], grid, texture[y]) for y in range(h)])
    right = texture[:, 20:20 + w]
    as_colour = lambda image: np.repeat(np.rint(image).astype(np.uint8)[..., None], 3, -1)  # noqa: E731
    return as_colour(left), as_colour(right), truth


def test_a_slanted_plane_is_recovered_to_sub_pixel_accuracy_where_integer_labels_cannot():
    left, right, truth = _slanted_pair()
    costs = census_costs(left, right, max_disparity=16, channel_axis=-1)
    weights = smoothness_weights(left, channel_axis=-1)
    labels = alpha_expansion(costs, weights, device="cpu", max_cycles=2,
                             linear_truncation=3).labels
    raw = subpixel_census_costs(left.astype(float), right.astype(float), 16, steps=4)
    result = local_expansion_planes(raw, cross_support(left.astype(np.int32)), weights, labels,
                                    LocalExpansion(cell_sizes=(15, 5), iterations=2,
                                                   slope_cost=0.0), steps=4)
    scored = np.s_[:, 20:]
    integer_error = np.abs(labels - truth)[scored].mean()
    plane_error = np.abs(result.disparity - truth)[scored].mean()
    assert integer_error > 0.2          # a staircase: rounding alone costs 0.25 on average
    assert plane_error < 0.05
    assert np.median(result.planes[1][scored]) == pytest.approx(0.12, abs=0.02)
    # moves never raise the energy (beyond the networks' rounding to 1/16)
    assert all(b <= a + 1.0 for a, b in zip(result.energies, result.energies[1:]))
    assert result.energies[-1] < result.energies[0]


def test_subpixel_costs_at_one_step_are_the_raw_census_volume():
    rng = np.random.default_rng(4)
    left, right = (rng.integers(0, 256, (12, 20, 3)).astype(np.uint8) for _ in range(2))
    raw = census_costs(left, right, max_disparity=5, channel_axis=-1,
                       parameters=CensusParameters(aggregation="box", aggregation_radius=0))
    sampled = subpixel_census_costs(left.astype(float), right.astype(float), 5, steps=1)
    np.testing.assert_array_equal(sampled, raw)
    quarter = subpixel_census_costs(left.astype(float), right.astype(float), 5, steps=4)
    assert quarter.shape == (21, 12, 20) and quarter.dtype == np.uint8
    np.testing.assert_array_equal(quarter[::4], raw)


def test_plane_disparity_shapes_dtypes_and_flat_input():
    rng = np.random.default_rng(5)
    right = rng.integers(0, 256, (16, 30)).astype(np.uint8)
    left = np.roll(right, 3, axis=1)
    settings = LocalExpansion(cell_sizes=(5,), iterations=1)
    result = plane_disparity(left, right, max_disparity=6, settings=settings)
    assert result.disparity.shape == (16, 30) and result.disparity.dtype == np.float64
    assert result.planes.planes.shape == (3, 16, 30)
    assert result.inconsistent.shape == (16, 30) and result.inconsistent.dtype == bool
    assert np.abs(result.disparity[:, 8:] - 3).max() <= 0.5
    flat = np.full((16, 30), 120, np.uint8)     # no texture at all: finite, in range
    result = plane_disparity(flat, flat, max_disparity=6, settings=settings,
                             support="window", window_radius=2)
    assert np.isfinite(result.disparity).all()
    assert result.disparity.min() >= 0 and result.disparity.max() <= 6


def test_planes_fill_extends_the_background_plane():
    planes = np.zeros((3, 1, 6))
    planes[2] = [2, 2, 9, 9, 5, 5]          # foreground 9 between two backgrounds
    planes[0, 0, :2] = 0.5                   # the left background slants: d = 0.5 x + 2
    invalid = np.array([[False, False, True, True, False, False]])
    filled = planes_fill(planes, invalid, 20)
    np.testing.assert_allclose(filled[0], [2, 2.5, 3, 3.5, 5, 5])


def test_bad_input_is_refused():
    raw = np.zeros((3, 4, 5), np.uint8)
    support = window_support(np.zeros((4, 5, 1)), radius=1)
    weights = (np.ones((4, 4)), np.ones((3, 5)))
    with pytest.raises(ValueError, match="initial must be"):
        local_expansion_planes(raw, support, weights, np.zeros((5, 4)))
    for bad in (LocalExpansion(cell_sizes=(0,)), LocalExpansion(cell_sizes=()),
                LocalExpansion(truncation=0.0), LocalExpansion(iterations=-1),
                LocalExpansion(slope_cost=-1.0), (5, 2)):
        with pytest.raises(ValueError, match="local expansion|LocalExpansion"):
            local_expansion_planes(raw, support, weights, np.zeros((4, 5)), bad)
    left = np.zeros((8, 12), np.uint8)
    with pytest.raises(ValueError, match="support must be"):
        plane_disparity(left, left, max_disparity=3, support="box")
    with pytest.raises(ValueError, match="steps must be"):
        plane_disparity(left, left, max_disparity=3, steps=0)


def test_per_edge_truncation_arrays_match_the_number_and_cap_each_edge():
    rng = np.random.default_rng(6)
    planes = _random_planes(rng, (4, 5))
    weights = (np.full((4, 4), 8.0), np.full((3, 5), 8.0))
    data = np.zeros((4, 5))
    same = plane_energy(data, planes, weights, 1.0)
    arrays = (np.full((4, 4), 1.0), np.full((3, 5), 1.0))
    assert plane_energy(data, planes, weights, arrays) == pytest.approx(same)
    loose = (np.full((4, 4), 100.0), np.full((3, 5), 100.0))
    assert plane_energy(data, planes, weights, loose) > same
    assert same <= 8.0 * 1.0 * (16 + 15)     # every edge capped at w * tau


def test_the_slope_cost_keeps_planes_fronto_parallel_where_the_data_cannot_tell():
    raw = np.full((9, 12, 20), 40, np.uint8)           # no texture: every disparity costs 40
    support = window_support(np.zeros((12, 20, 1)), radius=1)
    weights = (np.full((12, 19), 8.0), np.full((11, 20), 8.0))
    initial = np.full((12, 20), 3.0)
    initial[:, 10:] = 5.0
    settings = LocalExpansion(cell_sizes=(5,), iterations=1, slope_cost=16.0)
    result = local_expansion_planes(raw, support, weights, initial, settings)
    np.testing.assert_array_equal(result.planes[:2], 0.0)
    assert result.energies[-1] <= result.energies[0]
