"""Neighbours entering a box (graphcut/segmentation/_box_neighbours.py, seventeenth session):
the box's pixels that an object crossing its side brings in cost the object more in the
tightness prior's cuts. Checked: the pixels found against the scene's own neighbour (its
drawn disk; either polarity, colour, a box at the image border, a sampled window), nothing
found without a neighbour or for the object alone with the box 1 pixel out, the cost added
exactly and the given costs never changed, the GPU's array code (the NumPy stand-in; a real
GPU marked ``gpu``) equal to NumPy's, the model's ``neighbours`` knob reaching the pins' cuts,
and a Segmenter's boxes equal fresh segments with the box holding exactly."""

import numpy as np
import pytest
from scipy import ndimage
from test_device_seeds import gpu  # noqa: F401  (the stand-in / GPU fixture)

import graphcut
from graphcut.models import Learned
from graphcut.segmentation import _box_neighbours, _tightness
from graphcut.segmentation._box_neighbours import (box_levels, neighbour_pixels,
                                                   with_neighbour_cost)
from graphcut.segmentation._regions import allowed_region
from session_oracle import assert_box_updates_are_fresh_segments


def _disk(shape, centre, radius):
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    return (yy - centre[0]) ** 2 + (xx - centre[1]) ** 2 < radius ** 2


def _pair(shape=(40, 40), neighbour_at=(20, 8), object_level=1.0, neighbour_level=0.8,
          blur=1.0):
    """An object (a disk of radius 4.5 at (20, 20)) and a neighbour (radius 5.5) whose edge
    crosses the left side of the object's box (its bounding box grown by 3 pixels)."""
    obj = _disk(shape, (20, 20), 4.5)
    other = _disk(shape, neighbour_at, 5.5)
    image = np.where(obj, object_level, np.where(other, neighbour_level, 0.0))
    image = ndimage.gaussian_filter(image, blur)
    rows, cols = np.nonzero(obj)
    box = (int(rows.min()) - 3, int(cols.min()) - 3, int(rows.max()) + 4, int(cols.max()) + 4)
    return image[..., None], obj, other, box


def _found(values, box, **kwargs):
    """neighbour_pixels as a host bool image (all False when None)."""
    found = neighbour_pixels(values, box, **kwargs)
    out = np.zeros(values.shape[:2], bool)
    if found is not None:
        window, pixels = found
        out[window] = pixels.get() if hasattr(pixels, "get") else np.asarray(pixels)
    return out


def _inside(shape, box):
    inside = np.zeros(shape, bool)
    inside[box[0]:box[2], box[1]:box[3]] = True
    return inside


@pytest.mark.parametrize("polarity", [1.0, -1.0])
def test_a_neighbour_crossing_the_side_is_found_and_the_object_is_not(polarity):
    values, obj, other, box = _pair()
    found = _found(polarity * values, box)
    inside = _inside(obj.shape, box)
    # every found pixel is in the box and off the object; most of the neighbour's part in the
    # box is found (its blurred rim next to the valley may go either way)
    assert found.any() and not (found & ~inside).any()
    assert not (found & ndimage.binary_dilation(obj)).any()
    assert (found & other & inside).sum() >= 0.8 * (other & inside).sum()


def test_colour_values_and_a_box_at_the_image_border():
    values, obj, other, box = _pair(shape=(40, 30), neighbour_at=(20, 9))
    colour = np.concatenate([values, 0.5 * values, 2.0 - values], axis=-1)
    shifted = (box[0], box[1], box[2], 30)  # the box reaches the image's right border
    for image, where in [(colour, box), (values, shifted)]:
        found = _found(image, where)
        assert found.any() and not (found & ndimage.binary_dilation(obj)).any()
        assert not (found & ~_inside(obj.shape, where)).any()


def test_nothing_without_a_neighbour_nor_for_the_object_alone_with_a_tight_box():
    values, obj, _, box = _pair(neighbour_level=0.0, blur=1.5)
    assert neighbour_pixels(values, box) is None
    rows, cols = np.nonzero(obj)
    tight = (int(rows.min()) - 1, int(cols.min()) - 1, int(rows.max()) + 2, int(cols.max()) + 2)
    assert neighbour_pixels(values, tight) is None  # its blur crosses by 1-2 pixels only
    flat = np.zeros((20, 20, 1))
    assert neighbour_pixels(flat, (5, 5, 15, 15)) is None  # no contrast


def test_the_levels_are_the_border_and_the_core_medians():
    rng = np.random.default_rng(3)
    values = rng.random((12, 14, 2))
    box = (1, 2, 11, 12)
    levels = box_levels(values, box)
    inside = values[1:11, 2:12]
    border = np.concatenate([inside[0], inside[-1], inside[1:-1, 0], inside[1:-1, -1]])
    core = inside[2:8, 2:8]  # depths 1..5 on each axis: at least 2.5 deep
    low = np.median(border, axis=0)
    axis = np.median(core.reshape(-1, 2), axis=0) - low
    np.testing.assert_allclose(levels, (values - low) @ axis / (axis @ axis))


def test_a_large_window_is_sampled_and_its_answer_still_holds():
    values, obj, other, box = _pair(shape=(60, 60), neighbour_at=(20, 9))
    values, obj, other = (np.repeat(np.repeat(a, 2, axis=0), 2, axis=1)
                          for a in (values, obj, other))  # the scene twice as large
    box = tuple(2 * v for v in box)
    exact = _found(values, box)
    sampled = _found(values, box, max_pixels=1000)  # a stride of 2
    inside = _inside(obj.shape, box)
    assert exact.any() and sampled.any() and not (sampled & ~inside).any()
    assert not (sampled & obj).any()
    assert (sampled & exact).sum() >= 0.5 * exact.sum()


def test_the_cost_is_added_exactly_and_the_costs_given_are_kept():
    values, obj, other, box = _pair()
    cost_object = np.random.default_rng(0).random(obj.shape).astype(np.float32)
    kept = cost_object.copy()
    changed = with_neighbour_cost(cost_object, values, box, 2.5)
    np.testing.assert_array_equal(cost_object, kept)
    found = _found(values, box)
    np.testing.assert_allclose(changed - kept, np.where(found, 2.5, 0.0), atol=1e-6)
    assert changed.dtype == kept.dtype
    assert with_neighbour_cost(cost_object, values, box, 0.0) is cost_object


def test_the_gpus_array_code_equals_numpys(gpu):  # noqa: F811
    values, obj, other, box = _pair()
    cost_object = np.random.default_rng(1).random(obj.shape)
    expected = with_neighbour_cost(cost_object, values, box, 1.0)
    got = with_neighbour_cost(gpu.asarray(cost_object), gpu.asarray(values), box, 1.0)
    got = got.get() if hasattr(got, "get") else np.asarray(got)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def _scene(level=110, column=36, blur=1.0, neighbour=False):
    """A blurred small nucleus (120 on 20, noise) and a neighbour of ``level`` at ``column``
    crossing its box's left side (the nucleus' bounding box grown by 3 pixels)."""
    rng = np.random.default_rng(5)
    image = 20 + 4 * rng.standard_normal((90, 90))
    truth = _disk(image.shape, (45, 45), 4.5)
    image[truth] = 120
    other = _disk(image.shape, (44, column), 5.5)
    image[other] = level
    for centre in [(12, 15), (70, 70), (15, 70), (72, 14)]:
        image[_disk(image.shape, centre, 4.5)] += 100
    image = ndimage.gaussian_filter(image, blur)
    rows, cols = np.nonzero(truth)
    box = (int(rows.min()) - 3, int(cols.min()) - 3, int(rows.max()) + 4, int(cols.max()) + 4)
    image = np.clip(image, 0, 255).astype(np.uint8)
    return (image, truth, box, other) if neighbour else (image, truth, box)


def test_the_pins_cuts_take_less_of_a_brighter_neighbour():
    """The tightness prior's pins pulled part of a brighter neighbour into the box's mask;
    its cost leaves more of it out and the mask nearer the truth."""
    image, truth, box, other = _scene(level=140, column=37, blur=1.5, neighbour=True)
    masks = [graphcut.segment(image, box=box, model=Learned(neighbours=n), device="cpu")
             for n in (0.0, None)]
    without, with_cost = ((m & other).sum() for m in masks)
    assert with_cost < without
    iou = [(m & truth).sum() / (m | truth).sum() for m in masks]
    assert iou[1] > iou[0] + 0.02


@pytest.mark.parametrize("neighbours", [None, 0.0, 2.5])
def test_the_models_neighbours_reach_the_pins_cuts(monkeypatch, neighbours):
    image, truth, box = _scene()
    seen = []

    def spy(cost_object, values, where, cost):
        seen.append((cost, neighbour_pixels(values, where)))
        return with_neighbour_cost(cost_object, values, where, cost)

    monkeypatch.setattr(_tightness, "with_neighbour_cost", spy)
    model = Learned(neighbours=neighbours)  # a knob: None is the default
    assert model.settings() == ({"model": "learned"} if neighbours is None else
                                {"model": "learned", "neighbours": neighbours})
    mask = graphcut.segment(image, box=box, model=model, device="cpu")
    assert not mask[~allowed_region(image.shape, box=box)].any()
    assert seen and seen[-1][1] is not None  # the pins' cuts ran and a neighbour was found
    assert seen[-1][0] == (_box_neighbours.NEIGHBOUR_COST if neighbours is None else neighbours)
    with pytest.raises(ValueError, match="neighbours"):
        Learned(neighbours=-1.0)


def test_segmenter_updates_with_boxes_equal_fresh_segments():
    image, truth, box = _scene()
    seeds = np.zeros(image.shape, np.uint8)
    seeds[45, 44:47] = 1
    assert_box_updates_are_fresh_segments(image, box, seeds, margin=2)
