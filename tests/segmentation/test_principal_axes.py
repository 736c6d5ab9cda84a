"""Orchard-Bouman's principal-axis split (graphcut/models/_principal_axes.py), the first fit
of every Gaussian mixture: the host path (each step on the split cluster's own rows, channels
first) gives the clusters of a plain reference written here from the definition (every step
masks every row), on random samples of every size, channel count and component count, with
zero weights, repeated colours and single-colour samples; and it ends early where no cluster
has any spread."""

import numpy as np
import pytest

from graphcut.models._principal_axes import NO_SPREAD, principal_axis_split


def reference_split(x, weight, components):
    """The definition: split the cluster of largest weighted covariance eigenvalue through
    its weighted mean, across that eigenvector, until ``components`` clusters or no spread."""
    clusters = np.zeros(len(x), dtype=np.int64)

    def axis(members):
        w = np.where(members, weight, 0.0)
        if members.sum() < 2 or w.sum() <= 0:
            return -1.0, None, None
        mean = (w[:, None] * x).sum(axis=0) / w.sum()
        centred = x - mean
        values, vectors = np.linalg.eigh((centred * w[:, None]).T @ centred / w.sum())
        return values[-1], vectors[:, -1], mean

    spread = [axis(np.ones(len(x), bool))]
    while len(spread) < components:
        target = int(np.argmax([s[0] for s in spread]))
        value, vector, mean = spread[target]
        if value <= NO_SPREAD:  # no spread left (a single colour: rounding alone)
            break
        members = clusters == target
        upper = members & ((x - mean) @ vector > 0)
        clusters[upper] = len(spread)
        spread[target] = axis(members & ~upper)
        spread.append(axis(upper))
    return clusters, len(spread)


@pytest.mark.parametrize("rows", [2, 3, 17, 500, 5000])
@pytest.mark.parametrize("channels", [1, 3, 4])
@pytest.mark.parametrize("components", [1, 2, 5, 6])
def test_the_host_split_gives_the_reference_clusters(rows, channels, components):
    rng = np.random.default_rng(rows * 31 + channels * 7 + components)
    centres = rng.random((4, channels))
    x = centres[rng.integers(0, 4, rows)] + 0.05 * rng.standard_normal((rows, channels))
    weight = rng.random(rows) * (rng.random(rows) < 0.8)  # a fifth weigh nothing
    got, count = principal_axis_split(x, weight, components)
    expected, expected_count = reference_split(x, weight, components)
    assert count == expected_count and count <= components
    np.testing.assert_array_equal(got, expected)
    assert set(np.unique(got)) <= set(range(count))


def test_repeated_colours_split_as_the_reference():
    rng = np.random.default_rng(2)
    palette = rng.integers(0, 4, (6, 3)) / 3.0  # few distinct colours, many repeats
    x = palette[rng.integers(0, 6, 3000)]
    weight = rng.integers(1, 4, 3000).astype(float)
    got, count = principal_axis_split(x, weight, 5)
    expected, expected_count = reference_split(x, weight, 5)
    assert count == expected_count
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("colours", [1, 2, 3])
def test_a_sample_of_few_colours_gets_one_cluster_per_colour(colours):
    """Before NO_SPREAD a single colour's rounding (eigenvalue about 1e-29) was split into
    empty or arbitrary halves; now the split stops when every cluster is one colour."""
    palette = np.array([[0.2, 0.5, 0.9], [0.8, 0.7, 0.6], [0.1, 0.1, 0.3]])[:colours]
    x = np.repeat(palette, 60, axis=0)
    got, count = principal_axis_split(x, np.linspace(1, 2, len(x)), 5)
    assert count == colours
    for c in range(colours):  # each colour's rows form one cluster of their own
        assert len(set(got[60 * c:60 * (c + 1)])) == 1
    assert len(set(got)) == colours
    expected, _ = reference_split(x, np.linspace(1, 2, len(x)), 5)
    np.testing.assert_array_equal(got, expected)
