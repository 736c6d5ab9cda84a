"""The box's own level prior (graphcut/segmentation/_box_level.py): the levels against
_box_neighbours.box_levels (an independent computation of the same scale), the signs of the
cost against the scene drawn, nothing for a small box, no contrast, no cost or texture alone
(the levels spread), a neighbour's pixels never rewarded, the given costs kept, the GPU's
array code (the NumPy stand-in; a real GPU marked ``gpu``) equal to NumPy's, the model's
``level`` knob reaching the cut (a tight box around a large blurred nucleus: nearer its
truth with the prior), the box holding exactly, and a Segmenter's boxes equal to fresh
segments."""

import numpy as np
import pytest
from scipy import ndimage
from test_device_seeds import gpu  # noqa: F401  (the stand-in / GPU fixture)

import graphcut
from graphcut.models import Learned
from graphcut.segmentation import _box_level, _outline
from graphcut.segmentation._box_level import box_axis, level_cost, with_level_cost
from graphcut.segmentation._box_neighbours import box_levels, neighbour_pixels
from graphcut.segmentation._regions import allowed_region
from session_oracle import assert_box_updates_are_fresh_segments


def _disk(shape, centre, radius):
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    return (yy - centre[0]) ** 2 + (xx - centre[1]) ** 2 < radius ** 2


def _nucleus(shape=(80, 80), radius=12.0, blur=2.0, pixels=1, noise=3.0, neighbour=False):
    """A blurred nucleus (140 on 20) of ``radius`` at (40, 40), its box ``pixels`` out, other
    nuclei elsewhere (and with ``neighbour`` one crossing the box's left side)."""
    rng = np.random.default_rng(3)
    image = np.full(shape, 20.0)
    truth = _disk(shape, (40, 40), radius)
    image[truth] = 140
    for centre in [(10, 10), (70, 70), (10, 70), (70, 10)]:
        image[_disk(shape, centre, 6)] = 140
    other = _disk(shape, (40, 40 - radius - 8), 8) if neighbour else np.zeros(shape, bool)
    image[other] = 130
    image = ndimage.gaussian_filter(image, blur) + noise * rng.standard_normal(shape)
    rows, cols = np.nonzero(truth)
    box = (int(rows.min()) - pixels, int(cols.min()) - pixels, int(rows.max()) + 1 + pixels,
           int(cols.max()) + 1 + pixels)
    return np.clip(image, 0, 255).astype(np.uint8), truth, box, other


def test_the_levels_equal_box_levels_scale():
    image, truth, box, _ = _nucleus()
    values = image.astype(np.float64)[..., None]
    low, scale = box_axis(values, box)
    r0, c0, r1, c1 = box
    expected = box_levels(values, box)[r0:r1, c0:c1]
    np.testing.assert_allclose((values[r0:r1, c0:c1] - low) @ scale, expected, atol=1e-12)


def test_the_cost_follows_the_level_inside_the_box_only():
    image, truth, box, _ = _nucleus()
    values = image.astype(np.float64)[..., None]
    added = level_cost(values, box, 1.5)
    r0, c0, r1, c1 = box
    levels = box_levels(values, box)[r0:r1, c0:c1]
    np.testing.assert_array_equal(added, np.where(levels >= _box_level.LEVEL, -1.5, 1.5))
    assert (added[truth[r0:r1, c0:c1]] < 0).mean() > 0.95  # the nucleus is rewarded
    assert added[0, 0] == 1.5                               # the box's corner is not
    cost = np.zeros(image.shape)
    changed = with_level_cost(cost, values, box, 1.5)
    assert not cost.any()                                   # the given costs are kept
    outside = ~allowed_region(image.shape, box=box)
    assert not changed[outside].any()
    np.testing.assert_array_equal(changed[r0:r1, c0:c1], added)


def test_nothing_for_a_small_box_no_cost_or_no_contrast():
    image, truth, box, _ = _nucleus(radius=6.0)
    values = image.astype(np.float64)[..., None]
    assert min(box[2] - box[0], box[3] - box[1]) <= _box_level.MIN_SIDE
    assert level_cost(values, box, 1.0) is None
    assert level_cost(values, box, 1.0, min_side=5) is not None
    image, truth, box, _ = _nucleus()
    values = image.astype(np.float64)[..., None]
    assert level_cost(values, box, 0.0) is None
    assert level_cost(np.ones_like(values), box, 1.0) is None
    cost = np.zeros(image.shape)
    assert with_level_cost(cost, values, box, 0.0) is cost


def test_a_neighbours_pixels_are_not_rewarded():
    image, truth, box, other = _nucleus(neighbour=True, pixels=3)
    values = image.astype(np.float64)[..., None]
    added = level_cost(values, box, 1.0)
    r0, c0, r1, c1 = box
    (rows, cols), pixels = neighbour_pixels(values, box)
    theirs = np.zeros(image.shape, bool)
    theirs[rows, cols] = pixels
    theirs = theirs[r0:r1, c0:c1]
    assert theirs.any() and (theirs & other[r0:r1, c0:c1]).sum() > 0.8 * theirs.sum()
    assert not (added[theirs] < 0).any()
    levels = box_levels(values, box)[r0:r1, c0:c1]
    np.testing.assert_array_equal(added[~theirs],
                                  np.where(levels >= _box_level.LEVEL, -1.0, 1.0)[~theirs])


def test_a_sampled_box_keeps_the_scale():
    image, truth, box, _ = _nucleus()
    values = image.astype(np.float64)[..., None]
    low, scale = box_axis(values, box)
    low_s, scale_s = box_axis(values, box, max_pixels=200)  # every second pixel or so
    assert abs(float(low_s[0]) - float(low[0])) < 2.0
    assert abs(float(scale_s[0]) / float(scale[0]) - 1.0) < 0.1


def test_the_gpus_array_code_equals_numpys(gpu):  # noqa: F811
    image, truth, box, _ = _nucleus(neighbour=True)
    values = image.astype(np.float32)[..., None]
    cost = np.random.default_rng(1).random(image.shape)
    expected = with_level_cost(cost, values, box, 1.0)
    got = with_level_cost(gpu.asarray(cost), gpu.asarray(values), box, 1.0)
    got = got.get() if hasattr(got, "get") else np.asarray(got)
    np.testing.assert_array_equal(got, expected)


def _iou(mask, truth):
    return (mask & truth).sum() / (mask | truth).sum()


def test_a_tight_box_around_a_large_nucleus_comes_nearer_its_truth():
    """The box's ring and outline cost eat a tight box's object; the level gives it back."""
    image, truth, box, _ = _nucleus(pixels=1)
    masks = [graphcut.segment(image, box=box, model=Learned(level=v), device="cpu")
             for v in (0.0, 1.0)]
    for mask in masks:
        assert not mask[~allowed_region(image.shape, box=box)].any()
    assert _iou(masks[1], truth) > _iou(masks[0], truth) + 0.02


@pytest.mark.parametrize("level", [None, 0.0, 2.5])
def test_the_models_level_reaches_the_outline_cost(monkeypatch, level):
    image, truth, box, _ = _nucleus()
    seen = []

    def spy(cost_object, values, where, cost):
        seen.append(cost)
        return with_level_cost(cost_object, values, where, cost)

    monkeypatch.setattr(_box_level, "with_level_cost", spy)
    model = Learned(level=level)
    assert model.settings() == ({"model": "learned"} if level is None else
                                {"model": "learned", "level": level})
    graphcut.segment(image, box=box, model=model, device="cpu")
    effective = _box_level.LEVEL_COST if level is None else level  # None: the default, off
    assert seen == ([] if effective == 0.0 else [effective])
    with pytest.raises(ValueError, match="level"):
        Learned(level=-1.0)


def test_the_kept_outline_cost_is_the_same_box_and_values():
    image, truth, box, _ = _nucleus()
    model = Learned(level=1.0)
    values = image.astype(np.float64)[..., None]
    region = allowed_region(image.shape, box=box)
    first = _outline.outline_priors(model, region, box, np, values=values)[0]
    assert _outline.outline_priors(model, region, box, np, values=values)[0] is first
    again = _outline.outline_priors(model, region, box, np, values=values.copy())[0]
    assert again is not first
    np.testing.assert_array_equal(again, first)
    plain = _outline.outline_priors(model, region, box, np)[0]  # no values: no level
    np.testing.assert_array_equal(first - plain, np.pad(
        level_cost(values, box, 1.0), ((box[0], 80 - box[2]), (box[1], 80 - box[3]))))


def test_segmenter_updates_with_boxes_equal_fresh_segments():
    image, truth, box, _ = _nucleus(neighbour=True)
    seeds = np.zeros(image.shape, np.uint8)
    seeds[40, 38:43] = 1
    assert_box_updates_are_fresh_segments(image, box, seeds, margin=2,
                                          model=Learned(level=1.0))


@pytest.mark.parametrize("colour", [False, True])
def test_no_level_where_texture_alone_tells_the_object(colour):
    """A rough disc on a smooth background of the same mean: the border's and the core's
    levels spread too much to read an edge from, so nothing is added (and the learned cut
    equals the one without the prior)."""
    from synthetic import textured_disc
    image, truth = textured_disc(seed=4, colour=colour)
    box = (14, 18, 66, 70)
    values = image.astype(np.float64).reshape(image.shape[:2] + (-1,))
    assert box_axis(values, box) is None and level_cost(values, box, 1.0) is None
    masks = [graphcut.segment(image, box=box, model=Learned(level=v), device="cpu")
             for v in (0.0, 1.0)]
    np.testing.assert_array_equal(masks[0], masks[1])
