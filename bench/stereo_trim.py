"""Foreground trimming and edge-aware smoothness weights on the development pairs (issue 25,
fourteenth round).

Every variant starts from ``graphcut.stereo.disparity``'s integer pipeline (AD-census, cross
aggregation, alpha-expansion with two cycles, left-right check, background fill; no border
extrapolation, plane fill or edge refinement) and changes one thing:

- ``defaults``: the map before this round (no trimming).
- ``trim[:reach=R][:tol=T][:edge=E][:flat=F][:jump=J][:plateau=P][:axes=rc|r|c]``: that map
  after ``graphcut.stereo.trim_foreground`` (``ForegroundTrim()``'s settings unless named:
  reach 7 pixels, colour tolerance 20, edge contrast 20 and flatness 12 grey levels, depth
  edges are steps of more than 0 labels, a step of one label only between plateaus of 5
  pixels; ``flat=255`` turns the flatness test off, ``jump=1`` leaves unit steps alone,
  ``plateau=0`` moves every unit step; ``axes``: rows and columns, rows only or columns only), the
  new default.
- ``post`` / ``trim:post``: with the border extrapolation and the depth-edge refinement
  (``BorderExtrapolation()``, ``EdgeRefinement()``, as ``bench_stereo.py --post-refinements``),
  without / with the trimming before the refinement (``disparity``'s order).
- ``refine``: the depth-edge refinement alone (``EdgeRefinement()``), the existing opt-in step
  closest to the trimming.
- ``strong:C:W``: the alpha-expansion again with the smoothness weight ``W`` (not 8) between
  neighbours differing by more than ``C`` grey levels (weaker across strong colour edges).
- ``texboost:R:T:K``: the alpha-expansion again with the flat weight (32) times ``K`` between
  neighbours of similar colour (at most 8 grey levels) where the texture is low: the larger of
  the two pixels' mean gradient over a (2R+1)^2 box is below ``T`` grey levels (each
  neighbour difference capped at 8, the mean of a pixel's four; stronger smoothing in
  textureless regions).

``--sgbm`` instead prints, per development pair and size, our bad pixels with and without the
trimming beside OpenCV SGBM's oracle (the sweep's best setting on that pair, raw and filled with
our background fill, the filled map also trimmed) and the ratios to the better of SGBM's raw
and filled maps, each way: whether the trimming helps SGBM as much as it helps us.

    python bench/stereo_trim.py --scenes teddy,venus --downscales 1,2 \\
        --variants defaults,trim,trim:axes=r,trim:reach=5,refine,post,trim:post
    python bench/stereo_trim.py --scenes office,stairs,office-photo,stairs-photo
    python bench/stereo_trim.py --scenes teddy,venus --breakdown --variants defaults,trim
    python bench/stereo_trim.py --sgbm                     # teddy and venus, full and half

Held-out pairs and the motorcycle are refused: nothing is scored here.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
from scipy import ndimage

from graphcut.labeling import PairWeights
from graphcut.stereo import (BorderExtrapolation, EdgeRefinement, ForegroundTrim,
                             bad_pixel_rate, extrapolate_left_border, refine_depth_edges,
                             trim_foreground)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stereo import DEVELOPMENT, SYNTHETIC_DEVELOPMENT  # noqa: E402
from stereo_occlusion import SMOOTHNESS, _development_scenes, checked_fill, expand  # noqa: E402
from stereo_occlusion import variants_main  # noqa: E402

DEFAULT_VARIANTS = ("defaults", "trim", "trim:jump=1", "trim:plateau=0", "trim:plateau=3",
                    "trim:plateau=8", "trim:flat=255", "trim:flat=8", "trim:flat=20",
                    "trim:axes=r", "trim:axes=c", "trim:reach=3", "trim:reach=5",
                    "trim:reach=10", "trim:tol=16:edge=16", "trim:tol=24:edge=24", "refine",
                    "post", "trim:post", "strong:48:4", "strong:24:2", "texboost:2:4:2")
FLAT_FACTOR = 4
EDGE_THRESHOLD = 8.0


def levels(scene) -> np.ndarray:
    """The left image as float (H, W, C) grey levels."""
    left = np.asarray(scene["left"], dtype=np.float64)
    return left if left.ndim == 3 else left[..., np.newaxis]


def texture(lv: np.ndarray, radius: int, cap: float = 8.0) -> np.ndarray:
    """Each pixel's mean, over a (2 radius + 1)^2 box, of the mean of its four neighbour
    differences (largest channel difference, capped at ``cap`` grey levels)."""
    h, w = lv.shape[:2]
    total = np.zeros((h, w))
    dx = np.minimum(np.abs(np.diff(lv, axis=1)).max(axis=-1), cap)
    dy = np.minimum(np.abs(np.diff(lv, axis=0)).max(axis=-1), cap)
    total[:, 1:] += dx
    total[:, :-1] += dx
    total[1:] += dy
    total[:-1] += dy
    return ndimage.uniform_filter(total / 4, 2 * radius + 1, mode="nearest")


def weights_variant(scene, *, strong=None, texboost=None) -> PairWeights:
    """The defaults' contrast-sensitive weights, changed as ``strong`` = (C, W) or
    ``texboost`` = (R, T, K) say (module docstring)."""
    lv = levels(scene)
    low = None if texboost is None else texture(lv, texboost[0]) < texboost[1]
    out = []
    for axis in (1, 0):
        contrast = np.abs(np.diff(lv, axis=axis)).max(axis=-1)
        w = np.where(contrast <= EDGE_THRESHOLD, SMOOTHNESS * FLAT_FACTOR, SMOOTHNESS)
        if strong is not None:
            w = np.where(contrast > strong[0], strong[1], w)
        if texboost is not None:
            pair_low = (low[:, 1:] & low[:, :-1]) if axis == 1 else (low[1:] & low[:-1])
            w = np.where(pair_low & (contrast <= EDGE_THRESHOLD), np.rint(w * texboost[2]), w)
        out.append(w.astype(np.int32))
    return PairWeights(*out)


def trimmed(labels, scene, keys: dict) -> np.ndarray:
    """``labels`` after the trimming with the settings ``keys`` (module docstring)."""
    settings = ForegroundTrim()._replace(**{
        name: cast(keys[key]) for key, name, cast in (
            ("reach", "reach", int), ("tol", "colour_tolerance", float),
            ("edge", "edge_contrast", float), ("flat", "flatness", float),
            ("jump", "jump", int), ("plateau", "plateau", int)) if key in keys})
    axes = keys.get("axes", "rc")
    out = np.asarray(labels)
    if axes == "rc":
        return trim_foreground(out, scene["left"], **settings._asdict())
    one = dict(settings._asdict())
    if axes == "r":
        return np.vstack([trim_foreground(row[None], left[None], **one)
                          for row, left in zip(out, np.asarray(scene["left"]))])
    return np.hstack([trim_foreground(col[:, None], left[:, None], **one)
                      for col, left in zip(out.T, np.asarray(scene["left"]).transpose(1, 0, 2))])


def run_variant(spec: str, scene: dict) -> np.ndarray:
    """The final map of variant ``spec`` (module docstring) on a prepared scene."""
    kind, *args = spec.split(":")
    top = int(scene["max_disparity"])
    if kind in ("strong", "texboost"):
        values = [float(a) for a in args]
        options = ({"strong": values} if kind == "strong"
                   else {"texboost": (int(values[0]), values[1], values[2])})
        labels = expand(scene["costs"], weights_variant(scene, **options))
        return checked_fill(labels, scene["costs"])[0]
    filled, invalid = checked_fill(scene["labels"], scene["costs"])
    post = "post" in args
    keys = dict(a.split("=") for a in args if "=" in a)
    if post:
        filled = extrapolate_left_border(filled, invalid, **BorderExtrapolation()._asdict(),
                                         max_label=top)
    if kind == "trim":
        filled = trimmed(filled, scene, keys)
    elif kind not in ("defaults", "post", "refine"):
        raise ValueError(f"unknown variant {spec!r}")
    if post or kind in ("post", "refine"):
        if kind == "post":
            filled = extrapolate_left_border(filled, invalid, **BorderExtrapolation()._asdict(),
                                             max_label=top)
        filled = refine_depth_edges(filled, np.asarray(levels(scene), dtype=np.float32),
                                    **EdgeRefinement()._asdict(), max_label=top)
    return filled


def sgbm_main(argv) -> int:
    """``--sgbm``: ours with and without the trimming against SGBM's oracles (docstring)."""
    import cv2
    import sgbm_baseline
    parser = argparse.ArgumentParser()
    parser.add_argument("--sgbm", action="store_true")
    parser.add_argument("--scenes", default=",".join(DEVELOPMENT))
    parser.add_argument("--downscales", default="1,2")
    args = parser.parse_args(argv)
    keys, scenes, columns = _development_scenes(parser, args)
    print("| pair | ours | ours, trimmed | SGBM raw | SGBM filled | SGBM filled, trimmed | "
          "ratio before | ratio, both trimmed | ratio, ours trimmed only |")
    print("|---" * 9 + "|")
    for column, key in zip(columns, keys):
        scene = scenes[key]
        left, truth, top = scene["left"], scene["truth"], scene["max_disparity"]
        ours = bad_pixel_rate(run_variant("defaults", scene), truth)
        ours_trim = bad_pixel_rate(run_variant("trim", scene), truth)
        raw, fill, fill_trim = [], [], []
        for setting in sgbm_baseline.sweep_settings(top):
            result, _ = sgbm_baseline.sgbm(cv2, left, scene["right"], top, **setting)
            filled = sgbm_baseline.filled(result)
            raw.append(bad_pixel_rate(result, truth))
            fill.append(bad_pixel_rate(filled, truth))
            fill_trim.append(bad_pixel_rate(trim_foreground(filled, left), truth))
        best = min(min(raw), min(fill))
        best_trim = min(min(raw), min(fill_trim))
        print(f"| {column} | {100 * ours:.2f} % | {100 * ours_trim:.2f} % | "
              f"{100 * min(raw):.2f} % | {100 * min(fill):.2f} % | {100 * min(fill_trim):.2f} % "
              f"| {ours / best:.3f} | {ours_trim / best_trim:.3f} | {ours_trim / best:.3f} |",
              flush=True)
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--sgbm" in argv:
        return sgbm_main(argv)
    return variants_main(argv, __doc__.split("\n")[0], run_variant, DEFAULT_VARIANTS)


if __name__ == "__main__":
    sys.exit(main())
