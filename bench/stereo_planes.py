"""Segment planes, plane proposals inside the energy, and other census windows and data terms,
on the development pairs.

Issue 25's ninth round. Every variant starts from ``graphcut.stereo.disparity``'s defaults
(AD-census, cross aggregation, alpha-expansion with two cycles, left-right check, background
fill; no border extrapolation or edge refinement) and changes one thing; each is scored by the
bad-pixel rate (|d - d_true| > 1 on the pixels with ground truth):

- ``plane:fz:SCALE:MIN:VSHARE``: ``graphcut.stereo.plane_fill`` (Felzenszwalb segments of
  scale ``SCALE`` and at least ``MIN`` of the image's pixels; a segment's plane is trusted when
  ``VSHARE`` of its pixels passed the check and 90 % of those lie on it) on the
  background-filled map; ``PlaneFill()`` is ``plane:fz:100:0.0006:0.5``.
- ``plane:slic:SEGMENTS:COMPACTNESS:SHARE``: the same fill with SLIC superpixels
  (``skimage.segmentation.slic`` on the CIELAB image, about ``SEGMENTS`` of them, compactness
  ``COMPACTNESS / 10``), no minimum share of consistent pixels, ``SHARE`` of them on the plane.
- suffixes of both: ``:border`` fills only each row's leading run of rejected pixels (the
  strip the right camera does not see); ``:outliers=K`` instead replaces the consistent pixels
  more than ``K`` from a trusted plane (``:band``: only those within 2 pixels of a depth
  edge of the map, as ``refine_depth_edges`` finds them); ``:post`` runs the border extrapolation before and the
  depth-edge refinement after the fill (``defaults:post``: both without the fill).
- ``fusion:MAP:SEGMENTS:COMPACTNESS:SHARE``: one fusion move (Lempitsky et al. 2010) of the
  expansion's map (``MAP`` = ``raw``, then checked and filled) or of the filled map (``filled``)
  with the plane map (every pixel of a trusted SLIC segment on its plane): each pixel keeps its
  label or takes the proposal's, one minimum cut of the same energy with its non-submodular
  pairwise terms truncated (Rother et al. 2005), kept only if the exact energy drops.
- ``census:W:H:STEP``: a sparse census window, W x H samples ``STEP`` pixels apart (so (W - 1)
  STEP + 1 pixels wide), for the census part.
- ``gradient:LAMBDA:FACTOR``: a third part, ``64 (1 - exp(-g / LAMBDA))`` of the absolute
  difference ``g`` of the horizontal grey gradients (central differences, grey levels per
  pixel), added to the raw cost, the sum times ``FACTOR``.
- ``masked:TAU:BITS``: an edge-aware census: the Hamming distance counts only the bits of
  the window's neighbours whose colour differs from the left pixel's by at most ``TAU`` grey
  levels in every channel, scaled to the 62 bits of the window (``round(62 h / n)``), where at
  least ``BITS`` neighbours are that similar (the plain census elsewhere).
- ``texture:LOW:HIGH``: the census part times ``w`` and the colour part times ``2 - w``, ``w``
  going linearly from ``LOW`` where the left image's grey standard deviation over 5 x 5 pixels
  is at most 2 grey levels (flat) to ``HIGH`` where it is at least 20 (textured).

    python bench/stereo_planes.py                       # every variant, every development pair
    python bench/stereo_planes.py --scenes teddy,venus --variants defaults,plane:fz:100:0.0006:0.5
    python bench/stereo_planes.py --scenes teddy,venus --breakdown --variants defaults,defaults:post

Held-out pairs and the motorcycle are refused: nothing is scored here. Prints one Markdown
table: variant, bad pixels per pair at full and half size, the means over the real and the
synthetic entries, seconds (``--breakdown``: where each variant's bad pixels lie, as
``stereo_occlusion.py --breakdown`` splits them, one row per class and variant).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from graphcut.labeling import labeling_energy
from graphcut.stereo import (BorderExtrapolation, CensusParameters, EdgeRefinement,
                             colour_segments, extrapolate_left_border,
                             fit_segment_planes, plane_fill, refine_depth_edges)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stereo_occlusion import TRUNCATION, checked_fill, expand, variants_main  # noqa: E402

DEFAULT_VARIANTS = (
    "defaults", "plane:slic:1200:10:0.6", "plane:slic:1200:10:0.9", "plane:slic:3000:100:0.9",
    "plane:slic:3000:10:0.9:border", "plane:slic:1200:100:0.9:outliers=4",
    "plane:fz:100:0.0006:0.5", "plane:fz:200:0.0006:0.5", "plane:fz:100:0.0006:0.3",
    "plane:fz:100:0.0006:0.5:border", "plane:fz:100:0.0006:0.5:outliers=2",
    "plane:fz:100:0.0006:0.5:outliers=4", "plane:fz:50:0.0006:0.5:outliers=2",
    "plane:fz:100:0.0006:0.5:outliers=2:post", "plane:fz:100:0.0006:0.5:outliers=1:band",
    "plane:fz:100:0.0006:0.5:outliers=2:band", "plane:fz:50:0.0006:0.5:outliers=1:band",
    "defaults:post", "plane:fz:100:0.0006:0.5:post",
    "fusion:raw:1200:10:0.6", "fusion:filled:1200:10:0.6", "fusion:raw:3000:100:0.9",
    "census:9:7:2", "census:7:5:2", "census:11:5:2", "gradient:10:0.667", "gradient:10:1",
    "texture:1.3:0.7", "texture:0.7:1.3", "texture:1.5:1", "masked:20:20", "masked:12:20",
    "masked:20:50")


def slic_segments(image, segments: int, compactness: float) -> np.ndarray:
    """SLIC superpixels of an RGB image (0..255) numbered 0..K-1."""
    from skimage.segmentation import slic
    labels = slic(np.asarray(image, dtype=np.float64) / 255.0, n_segments=segments,
                  compactness=compactness / 10, channel_axis=-1, start_label=0,
                  convert2lab=True)
    return np.unique(labels, return_inverse=True)[1].reshape(labels.shape)


def plane_map(labels, valid, segments, *, share: float, max_label: int) -> np.ndarray:
    """``labels`` with every pixel of a trusted segment (at least 20 and ``share`` of its
    valid pixels within 1 of its fitted plane, slopes at most 1) on that plane."""
    planes, inliers, support = fit_segment_planes(labels, valid, segments)
    trusted = ((inliers >= 20) & (inliers >= share * support)
               & (np.abs(planes[:, :2]) <= 1).all(axis=1))
    y, x = np.indices(labels.shape)
    values = planes[segments, 0] * x + planes[segments, 1] * y + planes[segments, 2]
    values = np.clip(np.rint(values), 0, max_label).astype(labels.dtype)
    return np.where(trusted[segments], values, labels)


def fuse(costs, weights, current, proposal) -> np.ndarray:
    """One fusion move: each pixel keeps ``current`` or takes ``proposal``, by one minimum
    cut (PyMaxflow) of the energy of ``labeling_energy`` (truncated linear, ``TRUNCATION``)
    whose non-submodular pairwise terms are truncated (E11 lowered to E01 + E10 - E00)."""
    import maxflow
    h, w = current.shape
    f, g = current.astype(np.int64), proposal.astype(np.int64)
    cost_f = np.take_along_axis(costs, f[None], 0)[0].astype(np.int64)
    cost_g = np.take_along_axis(costs, g[None], 0)[0].astype(np.int64)
    keep, take = cost_f.copy(), cost_g.copy()  # unary costs of x = 0 (keep), x = 1 (take)
    index = np.arange(h * w).reshape(h, w)
    heads, tails, capacities = [], [], []
    for p, q, weight in (((slice(None), slice(0, w - 1)), (slice(None), slice(1, w)),
                          weights.horizontal),
                         ((slice(0, h - 1), slice(None)), (slice(1, h), slice(None)),
                          weights.vertical)):
        weight = np.asarray(weight, dtype=np.int64)

        def pair(a, b):
            return weight * np.minimum(np.abs(a - b), TRUNCATION)
        e00, e01, e10, e11 = pair(f[p], f[q]), pair(f[p], g[q]), pair(g[p], f[q]), \
            pair(g[p], g[q])
        e11 = np.minimum(e11, e01 + e10 - e00)
        # E = e00 + (e10 - e00) x_p + (e11 - e10) x_q + (e01 + e10 - e00 - e11)(1 - x_p) x_q
        take[p] += e10 - e00
        take[q] += e11 - e10
        heads.append(index[p].ravel())
        tails.append(index[q].ravel())
        capacities.append((e01 + e10 - e00 - e11).ravel())
    low = np.minimum(keep, take)
    graph = maxflow.GraphInt()
    graph.add_nodes(h * w)
    graph.add_grid_tedges(index, take - low, keep - low)  # sink side = take the proposal
    capacities = np.concatenate(capacities)
    graph.add_edges(np.concatenate(heads), np.concatenate(tails), capacities,
                    np.zeros_like(capacities))
    graph.maxflow()
    fused = np.where(graph.get_grid_segments(index), g, f).astype(current.dtype)
    energy = labeling_energy(costs, weights, fused, linear_truncation=TRUNCATION)
    return fused if energy < labeling_energy(costs, weights, current,
                                             linear_truncation=TRUNCATION) else current


def volume(left, right, max_disparity, *, window=(9, 7), step=1, gradient=None,
           factor=1.0, texture=None, masked=None) -> np.ndarray:
    """AD-census volume as ``census_costs`` builds it, with a sparse census window (samples
    ``step`` pixels apart) and, with ``gradient`` (its lambda), the gradient part, the raw
    sum times ``factor``; with ``texture`` = (low, high), the texture-weighted mix of the
    module docstring; with ``masked`` = (tau, bits), the edge-aware census of the module
    docstring. (Uses the package's private pieces: a bench experiment.)"""
    from graphcut.stereo._aggregation import cross_arms, cross_count, cross_mean
    from graphcut.stereo._costs import _integer_levels, _popcount, _tables, check_pair
    p = CensusParameters()
    lv, rv = (_integer_levels(v) for v in check_pair(left, right, -1, max_disparity))
    census_table, colour_table = _tables(p, lv.shape[2])
    channels = lv.shape[2]
    h, w, _ = lv.shape
    codes = [sparse_census(v.sum(axis=-1), window, step) for v in (lv, rv)]
    slopes = [np.pad(v.sum(axis=-1), ((0, 0), (1, 1)), mode="edge") for v in (lv, rv)]
    slopes = [s[:, 2:] - s[:, :-2] for s in slopes]  # 2 x the gradient, summed over channels
    if gradient is not None:
        difference = np.arange(4 * 255 * channels + 1) / (2 * channels)
        gradient_table = np.rint(p.scale * (1 - np.exp(-difference / gradient)))
    arms = cross_arms(lv, p.cross_threshold, p.cross_length, p.cross_minimum)
    count = cross_count(arms)
    census_weight = np.ones((h, w))
    if texture is not None:
        from scipy import ndimage
        grey = lv.sum(axis=-1) / channels
        mean = ndimage.uniform_filter(grey.astype(float), 5)
        spread = np.sqrt(np.maximum(ndimage.uniform_filter(grey.astype(float) ** 2, 5)
                                    - mean ** 2, 0))
        census_weight = texture[0] + (texture[1] - texture[0]) * np.clip((spread - 2) / 18,
                                                                         0, 1)
    if masked is not None:
        similar = similar_neighbours(lv, window, masked[0])
        bits = _popcount(similar).astype(np.int64)
        use = bits >= masked[1]
    costs = np.empty((max_disparity + 1, h, w), dtype=np.int32)
    for d in range(max_disparity + 1):
        raw = np.full((h, w), p.scale, dtype=np.int32)
        differ = codes[0][:, d:] ^ codes[1][:, :w - d]
        hamming = _popcount(differ).astype(np.int64)
        if masked is not None:
            kept = _popcount(differ & similar[:, d:]).astype(np.int64)
            scaled = (kept * 62 + bits[:, d:] // 2) // np.maximum(bits[:, d:], 1)
            hamming = np.where(use[:, d:], scaled, hamming)
        census = census_table[np.minimum(hamming, 64)]
        colour = colour_table[np.abs(lv[:, d:] - rv[:, :w - d]).sum(axis=-1)]
        value = (census + colour if texture is None else
                 census_weight[:, d:] * census + (2 - census_weight[:, d:]) * colour)
        if gradient is not None:
            value = value + gradient_table[np.abs(slopes[0][:, d:] - slopes[1][:, :w - d])]
        raw[:, d:] = np.rint(value * factor).astype(np.int32)
        costs[d] = cross_mean(raw, arms, count)
    return costs


def similar_neighbours(levels, window, tau) -> np.ndarray:
    """One bit per neighbour of ``window`` (the census's order): its colour differs from the
    pixel's by at most ``tau`` grey levels in every channel of ``levels`` (H, W, C)."""
    rx, ry = window[0] // 2, window[1] // 2
    h, w, _ = levels.shape
    padded = np.pad(levels, ((ry, ry), (rx, rx), (0, 0)), mode="edge")
    code = np.zeros((h, w), dtype=np.uint64)
    for dy in range(-ry, ry + 1):
        for dx in range(-rx, rx + 1):
            if dx or dy:
                neighbour = padded[ry + dy:ry + dy + h, rx + dx:rx + dx + w]
                close = np.abs(neighbour - levels).max(axis=-1) <= tau
                code = (code << np.uint64(1)) | close.astype(np.uint64)
    return code


def sparse_census(grey, window, step) -> np.ndarray:
    """Census codes of ``window`` = (W, H) samples ``step`` pixels apart (the centre skipped;
    ``step`` 1 is ``census_costs``' transform), border pixels repeated."""
    rx, ry = window[0] // 2 * step, window[1] // 2 * step
    h, w = grey.shape
    padded = np.pad(grey, ((ry, ry), (rx, rx)), mode="edge")
    code = np.zeros((h, w), dtype=np.uint64)
    for dy in range(-ry, ry + 1, step):
        for dx in range(-rx, rx + 1, step):
            if dx or dy:
                neighbour = padded[ry + dy:ry + dy + h, rx + dx:rx + dx + w]
                code = (code << np.uint64(1)) | (neighbour < grey).astype(np.uint64)
    return code


def plane_variant(args, scene, filled, invalid) -> np.ndarray:
    kind, a, b, share, *options = args
    top = scene["max_disparity"]
    post = "post" in options
    labels = filled
    if post:
        labels = extrapolate_left_border(labels, invalid, **BorderExtrapolation()._asdict(),
                                         max_label=top)
    if kind == "fz":
        segments = colour_segments(scene["left"], scale=float(a), min_segment=float(b))
        valid_share, inlier_share = float(share), 0.9
    else:
        segments = slic_segments(scene["left"], int(a), float(b))
        valid_share, inlier_share = 0.0, float(share)
    outliers = [float(o.split("=")[1]) for o in options if o.startswith("outliers=")]
    target = invalid
    if "border" in options:
        target = invalid & np.cumprod(invalid, axis=1).astype(bool)
    if outliers:
        proposal = plane_map(labels, ~invalid, segments, share=inlier_share, max_label=top)
        replace = ~invalid & (np.abs(labels - proposal) > outliers[0])
        if "band" in options:
            from graphcut.stereo._refine import depth_edge_band
            replace &= depth_edge_band(labels, 2)
        labels = np.where(replace, proposal, labels)
    else:
        planes = plane_fill(labels, invalid, scene["left"], segments=segments,
                            min_valid_share=valid_share, min_inlier_share=inlier_share,
                            max_label=top)
        labels = np.where(target, planes, labels)
    if post:
        labels = refine_depth_edges(labels, scene["left"].astype(np.float32),
                                    **EdgeRefinement()._asdict(), max_label=top)
    return labels


def run_variant(spec: str, scene: dict) -> np.ndarray:
    """The final map of variant ``spec`` (see the module docstring) on a prepared scene."""
    kind, *args = spec.split(":")
    costs, weights, labels = scene["costs"], scene["weights"], scene["labels"]
    filled, invalid = checked_fill(labels, costs)
    top = scene["max_disparity"]
    if kind == "defaults":
        if "post" not in args:
            return filled
        out = extrapolate_left_border(filled, invalid, **BorderExtrapolation()._asdict(),
                                      max_label=top)
        return refine_depth_edges(out, scene["left"].astype(np.float32),
                                  **EdgeRefinement()._asdict(), max_label=top)
    if kind == "plane":
        return plane_variant(args, scene, filled, invalid)
    if kind == "fusion":
        segments = slic_segments(scene["left"], int(args[1]), float(args[2]))
        start = labels if args[0] == "raw" else filled
        proposal = plane_map(start, ~invalid, segments, share=float(args[3]), max_label=top)
        fused = fuse(costs, weights, start, proposal)
        return checked_fill(fused, costs)[0] if args[0] == "raw" else fused
    if kind in ("census", "gradient", "texture", "masked"):
        options = ({"window": (int(args[0]), int(args[1])), "step": int(args[2])}
                   if kind == "census" else
                   {"gradient": float(args[0]), "factor": float(args[1])}
                   if kind == "gradient" else
                   {"texture": (float(args[0]), float(args[1]))} if kind == "texture" else
                   {"masked": (float(args[0]), int(args[1]))})
        volume_ = volume(scene["left"], scene["right"], top, **options)
        return checked_fill(expand(volume_, weights), volume_)[0]
    raise ValueError(f"unknown variant {spec!r}")


def main(argv=None) -> int:
    return variants_main(argv, __doc__.split("\n")[0], run_variant, DEFAULT_VARIANTS)


if __name__ == "__main__":
    sys.exit(main())
