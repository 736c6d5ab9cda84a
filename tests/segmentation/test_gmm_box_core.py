"""GMM(core=...): with a box, the object's first sample is the box's core, not all of it."""

import numpy as np
import pytest
from scipy import ndimage

import graphcut
from graphcut.models import GMM, model_from_settings


def _scene(seed=0):
    """A green disk (the object, radius 12) in a yellow ring (clutter inside the box only),
    on an orange / blue striped background; a box that holds the disk and the ring."""
    rng = np.random.default_rng(seed)
    h = w = 64
    yy, xx = np.mgrid[:h, :w]
    distance = np.hypot(yy - 32, xx - 32)
    image = np.where((xx // 4 % 2 == 0)[..., None], [1.0, 0.6, 0.0], [0.0, 0.0, 1.0])
    image[distance < 22] = [1.0, 1.0, 0.0]
    truth = distance < 12
    image[truth] = [0.0, 0.8, 0.0]
    image = np.clip(image + rng.normal(0, 0.02, image.shape), 0, 1)
    return (image * 255).astype(np.uint8), truth, (7, 7, 57, 57)


def _iou(mask, truth):
    return (mask & truth).sum() / (mask | truth).sum()


def test_core_sample_leaves_clutter_inside_the_box_to_the_background():
    image, truth, box = _scene()
    # the core (pixels >= 0.7 x the deepest distance from the box's outline) is all object
    inside = np.zeros(truth.shape, bool)
    inside[box[0]:box[2], box[1]:box[3]] = True
    depth = ndimage.distance_transform_edt(inside)
    core = depth >= 0.7 * depth.max()
    assert truth[core].all()
    whole = graphcut.segment(image, box=box, model=GMM(texture=0), iterations=0, device="cpu")
    cored = graphcut.segment(image, box=box, model=GMM(texture=0, core=0.7), iterations=0,
                             device="cpu")
    # the whole box as the object's sample makes the ring (absent outside the box) object
    assert _iou(whole, truth) < 0.5
    assert _iou(cored, truth) > 0.95


def test_core_is_ignored_without_a_box():
    image, truth, _ = _scene()
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[30:35, 30:35] = 1
    seeds[:3, :] = 2
    seeds[28:36, 50:53] = 2
    plain = graphcut.segment(image, seeds, model=GMM(texture=0), device="cpu")
    cored = graphcut.segment(image, seeds, model=GMM(texture=0, core=0.7), device="cpu")
    np.testing.assert_array_equal(plain, cored)


def test_core_round_trips_and_is_checked():
    model = GMM(components=8, core=0.4)
    assert model.settings() == {"model": "gmm", "components": 8, "core": 0.4}
    assert model_from_settings(model.settings()) == model
    assert GMM().settings() == {"model": "gmm"}  # default unchanged: old files reproduce
    for bad in (-0.1, 1.5, float("nan"), "half", True):
        with pytest.raises(ValueError, match="core must be a number from 0 to 1"):
            GMM(core=bad)


def test_segmenter_with_a_core_equals_a_fresh_segment():
    image, truth, box = _scene(1)
    model = GMM(texture=0, core=0.7)
    session = graphcut.Segmenter(image, model=model, device="cpu")
    seeds = np.zeros(truth.shape, np.uint8)
    first = session.update(seeds, box=box)
    np.testing.assert_array_equal(first, graphcut.segment(image, box=box, model=model,
                                                          device="cpu"))
    seeds[20:23, 40:43] = 2  # a background stroke on the ring
    second = session.update(seeds, box=box)
    np.testing.assert_array_equal(second, graphcut.segment(image, seeds, box=box, model=model,
                                                           device="cpu"))
