"""Scripted strokes for the interactive benches (bench_interactive.py, bench_schedule.py).

Two kinds, both deterministic:

- "confirming": alternately object and background, each a line 4 % of the width long starting
  in a region the reference mask already gives that label. The mask barely changes: close to
  the best case for an incremental re-solve.
- "correcting": a robot user, as in the quality bench: the target is the mask of the bundled
  seeds; the session starts from the bundled seeds of the left half of the image only, so its
  mask has errors; each stroke goes on the largest error region of the current mask (at its
  most interior pixel, a line up to 4 % of the width long kept inside that region) with the
  target's label there. The current mask after each stroke is computed exactly as the session
  computes it (``graphcut.build_network`` + ``min_cut``, no clean-up), so the script is the one
  a user correcting the session's own mistakes would draw.

A stroke is ``(label, [(row, col), (row, col)], radius)``.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

import graphcut
from graphcut.gui.strokes import SeedCanvas
from graphcut.solver import min_cut

STROKE_KINDS = ("confirming", "correcting")


def brush_radius(shape) -> float:
    h, w = shape
    return max(2.0, 0.003 * (h + w) / 2)


def stroke_script(mask: np.ndarray, count: int, seed: int = 0):
    """``count`` confirming strokes: (label, points, radius), alternately object (label 1, in
    what ``mask`` calls object) and background, each a line 4 % of the width long."""
    rng = np.random.default_rng(seed)
    h, w = mask.shape
    radius = brush_radius(mask.shape)
    length = 0.04 * w
    strokes = []
    for i in range(count):
        label = graphcut.FOREGROUND if i % 2 == 0 else graphcut.BACKGROUND
        candidates = np.flatnonzero(mask.ravel() == (label == graphcut.FOREGROUND))
        y, x = divmod(int(candidates[rng.integers(len(candidates))]), w)
        angle = rng.uniform(0, np.pi)
        end = (np.clip(y + length * np.sin(angle), 0, h - 1),
               np.clip(x + length * np.cos(angle), 0, w - 1))
        strokes.append((label, [(y, x), end], radius))
    return strokes


def session_mask(image, labels, device: str) -> np.ndarray:
    """The mask ``graphcut.Segmenter.update`` gives for these seeds (no clean-up)."""
    if device == "cuda":
        import cupy
        result = min_cut(graphcut.build_network(cupy.asarray(image), cupy.asarray(labels)),
                         device=device)
        return result.source_side.get()
    return np.asarray(min_cut(graphcut.build_network(image, labels), device=device).source_side)


def correcting_start(seeds: np.ndarray) -> np.ndarray:
    """The correcting script's starting seeds: the bundled seeds of the left half only."""
    start = seeds.copy()
    start[:, seeds.shape[1] // 2:] = 0
    return start


def _correcting_stroke(mask, target, radius):
    """The robot's next stroke on the largest error region of ``mask``, or None."""
    errors = mask != target
    regions, count = ndimage.label(errors)
    if count == 0:
        return None
    sizes = ndimage.sum_labels(errors, regions, index=np.arange(1, count + 1))
    region = regions == 1 + int(np.argmax(sizes))
    depth = ndimage.distance_transform_edt(region)
    y, x = np.unravel_index(int(np.argmax(depth)), depth.shape)
    label = graphcut.FOREGROUND if target[y, x] else graphcut.BACKGROUND
    h, w = mask.shape
    best = (y, x)
    for length in np.linspace(0.04 * w, 0, 9)[:-1]:  # the longest line that stays inside
        for angle in np.linspace(0, np.pi, 8, endpoint=False):
            end = (int(round(y + length * np.sin(angle))), int(round(x + length * np.cos(angle))))
            middle = ((y + end[0]) // 2, (x + end[1]) // 2)
            if all(0 <= r < h and 0 <= c < w and region[r, c] for r, c in (end, middle)):
                best = end
                break
        if best != (y, x):
            break
    return label, [(int(y), int(x)), best], min(radius, max(1.0, float(depth[y, x]) - 1))


def correcting_script(image, seeds, target, count: int, device: str):
    """``count`` correcting strokes from ``correcting_start(seeds)`` toward ``target``.

    Returns ``(start_seeds, strokes)``; fewer strokes when the mask reaches the target.
    """
    start = correcting_start(seeds)
    canvas = SeedCanvas(seeds.shape)
    canvas.begin_edit()
    canvas.replace(start)
    canvas.end_edit()
    radius = brush_radius(seeds.shape)
    strokes = []
    mask = session_mask(image, canvas.labels, device)
    for _ in range(count):
        stroke = _correcting_stroke(mask, target, radius)
        if stroke is None:
            break
        strokes.append(stroke)
        label, (start_point, end_point), stroke_radius = stroke
        canvas.begin_edit()
        canvas.paint(start_point, end_point, label, stroke_radius)
        canvas.end_edit()
        mask = session_mask(image, canvas.labels, device)
    return start, strokes


def script_for(kind: str, image, seeds, count: int, device: str):
    """``(start_seeds, strokes)`` of ``count`` strokes of ``kind`` (one of STROKE_KINDS)."""
    target = graphcut.segment(image, seeds, device=device)
    if kind == "confirming":
        return seeds, stroke_script(target, count)
    if kind == "correcting":
        return correcting_script(image, seeds, target, count, device)
    raise ValueError(f"stroke kind must be one of {', '.join(STROKE_KINDS)}, got {kind!r}")
