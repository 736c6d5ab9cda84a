"""The stereo benchmark's SGBM baseline (bench/sgbm_baseline.py) is run fairly.

Oracles: OpenCV's own unpadded output (its left band has no disparity), the synthetic scene's
exact disparities, and hand-made sweep scores whose best mean is known.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
sgbm_baseline = pytest.importorskip("sgbm_baseline")
cv2 = pytest.importorskip("cv2")

from graphcut.stereo import bad_pixel_rate  # noqa: E402
from graphcut.stereo.synthetic import synthetic_scene  # noqa: E402

SETTING = {"ranges": "tight", "mode": "SGBM_3WAY", "block": 5, "penalties": (8, 32),
           "filtering": (0, 0)}


def test_padding_gives_sgbm_the_left_band_and_keeps_the_rest():
    scene = synthetic_scene(shape=(150, 200), seed=2)
    count = sgbm_baseline.num_disparities(scene.max_disparity, "tight")
    padded, _ = sgbm_baseline.sgbm(cv2, scene.left, scene.right, scene.max_disparity,
                                   **SETTING)
    matcher = cv2.StereoSGBM_create(minDisparity=0, numDisparities=count, blockSize=5,
                                    P1=8 * 3 * 25, P2=32 * 3 * 25, disp12MaxDiff=1,
                                    uniquenessRatio=0, speckleWindowSize=0, speckleRange=2,
                                    mode=cv2.STEREO_SGBM_MODE_SGBM_3WAY)
    plain = matcher.compute(scene.left[..., ::-1].copy(), scene.right[..., ::-1].copy())
    assert padded.shape == scene.truth.shape
    assert (plain[:, :count - 1] < 0).all()  # unpadded: OpenCV leaves the band empty
    band = np.isfinite(padded[:, :count])
    assert band.mean() > 0.8  # padded: most of the band gets a disparity
    # and most of it is right: the wall there is at disparity 10..9
    assert bad_pixel_rate(padded[:, :count], scene.truth[:, :count]) < 0.5


def test_filled_has_no_invalid_pixel_and_keeps_valid_ones():
    result = np.array([[np.nan, 3.0, 4.0, np.nan, 9.0, np.nan]])
    filled = sgbm_baseline.filled(result)
    np.testing.assert_array_equal(filled, [[3, 3, 4, 4, 9, 9]])


def test_development_choice_is_the_lowest_mean():
    settings = [dict(SETTING, block=b) for b in (3, 5, 7)]
    scene_a = [{"setting": s, "raw": r, "filled": f}
               for s, r, f in zip(settings, (0.10, 0.20, 0.30), (0.30, 0.05, 0.10))]
    scene_b = [{"setting": s, "raw": r, "filled": f}
               for s, r, f in zip(settings, (0.30, 0.10, 0.05), (0.30, 0.10, 0.05))]
    chosen = sgbm_baseline.choose_on_development([scene_a, scene_b])
    assert chosen["raw"][0]["block"] == 5 and chosen["raw"][1] == pytest.approx(0.15)
    assert chosen["filled"][0]["block"] == 5 and chosen["filled"][1] == pytest.approx(0.075)


def test_sweep_settings_are_distinct():
    settings = list(sgbm_baseline.sweep_settings(15))  # both ranges give numDisparities 16
    keys = {(sgbm_baseline.num_disparities(15, s["ranges"]), s["mode"], s["block"],
             s["penalties"], s["filtering"]) for s in settings}
    assert len(keys) == len(settings) == 3 * 3 * 2 * 2
    assert len(list(sgbm_baseline.sweep_settings(16))) == 2 * 3 * 3 * 2 * 2


def test_filled_with_the_left_image_gets_our_whole_post_processing():
    from graphcut.stereo import (BorderExtrapolation, EdgeRefinement, extrapolate_left_border,
                                 fill_from_background, refine_depth_edges)
    rng = np.random.default_rng(4)
    left = rng.integers(0, 256, (20, 50, 3)).astype(np.uint8)
    result = np.tile(30 - 0.4 * np.arange(50), (20, 1))
    result[:, 20:30] += 12  # a nearer object: depth edges to refine
    result[:, :8] = np.nan  # the strip SGBM leaves empty
    result[rng.random(result.shape) < 0.05] = np.nan
    invalid = ~np.isfinite(result)
    labels = fill_from_background(np.rint(np.nan_to_num(result)).astype(np.int32), invalid)
    expected = refine_depth_edges(
        extrapolate_left_border(labels, invalid, **BorderExtrapolation()._asdict(),
                                max_label=42),
        left.astype(np.float32), **EdgeRefinement()._asdict(), max_label=42)
    got = sgbm_baseline.filled(result, left, 42)
    np.testing.assert_array_equal(got, expected)
    assert not np.array_equal(got, sgbm_baseline.filled(result))


def test_the_trimmed_oracle_is_the_best_trimmed_filled_map(monkeypatch):
    stereo_sgbm_trim = pytest.importorskip("stereo_sgbm_trim")
    from graphcut.stereo import trim_foreground
    scene = synthetic_scene(shape=(150, 200), seed=1)
    settings = [dict(SETTING, block=b, filtering=f) for b in (3, 7) for f in ((0, 0), (10, 100))]
    monkeypatch.setattr(sgbm_baseline, "sweep_settings", lambda top: settings)
    pair = (scene.left, scene.right, scene.truth, scene.max_disparity, scene.visible)
    row = stereo_sgbm_trim.sgbm_trimmed_row(cv2, pair, repeats=1)
    rates = []
    for setting in settings:
        result, _ = sgbm_baseline.sgbm(cv2, scene.left, scene.right, scene.max_disparity,
                                       **setting)
        rates.append(bad_pixel_rate(trim_foreground(sgbm_baseline.filled(result), scene.left),
                                    scene.truth))
    assert row["oracle"] and row["scoring"] == "filled"
    assert row["bad"] == min(rates) and row["setting"] == settings[int(np.argmin(rates))]
    assert 0 <= row["bad_visible"] <= 1
