"""Latency of the learned appearance model through graphcut.Segmenter: the first mask
(features + training + cut) and each later stroke (training + scoring + cut; the features
are kept), on a scaled composite of bench/quality_data.py, strokes placed on the current
mask's largest error (correcting strokes, as the robot user of bench_quality.py does).

    python bench/bench_learned_latency.py --megapixels 4 --device cpu --strokes 3
    python bench/bench_learned_latency.py --megapixels 4 --device cpu --features generic
    python bench/bench_learned_latency.py --megapixels 4,12 --device cuda --strokes 10
    python bench/bench_learned_latency.py --megapixels 4 --device cuda --box \
        --model '{"model": "gmm", "components": 8, "core": 0.4}'

``--box`` starts from the object's box (bench_quality.truth_box) instead of two strokes; the
strokes then correct that mask; then three boxes moved by a few pixels are drawn on the same
session (a new box's first mask without the image's one-time work: features, compilation). ``--model`` takes a name or a settings dict as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_quality import add_stroke, interior_point, iou, next_click, truth_box  # noqa: E402
from quality_data import scaled_item  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megapixels", default="4")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--strokes", type=int, default=5)
    parser.add_argument("--model", default="learned",
                        help="a model name or a settings dict as JSON")
    parser.add_argument("--stages", action="store_true",
                        help="also print the median seconds of each stage of a stroke")
    parser.add_argument("--box", action="store_true",
                        help="start from the object's box instead of two strokes")
    parser.add_argument("--features", default="fast", choices=("fast", "scipy", "generic"),
                        help="CPU features: the fast path (OpenCV if installed), the fast "
                             "path with SciPy's filters, or the generic path (the old code)")
    args = parser.parse_args(argv)
    import graphcut
    _choose_cpu_features(args.features)
    model = json.loads(args.model) if args.model.lstrip().startswith("{") else args.model
    start = "box" if args.box else "2 strokes"
    print(f"| MP | device | model | first mask s ({start}) | stroke s (median) | strokes | "
          "IoU last |")
    print("|---|---|---|---|---|---|---|")
    for mp in (float(v) for v in args.megapixels.split(",")):
        item = scaled_item(mp)
        truth = item.truth
        seeds = np.zeros(truth.shape, np.uint8)
        box = truth_box(truth) if args.box else None
        if box is None:
            add_stroke(seeds, truth, interior_point(truth), 1)
            add_stroke(seeds, truth, interior_point(~truth), 2)
        session = graphcut.Segmenter(item.image, model=model, device=args.device)
        started = time.perf_counter()
        mask = np.asarray(session.update(seeds.copy(), box=box), dtype=bool)
        first = time.perf_counter() - started
        times, stages = [], []
        for _ in range(args.strokes):
            point, label = next_click(mask, truth)
            add_stroke(seeds, truth, point, label)
            started = time.perf_counter()
            mask = np.asarray(session.update(seeds.copy(), box=box), dtype=bool)
            times.append(time.perf_counter() - started)
            stages.append(session.last_result.stats.get("seconds", {}).get("stages") or {})
        print(f"| {truth.size / 1e6:.1f} | {session.backend} | {args.model} | {first:.3f} | "
              f"{statistics.median(times):.3f} | {len(times)} | {iou(mask, truth):.3f} |")
        if box is not None:  # a new box on the prepared session (features kept, no compile)
            again = []
            for shift in (-2, 2, -4):
                moved = tuple(max(0, v + shift) for v in box)
                sync = _synchronise(args.device)
                started = time.perf_counter()
                session.update(None, box=moved)
                sync()
                again.append(time.perf_counter() - started)
            print(f"  a new box on the prepared session (median of {len(again)}): "
                  f"{statistics.median(again):.3f} s")
        if args.stages and stages and stages[0]:
            print("  stroke stages, median s (the last fit and cut; a coarse loop before it "
                  "is in the stroke's time only): " + ", ".join(
                      f"{key} {statistics.median(s.get(key, 0.0) for s in stages):.4f}"
                      for key in stages[0]))


def _synchronise(device):
    """A function that waits for the GPU's queued work (nothing on the CPU)."""
    if device == "cuda":
        import cupy
        cupy.cuda.Device().synchronize()
        return cupy.cuda.Device().synchronize
    return lambda: None


def _choose_cpu_features(which):
    """Patch the learned model's CPU features for a before/after comparison."""
    from graphcut.models import _features, _features_cpu
    if which == "scipy":
        _features_cpu._opencv = lambda: None
    elif which == "generic":
        _features_cpu.cpu_pixel_features = (
            lambda values, scales, standardise, _: _features.generic_pixel_features(
                values, scales=scales, standardise=standardise))


if __name__ == "__main__":
    main()
