"""GMM(stroke_share=...): strokes alone, the live model's samples weigh the seeds by their
own share (auto's colour model: 0.05 against seed_share's 0.1); a box's updates and GMM()
are unchanged; every answer still equals a fresh segment()'s."""

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM, Auto, model_from_settings
from graphcut.segmentation._seed_weights import stroke_weights
from session_oracle import (assert_gpu_session_is_the_cpus,
                            assert_session_updates_are_fresh_segments)
from synthetic import ellipse_with_arm, ellipse_with_arm_seeds

LIVE = dict(core=0.4, warm=True, stroke_reach=0.2, locality=4)


def _brute_weights(binary, share):
    """Each seed pixel's weight from its label's count, pixel by pixel."""
    weights = np.ones(binary.shape)
    for (r, c), label in np.ndenumerate(binary):
        if label in (1, 2):
            count = int((binary == label).sum())
            weights[r, c] = max(1.0, share * binary.size / count)
    return weights


@pytest.mark.parametrize("seed", range(4))
def test_stroke_weights_are_each_labels_share_over_its_seed_count(seed):
    rng = np.random.default_rng(seed)
    binary = rng.choice(np.array([0, 1, 2], np.uint8), size=(11, 13), p=[0.8, 0.05, 0.15])
    binary[0, 0], binary[0, 1] = 1, 2
    share = float(rng.uniform(0.01, 0.5))
    np.testing.assert_array_equal(stroke_weights(binary, share), _brute_weights(binary, share))
    assert stroke_weights(binary, 0.0) is None
    crowded = np.full((4, 4), 2, np.uint8)  # many seeds: a weight never falls below 1
    crowded[0, 0] = 1
    np.testing.assert_array_equal(stroke_weights(crowded, 0.05), np.ones((4, 4)))


def _image(scale):
    """The ellipse with an arm (colours close to the background's), ``scale`` times larger
    (3: 270 x 360, whose coarse grid has blocks of 2 x 2 pixels), with its seeds."""
    image, _ = ellipse_with_arm()
    seeds = ellipse_with_arm_seeds()
    grow = np.ones((scale, scale), np.uint8)
    return (np.kron(image, grow[..., None]) if scale > 1 else image,
            np.kron(seeds, grow) if scale > 1 else seeds)


@pytest.mark.parametrize("scale", [1, 3])
def test_strokes_alone_weigh_the_seeds_by_the_stroke_share(scale):
    """Strokes alone, ``stroke_share=s`` gives the mask and flow of ``seed_share=s`` (the
    seeds' weights enter the live model's strokes-alone update only through its samples),
    not the mask of ``seed_share``'s default."""
    image, seeds = _image(scale)
    shared, result = graphcut.segment(image, seeds, model=GMM(**LIVE, stroke_share=0.01),
                                      device="cpu", return_result=True)
    oracle, oracle_result = graphcut.segment(image, seeds, model=GMM(**LIVE, seed_share=0.01),
                                             device="cpu", return_result=True)
    np.testing.assert_array_equal(shared, oracle)
    assert result.flow == oracle_result.flow
    default = graphcut.segment(image, seeds, model=GMM(**LIVE), device="cpu")
    assert (shared != default).sum() > 20  # the share changed the answer here


def test_a_box_ignores_the_stroke_share():
    """With a box (its iterations, then a refit and a cut per stroke) the seeds weigh by
    seed_share: the same masks as without the knob."""
    image, seeds = _image(1)
    box = (20, 20, 75, 105)
    inside = seeds.copy()
    inside[22:25, 22:40] = 2  # a background stroke inside the box too
    for given in (None, np.where(seeds == 1, 1, 0).astype(np.uint8), seeds, inside):
        np.testing.assert_array_equal(
            graphcut.segment(image, given, box=box, model=GMM(**LIVE, stroke_share=0.01),
                             device="cpu"),
            graphcut.segment(image, given, box=box, model=GMM(**LIVE), device="cpu"))


def _random_strokes(seeds, rng, count):
    """``count`` seed images, each with one more 5 x 5 stroke of a random label."""
    states = []
    for _ in range(count):
        r, c = int(rng.integers(3, 267)), int(rng.integers(3, 357))
        seeds[r - 2:r + 3, c - 2:c + 3] = 1 + int(rng.integers(0, 2))
        states.append(seeds.copy())
    return states


def test_segmenter_strokes_equal_fresh_segments():
    image, seeds = _image(3)
    model = GMM(**LIVE, stroke_share=0.02)
    assert_session_updates_are_fresh_segments(
        image, model, _random_strokes(seeds, np.random.default_rng(7), 4))


def test_stroke_share_round_trips_and_is_unset_by_default():
    assert GMM().stroke_share is None and GMM().settings() == {"model": "gmm"}
    model = GMM(**LIVE, stroke_share=0.05)
    assert model.settings()["stroke_share"] == 0.05
    assert model_from_settings(model.settings()) == model
    for bad in (-0.1, 1.5, float("nan"), "half"):
        with pytest.raises(ValueError, match="stroke_share"):
            GMM(stroke_share=bad)
    # auto's colour photographs get 0.05; a seed_share given to Auto holds for strokes too
    assert Auto().for_channels(3).stroke_share == 0.05
    assert Auto(seed_share=0.2).for_channels(3).stroke_share is None


@pytest.mark.gpu
def test_the_gpu_gives_the_cpus_weights_masks_and_flows():
    import cupy as cp

    rng = np.random.default_rng(3)
    binary = rng.choice(np.array([0, 1, 2], np.uint8), size=(37, 41), p=[0.8, 0.05, 0.15])
    np.testing.assert_array_equal(cp.asnumpy(stroke_weights(cp.asarray(binary), 0.05)),
                                  stroke_weights(binary, 0.05))
    image, seeds = _image(3)
    assert_gpu_session_is_the_cpus(image, GMM(**LIVE, stroke_share=0.02),
                                   _random_strokes(seeds, rng, 3))
