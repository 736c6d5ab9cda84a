"""Slanted-plane labels by local expansion moves on the development pairs (issue 25, round 11).

Every variant starts from ``graphcut.stereo.disparity``'s defaults (AD-census, cross
aggregation, alpha-expansion with two cycles; no border extrapolation or edge refinement):

- ``defaults``: its map after the left-right check and the background fill.
- ``planes[:KEY=VALUE...]``: the expansion's integer map (before the check) as fronto-parallel
  planes, improved by ``graphcut.stereo.local_expansion_planes`` (the data cost aggregated
  along each pixel's plane over the raw AD-census volume, Taniai et al.'s truncated plane
  disagreement weighted by the defaults' smoothness weights), then the left-right check (the
  rounded plane disparities against the right view's cheapest integer disparities of the
  defaults' volume, tolerance 1) and a fill. Keys:
  ``support=cross`` (the default pipeline's cross regions, 7 x 7 at most) or ``support=wR``
  / ``support=wRsS`` (a (2R+1)^2 window sampled every S pixels, colour weights
  ``exp(-|dI| / 10)``, PatchMatch's); ``it=N`` passes (2); ``cells=15-5`` cell sides;
  ``tau=T`` the disagreement's truncation (1 pixel); ``pert=K`` perturbations per group (2);
  ``flat=T`` the truncation of the edges without a colour edge (weight above the smallest;
  0: ``tau``); ``slope=S`` adds S per unit of ``|a| + |b|`` to the data cost (a soft
  fronto-parallel prior; 0 here, 16 in ``LocalExpansion()``); ``lambda=F`` the smoothness
  weights times F (1); ``fill=plane`` (each rejected pixel takes the nearer valid pixel's
  plane on its row, the farther of the two, extrapolated) or ``fill=background`` (the
  defaults' background fill of the rounded map) or ``fill=none``; ``check=wta`` (the default:
  against the right view's cheapest integer disparities), ``check=warp`` (only pixels hidden
  by a nearer pixel of the map itself, or matched outside the right image) or ``check=both``;
  ``merge=failed`` keeps the defaults' map where it passed the defaults' left-right check
  (the planes only where it failed); ``round=1`` rounds the final map to integers;
  ``steps=S`` the raw costs sampled every 1/S
  pixel of disparity (4; 1: the integer volume, interpolated).

    python bench/stereo_local_expansion.py --scenes teddy,venus --downscales 2
    python bench/stereo_local_expansion.py --scenes teddy --downscales 2 --breakdown \\
        --variants defaults,planes
    python bench/stereo_local_expansion.py --scenes office,stairs,office-photo,stairs-photo

Held-out pairs and the motorcycle are refused: nothing is scored here. Prints one Markdown
table (bad pixels > 1 px per pair at full and half size, the means over the real and the
synthetic entries, seconds), or with ``--breakdown`` where each variant's bad pixels lie
(``stereo_occlusion.py --breakdown``'s classes). Each planes run also prints its energies and
time to stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from graphcut.stereo import (CensusParameters, LocalExpansion, census_costs, cross_support,
                             fill_from_background, inconsistent_pixels, local_expansion_planes,
                             planes_fill, right_view_labels, subpixel_census_costs,
                             window_support)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stereo_occlusion import checked_fill, variants_main  # noqa: E402

DEFAULT_VARIANTS = ("defaults", "planes", "planes:support=w5", "planes:fill=background",
                    "planes:check=both", "planes:tau=0.5", "planes:tau=3",
                    "planes:it=1:cells=15", "planes:flat=3", "planes:merge=failed",
                    "planes:slope=4", "planes:slope=8", "planes:slope=16")
RAW = CensusParameters(aggregation="box", aggregation_radius=0)


def _levels(image):
    return np.rint(np.asarray(image, dtype=np.float64)).astype(np.int32)


def support_of(spec: str, scene: dict):
    key = ("support", spec)
    if key not in scene:
        levels = _levels(scene["left"])
        if spec == "cross":
            scene[key] = cross_support(levels)
        else:
            radius, _, step = spec[1:].partition("s")
            scene[key] = window_support(levels, int(radius), int(step or 1))
    return scene[key]


def raw_volume(scene: dict, steps: int) -> np.ndarray:
    key = ("raw", steps)
    if key not in scene:
        if steps == 1:
            scene[key] = census_costs(scene["left"], scene["right"],
                                      max_disparity=scene["max_disparity"], channel_axis=-1,
                                      parameters=RAW)
        else:
            scene[key] = subpixel_census_costs(_levels(scene["left"]), _levels(scene["right"]),
                                               scene["max_disparity"], steps)
    return scene[key]


def occluded_by_geometry(disparity: np.ndarray, margin: float = 0.5) -> np.ndarray:
    """Pixels whose match ``x - d`` lies left of the right image, or is covered by a pixel
    further right on the row whose match lands at least ``margin`` further left (a nearer
    surface hides it from the right camera)."""
    h, w = disparity.shape
    match = np.arange(w)[None, :] - disparity
    # the smallest match of the pixels to the right of each pixel
    after = np.minimum.accumulate(match[:, ::-1], axis=1)[:, ::-1]
    right_of = np.concatenate([after[:, 1:], np.full((h, 1), np.inf)], axis=1)
    return (match < 0) | (right_of <= match - margin)


def _planes(spec, scene, options, settings):
    factor = float(options.get("lambda", 1))
    weights = tuple(factor * np.asarray(w, dtype=np.float64) for w in scene["weights"])
    steps = int(options.get("steps", 4))
    result = local_expansion_planes(raw_volume(scene, steps),
                                    support_of(options.get("support", "cross"), scene),
                                    weights, scene["labels"], settings, steps=steps)
    print(f"  {spec}: {result.seconds:.1f} s, {result.moves} moves, {result.switched} "
          f"switched, energy {result.energies[0]:.0f} -> "
          + " -> ".join(f"{e:.0f}" for e in result.energies[1:]), file=sys.stderr, flush=True)
    return result


def run_variant(spec: str, scene: dict) -> np.ndarray:
    kind, *args = spec.split(":")
    if kind == "defaults":
        return checked_fill(scene["labels"], scene["costs"])[0]
    if kind != "planes":
        raise ValueError(f"unknown variant {spec!r}")
    options = dict(arg.split("=", 1) for arg in args)
    settings = LocalExpansion(
        cell_sizes=tuple(int(c) for c in options.get("cells", "15-5").split("-")),
        iterations=int(options.get("it", 2)), truncation=float(options.get("tau", 1)),
        perturbations=int(options.get("pert", 2)),
        flat_truncation=float(options.get("flat", 0)),
        slope_cost=float(options.get("slope", 0)))
    key = ("planes",) + tuple(sorted((k, v) for k, v in options.items()
                                     if k not in ("fill", "check", "round", "merge")))
    if key not in scene:
        scene[key] = _planes(spec, scene, options, settings)
    result = scene[key]
    out = result.disparity
    fill = options.get("fill", "plane")
    if fill != "none":
        check = options.get("check", "wta")
        invalid = np.zeros(out.shape, bool)
        if check in ("wta", "both"):
            invalid |= inconsistent_pixels(np.rint(out).astype(np.int64),
                                           right_view_labels(scene["costs"]), tolerance=1)
        if check in ("warp", "both"):
            invalid |= occluded_by_geometry(out)
        if fill == "plane":
            out = planes_fill(result.planes, invalid, scene["max_disparity"])
        else:
            out = fill_from_background(np.rint(out).astype(np.int64), invalid)
    if options.get("merge") == "failed":
        defaults, failed = checked_fill(scene["labels"], scene["costs"])
        out = np.where(failed, out, defaults)
    if options.get("round") == "1":
        out = np.rint(out)
    return out


if __name__ == "__main__":
    sys.exit(variants_main(sys.argv[1:], __doc__.split("\n")[0], run_variant,
                           DEFAULT_VARIANTS))
