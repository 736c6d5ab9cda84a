"""Mask quality from few interactions: a robot user on composites with known masks.

Protocol (the usual one of interactive-segmentation papers, "NoC"): the robot adds one
interaction at a time and the image is segmented again from scratch with everything given so
far, until the mask's IoU with the truth reaches 0.90 or 20 interactions were made.

- ``strokes``: interaction 1 is an object stroke at the truth's interior-most point (largest
  distance to its outline), interaction 2 a background stroke at the background's
  interior-most point; every later one is a stroke at the interior-most point of the largest
  error region (4-connected parts of the false negatives and of the false positives).
- ``box``: interaction 1 is a box around the truth (its bounding box grown by 5 % of its
  larger side, at least 3 pixels, each way), counted as one; then strokes as above.

A stroke is a disk of radius 5 pixels labelled with the truth at its centre (object or
background), keeping only the disk's pixels whose truth agrees (a careful user). NoC@85 /
NoC@90 is the number of interactions after which IoU >= 0.85 / 0.90 first holds (20 when it
never does: such images are counted as failures).

Methods, all given the same boxes and strokes: this project's ``graphcut.segment`` with the
histogram or GMM colour model, with and without GrabCut iterations and clean-up, and OpenCV's
``cv2.grabCut`` (5 iterations from the box / strokes each time, unknown pixels "probably
background" without a box). Images: ``quality_data.make_set`` (generated; "dev" for choosing
options, "test" for reporting, "extra" to confirm on a second set).

    python bench/bench_quality.py                       # test set, every method, CPU
    python bench/bench_quality.py --set dev --methods gmm-iter,cv2 --jobs 2
    python bench/bench_quality.py --speed --megapixels 4 --device cuda

``--speed``: box + 5 iterations on one composite of about ``--megapixels`` (end to end, host
image in, host mask out; after a warm-up; median of ``--repeats``) for ``graphcut.segment``
on ``--device`` against ``cv2.grabCut`` (rect, 5 iterations) on this machine's CPU, in the
same run.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass

if "--jobs" in sys.argv:  # one image per process: keep BLAS to one thread each (set before
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # NumPy loads it)
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy import ndimage  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import quality_baselines  # noqa: E402
from quality_baselines import (run_cv2, run_cv2_box, run_cv2_clean, run_otsu,  # noqa: E402
                               run_rf)
from quality_data import make_set, scaled_item  # noqa: E402

MAX_INTERACTIONS = 20
STROKE_RADIUS = 5
TARGETS = (0.85, 0.90)
FILL_HOLES = quality_baselines.FILL_HOLES  # pixels, for the clean-up variants

METHODS = {
    "histogram": dict(model="histogram", iterations=0),
    "histogram-iter": dict(model="histogram", iterations=5),
    "gmm": dict(model="gmm", iterations=0),
    "gmm-iter": dict(model="gmm", iterations=5),
    "gmm-iter-clean": dict(model="gmm", iterations=5, keep="connected", fill_holes=FILL_HOLES),
    # GMM(components=8, core=0.4): the object's first sample is the box's core, not all of it
    "gmm-core": dict(model={"model": "gmm", "components": 8, "core": 0.4}, iterations=5),
    "gmm-core-clean": dict(model={"model": "gmm", "components": 8, "core": 0.4}, iterations=5,
                           keep="connected", fill_holes=FILL_HOLES),
    "learned": dict(model="learned"),
    # GMM(core=0.4, warm=True): GrabCut's iterations for the box alone, one refit + cut a stroke
    "gmm-warm": dict(model={"model": "gmm", "core": 0.4, "warm": True}),
    "auto": dict(model="auto"),  # the default: gmm-warm on colour images, learned on grey
    "learned-clean": dict(model="learned", keep="connected", fill_holes=FILL_HOLES),
    "cv2": None,
    "cv2-clean": None,
    "cv2-box": None,
    "rf": None,
    "otsu": None,
}
# the baselines: OpenCV's GrabCut (fair strokes protocol, see run_cv2), with the same clean-up
# as ours ("-clean"), or from the box alone ("cv2-box": the strokes are not given to it); an
# ilastik-style random forest on our own features (graphcut.segmentation.features) trained on
# the same seeds (and a box's inside / outside), no graph cut; a global Otsu threshold
# (brighter = object; inside the box when there is one).
BASELINES = ("cv2", "cv2-clean", "cv2-box", "rf", "otsu")
PROTOCOLS = ("strokes", "box")
_LIMIT = {"interactions": MAX_INTERACTIONS}  # --max-interactions (1: the box's IoU only)
BOX_MARGIN = [0.05]  # --box-margin: the robot's box, grown by this share of the larger side


def iou(mask, truth) -> float:
    union = (mask | truth).sum()
    return float((mask & truth).sum() / union) if union else 1.0


def truth_box(truth):
    """The robot's box: the truth's bounding box grown by :data:`BOX_MARGIN` of its larger
    side (at least 3 pixels) each way, clipped to the image."""
    rows, cols = np.nonzero(truth)
    h, w = truth.shape
    margin = max(3, int(round(BOX_MARGIN[0] * max(np.ptp(rows) + 1, np.ptp(cols) + 1))))
    return (max(0, rows.min() - margin), max(0, cols.min() - margin),
            min(h, rows.max() + 1 + margin), min(w, cols.max() + 1 + margin))


def apply_patch(change):
    """``MODULE.NAME=VALUE``: set a module constant (VALUE a Python literal) for this run
    (processes forked later inherit it)."""
    import importlib
    target, _, value = change.partition("=")
    module_name, _, name = target.rpartition(".")
    module = importlib.import_module(module_name)
    if not hasattr(module, name):
        raise SystemExit(f"--patch: {module_name} has no {name}")
    setattr(module, name, eval(value, {}))  # noqa: S307 - numbers, None, True / False


def interior_point(region):
    """(row, col) of the pixel of bool ``region`` farthest from its outline (image border
    counts as outline)."""
    distance = ndimage.distance_transform_edt(np.pad(region, 1))[1:-1, 1:-1]
    return np.unravel_index(int(np.argmax(distance)), region.shape)


def add_stroke(seeds, truth, point, label_value):
    h, w = truth.shape
    yy, xx = np.ogrid[:h, :w]
    disk = (yy - point[0]) ** 2 + (xx - point[1]) ** 2 <= STROKE_RADIUS ** 2
    agree = truth if label_value == 1 else ~truth
    seeds[disk & agree] = label_value


def next_click(mask, truth):
    """(point, label) at the interior-most point of the largest error region."""
    best = None
    for errors, label_value in ((truth & ~mask, 1), (~truth & mask, 2)):
        parts, count = ndimage.label(errors)
        if count == 0:
            continue
        sizes = np.bincount(parts.ravel())
        sizes[0] = 0
        largest = int(np.argmax(sizes))
        if best is None or sizes[largest] > best[0]:
            best = (sizes[largest], parts == largest, label_value)
    return interior_point(best[1]), best[2]


def load_set(name, count=None):
    """The items of set ``name``: generated composites (:func:`quality_data.make_set`) or,
    for ``photos-dev`` / ``photos-test``, real photographs with masks drawn by people
    (:func:`quality_photos.photo_set`); a name ending in ``-grey`` (``photos-dev-grey``,
    ``cutouts-dev-grey``, ...): the same items with every colour image given as its grey
    BT.601 luma (:func:`quality_photos.grey_item`)."""
    if name.endswith("-grey"):
        from quality_photos import grey_item
        return [grey_item(item) for item in load_set(name[:-len("-grey")], count)]
    if name.startswith("photos-"):
        from quality_photos import photo_set
        return photo_set(name.partition("-")[2], count)
    if name.startswith("cutouts-"):
        from quality_cutouts import cutout_set
        return cutout_set(name.partition("-")[2], count)
    return make_set(name, count)


# ---- methods --------------------------------------------------------------------------

def run_graphcut(options, device):
    import graphcut

    def run(image, seeds, box):
        return graphcut.segment(image, seeds if (seeds != 0).any() else None, box=box,
                                device=device, **options)
    return run


def parse_method(name):
    """A method of :data:`METHODS`, or ``base:key=value,...`` (e.g.
    ``gmm-iter:seed_share=0.3,lam=30`` or ``gmm-iter:model={'model':'gmm','core':0.3}``): a
    listed method with options changed."""
    base, _, changes = name.partition(":")
    if base not in METHODS:
        raise SystemExit(f"unknown method {base!r}; choose from {', '.join(METHODS)}")
    options = None if METHODS[base] is None else dict(METHODS[base])
    for change in filter(None, re.split(r",(?![^(){}]*[)}])", changes)):
        key, _, value = change.partition("=")
        try:
            value = eval(value, {})  # numbers, None, quoted strings  # noqa: S307
        except Exception:  # noqa: BLE001 - a bare word is a string
            pass
        options[key] = value
    return options


def method(name, device):
    options = parse_method(name)
    if options is None:
        return {"cv2": run_cv2, "cv2-clean": run_cv2_clean, "cv2-box": run_cv2_box,
                "rf": run_rf, "otsu": run_otsu}[name.partition(":")[0]]
    return run_graphcut(options, device)


# ---- robot ----------------------------------------------------------------------------

@dataclass
class Run:
    item: str
    method: str
    protocol: str
    ious: list          # IoU after interaction 1, 2, ...
    seconds: list       # seconds of each segmentation

    def noc(self, target):
        for n, value in enumerate(self.ious, start=1):
            if value >= target:
                return n
        return MAX_INTERACTIONS

    def reached(self, target):
        return any(value >= target for value in self.ious)

    @property
    def first_iou(self):
        """IoU after the box alone (box) or after the first two strokes (strokes)."""
        return self.ious[0] if self.protocol == "box" else self.ious[1]


def robot(segmenter, item, protocol) -> tuple[list, list]:
    truth = item.truth
    seeds = np.zeros(truth.shape, np.uint8)
    ious, seconds = [], []
    box = None

    def evaluate():
        started = time.perf_counter()
        mask = np.asarray(segmenter(item.image, seeds, box), dtype=bool)
        seconds.append(time.perf_counter() - started)
        ious.append(iou(mask, truth))
        return mask

    if protocol == "box":
        box = tuple(int(v) for v in truth_box(truth))
        mask = evaluate()
    else:
        add_stroke(seeds, truth, interior_point(truth), 1)
        ious.append(0.0)  # one object stroke alone: nothing to segment against
        seconds.append(0.0)
        add_stroke(seeds, truth, interior_point(~truth), 2)
        mask = evaluate()
    while ious[-1] < max(TARGETS) and len(ious) < _LIMIT["interactions"]:
        point, label_value = next_click(mask, truth)
        add_stroke(seeds, truth, point, label_value)
        mask = evaluate()
    return ious, seconds


def _task(args):
    index, set_name, count, methods, protocols, device = args
    if "cv2" in sys.modules:
        sys.modules["cv2"].setNumThreads(1)  # one image per process: no oversubscription
    item = load_set(set_name, index + 1)[index]
    runs = []
    for name in methods:
        segmenter = method(name, device)
        for protocol in protocols:
            ious, seconds = robot(segmenter, item, protocol)
            runs.append(Run(item.name, name, protocol, ious, seconds))
    return runs


def table(runs, methods, protocols) -> str:
    lines = ["| protocol | method | NoC@85 | NoC@90 | IoU first | images < 0.90 after 20 | "
             "s per segmentation |", "|---|---|---|---|---|---|---|"]
    for protocol in protocols:
        for name in methods:
            chosen = [r for r in runs if r.method == name and r.protocol == protocol]
            if not chosen:
                continue
            noc85 = statistics.mean(r.noc(0.85) for r in chosen)
            noc90 = statistics.mean(r.noc(0.90) for r in chosen)
            first = statistics.mean(r.first_iou for r in chosen)
            failed = sum(not r.reached(0.90) for r in chosen)
            times = [s for r in chosen for s in r.seconds if s > 0]
            lines.append(f"| {protocol} | {name} | {noc85:.2f} | {noc90:.2f} | {first:.3f} | "
                         f"{failed} / {len(chosen)} | {statistics.median(times):.3f} |")
    return "\n".join(lines)


def per_image(runs, methods, protocols) -> str:
    names = sorted({r.item for r in runs})
    header = ["| image |"] + [f" {m} {p} |" for p in protocols for m in methods]
    lines = ["".join(header), "|---|" + "---|" * (len(methods) * len(protocols))]
    for item in names:
        cells = []
        for protocol in protocols:
            for name in methods:
                run = next((r for r in runs if r.item == item and r.method == name
                            and r.protocol == protocol), None)
                cells.append("" if run is None else
                             f"{run.noc(0.90)}{'' if run.reached(0.90) else '!'} "
                             f"({run.first_iou:.2f})")
        lines.append(f"| {item} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def quality(args):
    methods = [m for m in (args.methods.split(";") if ";" in args.methods else
                           args.methods.split(",")) if m]  # "name:a=1,b=2;" is one method
    for name in methods:
        parse_method(name)
    protocols = args.protocols.split(",")
    count = len(load_set(args.set, args.count))
    tasks = [(i, args.set, args.count, methods, protocols, args.device)
             for i in range(0, count, args.every)]
    count = len(tasks)
    started = time.perf_counter()
    runs = []
    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            for done, result in enumerate(pool.imap_unordered(_task, tasks), start=1):
                runs.extend(result)
                print(f"  {done}/{count} images", file=sys.stderr)
    else:
        for done, task in enumerate(tasks, start=1):
            runs.extend(_task(task))
            print(f"  {done}/{count} images", file=sys.stderr)
    import graphcut.solver
    print(f"## Quality: set {args.set!r} ({count} composites), device {args.device} "
          f"({graphcut.solver.resolve_device(args.device)}), {time.perf_counter() - started:.0f} s\n")
    print(table(runs, methods, protocols))
    if args.save:
        import json
        with open(args.save, "w") as out:
            json.dump([r.__dict__ for r in runs], out)
    if args.per_image:
        print("\nNoC@90 per image (! = never reached 0.90; in brackets the IoU after the box "
              "or the first two strokes):\n")
        print(per_image(runs, methods, protocols))


def speed(args):
    import cv2

    import graphcut
    from graphcut.solver import resolve_device

    item = scaled_item(args.megapixels)
    h, w = item.truth.shape
    box = tuple(int(v) for v in truth_box(item.truth))
    options = dict(box=box, model="gmm", iterations=5, tol=0.0)

    def ours():
        return graphcut.segment(item.image, device=args.device, return_result=True, **options)

    ours()  # warm-up: kernels compiled, memory pools filled
    times, result = [], None
    for _ in range(args.repeats):
        started = time.perf_counter()
        mask, result = ours()
        times.append(time.perf_counter() - started)
    ours_s = statistics.median(times)
    cv2_times = []
    for _ in range(args.cv2_repeats):
        started = time.perf_counter()
        cv2_mask = run_cv2(item.image, np.zeros((h, w), np.uint8), box, iterations=5)
        cv2_times.append(time.perf_counter() - started)
    cv2_s = statistics.median(cv2_times)
    backend = resolve_device(args.device)
    print(f"## Speed: box + 5 iterations, {w}x{h} ({h * w / 1e6:.1f} MP) colour composite\n")
    print("| method | device | seconds (median) | runs | iterations | IoU |")
    print("|---|---|---|---|---|---|")
    print(f"| graphcut.segment(model='gmm', box, iterations=5, tol=0) | {backend} "
          f"({result.stats.get('device_name', '')}) | {ours_s:.3f} | {len(times)} | "
          f"{result.stats['iterations']} | {iou(mask, item.truth):.3f} |")
    print(f"| cv2.grabCut(rect, 5 iterations) | CPU, {cv2.getNumThreads()} OpenCV threads | "
          f"{cv2_s:.3f} | {len(cv2_times)} | 5 | {iou(cv2_mask, item.truth):.3f} |")
    stages = result.stats["seconds"]["stages"]
    print(f"\nSpeed-up: **{cv2_s / ours_s:.1f}x**. graphcut stages (last run, s): "
          + ", ".join(f"{k} {v:.3f}" for k, v in stages.items())
          + f"; min-cut backend time {result.stats['seconds']['total']:.3f} s")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="test",
                        choices=("dev", "test", "extra", "dev-soft", "photos-dev", "photos-test",
                                 "cutouts-dev", "cutouts-test", "photos-dev-grey",
                                 "photos-test-grey", "cutouts-dev-grey", "cutouts-test-grey"),
                        help="dev: for choosing options; test: for reporting; extra: a "
                             "second report set, to confirm a gain is not fitted to dev; "
                             "dev-soft: dev-only composites with wider soft edges; "
                             "photos-dev / photos-test: real photographs "
                             "(bench/quality_photos.py); cutouts-dev / cutouts-test: their "
                             "objects pasted onto other photographs (bench/quality_cutouts.py); "
                             "NAME-grey: those sets with every image in grey (BT.601 luma; "
                             "the test splits' grey versions are for the final report)")
    parser.add_argument("--count", type=int, default=None, help="first N items of the set")
    parser.add_argument("--every", type=int, default=1,
                        help="only every N-th item (0, N, 2N, ...: a quicker look that still "
                             "spans the set)")
    parser.add_argument("--methods", default=",".join(m for m in METHODS if m != "otsu"),
                        help="comma-separated names of METHODS; or ';'-separated, each "
                             "possibly 'name:key=value,...' with changed options")
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    parser.add_argument("--device", default="cpu", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--jobs", type=int, default=1, help="images in parallel (processes)")
    parser.add_argument("--per-image", action="store_true", help="also the per-image table")
    parser.add_argument("--save", default=None, metavar="FILE.json",
                        help="also write every run (item, method, protocol, the IoU and "
                             "seconds after each interaction) to this JSON file")
    parser.add_argument("--speed", action="store_true", help="the speed run instead")
    parser.add_argument("--megapixels", type=float, default=4.0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cv2-repeats", type=int, default=1)
    parser.add_argument("--max-interactions", type=int, default=MAX_INTERACTIONS,
                        help="stop the robot after this many segmentations (1 with "
                             "--protocols box: the IoU from the box alone; NoC then "
                             "counts unreached targets as this many)")
    parser.add_argument("--patch", action="append", default=[], metavar="MODULE.NAME=VALUE",
                        help="set a module constant before the run (e.g. "
                             "graphcut.segmentation._tightness.ENABLED=False); repeatable")
    parser.add_argument("--box-margin", type=float, default=BOX_MARGIN[0],
                        help="the robot's box margin, a fraction of the truth's larger side "
                             "(default 0.05; 0.15 or 0.20: a loose box)")
    args = parser.parse_args(argv)
    _LIMIT["interactions"] = args.max_interactions
    BOX_MARGIN[0] = args.box_margin
    for change in args.patch:
        apply_patch(change)
    if args.speed:
        speed(args)
    else:
        quality(args)


if __name__ == "__main__":
    main()
