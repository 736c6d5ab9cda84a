"""GMM(stroke_reach=...): strokes alone, the far pixels start as background in the live
model's coarse iterations (auto's colour model); off in GMM(); every answer still equals a
fresh segment()'s."""

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM, model_from_settings
from graphcut.segmentation._coarse import far_background
from synthetic import colour_image

REACHING = GMM(core=0.4, warm=True, stroke_reach=0.2)


def _brute_far(binary, reach):
    """The free pixels whose distance to every object pixel exceeds ``reach``, pair by pair."""
    objects = np.argwhere(binary == 1)
    far = np.zeros(binary.shape, bool)
    for r, c in np.argwhere(binary == 0):
        nearest = np.sqrt(((objects - (r, c)) ** 2).sum(axis=1)).min() if len(objects) \
            else np.inf
        far[r, c] = nearest > reach
    return far


@pytest.mark.parametrize("seed", range(4))
def test_far_background_adds_exactly_the_far_free_pixels(seed):
    rng = np.random.default_rng(seed)
    binary = rng.choice(np.array([0, 1, 2], np.uint8), size=(13, 17), p=[0.9, 0.04, 0.06])
    binary[0, 0] = 1
    weights = rng.uniform(1, 50, binary.shape)
    samples = (np.where(binary == 1, weights, 0.0), np.where(binary == 2, weights, 0.0))
    reach = rng.uniform(1.5, 6.0)
    obj, background = far_background(binary, samples, reach, np)
    far = _brute_far(binary, reach)
    np.testing.assert_array_equal(obj, samples[0])  # the object's sample: its seeds
    np.testing.assert_array_equal(background, np.where(far, 1.0, samples[1]))
    assert far.any() and (~far & (binary == 0)).any()  # both kinds of free pixel occur


def _three_colours(shape=(200, 400), seed=0):
    """An orange rectangle on a blue-grey background whose right quarter is green: the
    background stroke (left) never touches the green."""
    rng = np.random.default_rng(seed)
    h, w = shape
    image = np.clip(rng.normal([0.3, 0.35, 0.5], 0.05, (h, w, 3)), 0, 1)
    image[:, 3 * w // 4:] = np.clip(rng.normal([0.2, 0.7, 0.25], 0.05, (h, w // 4, 3)), 0, 1)
    truth = np.zeros((h, w), bool)
    truth[60:140, 120:220] = True
    image[truth] = np.clip(rng.normal([0.85, 0.5, 0.2], 0.06, (int(truth.sum()), 3)), 0, 1)
    seeds = np.zeros((h, w), np.uint8)
    seeds[95:105, 165:175] = 1
    seeds[95:105, 10:20] = 2
    return (image * 255).astype(np.uint8), truth, seeds


def test_the_far_region_of_colours_no_stroke_touched_is_background():
    """Two strokes only: the green region far from the object stroke is in the background's
    first sample, and the mask is the rectangle (IoU against the truth); from the seeds
    alone the green, which neither stroke's colours explain, turns object here."""
    image, truth, seeds = _three_colours(seed=1)
    mask = graphcut.segment(image, seeds, model=REACHING, device="cpu")
    assert (mask & truth).sum() / (mask | truth).sum() > 0.95
    assert not mask[:, 300:].any()
    seeds_alone = graphcut.segment(image, seeds, model=GMM(core=0.4, warm=True), device="cpu")
    assert seeds_alone[:, 300:].mean() > 0.5


def test_segmenter_strokes_equal_fresh_segments():
    image, truth, seeds = _three_colours(seed=1)
    session = graphcut.Segmenter(image, model=REACHING, device="cpu")
    rng = np.random.default_rng(3)
    for step in range(4):
        r, c = int(rng.integers(2, 198)), int(rng.integers(2, 398))
        seeds[r - 2:r + 3, c - 2:c + 3] = 1 if truth[r, c] else 2
        mask = session.update(seeds)
        fresh, result = graphcut.segment(image, seeds, model=REACHING, device="cpu",
                                         return_result=True)
        np.testing.assert_array_equal(mask, fresh, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow
        assert mask[seeds == 1].all() and not mask[seeds == 2].any()


def test_a_box_ignores_the_reach():
    """With a box the first samples are the box's (the reach is for strokes alone)."""
    image, _, seeds = _three_colours(seed=2)
    box = (50, 110, 150, 230)
    for given in (None, seeds):
        np.testing.assert_array_equal(
            graphcut.segment(image, given, box=box, model=REACHING, device="cpu"),
            graphcut.segment(image, given, box=box, model=GMM(core=0.4, warm=True),
                             device="cpu"))


def test_stroke_reach_round_trips_and_is_off_by_default():
    assert GMM().stroke_reach == 0 and GMM().settings() == {"model": "gmm"}
    assert REACHING.settings() == {"model": "gmm", "core": 0.4, "warm": True,
                                   "stroke_reach": 0.2}
    assert model_from_settings(REACHING.settings()) == REACHING
    for bad in (-0.1, float("nan"), "far"):
        with pytest.raises(ValueError, match="stroke_reach"):
            GMM(stroke_reach=bad)


@pytest.mark.gpu
def test_the_gpu_gives_the_cpus_masks_and_flows():
    image, truth, seeds = _three_colours(seed=4)
    session = graphcut.Segmenter(image, model=REACHING, device="cuda")
    rng = np.random.default_rng(5)
    for step in range(3):
        r, c = int(rng.integers(2, 198)), int(rng.integers(2, 398))
        seeds[r - 2:r + 3, c - 2:c + 3] = 1 if truth[r, c] else 2
        mask = session.update(seeds)
        cpu, result = graphcut.segment(image, seeds, model=REACHING, device="cpu",
                                       return_result=True)
        assert session.last_result.backend == "cuda"
        np.testing.assert_array_equal(mask, cpu, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow


def test_a_small_first_stroke_does_not_lose_the_object_to_the_far_background(monkeypatch):
    from graphcut.segmentation import _coarse
    image, truth = colour_image(np.random.default_rng(12), (90, 130))
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[43:48, 63:68] = 1          # a 5 x 5 stroke: 25 object blocks, under FAR_MIN_BLOCKS
    seeds[:4, :] = 2
    guarded = graphcut.segment(image, seeds, model=REACHING, device="cpu")
    assert (guarded == truth).mean() > 0.99
    monkeypatch.setattr(_coarse, "FAR_MIN_BLOCKS", 0)   # the start without the guard
    unguarded = graphcut.segment(image, seeds, model=REACHING, device="cpu")
    assert (unguarded == truth).mean() < 0.9             # the collapse the guard prevents
    seeds[40:51, 60:71] = 1          # an 11 x 11 stroke: the far start applies, and holds
    monkeypatch.setattr(_coarse, "FAR_MIN_BLOCKS", 26)
    assert (graphcut.segment(image, seeds, model=REACHING, device="cpu") == truth).mean() > 0.99

