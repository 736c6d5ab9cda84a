"""Latency of the first mask after a box, per appearance model, through graphcut.Segmenter.

Issue 24's goal: the first mask after a box <= 100 ms at 4 MP on an H100, with the default
model. The image is a scaled colour composite of bench/quality_data.py (a horse-shaped
object), the box its object's bounding box grown by 5 % of the image's side on each side.

For each model and size, ``--repeats`` times (after one untimed warm-up that compiles the
kernels):

- open: ``Segmenter(image, model=...)`` and ``prepare()`` (the image on the device, n-link
  weights, the solver's seed-independent state), what the app does when an image is opened;
- first box: ``update(None, box=...)`` on that fresh session: for the learned and GMM models
  the per-image features are computed here, at the first update (the learned model keeps
  them for every later update);
- moved box: a second ``update`` on the same session with the box moved by 1 % of the side
  (features kept: what the user sees when adjusting the box).

Times are wall seconds of the call, synchronised (the mask comes back to the host), medians
over the repeats; IoU against the composite's truth.

    python bench/bench_box_latency.py --megapixels 4 --device cpu --repeats 1
    python bench/bench_box_latency.py --megapixels 4,12 --device cuda --repeats 5
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_quality import iou  # noqa: E402
from quality_data import scaled_item  # noqa: E402


def box_around(truth: np.ndarray, margin: float) -> tuple[int, int, int, int]:
    """``(r0, c0, r1, c1)``: the bounding box of ``truth`` grown by ``margin`` of the image's
    shorter side on each side, clipped to the image."""
    rows = np.flatnonzero(truth.any(axis=1))
    cols = np.flatnonzero(truth.any(axis=0))
    pad = int(round(margin * min(truth.shape)))
    h, w = truth.shape
    return (max(0, rows[0] - pad), max(0, cols[0] - pad),
            min(h, rows[-1] + 1 + pad), min(w, cols[-1] + 1 + pad))


def moved(box, step: int, shape) -> tuple[int, int, int, int]:
    """``box`` moved right and down by ``step`` pixels, kept inside ``shape``."""
    r0, c0, r1, c1 = box
    dr = min(step, shape[0] - r1)
    dc = min(step, shape[1] - c1)
    return r0 + dr, c0 + dc, r1 + dr, c1 + dc


def one_run(graphcut, image, box, second, model, device):
    started = time.perf_counter()
    session = graphcut.Segmenter(image, model=model, device=device)
    session.prepare()
    opened = time.perf_counter()
    mask = np.asarray(session.update(None, box=box), dtype=bool)
    first = time.perf_counter()
    again = np.asarray(session.update(None, box=second), dtype=bool)
    done = time.perf_counter()
    return opened - started, first - opened, done - first, mask, again, session.backend


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megapixels", default="4")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--models", default="histogram,learned,gmm")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    import graphcut
    print(f"{datetime.date.today()} bench_box_latency --device {args.device}; "
          "medians over the repeats after one warm-up; seconds of the call")
    print("| MP | backend | model | open s | first mask after the box ms | moved box ms | "
          "IoU first | IoU moved |")
    print("|---|---|---|---|---|---|---|---|")
    for mp in (float(v) for v in args.megapixels.split(",")):
        item = scaled_item(mp)
        box = box_around(item.truth, 0.05)
        second = moved(box, max(1, min(item.truth.shape) // 100), item.truth.shape)
        for model in args.models.split(","):
            one_run(graphcut, item.image, box, second, model, args.device)  # warm-up
            runs = [one_run(graphcut, item.image, box, second, model, args.device)
                    for _ in range(args.repeats)]
            opened, first, again = (statistics.median(r[i] for r in runs) for i in range(3))
            _, _, _, mask, moved_mask, backend = runs[-1]
            print(f"| {item.truth.size / 1e6:.1f} | {backend} | {model} | {opened:.3f} | "
                  f"{first * 1e3:.1f} | {again * 1e3:.1f} | {iou(mask, item.truth):.3f} | "
                  f"{iou(moved_mask, item.truth):.3f} |", flush=True)


if __name__ == "__main__":
    main()
