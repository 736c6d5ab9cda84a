"""SGBM's oracle with its filled maps also trimmed like ours (bench/bench_stereo.py).

Our maps get the foreground trimming by default (``graphcut.stereo.trim_foreground``); the
trimming needs nothing of our pipeline (a map and the left image), so SGBM's filled maps may
have it too. bench_stereo.py adds this oracle beside bench/sgbm_baseline.py's raw and filled
ones, and its goal ratio takes the best of them: a step that helps SGBM as much as it helps us
is not counted as ours alone.
"""

from __future__ import annotations

import statistics

from graphcut.stereo import bad_pixel_rate, trim_foreground

import sgbm_baseline  # bench/, on the path of the scripts that import this

__all__ = ["TRIMMED_ORACLE", "sgbm_trimmed_row"]

TRIMMED_ORACLE = "SGBM filled + our foreground trim, best on this pair (oracle)"


def sgbm_trimmed_row(cv2, scene, repeats: int, refinements: bool = False,
                     plane: bool = False) -> dict:
    """SGBM's oracle with its filled maps (as :func:`sgbm_baseline.score_sweep` fills them)
    also trimmed by ``trim_foreground`` with our defaults: the sweep's best setting on this
    pair, its compute() timed over ``repeats`` runs."""
    left, right, truth, max_disparity, visible = scene
    segments = sgbm_baseline.plane_segments(scene, plane)
    best = None
    for setting in sgbm_baseline.sweep_settings(max_disparity):
        result, _ = sgbm_baseline.sgbm(cv2, left, right, max_disparity, **setting)
        labels = trim_foreground(sgbm_baseline.filled(result, left if refinements else None,
                                                      max_disparity, segments=segments), left)
        bad = bad_pixel_rate(labels, truth)
        if best is None or bad < best[0]:
            best = (bad, setting, labels)
    bad, setting, labels = best
    seconds = [sgbm_baseline.sgbm(cv2, left, right, max_disparity, **setting)[1]
               for _ in range(repeats)]
    row = {"method": TRIMMED_ORACLE, "scoring": "filled", "oracle": True, "device": "cpu",
           "name": f"OpenCV {cv2.__version__}", "setting": setting,
           "seconds": statistics.median(seconds), "bad": bad, "repeats": repeats}
    if visible is not None:
        row["bad_visible"] = bad_pixel_rate(labels, truth, valid=visible)
    return row
