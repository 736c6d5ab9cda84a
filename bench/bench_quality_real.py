"""Mask quality on real images annotated by people (bench/quality_real.py), every method and
baseline of bench/bench_quality.py in the same run, fed the same clicks and boxes.

Protocols (the robot user of bench_quality.py: a click is a disk of radius 5 labelled with the
truth at its centre, keeping only the disk's pixels whose truth agrees):

- ``clicks`` (items "all": every nucleus of a quadrant is the object): click 1 on the object
  at the truth's interior-most point, click 2 on the background's, then each click at the
  interior-most point of the largest error region; always :data:`CLICKS` clicks (no stopping
  at a target). Reported: the mean IoU after 2, 3, 5, 10 and 20 clicks, the clicks to reach
  0.85 (``CLICKS`` when never), and the largest fall below an earlier value
  (``max_k max_{j<k} IoU_j - IoU_k``, over clicks 2..20; goal <= 0.05).
- ``box`` (items "one": a single nucleus): the box of bench_quality.py around it (5 % of its
  larger side, at least 3 pixels, each way); the IoU from the box alone.

    python bench/bench_quality_real.py --set dev
    python bench/bench_quality_real.py --set test --methods histogram,gmm-iter,learned,cv2,rf,otsu

Needs ``pip install --no-deps stardist`` (data), scikit-learn and opencv-python-headless.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_quality import (add_stroke, interior_point, iou, method, next_click,  # noqa: E402
                           parse_method, truth_box)
from quality_real import real_set  # noqa: E402

CLICKS = 20
REPORTED = (2, 3, 5, 10, 20)
DEFAULT_METHODS = "histogram,gmm-iter,learned,learned-clean,cv2,cv2-clean,rf,otsu"


def click_robot(segmenter, item):
    """IoU after clicks 1..CLICKS (click 1 alone scores 0: one label, nothing to cut)."""
    truth = item.truth
    seeds = np.zeros(truth.shape, np.uint8)
    add_stroke(seeds, truth, interior_point(truth), 1)
    ious = [0.0]
    add_stroke(seeds, truth, interior_point(~truth), 2)
    while True:
        mask = np.asarray(segmenter(item.image, seeds, None), dtype=bool)
        ious.append(iou(mask, truth))
        if len(ious) == CLICKS:
            return ious
        point, label_value = next_click(mask, truth)
        add_stroke(seeds, truth, point, label_value)


def largest_fall(ious):
    """max over k of (best IoU before click k) - IoU after click k, from click 2 on."""
    fall, best = 0.0, ious[1]
    for value in ious[2:]:
        fall = max(fall, best - value)
        best = max(best, value)
    return fall


def clicks_table(results):
    header = ("| method | " + " | ".join(f"IoU@{k}" for k in REPORTED)
              + " | clicks to 0.85 | largest fall | s per segmentation |")
    lines = [header, "|---" * (len(REPORTED) + 4) + "|"]
    for name, runs in results.items():
        cells = [statistics.mean(r[0][k - 1] for r in runs) for k in REPORTED]
        reach = statistics.mean(next((i + 1 for i, v in enumerate(r[0]) if v >= 0.85), CLICKS)
                                for r in runs)
        fall = max(largest_fall(r[0]) for r in runs)
        seconds = statistics.median(r[1] for r in runs)
        lines.append(f"| {name} | " + " | ".join(f"{c:.3f}" for c in cells)
                     + f" | {reach:.1f} | {fall:.3f} | {seconds:.3f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=("dev", "test"), default="dev")
    parser.add_argument("--methods", default=DEFAULT_METHODS,
                        help="';'- or ','-separated methods of bench_quality.py (with "
                             "'name:key=value,...' changes when ';'-separated)")
    parser.add_argument("--protocols", default="clicks,box")
    parser.add_argument("--device", default="cpu", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--per-image", action="store_true")
    args = parser.parse_args(argv)
    names = args.methods.split(";") if ";" in args.methods else args.methods.split(",")
    for name in names:
        parse_method(name)
    started = time.perf_counter()
    print(f"## Real images, set {args.set!r}, device {args.device}\n")
    if "clicks" in args.protocols:
        items = real_set(args.set, "all")
        results = {}
        for name in names:
            segmenter = method(name, args.device)
            runs = []
            for item in items:
                t = time.perf_counter()
                ious = click_robot(segmenter, item)
                runs.append((ious, (time.perf_counter() - t) / (CLICKS - 1)))
                if args.per_image:
                    print(f"  {name} {item.name}: " + " ".join(f"{v:.2f}" for v in ious),
                          file=sys.stderr)
            results[name] = runs
        print(f"### All nuclei of a quadrant as the object, from clicks ({len(items)} "
              f"quadrants: {', '.join(i.name for i in items)})\n")
        print(clicks_table(results) + "\n")
    if "box" in args.protocols:
        items = real_set(args.set, "one")
        print(f"### A box around one nucleus ({len(items)} nuclei of "
              f"{min(int(i.truth.sum()) for i in items)}-{max(int(i.truth.sum()) for i in items)}"
              " pixels)\n")
        print("| method | mean IoU | median IoU | worst IoU | s per segmentation |")
        print("|---|---|---|---|---|")
        for name in names:
            segmenter = method(name, args.device)
            scores, times = [], []
            for item in items:
                box = tuple(int(v) for v in truth_box(item.truth))
                t = time.perf_counter()
                mask = np.asarray(segmenter(item.image, np.zeros(item.truth.shape, np.uint8),
                                            box), dtype=bool)
                times.append(time.perf_counter() - t)
                scores.append(iou(mask, item.truth))
            print(f"| {name} | {statistics.mean(scores):.3f} | {statistics.median(scores):.3f}"
                  f" | {min(scores):.3f} | {statistics.median(times):.3f} |")
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
