"""Mask quality on real images annotated by people (bench/quality_real.py), every method and
baseline of bench/bench_quality.py in the same run, fed the same clicks and boxes.

Sources (``--sources``): ``nuclei`` (stardist's DSB 2018 image, four quadrants) and ``dsb``
(BBBC038v1 stage-1 test images in six acquisition groups; bench/real_data.py puts them into
its cache). Besides the tables over all items, one table per protocol gives each group's
mean (IoU after 5 and 10 clicks; the box's IoU, and that of the smaller half of the nuclei).

Protocols (the robot user of bench_quality.py: a click is a disk of radius 5 labelled with the
truth at its centre, keeping only the disk's pixels whose truth agrees):

- ``clicks`` (items "all": every nucleus of a quadrant is the object; our methods run
  interactively, one ``Segmenter`` per trajectory given the previous click's mask, or with
  ``--fresh`` a ``segment`` per click): click 1 on the object at the truth's interior-most point, click 2 on the
  background's, then each click at the interior-most point of the largest error region;
  always :data:`CLICKS` clicks (no stopping at a target). Reported: the mean IoU after 2, 3, 5, 10 and 20 clicks, the clicks to reach
  0.85 (``CLICKS`` when never), and the largest fall below an earlier value
  (``max_k max_{j<k} IoU_j - IoU_k``, over clicks 2..20; goal <= 0.05). ``--starts K``
  adds K more trajectories per image whose first two clicks are drawn (seeded by the image's
  name) at least 4 pixels inside the object and the background: other users on the same
  images, for the falls (one image's single trajectory shows few of them).
- ``box`` (items "one": a single nucleus): the box of bench_quality.py around it (5 % of its
  larger side, at least 3 pixels, each way; ``--box-pixels N``: exactly N pixels each way,
  another user's margin); the IoU from the box alone. ``--box-sigma F``: our methods' contrast
  term takes its sigma from the box (F times :func:`graphcut.segmentation.estimate_sigma` of
  the box's pixels) given as the user's ``sigma``; without it, the library's default (the
  learned model's box takes 0.5 times its own since the fifteenth session,
  graphcut/segmentation/_box_contrast.py; the other models the whole image's).

    python bench/bench_quality_real.py --set dev
    python bench/bench_quality_real.py --set dev --sources dsb --protocols box
    python bench/bench_quality_real.py --set dev --protocols box --methods learned --box-sigma 0.5
    python bench/bench_quality_real.py --set dev --protocols clicks --methods learned --starts 2 --falls
    python bench/bench_quality_real.py --set test --methods histogram,gmm-iter,learned,cv2,rf,otsu

Needs ``pip install --no-deps stardist`` (data), ``python bench/real_data.py`` (data),
scikit-learn and opencv-python-headless.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import zlib

import numpy as np
from scipy import ndimage

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_quality import (add_stroke, apply_patch, interior_point, iou,  # noqa: E402
                           method, next_click, parse_method, truth_box)
from quality_real import SOURCES  # noqa: E402
from quality_real import real_set as _real_set  # noqa: E402
from real_data import MissingData  # noqa: E402

CLICKS = 20
REPORTED = (2, 3, 5, 10, 20)
#: a fall of the IoU below an earlier value larger than this is listed by --falls (the goal)
FALL = 0.05
#: drawn first clicks (``--starts``) lie at least this many pixels inside their region
START_DEPTH = 4
DEFAULT_METHODS = "histogram,gmm-iter,learned,learned-clean,cv2,cv2-clean,rf,otsu"


def first_clicks(truth, start=0, name=""):
    """The first object and background clicks: the interior-most points of the truth and of
    its complement (``start`` 0, the protocol above), or for ``start`` k >= 1 a point drawn
    among the pixels at least :data:`START_DEPTH` from the outline of each, seeded by the
    item's ``name`` and k (another user's trajectory on the same image)."""
    if not start:
        return interior_point(truth), interior_point(~truth)
    rng = np.random.default_rng([zlib.crc32(name.encode()), int(start)])
    points = []
    for region in (truth, ~truth):
        depth = ndimage.distance_transform_edt(np.pad(region, 1))[1:-1, 1:-1]
        inside = np.argwhere(depth >= min(START_DEPTH, depth.max()))
        points.append(tuple(int(v) for v in inside[rng.integers(len(inside))]))
    return tuple(points)


class Sessions:
    """A graphcut method run interactively: one :class:`graphcut.Segmenter` per trajectory,
    updated click after click and given the previous click's seeds and mask as ``previous``,
    so that a model's hold (``Learned(hold=...)``) acts. For a model without a hold the masks
    equal a fresh ``graphcut.segment`` per click (the Segmenter's invariant)."""

    def __init__(self, options, device):
        self.options, self.device = options, device

    def start(self, image):
        """The segmenter ``(image, seeds, box) -> mask`` of one trajectory on ``image``."""
        import graphcut
        session = graphcut.Segmenter(image, device=self.device, **self.options)
        kept = {}

        def update(image, seeds, box):
            mask = session.update(seeds, box=box, previous=kept.get("previous"))
            kept["previous"] = (seeds.copy(), np.asarray(mask, dtype=bool))
            return mask
        return update


def click_robot(segmenter, item, clicks=None, start=0):
    """IoU after clicks 1..CLICKS (click 1 alone scores 0: one label, nothing to cut);
    ``clicks``: a list that receives each click's (label value, (row, col)); ``start``: the
    first clicks' draw (:func:`first_clicks`). ``segmenter``: ``(image, seeds, box) -> mask``,
    or :class:`Sessions` (a new session for this trajectory)."""
    if isinstance(segmenter, Sessions):
        segmenter = segmenter.start(item.image)
    truth = item.truth
    seeds = np.zeros(truth.shape, np.uint8)
    clicks = [] if clicks is None else clicks
    for point, label_value in zip(first_clicks(truth, start, item.name), (1, 2)):
        add_stroke(seeds, truth, point, label_value)
        clicks.append((label_value, tuple(int(v) for v in point)))
    ious = [0.0]
    while True:
        mask = np.asarray(segmenter(item.image, seeds, None), dtype=bool)
        ious.append(iou(mask, truth))
        if len(ious) == CLICKS:
            return ious
        point, label_value = next_click(mask, truth)
        add_stroke(seeds, truth, point, label_value)
        clicks.append((label_value, tuple(int(v) for v in point)))


def falls(ious, clicks, threshold=FALL):
    """The clicks after which the IoU lies more than ``threshold`` below an earlier value:
    lines "click k (object|background at (row, col)): best -> now"."""
    lines, best = [], ious[1]
    for k in range(2, len(ious)):
        if best - ious[k] > threshold:
            label_value, point = clicks[k]
            lines.append(f"click {k + 1} ({'object' if label_value == 1 else 'background'} "
                         f"at {point}): {best:.3f} -> {ious[k]:.3f}")
        best = max(best, ious[k])
    return lines


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


def item_box(truth, pixels=None):
    """The box protocol's box around ``truth``: the robot's (:func:`bench_quality.truth_box`),
    or with ``pixels`` the truth's bounding box grown by that many pixels each way, clipped to
    the image."""
    if pixels is None:
        return tuple(int(v) for v in truth_box(truth))
    rows, cols = np.nonzero(truth)
    h, w = truth.shape
    return (max(0, int(rows.min()) - pixels), max(0, int(cols.min()) - pixels),
            min(h, int(rows.max()) + 1 + pixels), min(w, int(cols.max()) + 1 + pixels))


def box_method(name, device, sigma_factor=None):
    """The box protocol's ``(image, seeds, box) -> mask`` for method ``name``; with
    ``sigma_factor`` our methods' sigma is that factor times the box's own
    (:func:`graphcut.segmentation.estimate_sigma` of ``image[box]``)."""
    options = parse_method(name)
    if sigma_factor is None or options is None:
        return method(name, device)
    import graphcut
    from graphcut.segmentation import estimate_sigma

    def run(image, seeds, box):
        r0, c0, r1, c1 = box
        sigma = sigma_factor * estimate_sigma(image[r0:r1, c0:c1])
        return graphcut.segment(image, seeds if (seeds != 0).any() else None, box=box,
                                device=device, **{**options, "sigma": sigma})
    return run


def real_set(which, kind, sources):
    """quality_real.real_set, stopping with the loader's message when data is missing."""
    try:
        return _real_set(which, kind, sources)
    except MissingData as error:
        raise SystemExit(f"error: {error}") from None


def group_of(name: str) -> str:
    """The source group of an item's name: "nuclei" or a dsb acquisition group."""
    if not name.startswith("dsb-"):
        return "nuclei"
    parts = name.split("-")
    return "-".join(parts[1:3])


def groups_table(rows: dict, label: str) -> str:
    """A Markdown table: one row per method, one column per group, cells "a / b"."""
    groups = sorted({group for cells in rows.values() for group in cells})
    lines = [f"| method ({label}) | " + " | ".join(groups) + " |",
             "|---" * (len(groups) + 1) + "|"]
    for name, cells in rows.items():
        lines.append(f"| {name} | " + " | ".join(cells.get(group, "") for group in groups)
                     + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=("dev", "test"), default="dev")
    parser.add_argument("--methods", default=DEFAULT_METHODS,
                        help="';'- or ','-separated methods of bench_quality.py (with "
                             "'name:key=value,...' changes when ';'-separated)")
    parser.add_argument("--protocols", default="clicks,box")
    parser.add_argument("--sources", default=",".join(SOURCES),
                        help="comma-separated sources of quality_real.py (default: all)")
    parser.add_argument("--device", default="cpu", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--per-image", action="store_true",
                        help="print every image's IoU after each click (stderr)")
    parser.add_argument("--falls", action="store_true",
                        help=f"print every fall of the IoU by more than {FALL} below an "
                             "earlier value, with the click that caused it (stderr)")
    parser.add_argument("--starts", type=int, default=0,
                        help="besides the protocol's trajectory, this many more per image "
                             "whose first two clicks are drawn (seeded) inside the object and "
                             "the background (clicks protocol)")
    parser.add_argument("--fresh", action="store_true",
                        help="clicks: a fresh graphcut.segment per click (no previous mask: "
                             "no hold) instead of one Segmenter per trajectory given it")
    parser.add_argument("--box-pixels", type=int, default=None,
                        help="box: the truth's box grown by exactly this many pixels each way "
                             "(default: the robot's box, 5 %% of the larger side, at least 3)")
    parser.add_argument("--box-sigma", type=float, default=None,
                        help="box: our methods' sigma is this factor times the box's own "
                             "(default: graphcut.segment's: 0.5 x the box's for the learned "
                             "model, the whole image's for the others)")
    parser.add_argument("--patch", action="append", default=[], metavar="MODULE.NAME=VALUE",
                        help="set a module constant for this run (repeatable)")
    args = parser.parse_args(argv)
    for change in args.patch:
        apply_patch(change)
    names = [name for name in (args.methods.split(";") if ";" in args.methods else
                               args.methods.split(",")) if name]  # "name:a=1,b=2;": one method
    for name in names:
        parse_method(name)
    sources = tuple(args.sources.split(","))
    started = time.perf_counter()
    print(f"## Real images, set {args.set!r}, sources {', '.join(sources)}, "
          f"device {args.device}\n")
    if "clicks" in args.protocols:
        items = real_set(args.set, "all", sources)
        results = {}
        for name in names:
            options = parse_method(name)
            segmenter = method(name, args.device) if options is None or args.fresh else \
                Sessions(options, args.device)
            runs = []
            for start in range(args.starts + 1):
                for item in items:
                    t = time.perf_counter()
                    clicks = []
                    ious = click_robot(segmenter, item, clicks, start)
                    runs.append((ious, (time.perf_counter() - t) / (CLICKS - 1)))
                    tag = f"{item.name}" + (f" start {start} {clicks[0][1]} {clicks[1][1]}"
                                            if start else "")
                    if args.per_image:
                        print(f"  {name} {tag}: " + " ".join(f"{v:.2f}" for v in ious),
                              file=sys.stderr)
                    if args.falls:
                        for line in falls(ious, clicks):
                            print(f"  fall {name} {tag} {line}", file=sys.stderr)
            results[name] = runs
        print(f"### All nuclei of an image as the object, from clicks ({len(items)} "
              f"images: {', '.join(i.name for i in items)}"
              + (f"; {args.starts + 1} trajectories each" if args.starts else "") + ")\n")
        print(clicks_table(results) + "\n")
        if args.starts:
            print("Trajectories whose IoU falls more than 0.05 / 0.2 below an earlier value: "
                  + "; ".join(f"{name} {sum(largest_fall(r[0]) > FALL for r in runs)} / "
                              f"{sum(largest_fall(r[0]) > 0.2 for r in runs)} of {len(runs)}"
                              for name, runs in results.items()) + "\n")
        per_group = {}
        for name, runs in results.items():
            by_group = {}
            for item, run in zip(items * (args.starts + 1), runs):
                by_group.setdefault(group_of(item.name), []).append(run[0])
            per_group[name] = {group: f"{statistics.mean(r[4] for r in ious):.3f} / "
                                      f"{statistics.mean(r[9] for r in ious):.3f}"
                               for group, ious in by_group.items()}
        print("Per group, mean IoU@5 / IoU@10:\n")
        print(groups_table(per_group, "IoU@5 / IoU@10") + "\n")
    if "box" in args.protocols:
        items = real_set(args.set, "one", sources)
        areas = [int(i.truth.sum()) for i in items]
        small = [a < statistics.median(areas) for a in areas]
        print(f"### A box around one nucleus ({len(items)} nuclei of "
              f"{min(areas)}-{max(areas)} pixels; \"small\": the {sum(small)} of fewer than "
              f"{statistics.median(areas):g} pixels"
              + ("" if args.box_pixels is None else f"; boxes {args.box_pixels} px out")
              + ("" if args.box_sigma is None else f"; sigma {args.box_sigma:g} x the box's")
              + ")\n")
        print("| method | mean IoU | median IoU | worst IoU | mean IoU, small | "
              "s per segmentation |")
        print("|---|---|---|---|---|---|")
        per_group = {}
        for name in names:
            segmenter = box_method(name, args.device, args.box_sigma)
            scores, times = [], []
            for item in items:
                box = item_box(item.truth, args.box_pixels)
                t = time.perf_counter()
                mask = np.asarray(segmenter(item.image, np.zeros(item.truth.shape, np.uint8),
                                            box), dtype=bool)
                times.append(time.perf_counter() - t)
                scores.append(iou(mask, item.truth))
            small_scores = [v for v, is_small in zip(scores, small) if is_small]
            print(f"| {name} | {statistics.mean(scores):.3f} | {statistics.median(scores):.3f}"
                  f" | {min(scores):.3f} | {statistics.mean(small_scores):.3f}"
                  f" | {statistics.median(times):.3f} |")
            by_group = {}
            for item, value, is_small in zip(items, scores, small):
                by_group.setdefault(group_of(item.name), []).append((value, is_small))
            per_group[name] = {
                group: f"{statistics.mean(v for v, _ in pairs):.3f} / " + (
                    f"{statistics.mean(v for v, s in pairs if s):.3f}"
                    if any(s for _, s in pairs) else "-")
                for group, pairs in by_group.items()}
        print("\nPer group, mean box IoU / mean over its small nuclei:\n")
        print(groups_table(per_group, "all / small"))
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
