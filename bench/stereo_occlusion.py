"""Occlusion handling inside the stereo energy, and data-cost variants, on the development pairs.

Issue 25's seventh round. Every variant starts from ``graphcut.stereo.disparity``'s defaults
(AD-census, cross aggregation, alpha-expansion with two cycles, left-right check against the
right view's cheapest disparities, background fill; no border extrapolation or edge
refinement) and changes one thing; each is scored by the bad-pixel rate (|d - d_true| > 1 on
the pixels with ground truth), as the defaults are in bench/bench_stereo.py:

- ``second-pass:KIND:BETA`` (and ``...:refill``): a second alpha-expansion, started from the
  background-filled map, in which the pixels that failed the left-right check get the data
  cost ``KIND`` ("flat": 32 at every disparity; "orig": their own costs; "half": half their
  costs plus 32) plus ``BETA`` per label above their background-fill disparity (favouring the
  background); ``refill`` runs the check and the fill again on its result.
- ``visibility:C``: a second pass in which a disparity whose match in the right image is
  claimed by a nearer surface of the filled map (or lies outside the right image) costs ``C``.
- ``occluded-label:C``: one extra label "occluded" with data cost ``C`` everywhere and the
  pairwise cost of a jump (``w * truncation``) to every disparity; its pixels are filled
  like the inconsistent ones.
- ``outside:K``: the aggregated cost of a match outside the right image (``x - d < 0``) set
  to ``K`` (64 by default, before aggregation).
- ``symmetric:TOL``: the right view's map by its own alpha-expansion (costs from the same
  volume, weights from the right image) for the left-right check, tolerance ``TOL``.
- ``truncate:T``: every aggregated cost clipped at ``T`` (``truncate:rT``: at the pixel's
  cheapest cost plus ``T``); the left-right check keeps the unclipped volume.
- ``arms:LENGTH:THRESHOLD`` (``arms:...:combined``): the cross arms' length and threshold,
  from the left image or the smaller of the left and the matched right pixel's arms.
- ``mix:A:B``: the census part times ``A``, the colour part times ``B``.
- ``subpixel:parabola`` / ``subpixel:meanR``: the final map refined by a parabola through
  the costs at d - 1, d, d + 1 (consistent pixels) or by the mean of the labels within one of
  each pixel's own in a (2R+1)^2 window.

    python bench/stereo_occlusion.py                       # every variant, teddy and venus
    python bench/stereo_occlusion.py --variants truncate:72,truncate:76 --scenes office-photo
    python bench/stereo_occlusion.py --breakdown           # where the defaults' errors lie

Held-out pairs and the motorcycle are refused: nothing is scored here. Prints one Markdown
table: variant, bad pixels per pair at full and half size, mean, seconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from graphcut.stereo import (CensusParameters, alpha_expansion, bad_pixel_rate, census_costs,
                             fill_from_background, inconsistent_pixels, right_view_labels,
                             smoothness_weights)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stereo import DEVELOPMENT, SYNTHETIC_DEVELOPMENT, load_scene  # noqa: E402

TRUNCATION = 3   # the defaults' smoothness truncation, weight and flat factor
SMOOTHNESS = 8
CYCLES = 2
DEFAULT_VARIANTS = (
    "defaults", "second-pass:flat:0", "second-pass:flat:1", "second-pass:flat:4",
    "second-pass:flat:16", "second-pass:orig:4", "second-pass:orig:16", "second-pass:half:4",
    "second-pass:flat:4:refill", "visibility:64", "visibility:96", "occluded-label:64",
    "occluded-label:72", "occluded-label:80", "outside:48", "symmetric:0", "symmetric:1",
    "truncate:68", "truncate:72", "truncate:76", "truncate:r16", "arms:3:12:combined",
    "arms:9:20:combined", "arms:9:20", "mix:1.25:0.75", "mix:0.75:1.25", "subpixel:parabola",
    "subpixel:mean2")


# ------------------------------------------------------------------------ cost constructions

def second_pass_costs(costs, invalid, background, *, kind: str = "flat", beta: int = 4,
                      flat: int = 32) -> np.ndarray:
    """The data costs of the left-right driven second pass: unchanged where ``invalid`` is
    False; elsewhere ``kind`` ("flat": ``flat``; "orig": the pixel's costs; "half": half its
    costs, rounded down, plus ``flat``) plus ``beta`` per label above ``background``."""
    labels = np.arange(costs.shape[0])[:, None, None]
    above = np.maximum(0, labels - background[None]).astype(np.int64)
    base = {"flat": np.full(costs.shape, flat, dtype=np.int64), "orig": costs.astype(np.int64),
            "half": costs.astype(np.int64) // 2 + flat}[kind]
    return np.where(invalid[None], base + beta * above, costs).astype(np.int32)


def warp_to_right(labels) -> np.ndarray:
    """The right view's map implied by a left map: right ``(y, x - d)`` takes the largest
    ``d`` of the left pixels mapped there (the nearest surface), -1 where none is."""
    h, w = labels.shape
    right = np.full((h, w), -1, dtype=np.int64)
    ys, xs = np.indices((h, w))
    target = xs - labels
    inside = target >= 0
    np.maximum.at(right, (ys[inside], target[inside]), labels[inside])
    return right


def visibility_costs(costs, labels, occluded_cost: int, margin: int = 1) -> np.ndarray:
    """``costs`` with ``occluded_cost`` wherever disparity ``d`` of left ``(y, x)`` is hidden:
    ``x - d < 0``, or the right pixel ``(y, x - d)`` is claimed by a surface of ``labels``
    more than ``margin`` labels nearer than ``d``."""
    right = warp_to_right(labels)
    out = costs.copy()
    w = costs.shape[2]
    for d in range(costs.shape[0]):
        hidden = np.ones(costs.shape[1:], dtype=bool)
        hidden[:, d:] = right[:, :w - d] > d + margin
        out[d][hidden] = occluded_cost
    return out


def with_occluded_label(costs, occluded_cost: int, truncation: int = TRUNCATION):
    """``(costs with the occluded label, its index)``: ``truncation - 1`` never-chosen labels
    (cost 2**20) after the disparities, then the occluded label at index ``L - 1 +
    truncation``, so that ``w min(|a - b|, truncation)`` is the full jump ``w truncation``
    between it and every disparity."""
    labels, h, w = costs.shape
    extended = np.full((labels + truncation, h, w), 1 << 20, dtype=np.int32)
    extended[:labels] = costs
    extended[-1] = occluded_cost
    return extended, labels + truncation - 1


def right_view_costs(costs, outside: int = 64) -> np.ndarray:
    """The right view's volume from the left one: right ``(y, x)`` at ``d`` costs
    ``costs[d, y, x + d]``; ``outside`` where ``x + d`` leaves the image."""
    out = np.full_like(costs, outside)
    w = costs.shape[2]
    for d in range(costs.shape[0]):
        out[d, :, :w - d] = costs[d, :, d:]
    return out


def census_volume(left, right, max_disparity, *, length=3, threshold=12, combined=False,
                  census_factor=1.0, colour_factor=1.0) -> np.ndarray:
    """AD-census volume as ``census_costs`` builds it, with other cross arms (``combined``:
    the smaller of the left pixel's and its match's arms) or weights of the two parts.
    (Uses the package's private pieces: a bench experiment, not an API.)"""
    from graphcut.stereo._aggregation import cross_arms, cross_count, cross_mean
    from graphcut.stereo._costs import (_census_codes_numpy, _integer_levels, _popcount,
                                        _tables, check_pair)
    p = CensusParameters(cross_length=length, cross_threshold=threshold)
    lv, rv = (_integer_levels(v) for v in check_pair(left, right, -1, max_disparity))
    census_table, colour_table = _tables(p, lv.shape[2])
    census_table = np.rint(census_factor * census_table).astype(np.int32)
    colour_table = np.rint(colour_factor * colour_table).astype(np.int32)
    h, w, _ = lv.shape
    codes = [_census_codes_numpy(v.sum(axis=-1), p.window) for v in (lv, rv)]
    arms = [cross_arms(v, threshold, length, p.cross_minimum) for v in (lv, rv)]
    costs = np.empty((max_disparity + 1, h, w), dtype=np.int32)
    for d in range(max_disparity + 1):
        raw = np.full((h, w), p.scale, dtype=np.int32)
        hamming = _popcount(codes[0][:, d:] ^ codes[1][:, :w - d]).astype(np.intp)
        raw[:, d:] = census_table[hamming] + colour_table[
            np.abs(lv[:, d:] - rv[:, :w - d]).sum(axis=-1)]
        support = arms[0].copy()
        if combined:
            support[:, :, d:] = np.minimum(arms[0][:, :, d:], arms[1][:, :, :w - d])
        costs[d] = cross_mean(raw, support, cross_count(support))
    return costs


# ------------------------------------------------------------------------------- the runs

def expand(costs, weights, initial=None):
    return alpha_expansion(costs, weights, device="cpu", max_cycles=CYCLES,
                           linear_truncation=TRUNCATION, initial_labels=initial).labels


def checked_fill(labels, costs, tolerance=1):
    invalid = inconsistent_pixels(labels, right_view_labels(costs), tolerance=tolerance)
    return fill_from_background(labels, invalid), invalid


def parabola(costs, labels) -> np.ndarray:
    """Labels plus the offset of the parabola through the costs at ``d - 1, d, d + 1``
    (clipped to +-1; none at the first and last label or where the costs are not convex)."""
    top = costs.shape[0] - 1
    lab = labels.astype(np.int64)
    at = [np.take_along_axis(costs, np.clip(lab + k, 0, top)[None], 0)[0].astype(float)
          for k in (-1, 0, 1)]
    curvature = at[0] - 2 * at[1] + at[2]
    usable = (curvature > 0) & (lab > 0) & (lab < top)
    offset = np.where(usable, (at[0] - at[2]) / (2 * np.where(usable, curvature, 1)), 0.0)
    return labels + np.clip(offset, -1, 1)


def local_mean(labels, radius: int) -> np.ndarray:
    """Mean of the labels within one of each pixel's own in its (2r+1)^2 window."""
    values = labels.astype(float)
    h, w = values.shape
    padded = np.pad(values, radius, mode="edge")
    total, count = np.zeros_like(values), np.zeros_like(values)
    for dy in range(2 * radius + 1):
        for dx in range(2 * radius + 1):
            near = padded[dy:dy + h, dx:dx + w]
            close = np.abs(near - values) <= 1
            total += np.where(close, near, 0.0)
            count += close
    return total / count


def run_variant(spec: str, scene: dict) -> np.ndarray:
    """The final map of variant ``spec`` (see the module docstring) on a prepared scene."""
    kind, *args = spec.split(":")
    costs, weights, labels = scene["costs"], scene["weights"], scene["labels"]
    filled, invalid = checked_fill(labels, costs)
    if kind == "defaults":
        return filled
    if kind == "second-pass":
        volume = second_pass_costs(costs, invalid, filled, kind=args[0], beta=int(args[1]))
        out = expand(volume, weights, filled)
        return checked_fill(out, costs)[0] if "refill" in args else out
    if kind == "visibility":
        out = expand(visibility_costs(costs, filled, int(args[0])), weights, filled)
        return checked_fill(out, costs)[0]
    if kind == "occluded-label":
        extended, occluded = with_occluded_label(costs, int(args[0]))
        out = expand(extended, weights)
        hidden = out == occluded
        out = np.where(hidden, 0, out)
        return fill_from_background(out, hidden | inconsistent_pixels(
            out, right_view_labels(costs)))
    if kind == "outside":
        volume = costs.copy()
        for d in range(volume.shape[0]):
            volume[d, :, :d] = int(args[0])
        return checked_fill(expand(volume, weights), costs)[0]
    if kind == "symmetric":
        right_weights = smoothness_weights(scene["right"], weight=SMOOTHNESS, channel_axis=-1)
        right = expand(right_view_costs(costs), right_weights)
        return fill_from_background(labels, inconsistent_pixels(labels, right,
                                                                tolerance=int(args[0])))
    if kind == "truncate":
        relative = args[0].startswith("r")
        top = int(args[0].lstrip("r"))
        clip = costs.min(axis=0, keepdims=True) + top if relative else top
        return checked_fill(expand(np.minimum(costs, clip), weights), costs)[0]
    if kind in ("arms", "mix"):
        options = ({"length": int(args[0]), "threshold": int(args[1]),
                    "combined": "combined" in args} if kind == "arms" else
                   {"census_factor": float(args[0]), "colour_factor": float(args[1])})
        volume = census_volume(scene["left"], scene["right"], scene["max_disparity"], **options)
        return checked_fill(expand(volume, weights), volume)[0]
    if kind == "subpixel":
        if args[0] == "parabola":
            return np.where(invalid, filled, parabola(costs, filled))
        return local_mean(filled, int(args[0].removeprefix("mean")))
    raise ValueError(f"unknown variant {spec!r}")


def error_classes(scene: dict, labels=None) -> dict[str, float]:
    """Where the defaults' bad pixels (or those of the final map ``labels``) lie, in % of the
    pixels with ground truth: in the left border strip (``x < d_true``), elsewhere occluded in
    the right view (by the ground truth's own visibility), within 2 pixels of a ground-truth
    depth edge (a 5x5 range over 1), the rest; and among the pixels that failed the
    left-right check (filled) or passed it."""
    from scipy import ndimage
    truth = scene["truth"]
    known = np.isfinite(truth)
    filled, invalid = checked_fill(scene["labels"], scene["costs"])
    if labels is not None:
        filled = labels
    bad = known & ~(np.abs(filled - np.nan_to_num(truth)) <= 1)
    true_labels = np.rint(np.nan_to_num(truth)).astype(np.int64)
    border = np.arange(truth.shape[1])[None, :] < np.nan_to_num(truth)
    right = warp_to_right(true_labels)
    w = truth.shape[1]
    target = np.arange(w)[None, :] - true_labels
    seen = np.take_along_axis(right, np.clip(target, 0, w - 1), axis=1)
    occluded = ~border & (seen > true_labels + 1)
    edge = (ndimage.maximum_filter(true_labels, 5) - ndimage.minimum_filter(true_labels, 5)) > 1
    edge &= ~border & ~occluded
    rest = ~border & ~occluded & ~edge
    share = {"bad": bad, "border strip": bad & border, "occluded": bad & occluded,
             "near depth edges": bad & edge, "rest": bad & rest, "filled (failed the check)":
             bad & invalid, "passed the check": bad & ~invalid}
    return {name: 100 * float(mask.sum()) / float(known.sum()) for name, mask in share.items()}


def prepare(name: str, downscale: int) -> dict:
    left, right, truth, max_disparity, _ = load_scene(name, downscale)
    costs = census_costs(left, right, max_disparity=max_disparity, channel_axis=-1)
    weights = smoothness_weights(left, weight=SMOOTHNESS, channel_axis=-1)
    return {"left": left, "right": right, "truth": truth, "max_disparity": max_disparity,
            "costs": costs, "weights": weights, "labels": expand(costs, weights)}


def _development_scenes(parser, args):
    """The (scene, downscale) keys of ``--scenes`` and ``--downscales`` (development pairs
    only: others end the command with a usage error), their prepared scenes and the tables'
    column names."""
    names = [n for n in args.scenes.split(",") if n]
    allowed = DEVELOPMENT + SYNTHETIC_DEVELOPMENT
    if not names or sorted(set(names) - set(allowed)):
        parser.error(f"--scenes takes {', '.join(allowed)} (development pairs only), got "
                     f"{args.scenes!r}")
    keys = [(n, int(s)) for n in names for s in args.downscales.split(",")]
    scenes = {key: prepare(*key) for key in keys}
    columns = [n if s == 1 else f"{n} / {s}" for n, s in keys]
    return keys, scenes, columns


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenes", default=",".join(DEVELOPMENT))
    parser.add_argument("--variants", default=",".join(DEFAULT_VARIANTS))
    parser.add_argument("--downscales", default="1,2")
    parser.add_argument("--breakdown", action="store_true",
                        help="print where the defaults' bad pixels lie instead")
    args = parser.parse_args(argv)
    keys, scenes, columns = _development_scenes(parser, args)
    if args.breakdown:
        classes = {key: error_classes(scene) for key, scene in scenes.items()}
        print(f"| bad pixels (% of the known) | {' | '.join(columns)} |")
        print("|---" * (len(columns) + 1) + "|")
        for name in classes[keys[0]]:
            cells = " | ".join(f"{classes[key][name]:.2f}" for key in keys)
            print(f"| {name} | {cells} |")
        return 0
    print(f"| variant | {' | '.join(columns)} | mean | seconds |")
    print("|---" * (len(columns) + 3) + "|")
    for spec in args.variants.split(","):
        started = time.perf_counter()
        rates = [bad_pixel_rate(run_variant(spec, scene), scene["truth"])
                 for scene in scenes.values()]
        cells = " | ".join(f"{100 * r:.2f}%" for r in rates)
        print(f"| {spec} | {cells} | {100 * statistics.mean(rates):.2f}% | "
              f"{time.perf_counter() - started:.0f} |", flush=True)
    return 0


def variants_main(argv, description, run_variant, default_variants) -> int:
    """The command line of the variant scripts (stereo_planes.py, stereo_filtering.py): each
    variant of ``--variants`` run by ``run_variant(spec, scene)`` on the development pairs
    (others refused) at each of ``--downscales``, one table row per variant (bad pixels > 1 px,
    % of the known; the means over the real and the synthetic pairs; seconds), or with
    ``--breakdown`` where each variant's bad pixels lie."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scenes", default=",".join(DEVELOPMENT + SYNTHETIC_DEVELOPMENT))
    parser.add_argument("--variants", default=",".join(default_variants))
    parser.add_argument("--downscales", default="1,2")
    parser.add_argument("--breakdown", action="store_true",
                        help="print where each variant's bad pixels lie instead")
    args = parser.parse_args(argv)
    keys, scenes, columns = _development_scenes(parser, args)
    if args.breakdown:
        print(f"| bad pixels (% of the known) | variant | {' | '.join(columns)} |")
        print("|---" * (len(columns) + 2) + "|")
        classes = {spec: {key: error_classes(scene, run_variant(spec, scene))
                          for key, scene in scenes.items()}
                   for spec in args.variants.split(",")}
        for name in next(iter(next(iter(classes.values())).values())):
            for spec, by_key in classes.items():
                cells = " | ".join(f"{by_key[key][name]:.2f}" for key in keys)
                print(f"| {name} | {spec} | {cells} |")
        return 0
    print(f"| variant | {' | '.join(columns)} | real mean | synthetic mean | seconds |")
    print("|---" * (len(columns) + 4) + "|")
    for spec in args.variants.split(","):
        started = time.perf_counter()
        rates = {key: 100 * bad_pixel_rate(run_variant(spec, scene), scene["truth"])
                 for key, scene in scenes.items()}
        cells = " | ".join(f"{rates[key]:.2f} %" for key in keys)
        means = [[rates[key] for key in keys if (key[0] in DEVELOPMENT) == real]
                 for real in (True, False)]
        shown = " | ".join(f"{statistics.mean(m):.2f} %" if m else "-" for m in means)
        print(f"| {spec} | {cells} | {shown} | {time.perf_counter() - started:.0f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
