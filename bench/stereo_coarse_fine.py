"""Coarse-to-fine and guided variants of the slanted planes on the development pairs (issue
25, twelfth round).

The eleventh round's local expansion (``planes:slope=16`` of stereo_local_expansion.py) wins
at half size and loses at full size. Every variant below starts from the integer pipeline's
defaults (AD-census, cross aggregation, alpha-expansion with two cycles; no border
extrapolation or edge refinement); "the reduced pair" is the input pair reduced by 2 (block
means, ``graphcut.stereo.io.downscale_pair``, max disparity halved, rounded up) with its own
integer costs, weights and alpha-expansion:

- ``defaults``: the integer map after the left-right check and the background fill;
  ``raw``: before them.
- ``planes[:KEY=VALUE...]``: the eleventh round's planes at the input's own size (cells
  15-5, two passes, slope cost 16); keys ``support=cross`` (7 x 7 cross regions) or
  ``support=cL`` / ``cLsS`` (cross regions with arms up to L, every S-th offset kept),
  ``slope=S``, ``interp=linear|cubic|keys`` (how the right image is shifted for the quarter-pixel
  costs, ``subpixel_census_costs``'s ``interpolation``), ``seed=N`` of the random proposals.
- ``c2f[:KEY=VALUE...]``: the planes of the reduced pair (the same settings), upsampled
  (``upsampled``: each pixel its block's plane, giving twice the coarse disparity at the same
  point of the scene), optionally refined at the input's size: ``cells=10-5`` the cell sides
  (``none``, the default: no refinement), ``it=N`` passes (1), ``slope=S`` (16),
  ``delta=D`` the first disparity perturbation (2 pixels).
- Both plane variants end with the left-right check of the rounded planes against the
  input's cheapest integer disparities (tolerance 1) and the plane fill (``planes_fill``),
  or ``fill=background`` (the defaults' fill of the rounded map) or ``fill=none``; then
  ``merge=failed`` (the defaults' map where it passed its own check), ``merge=agree`` (the
  defaults' map where it passed and lies within 1 of the planes), ``merge=edgeR`` (the planes
  where the defaults failed or lie within R pixels of a jump of more than 1 in the integer
  map), ``merge=slantT`` (the planes where the defaults failed or the plane's ``|a| + |b|``
  exceeds T), ``merge=subpixelT`` (the unchecked planes where the defaults passed and the
  planes lie within T of them, the defaults elsewhere).
- ``guided:beta=B:tol=T[:src=c2f|own][:cells=...][:fill=guide]``: the integer
  alpha-expansion again from the defaults' labels, its data cost plus ``B`` per label beyond
  ``T`` of a guide's disparity (the c2f planes, refined by ``cells`` if given, or the
  input's own planes), then the defaults' check and background fill (``fill=guide``: the
  guide planes' fill of the rejected pixels).
- ``scale:w=W[:check=mixed]``: cross-scale costs: the integer expansion on ``(C + W C2) /
  (1 + W)``, ``C2`` the reduced pair's costs read at half the disparity (linear) in each
  pixel's block (``upsampled_costs``), then the check (against ``C``, or the mixed volume)
  and the background fill.

    python bench/stereo_coarse_fine.py --scenes teddy,venus --downscales 1,2 \\
        --variants defaults,planes,c2f,c2f:cells=10-5,guided:beta=4:tol=2,scale:w=0.25
    python bench/stereo_coarse_fine.py --scenes office,stairs,office-photo,stairs-photo
    python bench/stereo_coarse_fine.py --scenes teddy,venus --downscales 1 --breakdown \\
        --variants defaults,planes,c2f:cells=10-5

Held-out pairs and the motorcycle are refused: nothing is scored here. One Markdown table
(bad pixels > 1 px per pair and size; the "real mean" and "synthetic mean" columns average
every size given), or with ``--breakdown`` where each variant's bad pixels lie. The plane
solves print their time and energies to stderr.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

from graphcut.stereo import (LocalExpansion, census_costs, cross_support, fill_from_background,
                             inconsistent_pixels, local_expansion_planes, planes_fill,
                             right_view_labels, smoothness_weights, subpixel_census_costs)
from graphcut.stereo.io import downscale_pair

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stereo_local_expansion import raw_volume, support_of  # noqa: E402
from stereo_occlusion import SMOOTHNESS, checked_fill, expand, variants_main  # noqa: E402

DEFAULT_VARIANTS = ("defaults", "planes", "planes:interp=cubic", "c2f", "c2f:cells=10-5",
                    "guided:beta=4:tol=2", "scale:w=0.25")


def upsampled(planes: np.ndarray, shape, factor: int = 2) -> np.ndarray:
    """Planes (3, H, W) of the full grid from planes (3, h, w) of its ``factor`` reduction by
    block means: each pixel takes its block's plane (the last rows and columns beyond the
    blocks the nearest block's), rescaled so that it gives ``factor`` times the coarse
    disparity at the same point of the scene (pixel centres: coarse ``x`` is fine
    ``factor x + (factor - 1) / 2``)."""
    h, w = shape
    ys = np.minimum(np.arange(h) // factor, planes.shape[1] - 1)
    xs = np.minimum(np.arange(w) // factor, planes.shape[2] - 1)
    a, b, c = planes[:, ys[:, None], xs[None, :]]
    return np.stack([a, b, factor * c - (factor - 1) / 2 * (a + b)])


def coarse_scene(scene: dict) -> dict:
    """The scene reduced by 2 (block means), with its integer costs, weights and labels."""
    if "coarse" not in scene:
        left, right, _ = downscale_pair(scene["left"], scene["right"],
                                        np.zeros(scene["left"].shape[:2]), 2)
        max_disparity = math.ceil(scene["max_disparity"] / 2)
        costs = census_costs(left, right, max_disparity=max_disparity, channel_axis=-1)
        weights = smoothness_weights(left, weight=SMOOTHNESS, channel_axis=-1)
        scene["coarse"] = {"left": left, "right": right, "max_disparity": max_disparity,
                           "costs": costs, "weights": weights,
                           "labels": expand(costs, weights)}
    return scene["coarse"]


def long_cross(scene, spec):
    """``cL`` / ``cLsS``: cross regions with arms of at most L pixels, offsets kept every S."""
    key = ("support", spec)
    if key not in scene:
        length, _, step = spec[1:].partition("s")
        step = int(step or 1)
        full = cross_support(np.rint(scene["left"]).astype(np.int32), length=int(length))
        keep = np.all(full.offsets % step == 0, axis=1)
        weights = full.weights[keep]
        scene[key] = full._replace(offsets=full.offsets[keep], weights=weights,
                                   total=weights.sum(axis=0, dtype=np.float64))
    return scene[key]


def _support(scene, spec):
    """The plane data cost's windows named by ``spec`` (``cross``, ``wR...``, ``cL...``)."""
    return support_of(spec, scene) if spec == "cross" or spec.startswith("w") \
        else long_cross(scene, spec)


def _raw(scene, interpolation):
    """The scene's raw costs every quarter pixel of disparity."""
    if interpolation == "linear":
        return raw_volume(scene, 4)
    key = ("raw", 4, interpolation)
    if key not in scene:
        scene[key] = subpixel_census_costs(np.rint(scene["left"]).astype(np.int32),
                                           np.rint(scene["right"]).astype(np.int32),
                                           scene["max_disparity"], 4,
                                           interpolation=interpolation)
    return scene[key]


def _solve(scene, initial, settings, label, support="cross", interpolation="linear"):
    """Local expansion on the scene from ``initial``; its time and energies to stderr."""
    result = local_expansion_planes(_raw(scene, interpolation), _support(scene, support),
                                    scene["weights"], initial, settings, steps=4)
    print(f"  {label}: {result.seconds:.1f} s, {result.moves} moves, energy "
          + " -> ".join(f"{e:.0f}" for e in result.energies), file=sys.stderr, flush=True)
    return result


def own_planes(scene: dict, support="cross", slope=16.0, interpolation="linear", seed=0):
    """The eleventh round's planes (3, H, W) at the scene's own size, from its integer map."""
    key = ("own_planes", support, float(slope), interpolation, int(seed))
    if key not in scene:
        settings = LocalExpansion(slope_cost=float(slope), seed=int(seed))
        scene[key] = _solve(scene, scene["labels"], settings,
                            f"own {support} {slope} {interpolation} seed {seed}", support,
                            interpolation).planes
    return scene[key]


def c2f_planes(scene: dict, options: dict) -> np.ndarray:
    """The reduced pair's planes upsampled to the scene, refined if ``options`` say so."""
    coarse = coarse_scene(scene)
    if "coarse_planes" not in scene:
        scene["coarse_planes"] = _solve(coarse, coarse["labels"], LocalExpansion(),
                                        "coarse").planes
    planes = upsampled(scene["coarse_planes"], scene["labels"].shape)
    cells = options.get("cells", "none")
    if cells == "none":
        return planes
    key = ("refined", cells, options.get("it", "1"), options.get("slope", "16"),
           options.get("delta", "2"))
    if key not in scene:
        settings = LocalExpansion(cell_sizes=tuple(int(c) for c in cells.split("-")),
                                  iterations=int(options.get("it", 1)),
                                  slope_cost=float(options.get("slope", 16)),
                                  delta=float(options.get("delta", 2)))
        scene[key] = _solve(scene, planes, settings, "refine " + ":".join(key[1:])).planes
    return scene[key]


def guide_map(scene, options):
    """The guide's disparities (H, W): the upsampled coarse planes (``src=c2f``, refined by
    ``cells`` if given) or this size's own planes (``src=own``)."""
    if options.get("src", "c2f") == "own":
        planes = own_planes(scene)
    else:
        planes = c2f_planes(scene, options)
    h, w = scene["labels"].shape
    ys, xs = np.indices((h, w))
    return planes, planes[0] * xs + planes[1] * ys + planes[2]


def guided(scene, options, defaults):
    """The integer expansion again, its data cost plus ``beta`` per label beyond ``tol`` of
    the guide's disparity, from the defaults' labels; then the defaults' check and fill."""
    planes, guide = guide_map(scene, options)
    key = ("guided",) + tuple(sorted(options.items()))
    if key not in scene:
        beta, tol = float(options.get("beta", 4)), float(options.get("tol", 1))
        costs = scene["costs"]
        labels = np.arange(costs.shape[0], dtype=float)[:, None, None]
        extra = beta * np.maximum(0.0, np.abs(labels - guide[None]) - tol)
        volume = costs + np.rint(np.minimum(extra, 1e6)).astype(costs.dtype)
        scene[key] = expand(volume, scene["weights"], scene["labels"])
    labels = scene[key]
    out, invalid = checked_fill(labels, scene["costs"])
    if options.get("fill") == "guide":
        out = np.where(invalid, planes_fill(planes, invalid, scene["max_disparity"]), out)
    return out.astype(float)


def upsampled_costs(coarse_costs: np.ndarray, shape, levels: int) -> np.ndarray:
    """(levels, H, W) float costs of the full grid from the (l, h, w) costs of its reduction
    by 2: each pixel its block's costs, full disparity d read at coarse d / 2 (linear)."""
    h, w = shape
    ys = np.minimum(np.arange(h) // 2, coarse_costs.shape[1] - 1)
    xs = np.minimum(np.arange(w) // 2, coarse_costs.shape[2] - 1)
    grid = coarse_costs[:, ys[:, None], xs[None, :]].astype(np.float64)
    half = np.arange(levels) / 2.0
    low = np.minimum(np.floor(half).astype(int), coarse_costs.shape[0] - 1)
    high = np.minimum(low + 1, coarse_costs.shape[0] - 1)
    frac = (half - low)[:, None, None]
    return (1 - frac) * grid[low] + frac * grid[high]


def cross_scale(scene, options):
    """The integer expansion on the costs plus ``w`` times the reduced pair's costs."""
    weight = float(options.get("w", 1))
    key = ("scale", weight)
    if key not in scene:
        coarse = coarse_scene(scene)
        costs = scene["costs"]
        extra = upsampled_costs(coarse["costs"], costs.shape[1:], costs.shape[0])
        volume = np.rint((costs + weight * extra) / (1 + weight)).astype(costs.dtype)
        scene[key] = (volume, expand(volume, scene["weights"]))
    volume, labels = scene[key]
    check = volume if options.get("check") == "mixed" else scene["costs"]
    return checked_fill(labels, check)[0].astype(float)


def run_variant(spec: str, scene: dict) -> np.ndarray:
    """The final map (H, W) of variant ``spec`` (the module docstring) on a prepared scene."""
    kind, *args = spec.split(":")
    defaults, failed = checked_fill(scene["labels"], scene["costs"])
    if kind == "defaults":
        return defaults
    if kind == "raw":
        return scene["labels"].astype(float)
    options = dict(arg.split("=", 1) for arg in args)
    if kind == "scale":
        return cross_scale(scene, options)
    if kind == "planes":
        planes = own_planes(scene, options.get("support", "cross"),
                            float(options.get("slope", 16)), options.get("interp", "linear"),
                            int(options.get("seed", 0)))
    elif kind == "c2f":
        planes = c2f_planes(scene, options)
    elif kind == "guided":
        return guided(scene, options, defaults)
    else:
        raise ValueError(f"unknown variant {spec!r}")
    h, w = scene["labels"].shape
    ys, xs = np.indices((h, w))
    out = planes[0] * xs + planes[1] * ys + planes[2]
    merge = options.get("merge", "")
    if merge.startswith("subpixel"):
        near = np.abs(out - defaults) <= float(merge[8:] or 1)
        return np.where(~failed & near, out, defaults)
    invalid = inconsistent_pixels(np.rint(out).astype(np.int64),
                                  right_view_labels(scene["costs"]), tolerance=1)
    if options.get("fill") == "none":
        return out
    if options.get("fill") == "background":
        out = fill_from_background(np.clip(np.rint(out), 0, scene["max_disparity"])
                                   .astype(np.int64), invalid).astype(float)
    else:
        out = planes_fill(planes, invalid, scene["max_disparity"])
    if merge == "failed":
        out = np.where(failed, out, defaults)
    elif merge == "agree":
        out = np.where(~failed & (np.abs(out - defaults) <= 1), defaults, out)
    elif merge and merge.startswith("edge"):
        from scipy import ndimage
        size = 2 * int(merge[4:]) + 1
        labels = scene["labels"]
        edge = (ndimage.maximum_filter(labels, size) - ndimage.minimum_filter(labels, size)) > 1
        out = np.where(failed | edge, out, defaults)
    elif merge and merge.startswith("slant"):
        slant = np.abs(planes[0]) + np.abs(planes[1]) > float(merge[5:])
        out = np.where(failed | slant, out, defaults)
    return out


if __name__ == "__main__":
    started = time.perf_counter()
    code = variants_main(sys.argv[1:], " ".join(__doc__.split("\n\n")[0].split()),
                         run_variant, DEFAULT_VARIANTS)
    print(f"total {time.perf_counter() - started:.0f} s", file=sys.stderr)
    sys.exit(code)
