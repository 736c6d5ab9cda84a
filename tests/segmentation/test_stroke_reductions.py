"""Three per-stroke steps of the learned model's pipeline reduced on the GPU in fewer passes and
waits, with the same numbers as the host's:

- the hold's stroke count (graphcut/segmentation/_hold.py): the blocks holding each label's
  seeds come from one reduction on the device (``blocks_holding``) instead of the seed pixels'
  positions copied to the host;
- the seeds' sample weights (graphcut/segmentation/_seed_weights.py ``seed_weights``): every
  label's count in one copy, each pixel's weight looked up by its label;
- the previous mask's thickness (the hold's reach): seven counts in one copy.

Checked with NumPy and with the NumPy stand-in for CuPy (tests/support/fake_cupy.py: it runs the
same array code, so it checks the arithmetic and the path taken, not the GPU's speed)."""

import numpy as np
import pytest
from scipy import ndimage

import fake_cupy
from graphcut.segmentation._coarse import coarse_factor
from graphcut.segmentation._hold import blocks_holding, stroke_count


def random_seeds(shape, strokes, seed):
    """Seeds of both labels: ``strokes`` small discs (radius 0-5) at random places."""
    rng = np.random.default_rng(seed)
    seeds = np.zeros(shape, np.uint8)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    for index in range(strokes):
        row, col = rng.integers(shape[0]), rng.integers(shape[1])
        radius = rng.integers(0, 6)
        seeds[(yy - row) ** 2 + (xx - col) ** 2 <= radius ** 2] = 1 + index % 2
    return seeds


@pytest.mark.parametrize("shape, block", [((37, 53), 4), ((64, 64), 8), ((300, 301), 7),
                                          ((50, 40), 1), ((9, 9), 16)])
def test_blocks_holding_marks_the_blocks_of_the_chosen_pixels(shape, block):
    chosen = random_seeds(shape, 9, block) == 1
    np.testing.assert_array_equal(blocks_holding(chosen, block),
                                  pixel_blocks(chosen, block))


def pixel_blocks(chosen, block):
    """The oracle: each chosen pixel's block marked, one pixel at a time."""
    grid = np.zeros((-(-chosen.shape[0] // block), -(-chosen.shape[1] // block)), bool)
    for row, col in zip(*np.nonzero(chosen)):
        grid[row // block, col // block] = True
    return grid


@pytest.fixture
def cupy(monkeypatch):
    """The stand-in CuPy (array code only: no kernel library is needed here)."""
    module = fake_cupy.fake_cupy_module(None)
    fake_cupy.install_cupyx_ndimage(monkeypatch, module)
    return module


@pytest.mark.parametrize("shape, strokes", [((700, 900), 12), ((1030, 1025), 30)])
def test_the_device_count_equals_the_host_count(cupy, monkeypatch, shape, strokes):
    from graphcut.segmentation import _hold
    block = coarse_factor(shape)
    assert block > 1
    reduced = []
    monkeypatch.setattr(_hold, "blocks_holding",
                        lambda chosen, b: reduced.append(b) or blocks_holding(chosen, b))
    for seed in range(3):
        seeds = random_seeds(shape, strokes, seed)
        on_device = cupy.asarray(seeds)
        assert type(on_device).__module__.startswith("cupy")
        expected = sum(ndimage.label(pixel_blocks(seeds == label, block))[1]
                       for label in (1, 2))
        assert stroke_count(on_device, block) == stroke_count(seeds, block) == expected
    assert reduced == [block] * 6  # the device path: one reduction per label


@pytest.mark.parametrize("objects", [[1], [1, 3]])
def test_the_device_seed_weights_equal_the_host_formula(cupy, objects):
    from graphcut.segmentation._seed_weights import seed_weights as _seed_weights
    rng = np.random.default_rng(len(objects))
    seeds = rng.choice(np.array([0, 1, 2, 3], np.uint8), size=(60, 70),
                       p=[0.9, 0.05, 0.04, 0.01])
    seeds[seeds == 3] = 3 if 3 in objects else 0
    host = _seed_weights(seeds, objects, 0.1)
    device = _seed_weights(cupy.asarray(seeds), objects, 0.1)
    assert type(device).__module__.startswith("cupy") and device.dtype == np.float64
    expected = np.ones(seeds.shape)
    for label in (*objects, 2):
        expected[seeds == label] = max(1.0, 0.1 * seeds.size / (seeds == label).sum())
    np.testing.assert_array_equal(np.asarray(device), expected)
    np.testing.assert_array_equal(host, expected)
    only_background = np.where(seeds == 2, 2, 0).astype(np.uint8)  # a label with no seeds
    np.testing.assert_array_equal(np.asarray(_seed_weights(cupy.asarray(only_background),
                                                           objects, 0.1)),
                                  _seed_weights(only_background, objects, 0.1))


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (30, 41)])
def test_thickness_on_the_device_equals_the_pixel_edge_count(cupy, shape):
    """The previous mask's thickness (2 area / perimeter, the image's border counted) from one
    copy of seven counts: the same number as counting the edges one by one."""
    from graphcut.segmentation._hold import thickness
    for seed in range(3):
        mask = np.random.default_rng(seed).random(shape) > 0.4
        area = int(mask.sum())
        edges = (int((mask[1:] != mask[:-1]).sum()) + int((mask[:, 1:] != mask[:, :-1]).sum())
                 + int(mask[0].sum()) + int(mask[-1].sum()) + int(mask[:, 0].sum())
                 + int(mask[:, -1].sum()))
        expected = 2.0 * area / max(edges, 1) if area else 0.0
        assert thickness(cupy.asarray(mask)) == thickness(mask) == expected
    assert thickness(cupy.asarray(np.zeros(shape, bool))) == 0.0


@pytest.mark.parametrize("shape, block, reach", [((256, 256), 8, 30.0), ((256, 256), 8, 3.0),
                                                 ((90, 300), 1, 10.0), ((40, 40), 4, 200.0),
                                                 ((375, 500), 11, 45.5)])
def test_hold_weights_equal_a_transform_of_the_whole_grid(shape, block, reach):
    """The hold's weights, transformed only near the changed blocks, are bit for bit those of
    the whole grid's distance transform (farther, the weight is 1.0 in float64)."""
    from graphcut.segmentation._hold import hold_weights
    rng = np.random.default_rng(block)
    for count in (1, 3, 40):
        changed = np.zeros(shape, bool)
        changed[rng.integers(shape[0], size=count), rng.integers(shape[1], size=count)] = True
        if count == 3:  # one short stroke: neighbouring blocks
            changed[:] = False
            row, col = rng.integers(shape[0] - 3), rng.integers(shape[1] - 3)
            changed[row:row + 2, col:col + 3] = True
        distance = ndimage.distance_transform_edt(~changed) * block
        expected = -np.expm1(-distance * distance / (2 * reach * reach))
        got = hold_weights(changed, block, reach)
        assert got.dtype == np.float64 and got.shape == shape
        np.testing.assert_array_equal(got, expected)
        if count == 1 and max(shape) * block > 2 * 9 * reach:  # the far side is saturated
            assert (expected == 1.0).any()
