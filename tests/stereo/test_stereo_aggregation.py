"""Cross-based aggregation (graphcut.stereo._aggregation) against its definition, pixel by
pixel: arms grown one step at a time in Python, the support region enumerated, the rounded
integer mean taken. The GPU kernels are checked against the same NumPy code in
test_stereo_kernels.py."""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.stereo import CensusParameters, census_costs
from graphcut.stereo._aggregation import cross_arms, cross_count, cross_mean


def arm_by_definition(levels, y, x, dy, dx, threshold, length, minimum):
    h, w, _ = levels.shape
    arm = 0
    for k in range(1, length + 1):
        yy, xx = y + k * dy, x + k * dx
        if not (0 <= yy < h and 0 <= xx < w):
            break
        differs = max(abs(int(a) - int(b)) for a, b in zip(levels[yy, xx], levels[y, x]))
        if differs > threshold and k > minimum:
            break
        arm = k
    return arm


def region_by_definition(arms, y, x):
    """The pixels of (y, x)'s support: the horizontal segments of its vertical segment."""
    return [(yy, xx) for yy in range(y - arms[2, y, x], y + arms[3, y, x] + 1)
            for xx in range(x - arms[0, yy, x], x + arms[1, yy, x] + 1)]


@pytest.mark.parametrize("threshold, length, minimum", [(30, 4, 0), (60, 3, 1), (0, 2, 2)])
def test_cross_arms_and_means_follow_their_definition(threshold, length, minimum):
    rng = np.random.default_rng(threshold)
    # blocks of similar colour with noise, so that arms of every length occur
    levels = (rng.integers(0, 3, size=(3, 4, 3)) * 90).repeat(4, axis=0).repeat(4, axis=1)
    levels = (levels + rng.integers(0, 25, size=levels.shape)).astype(np.int32)[:11, :13]
    arms = cross_arms(levels, threshold, length, minimum)
    h, w, _ = levels.shape
    for index, (dy, dx) in enumerate(((0, -1), (0, 1), (-1, 0), (1, 0))):
        expected = [[arm_by_definition(levels, y, x, dy, dx, threshold, length, minimum)
                     for x in range(w)] for y in range(h)]
        np.testing.assert_array_equal(arms[index], expected)
    assert len(np.unique(arms)) > 2
    plane = rng.integers(0, 129, size=(h, w)).astype(np.int32)
    means = cross_mean(plane, arms, cross_count(arms))
    for y in range(h):
        for x in range(w):
            region = region_by_definition(arms, y, x)
            total = sum(int(plane[p]) for p in region)
            assert means[y, x] == (total + len(region) // 2) // len(region), (y, x)


def test_cross_regions_stop_at_colour_edges():
    """A two-colour image: every region stays inside its half, so a cost that is 0 on one half
    and 100 on the other is unchanged by the aggregation (a box would blur it)."""
    grey = np.zeros((20, 30), dtype=np.uint8)
    grey[:, 15:] = 200
    left = np.stack([grey] * 3, axis=-1)
    parameters = CensusParameters(aggregation="cross", cross_threshold=20, cross_length=5)
    arms = cross_arms(left.astype(np.int32), 20, 5)
    plane = np.where(grey > 0, 100, 0).astype(np.int32)
    np.testing.assert_array_equal(cross_mean(plane, arms, cross_count(arms)), plane)
    costs = census_costs(left, left, max_disparity=3, channel_axis=-1, parameters=parameters)
    assert (costs[0] == 0).all()


@pytest.mark.parametrize("field, value", [("aggregation", "median"), ("cross_threshold", 256),
                                          ("cross_length", -1), ("cross_minimum", 65)])
def test_census_costs_reject_bad_cross_parameters(field, value):
    image = np.zeros((8, 12), dtype=np.uint8)
    with pytest.raises(ValueError, match=field):
        census_costs(image, image, max_disparity=2,
                     parameters=CensusParameters()._replace(**{field: value}))
