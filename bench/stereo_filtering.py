"""Cost-volume filtering and semi-global path costs as the data term, on the development pairs.

Issue 25's tenth round: the errors near depth edges ("fattening") pass the left-right check,
so the data term must change. Every variant starts from ``graphcut.stereo.disparity``'s
defaults (alpha-expansion with two cycles, left-right check on the variant's own volume,
background fill; no border extrapolation or edge refinement) and replaces the data term:

- ``defaults``: AD-census, cross-aggregated (``census_costs``).
- ``guided:R:EPS``: the raw AD-census cost of every disparity (no aggregation) filtered by the
  colour guided filter (He, Sun and Tang 2010) guided by the left image, as in cost-volume
  filtering (Hosni, Rhemann et al. 2013): window (2R+1)^2 clipped to the image, ``EPS`` in
  squared grey levels (0..255 scale); the result rounded and clipped to 0..128.
  ``guided:R:EPS:grey`` uses the grey image (the channel mean) as the guide;
  ``guided:R:EPS:cross`` filters the defaults' cross-aggregated volume instead of the raw one.
- ``guided-ad:R:EPS``: the same filter on Hosni et al.'s per-pixel cost (truncated colour and
  gradient differences, :func:`ad_gradient_volume`), whose support is the filter's alone.
- ``sgm:PATHS:P1:P2``: semi-global path costs (Hirschmueller 2008) over ``PATHS`` (4 or 8)
  directions of the defaults' cross-aggregated volume, summed, divided by ``PATHS`` and
  rounded; ``P1`` for a change of one label, ``P2`` for more, in the volume's units (a raw
  cost is 0..128). ``sgm:...:raw`` runs the paths on the raw (unaggregated) volume instead;
  ``sgm:...:mix=F``: ``F`` times the path costs plus ``1 - F`` times the defaults' volume,
  rounded.
- ``shift:K`` (``shift:K:h``): shiftable windows: each pixel's cost at every disparity is the
  smallest of the defaults' aggregated costs over the K x K (K x 1: along the row) pixels
  around it, so a pixel next to a depth edge can take a support that lies on its own side.
- ``half:h`` (``half:hv``): the census part from the better-matching half of the 9 x 7 window,
  left or right (or also upper or lower), scaled to the whole window's bits
  (:func:`half_census_volume`); ``half:h:F`` blends ``F`` of it with ``1 - F`` of the whole
  window's distance.
- ``slant:STEP:MAX[:P]``: vertically slanted supports (:func:`slanted_volume`): the cross
  region summed along disparity planes slanted by -MAX..MAX pixels per row in steps of STEP,
  the cheapest slope kept (plus ``P`` for a slanted one).
- ``window:W:H``: the defaults with a dense W x H census window (at most 65 pixels).
- suffix ``:w=S`` on any variant: the smoothness weight ``S`` instead of 8 (the pairwise term's
  other settings stay); ``:lr=defaults``: the left-right check on the defaults' volume
  instead of the variant's.

    python bench/stereo_filtering.py                        # every variant, every dev pair
    python bench/stereo_filtering.py --scenes teddy,venus --variants defaults,guided:7:16
    python bench/stereo_filtering.py --scenes teddy --breakdown --variants defaults,guided:7:16

Held-out pairs and the motorcycle are refused: nothing is scored here. Prints one Markdown
table: variant, bad pixels per pair at full and half size, the means over the real and the
synthetic entries, seconds (``--breakdown``: where each variant's bad pixels lie, as
``stereo_occlusion.py --breakdown`` splits them).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from graphcut.stereo import CensusParameters, census_costs, smoothness_weights

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stereo_occlusion import checked_fill, expand, variants_main  # noqa: E402

DEFAULT_VARIANTS = (
    "defaults", "guided:5:16", "guided:7:16", "guided:9:16", "guided:7:4", "guided:7:64",
    "guided:7:16:grey", "guided:2:16", "guided:3:16:cross", "guided-ad:9:6.5",
    "guided-ad:5:6.5", "sgm:4:8:32", "sgm:8:8:32", "sgm:8:4:64", "sgm:8:8:32:raw", "sgm:8:2:8",
    "sgm:8:8:32:mix=0.5", "shift:3", "shift:5", "shift:5:h", "shift:9:h", "half:h", "half:hv",
    "half:h:0.5", "window:13:5", "window:11:5", "window:7:9", "slant:0.5:1", "slant:0.5:1:2",
    "slant:1:1", "slant:1:1:2", "slant:1:1:4", "slant:1:1:8", "slant:0.5:0.5:2")


def box_mean(values: np.ndarray, r: int) -> np.ndarray:
    """Mean of ``values`` (..., H, W) over (2r+1)^2 windows clipped to the image."""
    out = values
    for axis in (-2, -1):
        n = out.shape[axis]
        prefix = np.cumsum(out, axis=axis)
        zero = np.zeros_like(np.take(prefix, [0], axis=axis))
        prefix = np.concatenate([zero, prefix], axis=axis)
        index = np.arange(n)
        high = np.take(prefix, np.minimum(index + r + 1, n), axis=axis)
        low = np.take(prefix, np.maximum(index - r, 0), axis=axis)
        count = (np.minimum(index + r + 1, n) - np.maximum(index - r, 0)).astype(float)
        shape = [1] * out.ndim
        shape[axis] = n
        out = (high - low) / count.reshape(shape)
    return out


def guided_volume(raw: np.ndarray, guide: np.ndarray, r: int, eps: float) -> np.ndarray:
    """The colour guided filter of every slice of ``raw`` (L, H, W), guide (H, W, C) float."""
    guide = np.moveaxis(guide.astype(np.float64), -1, 0)  # (C, H, W)
    c = guide.shape[0]
    mean_i = box_mean(guide, r)
    sigma = np.empty((c, c) + guide.shape[1:])
    for i in range(c):
        for j in range(c):
            sigma[i, j] = box_mean(guide[i] * guide[j], r) - mean_i[i] * mean_i[j]
        sigma[i, i] += eps
    inverse = np.moveaxis(np.linalg.inv(np.moveaxis(sigma, (0, 1), (-2, -1))), (-2, -1),
                          (0, 1))
    out = np.empty(raw.shape, dtype=np.int32)
    for d in range(raw.shape[0]):
        p = raw[d].astype(np.float64)
        mean_p = box_mean(p, r)
        cov = box_mean(guide * p, r) - mean_i * mean_p
        a = np.einsum("ijhw,jhw->ihw", inverse, cov)
        b = mean_p - (a * mean_i).sum(axis=0)
        q = (box_mean(a, r) * guide).sum(axis=0) + box_mean(b, r)
        out[d] = np.clip(np.rint(q), 0, 128)
    return out


def path_costs(costs: np.ndarray, dy: int, dx: int, p1: int, p2: int) -> np.ndarray:
    """SGM's path costs ``L_r`` (int64, L x H x W) along direction (dy, dx)."""
    c = costs.astype(np.int64)
    labels, h, w = c.shape
    out = c.copy()

    def step(previous):
        low = previous.min(axis=0)
        best = previous.copy()
        best[1:] = np.minimum(best[1:], previous[:-1] + p1)
        best[:-1] = np.minimum(best[:-1], previous[1:] + p1)
        best = np.minimum(best, low + p2)
        return best - low

    if dy == 0:  # along rows
        xs = range(1, w) if dx > 0 else range(w - 2, -1, -1)
        for x in xs:
            out[:, :, x] += step(out[:, :, x - dx])
        return out
    ys = range(1, h) if dy > 0 else range(h - 2, -1, -1)
    for y in ys:
        previous = out[:, y - dy]
        if dx == 0:
            out[:, y] += step(previous)
        elif dx > 0:
            out[:, y, 1:] += step(previous[:, :-1])
        else:
            out[:, y, :-1] += step(previous[:, 1:])
    return out


def sgm_volume(costs: np.ndarray, paths: int, p1: int, p2: int) -> np.ndarray:
    directions = [(0, 1), (0, -1), (1, 0), (-1, 0)]
    if paths == 8:
        directions += [(1, 1), (1, -1), (-1, 1), (-1, -1)]
    total = sum(path_costs(costs, dy, dx, p1, p2) for dy, dx in directions)
    return ((total + paths // 2) // paths).astype(np.int32)


def ad_gradient_volume(scene, alpha=0.9, tau_colour=7.0, tau_gradient=2.0) -> np.ndarray:
    """Hosni et al.'s per-pixel cost, in 0..128: ``(1 - alpha) min(|I - I'|, tau_colour) +
    alpha min(|dI/dx - dI'/dx|, tau_gradient)`` (colour: the mean absolute difference over
    the channels; gradient: central differences of the grey image), scaled so that its
    largest value is 128; 128 where the match leaves the right image."""
    left, right = (scene[k].astype(np.float64) for k in ("left", "right"))
    grads = [np.gradient(v.mean(axis=-1), axis=1) for v in (left, right)]
    top = (1 - alpha) * tau_colour + alpha * tau_gradient
    h, w, _ = left.shape
    out = np.full((scene["max_disparity"] + 1, h, w), 128, dtype=np.int32)
    for d in range(scene["max_disparity"] + 1):
        colour = np.abs(left[:, d:] - right[:, :w - d]).mean(axis=-1)
        gradient = np.abs(grads[0][:, d:] - grads[1][:, :w - d])
        cost = (1 - alpha) * np.minimum(colour, tau_colour) + alpha * np.minimum(
            gradient, tau_gradient)
        out[d, :, d:] = np.rint(cost * 128 / top)
    return out


def half_window_masks(window, halves: str) -> list[tuple[int, int]]:
    """(bit mask, bits) of each half of the census window (the order of
    ``_census_codes_numpy``: rows top to bottom, columns left to right, the first neighbour in
    the highest bit): "h" gives the left (dx <= 0) and right (dx >= 0) halves, "hv" also the
    upper and lower ones."""
    rx, ry = window[0] // 2, window[1] // 2
    offsets = [(dy, dx) for dy in range(-ry, ry + 1) for dx in range(-rx, rx + 1)
               if dx or dy]
    tests = [lambda dy, dx: dx <= 0, lambda dy, dx: dx >= 0]
    if halves == "hv":
        tests += [lambda dy, dx: dy <= 0, lambda dy, dx: dy >= 0]
    masks = []
    for test in tests:
        bits = [len(offsets) - 1 - i for i, (dy, dx) in enumerate(offsets) if test(dy, dx)]
        masks.append((sum(1 << b for b in bits), len(bits)))
    return masks


def half_census_volume(scene, halves: str, blend: float = 1.0) -> np.ndarray:
    """AD-census as ``census_costs`` builds it (cross aggregation), whose census part is the
    Hamming distance of the best-matching half of the 9 x 7 window (:func:`half_window_masks`),
    scaled to the window's 62 bits (``round(62 h / bits)``); ``blend`` < 1 mixes in the whole
    window's distance (``blend`` times the half's plus ``1 - blend`` times the whole's). A
    pixel next to a depth edge can match with the half that lies on its own side, where the
    whole window would carry the nearer surface's texture. (Uses the package's private
    pieces: a bench experiment.)"""
    from graphcut.stereo._aggregation import cross_arms, cross_count, cross_mean
    from graphcut.stereo._costs import (_census_codes_numpy, _integer_levels, _popcount,
                                        _tables, check_pair)
    p = CensusParameters()
    lv, rv = (_integer_levels(v) for v in check_pair(scene["left"], scene["right"], -1,
                                                      scene["max_disparity"]))
    census_table, colour_table = _tables(p, lv.shape[2])
    h, w, _ = lv.shape
    codes = [_census_codes_numpy(v.sum(axis=-1), p.window) for v in (lv, rv)]
    masks = half_window_masks(p.window, halves)
    total_bits = p.window[0] * p.window[1] - 1
    arms = cross_arms(lv, p.cross_threshold, p.cross_length, p.cross_minimum)
    count = cross_count(arms)
    costs = np.empty((scene["max_disparity"] + 1, h, w), dtype=np.int32)
    for d in range(scene["max_disparity"] + 1):
        raw = np.full((h, w), p.scale, dtype=np.int32)
        differ = codes[0][:, d:] ^ codes[1][:, :w - d]
        half = np.min([(_popcount(differ & np.uint64(mask)).astype(np.int64) * total_bits
                        + bits // 2) // bits for mask, bits in masks], axis=0)
        whole = _popcount(differ).astype(np.int64)
        hamming = np.rint(blend * half + (1 - blend) * whole).astype(np.intp)
        raw[:, d:] = census_table[hamming] + colour_table[
            np.abs(lv[:, d:] - rv[:, :w - d]).sum(axis=-1)]
        costs[d] = cross_mean(raw, arms, count)
    return costs


def slanted_volume(scene, step: float, top: float, penalty: int = 0) -> np.ndarray:
    """The defaults' volume with vertically slanted supports: each pixel's cross region is
    summed with the disparity ``d + round(s k)`` on the row ``k`` below it (above for ``k <
    0``), for slopes ``s`` from ``-top`` to ``top`` in steps of ``step`` (pixels of disparity per
    row), and the pixel keeps the cheapest slope's rounded mean, plus ``penalty`` where that
    slope is not 0. Labels beyond 0..L-1 are clipped. (Uses the package's private pieces: a
    bench experiment.)"""
    from graphcut.stereo._aggregation import _segment_sums, cross_arms, cross_count
    from graphcut.stereo._costs import _integer_levels, check_pair
    p = CensusParameters()
    raw = raw_volume(scene)
    levels = _integer_levels(check_pair(scene["left"], scene["right"], -1,
                                        scene["max_disparity"])[0])
    arms = cross_arms(levels, p.cross_threshold, p.cross_length, p.cross_minimum)
    count = cross_count(arms)
    labels, h, w = raw.shape
    rows = np.stack([_segment_sums(plane, arms[0], arms[1], axis=1) for plane in raw])
    slopes = np.arange(-top, top + step / 2, step)
    best = np.full(raw.shape, np.iinfo(np.int64).max, dtype=np.int64)
    ys = np.arange(h)[:, None]
    for slope in slopes:
        total = np.zeros(raw.shape, dtype=np.int64)
        for k in range(-p.cross_length, p.cross_length + 1):
            inside = (k >= -arms[2]) & (k <= arms[3])             # (H, W)
            source = np.clip(ys + k, 0, h - 1)
            planes = np.clip(np.arange(labels) + int(np.rint(slope * k)), 0, labels - 1)
            total += np.where(inside[None], rows[planes][:, source[:, 0], :], 0)
        mean = (total + count // 2) // count + (penalty if slope != 0 else 0)
        best = np.minimum(best, mean)
    return best.astype(np.int32)


def raw_volume(scene) -> np.ndarray:
    return census_costs(scene["left"], scene["right"], max_disparity=scene["max_disparity"],
                        channel_axis=-1,
                        parameters=CensusParameters(aggregation="box", aggregation_radius=0))


def variant_volume(kind: str, args: list[str], scene) -> np.ndarray:
    if kind == "defaults":
        return scene["costs"]
    if kind == "guided":
        guide = scene["left"].astype(np.float64)
        if "grey" in args:
            guide = guide.mean(axis=-1, keepdims=True)
        base = scene["costs"] if "cross" in args else raw_volume(scene)
        return guided_volume(base, guide, int(args[0]), float(args[1]))
    if kind == "guided-ad":
        return guided_volume(ad_gradient_volume(scene), scene["left"].astype(np.float64),
                             int(args[0]), float(args[1]))
    if kind == "slant":
        return slanted_volume(scene, float(args[0]), float(args[1]),
                              int(args[2]) if len(args) > 2 else 0)
    if kind == "window":
        return census_costs(scene["left"], scene["right"], max_disparity=scene["max_disparity"],
                            channel_axis=-1,
                            parameters=CensusParameters(window=(int(args[0]), int(args[1]))))
    if kind == "half":
        return half_census_volume(scene, args[0], float(args[1]) if len(args) > 1 else 1.0)
    if kind == "shift":
        from scipy import ndimage
        size = (1, int(args[0])) if "h" in args else (int(args[0]),) * 2
        return np.stack([ndimage.minimum_filter(plane, size=size, mode="nearest")
                         for plane in scene["costs"]])
    if kind == "sgm":
        base = scene["costs"]
        if "raw" in args:
            base = raw_volume(scene)
        out = sgm_volume(base, int(args[0]), int(args[1]), int(args[2]))
        share = [float(a[4:]) for a in args if a.startswith("mix=")]
        if share:  # a blend with the defaults' volume
            out = np.rint(share[0] * out + (1 - share[0]) * scene["costs"]).astype(np.int32)
        return out
    raise ValueError(f"unknown variant {kind!r}")


def run_variant(spec: str, scene: dict) -> np.ndarray:
    """The final map of variant ``spec`` (see the module docstring) on a prepared scene."""
    kind, *args = spec.split(":")
    weight = [int(a[2:]) for a in args if a.startswith("w=")]
    own_check = "lr=defaults" not in args
    args = [a for a in args if not a.startswith(("w=", "lr="))]
    if kind == "defaults" and not weight:
        return checked_fill(scene["labels"], scene["costs"])[0]
    volume = variant_volume(kind, args, scene)
    weights = scene["weights"]
    if weight:
        weights = smoothness_weights(scene["left"], weight=weight[0], channel_axis=-1)
    return checked_fill(expand(volume, weights), volume if own_check else scene["costs"])[0]


def main(argv=None) -> int:
    return variants_main(argv, __doc__.split("\n")[0], run_variant, DEFAULT_VARIANTS)


if __name__ == "__main__":
    sys.exit(main())
