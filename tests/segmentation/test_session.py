"""Segmenter: incremental re-solves after seed edits equal fresh solves (flow and mask)."""

from __future__ import annotations

import numpy as np
import pytest

from graphcut import Segmenter, build_network, segment
from graphcut.solver import min_cut


def synthetic_image(rng, shape=(48, 64)):
    h, w = shape
    yy, xx = np.mgrid[:h, :w]
    disc = (yy - h / 2) ** 2 + (xx - w / 2) ** 2 < (min(h, w) / 3) ** 2
    image = np.where(disc, 0.7, 0.3) + rng.normal(0, 0.12, shape)
    return np.clip(image, 0, 1), disc


def random_edit(rng, seeds, truth):
    """Paint, relabel or erase a random square; keeps at least one seed of each label."""
    h, w = seeds.shape
    y, x = int(rng.integers(0, h)), int(rng.integers(0, w))
    r = int(rng.integers(1, 6))
    action = rng.choice(["truth", "truth", "wrong", "erase"])
    region = (slice(max(0, y - r), y + r), slice(max(0, x - r), x + r))
    if action == "truth":
        seeds[region] = np.where(truth[region], 1, 2)
    elif action == "wrong":
        seeds[region] = np.where(truth[region], 2, 1)
    else:
        seeds[region] = 0
    seeds[0, 0] = 2
    seeds[h // 2, w // 2] = 1


def check_sequence(device, steps, seed):
    rng = np.random.default_rng(seed)
    image, truth = synthetic_image(rng)
    seeds = np.zeros(image.shape, dtype=np.uint8)
    seeds[0, 0] = 2
    seeds[image.shape[0] // 2, image.shape[1] // 2] = 1
    session = Segmenter(image, model="histogram", device=device)
    for step in range(steps):
        random_edit(rng, seeds, truth)
        before = seeds.copy()
        mask = session.update(seeds)
        np.testing.assert_array_equal(seeds, before)  # input not modified
        fresh = min_cut(build_network(image, seeds), device="cpu")
        assert session.last_result.flow == fresh.flow, f"step {step}"
        np.testing.assert_array_equal(mask, fresh.source_side, err_msg=f"step {step}")
        assert session.last_result.stats["incremental"] == (step > 0)
    return session


def test_cpu_session_matches_fresh_solves():
    session = check_sequence("cpu", steps=60, seed=1)
    assert session.backend == "cpu"


def test_session_mask_segments_the_object():
    rng = np.random.default_rng(5)
    image, truth = synthetic_image(rng, (60, 80))
    seeds = np.zeros(image.shape, dtype=np.uint8)
    seeds[28:32, 38:42] = 1
    seeds[:3, :] = 2
    session = Segmenter(image, device="cpu")               # the default model
    mask = session.update(seeds)
    iou = (mask & truth).sum() / (mask | truth).sum()
    assert iou > 0.95
    np.testing.assert_array_equal(mask, segment(image, seeds, device="cpu"))


def test_bad_seeds_are_rejected():
    session = Segmenter(np.zeros((10, 12)), device="cpu")
    with pytest.raises(ValueError, match="shape|size"):
        session.update(np.zeros((11, 12), dtype=np.uint8))


@pytest.mark.gpu
def test_cuda_session_matches_fresh_solves():
    session = check_sequence("cuda", steps=80, seed=2)
    assert session.backend == "cuda"


@pytest.mark.gpu
def test_cuda_session_on_sample_edits():
    """A larger image with stroke-like edits; every answer equals a fresh GPU and CPU solve."""
    from skimage import data
    image = data.astronaut()[::2, ::2]
    rng = np.random.default_rng(9)
    seeds = np.zeros(image.shape[:2], dtype=np.uint8)
    seeds[100:110, 110:140] = 1
    seeds[:5, :] = 2
    session = Segmenter(image, model="histogram", device="cuda")
    for step in range(12):
        y, x = rng.integers(0, 250, size=2)
        seeds[y:y + 6, x:x + 20] = rng.integers(0, 3)
        seeds[100:110, 110:140] = 1
        seeds[:5, :] = 2
        mask = session.update(seeds)
        fresh = min_cut(build_network(image, seeds), device="cpu")
        assert session.last_result.flow == fresh.flow, f"step {step}"
        np.testing.assert_array_equal(mask, fresh.source_side)


@pytest.mark.parametrize("model", [
    "gmm",
    {"model": "gmm", "components": 3, "iterations": 0, "seed_share": 0, "locality": 0,
     "far_cost": 0, "texture": 0},
    {"model": "histogram", "bins": 16, "seed_share": 0.1, "locality": 1.0},
])
def test_every_model_re_solves_incrementally_like_a_fresh_segment(model):
    """A Segmenter with any model keeps its solver between strokes: every update's mask and
    flow equal a fresh one-shot segment's with the same seeds (the model's settings dict)."""
    from graphcut.models import model_from_settings
    model = model_from_settings(model) if isinstance(model, dict) else model
    rng = np.random.default_rng(5)
    image, truth = synthetic_image(rng, shape=(32, 40))
    seeds = np.zeros(image.shape, dtype=np.uint8)
    session = Segmenter(image, model=model, device="cpu")
    for step in range(8):
        random_edit(rng, seeds, truth)
        mask = session.update(seeds)
        fresh, result = segment(image, seeds, model=model, device="cpu", return_result=True)
        np.testing.assert_array_equal(mask, fresh, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow, f"step {step}"
        if step:  # the solver kept its flow (the first update's iterations re-solve too)
            assert session.last_result.stats["incremental"]


def test_gmm_update_is_the_cut_of_the_gmm_energy():
    """Independent oracle for the pipeline's glue: GrabCut's mixtures fitted directly on the
    seeds, their costs and the boundary term built into a network by hand, and PyMaxflow's
    fresh cut, against the Segmenter's incremental answers."""
    from graphcut._arrays import image_as_float
    from graphcut.models import GMM, GMMModel
    from graphcut.segmentation import binary_problem, nlink_weights, quantize
    model = GMM(components=3, iterations=0, seed_share=0, locality=0, far_cost=0, texture=0)
    rng = np.random.default_rng(9)
    image, truth = synthetic_image(rng, shape=(32, 40))
    values = image_as_float(image)
    nlinks = tuple(quantize(model.lam * w) for w in nlink_weights(image))
    seeds = np.zeros(image.shape, dtype=np.uint8)
    session = Segmenter(image, model=model, device="cpu")
    for step in range(6):
        random_edit(rng, seeds, truth)
        costs = [GMMModel(3).fit(values, seeds == label).costs(values) for label in (1, 2)]
        expected = min_cut(binary_problem(*costs, nlinks, seeds, scale=1000.0).network,
                           device="cpu")
        mask = session.update(seeds)
        assert session.last_result.flow == expected.flow, f"step {step}"
        np.testing.assert_array_equal(mask, expected.source_side, err_msg=f"step {step}")
