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
    session = Segmenter(image, device=device)
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
    session = Segmenter(image, device="cpu")
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
    session = Segmenter(image, device="cuda")
    for step in range(12):
        y, x = rng.integers(0, 250, size=2)
        seeds[y:y + 6, x:x + 20] = rng.integers(0, 3)
        seeds[100:110, 110:140] = 1
        seeds[:5, :] = 2
        mask = session.update(seeds)
        fresh = min_cut(build_network(image, seeds), device="cpu")
        assert session.last_result.flow == fresh.flow, f"step {step}"
        np.testing.assert_array_equal(mask, fresh.source_side)
