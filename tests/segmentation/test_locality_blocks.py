"""The live models' block locality costs on the host: the seeded blocks found from the seeded
pixels' coordinates equal the blocks' pooled seeds, and the costs equal each block's cost
repeated over its pixels (np.repeat), on shapes that blocks do not divide; and the seeds'
sample weights against their formula."""

import numpy as np
import pytest

from graphcut.segmentation._hold import blocks_holding
from graphcut.segmentation._locality import _locality_priors, _seeded_blocks
from test_learned_fake_cupy import cupy  # noqa: F401 - the stand-in CuPy fixture


@pytest.mark.parametrize("shape,block", [((37, 53), 4), ((64, 64), 8), ((101, 77), 3),
                                         ((9, 200), 5)])
def test_seeded_blocks_equal_the_pooled_seeds(shape, block):
    rng = np.random.default_rng(block)
    seeds = rng.choice(np.array([0, 0, 0, 0, 0, 1, 2, 3], np.uint8), size=shape)
    seeds[rng.random(shape) < 0.9] = 0
    blocks = _seeded_blocks(seeds, block)
    for label in (1, 2, 3, 4):
        np.testing.assert_array_equal(blocks(label), blocks_holding(seeds == label, block))


@pytest.mark.parametrize("shape,block", [((37, 53), 4), ((101, 77), 3)])
def test_block_costs_are_each_blocks_cost_over_its_pixels(shape, block):
    """Every pixel has its block's cost (the block's first pixel's, repeated with np.repeat),
    in a C-contiguous (H, W) array; how near the exact distances' costs they are is
    test_live_gmm's test_block_locality_costs_are_near_the_exact_ones."""
    seeds = np.zeros(shape, np.uint8)
    seeds[2:5, 3:9], seeds[-4:-1, 10:30] = 1, 2
    priors = _locality_priors(seeds, [1, 2], 2.0, np, far_cost=5.0, objects=[1], block=block)
    for cost in priors:
        assert cost.shape == shape and cost.flags.c_contiguous
        per_block = cost[::block, ::block]
        expected = np.repeat(np.repeat(per_block, block, axis=0), block, axis=1)
        np.testing.assert_array_equal(cost, expected[:shape[0], :shape[1]])
        assert len(np.unique(per_block)) > 3  # the costs vary between blocks


def test_the_device_path_gives_the_hosts_costs(cupy):  # noqa: F811
    """On the stand-in CuPy (the seeds on the device: blocks pooled there) the costs equal
    the host's."""
    seeds = np.zeros((101, 77), np.uint8)
    seeds[2:5, 3:9], seeds[-4:-1, 10:30] = 1, 2
    host = _locality_priors(seeds, [1, 2], 2.0, np, far_cost=5.0, objects=[1], block=3)
    device = _locality_priors(cupy.asarray(seeds), [1, 2], 2.0, cupy, far_cost=5.0,
                              objects=[1], block=3)
    for a, b in zip(device, host):
        assert type(a).__module__.split(".")[0] == "cupy"
        np.testing.assert_array_equal(np.asarray(a), b)


def test_seed_weights_follow_the_formula():
    """Every pixel weighs 1, a seed of a label with n seeds max(1, share * H * W / n)."""
    from graphcut.segmentation._seed_weights import seed_weights as _seed_weights

    rng = np.random.default_rng(1)
    seeds = rng.choice(np.array([0, 1, 2, 3], np.uint8), size=(40, 50), p=[0.9, 0.05, 0.04,
                                                                            0.01])
    weights = _seed_weights(seeds, [1, 3], 0.1)
    expected = np.ones(seeds.shape)
    for label in (1, 2, 3):
        expected[seeds == label] = max(1.0, 0.1 * seeds.size / (seeds == label).sum())
    np.testing.assert_array_equal(weights, expected)
    assert _seed_weights(seeds, [1, 3], 0.0) is None


def test_remembered_block_costs_are_the_computed_ones(monkeypatch):
    """A live model's block costs are remembered per label: after one label's seeds change,
    only that label's distance transform runs again, and every cost equals a computation
    with nothing remembered."""
    from scipy import ndimage

    from graphcut.segmentation import _locality

    _locality._memo.clear()
    calls = []
    transform = ndimage.distance_transform_edt
    monkeypatch.setattr(ndimage, "distance_transform_edt",
                        lambda a, *args, **kw: calls.append(a.shape) or transform(a, *args, **kw))
    seeds = np.zeros((101, 77), np.uint8)
    seeds[2:5, 3:9], seeds[-4:-1, 10:30], seeds[50:53, 40:44] = 1, 2, 3
    first = _locality_priors(seeds, [2, 1, 3], 2.0, np, far_cost=5.0, objects=[1, 3], block=3)
    assert len(calls) == 3
    seeds[60:63, 5:9] = 3  # a stroke of label 3
    second = _locality_priors(seeds, [2, 1, 3], 2.0, np, far_cost=5.0, objects=[1, 3],
                              block=3)
    assert len(calls) == 4  # label 3's only
    _locality._memo.clear()
    fresh = _locality_priors(seeds, [2, 1, 3], 2.0, np, far_cost=5.0, objects=[1, 3], block=3)
    for a, b in zip(second, fresh):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(first[0], second[0])
    assert not np.array_equal(first[2], second[2])
    other = _locality_priors(seeds, [2, 1, 3], 3.0, np, far_cost=5.0, objects=[1, 3], block=3)
    assert not np.array_equal(other[0], second[0])  # another strength: not the remembered one
    calls.clear()
    _locality_priors(seeds, [1, 2], 2.0, np, far_cost=5.0, objects=[1], block=1)
    _locality_priors(seeds, [1, 2], 2.0, np, far_cost=5.0, objects=[1], block=1)
    assert len(calls) == 4  # pixels (block 1): nothing remembered
