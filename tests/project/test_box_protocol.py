"""bench/bench_quality_real.py's box protocol options: ``--box-pixels`` (another user's margin)
and ``--box-sigma`` (the contrast term's sigma from the box's own pixels)."""

from __future__ import annotations

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
sys.path.insert(0, BENCH)

import bench_quality  # noqa: E402
import bench_quality_real  # noqa: E402


def _truth(shape, rows, cols):
    truth = np.zeros(shape, bool)
    truth[rows, cols] = True
    return truth


def test_box_pixels_grows_the_truths_box_by_exactly_that_many_pixels_and_clips():
    truth = _truth((40, 50), slice(10, 17), slice(20, 31))
    for pixels in (0, 1, 2, 5):
        r0, c0, r1, c1 = bench_quality_real.item_box(truth, pixels)
        # every truth pixel inside, and exactly `pixels` rows / columns of margin each way
        assert truth[r0:r1, c0:c1].sum() == truth.sum()
        assert (r0, c0, r1, c1) == (10 - pixels, 20 - pixels, 17 + pixels, 31 + pixels)
    at_corner = _truth((40, 50), slice(0, 4), slice(47, 50))
    assert bench_quality_real.item_box(at_corner, 3) == (0, 44, 7, 50)


def test_without_box_pixels_the_box_is_the_robots():
    truth = _truth((60, 60), slice(5, 45), slice(10, 30))
    assert bench_quality_real.item_box(truth) == tuple(
        int(v) for v in bench_quality.truth_box(truth))
    # the robot's margin: 5 % of the larger side (40 -> 2), at least 3 pixels
    assert bench_quality_real.item_box(truth) == (2, 7, 48, 33)


def test_box_sigma_is_the_factor_times_the_rms_neighbour_difference_inside_the_box(
        monkeypatch):
    import graphcut
    rng = np.random.default_rng(3)
    image = rng.integers(0, 40, (30, 30)).astype(np.uint8)
    image[8:20, 8:20] = rng.integers(0, 255, (12, 12))  # the box is much busier than the rest
    box = (8, 8, 20, 20)
    seen = {}

    def fake_segment(image, seeds, **options):
        seen.update(options)
        return np.zeros(image.shape[:2], bool)
    monkeypatch.setattr(graphcut, "segment", fake_segment)
    bench_quality_real.box_method("learned", "cpu", 0.5)(image, np.zeros((30, 30), np.uint8),
                                                        box)
    crop = image[8:20, 8:20].astype(float) / 255
    differences = np.r_[np.diff(crop, axis=0).ravel(), np.diff(crop, axis=1).ravel()]
    assert abs(seen["sigma"] - 0.5 * np.sqrt(np.mean(differences ** 2))) < 1e-9
    assert seen["box"] == box and seen["model"] == "learned"
    # without the option the method is the bench's own (the whole image's sigma)
    seen.clear()
    bench_quality_real.box_method("learned", "cpu")(image, np.zeros((30, 30), np.uint8), box)
    assert "sigma" not in seen
