"""OpenCV StereoSGBM as a fair baseline for bench/bench_stereo.py.

Fairness rules (issue 25):

- Padding: OpenCV leaves the left ``numDisparities`` columns without a disparity (their match
  would lie left of the right image). Both images are padded on the left by ``numDisparities``
  columns (edge replicated) and the result is cropped back, the usual practice, so SGBM gets a
  disparity wherever it can find one.
- Two scorings: "raw" (OpenCV's invalid pixels, after its uniqueness and speckle filters,
  counted as bad, as a user gets them) and "filled" (the same post-processing our maps get:
  invalid pixels filled with our background filling, ``graphcut.stereo.fill_from_background``,
  and, when ours get them (``bench_stereo.py --post-refinements``), the left border strip's
  extrapolation and the depth-edge refinement; ``--plane-fill``: the segment plane fill).
- Tuning: a stated sweep (``SGBM_SWEEP``) on development pairs; the setting with the lowest
  mean bad-pixel rate over them is used on every other pair. Each scored pair also gets the
  sweep's best setting on that pair itself (an oracle tuned on the test data, the most
  favourable figure SGBM can have); the goal is judged against the better of raw and filled
  oracles.
"""

from __future__ import annotations

import itertools
import math
import statistics
import time

import numpy as np

from graphcut.stereo import (BorderExtrapolation, EdgeRefinement, PlaneFill, bad_pixel_rate,
                             colour_segments, extrapolate_left_border, fill_from_background,
                             plane_fill, refine_depth_edges)

SGBM_SWEEP = {
    "ranges": ("tight", "all labels"),  # numDisparities: 16 ceil(D / 16) or 16 ceil((D+1) / 16)
    "mode": ("HH", "SGBM", "SGBM_3WAY"),
    "block": (3, 5, 7),
    "penalties": ((8, 32), (4, 64)),
    "filtering": ((0, 0), (10, 100)),  # (uniqueness ratio, speckle window size)
}


def num_disparities(max_disparity: int, ranges: str) -> int:
    """OpenCV's numDisparities (a multiple of 16; it searches 0 .. numDisparities - 1)."""
    return 16 * max(1, math.ceil((max_disparity + (ranges == "all labels")) / 16))


def sweep_settings(max_disparity: int):
    """Distinct settings of the sweep for a scene with disparities 0..max_disparity."""
    seen = set()
    for values in itertools.product(*SGBM_SWEEP.values()):
        setting = dict(zip(SGBM_SWEEP, values))
        key = (num_disparities(max_disparity, setting["ranges"]), *values[1:])
        if key not in seen:  # both ranges may give the same numDisparities
            seen.add(key)
            yield setting


def sgbm(cv2, left, right, max_disparity, *, ranges, mode, block, penalties, filtering):
    """SGBM disparity of the left view (float, NaN = invalid) and the seconds of compute().

    Both uint8 RGB images are padded on the left by numDisparities columns (edge replicated)
    and the map is cropped back to the input's width; the timing includes the padding.
    """
    channels = left.shape[2] if left.ndim == 3 else 1
    count = num_disparities(max_disparity, ranges)
    uniqueness, speckle = filtering
    matcher = cv2.StereoSGBM_create(
        minDisparity=0, numDisparities=count, blockSize=block,
        P1=penalties[0] * channels * block * block, P2=penalties[1] * channels * block * block,
        disp12MaxDiff=1, uniquenessRatio=uniqueness, speckleWindowSize=speckle,
        speckleRange=2, mode=getattr(cv2, f"STEREO_SGBM_MODE_{mode}"))
    started = time.perf_counter()
    padded = [cv2.copyMakeBorder(np.ascontiguousarray(image[..., ::-1]), 0, 0, count, 0,
                                 cv2.BORDER_REPLICATE) for image in (left, right)]
    raw = matcher.compute(*padded)[:, count:]  # OpenCV wants BGR
    seconds = time.perf_counter() - started
    result = raw.astype(np.float64) / 16
    result[raw < 0] = np.nan  # OpenCV's invalid pixels
    return result, seconds


def filled(result, left=None, max_disparity=None, *, segments=None):
    """``result`` with its invalid (NaN) pixels filled as our maps are (int32).

    Our background filling (``fill_from_background``); with the ``left`` image also the rest
    of our default post-processing, in the same order: the left border strip's extrapolation
    (``extrapolate_left_border``, SGBM's invalid pixels in the role of our inconsistent ones)
    and the depth-edge refinement (``refine_depth_edges``), with our defaults. With
    ``segments`` (the left image's ``colour_segments``), the segment plane fill
    (``plane_fill`` with ``PlaneFill()``) after the background fill and the border
    extrapolation, as ``disparity(..., plane_fill=PlaneFill())`` does.
    """
    invalid = ~np.isfinite(result)
    rounded = np.where(invalid, 0, np.rint(np.nan_to_num(result))).astype(np.int32)
    rounded = np.maximum(rounded, 0)
    labels = fill_from_background(rounded, invalid)
    top = max(int(labels.max()), int(max_disparity or 0))
    if left is not None:
        labels = extrapolate_left_border(labels, invalid, **BorderExtrapolation()._asdict(),
                                         max_label=top)
    if segments is not None:
        labels = plane_fill(labels, invalid, np.zeros(labels.shape), **PlaneFill()._asdict(),
                            max_label=top, segments=segments)
    if left is None:
        return labels
    return refine_depth_edges(labels, np.asarray(left, dtype=np.float32),
                              **EdgeRefinement()._asdict(), max_label=top)


def plane_segments(scene, plane: bool):
    """The left image's ``colour_segments`` with ``PlaneFill()``'s settings (None unless
    ``plane``): computed once per scene, not per SGBM setting."""
    if not plane:
        return None
    settings = PlaneFill()
    return colour_segments(scene[0], scale=settings.scale, min_segment=settings.min_segment)


def score_sweep(cv2, scene, refinements: bool = False, plane: bool = False) -> list[dict]:
    """Every sweep setting on one scene: {"setting", "raw", "filled"} bad-pixel rates
    (``refinements``: the filled maps also get our border extrapolation and depth-edge
    refinement, as ours do when they are on; ``plane``: our segment plane fill)."""
    left, right, truth, max_disparity, _ = scene
    segments = plane_segments(scene, plane)
    rows = []
    for setting in sweep_settings(max_disparity):
        result, _ = sgbm(cv2, left, right, max_disparity, **setting)
        rows.append({"setting": setting, "raw": bad_pixel_rate(result, truth),
                     "filled": bad_pixel_rate(
                         filled(result, left if refinements else None, max_disparity,
                                segments=segments), truth)})
    return rows


def _key(setting: dict) -> tuple:
    return tuple(setting[name] for name in SGBM_SWEEP)


def choose_on_development(sweeps: list[list[dict]]) -> dict:
    """The settings with the lowest mean bad-pixel rate over development scenes' sweeps.

    Returns {"raw": (setting, mean rate), "filled": (setting, mean rate)}. Settings are matched
    by their values (the ``ranges`` name, not the resulting numDisparities).
    """
    means = {}
    for scoring in ("raw", "filled"):
        totals = {}
        for rows in sweeps:
            for row in rows:
                totals.setdefault(_key(row["setting"]), []).append(row[scoring])
        complete = {key: rates for key, rates in totals.items() if len(rates) == len(sweeps)}
        key = min(complete, key=lambda k: statistics.fmean(complete[k]))
        means[scoring] = (dict(zip(SGBM_SWEEP, key)), statistics.fmean(complete[key]))
    return means


def sgbm_rows(cv2, scene, chosen: dict | None, repeats: int,
              refinements: bool = False, plane: bool = False) -> list[dict]:
    """Rows for one scored scene: the development-chosen settings (when given) and the
    scene's own best setting (oracle), each scored raw and filled (``refinements``: as in
    :func:`score_sweep`), timed over ``repeats``."""
    left, right, truth, max_disparity, visible = scene
    sweep = score_sweep(cv2, scene, refinements, plane)
    segments = plane_segments(scene, plane)
    candidates = []
    for scoring in ("raw", "filled"):
        if chosen is not None:
            setting = chosen[scoring][0]
            candidates.append((f"SGBM {scoring}, tuned on dev pairs", scoring, setting))
        best = min(sweep, key=lambda row: row[scoring])
        candidates.append((f"SGBM {scoring}, best on this pair (oracle)", scoring,
                           best["setting"]))
    rows = []
    for label, scoring, setting in candidates:
        runs = [sgbm(cv2, left, right, max_disparity, **setting) for _ in range(repeats)]
        result = (runs[-1][0] if scoring == "raw"
                  else filled(runs[-1][0], left if refinements else None, max_disparity,
                              segments=segments))
        row = {"method": label, "scoring": scoring, "oracle": "oracle" in label,
               "device": "cpu", "name": f"OpenCV {cv2.__version__}", "setting": setting,
               "seconds": statistics.median(s for _, s in runs),
               "bad": bad_pixel_rate(result, truth), "repeats": repeats}
        if visible is not None:
            row["bad_visible"] = bad_pixel_rate(result, truth, valid=visible)
        rows.append(row)
    return rows


def describe(setting: dict, max_disparity: int | None) -> str:
    """One line for a setting; without ``max_disparity``, the range rule instead of the
    number."""
    uniqueness, speckle = setting["filtering"]
    count = (f"covering the {setting['ranges']} range" if max_disparity is None
             else num_disparities(max_disparity, setting["ranges"]))
    return (f"numDisparities {count} (left pad and crop), {setting['mode']}, block {setting['block']}, P1/P2 "
            f"{setting['penalties'][0]}/{setting['penalties'][1]} x C x block^2, uniqueness "
            f"{uniqueness}, speckle {speckle}")
