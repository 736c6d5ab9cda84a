"""Box IoU of one method of bench/bench_quality.py at several smoothness weights ``lam``, per
image, and candidate rules that pick ``lam`` per image without the truth (the measurements of
docs/appearance.md, "Smoothness").

For each image of the chosen sets (development sets only), the method is run from the box
alone (the box of bench_quality.py) once per ``lam`` (set ``nuclei-dev``: the box around one
nucleus of bench/bench_quality_real.py's dev split); the per-image IoU and the mask's area
(pixels) are kept. Reported per set: the mean IoU of each fixed ``lam``, of the per-image best
``lam`` (an oracle: it reads the truth, so no rule can beat it), and of the *collapse guard*
rules: take the heavier ``hi`` unless its mask keeps less than ``f`` of the lighter ``lo``'s
area (then ``lo``). A guard needs two cuts per update.

    python bench/lam_sweep.py --method gmm-core --lams 20,35,50,100 --sets dev,photos-dev
    python bench/lam_sweep.py --method histogram --lams 5,10,20 --sets dev,photos-dev,nuclei-dev
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_quality import iou, load_set, parse_method, truth_box  # noqa: E402
from quality_real import real_set  # noqa: E402

GUARD_SHARES = (0.8, 0.9, 0.95)


def sweep(method_name, lams, set_name, count=None):
    """Per image of ``set_name``: ``{lam: (IoU, mask area in pixels, seconds)}``."""
    import graphcut

    options = parse_method(method_name)
    rows = []
    items = (load_set(set_name, count) if set_name != "nuclei-dev"
             else real_set("dev", "one", sources=("nuclei",)))
    for item in items[:count]:
        box = tuple(int(v) for v in truth_box(item.truth))
        row = {}
        for lam in lams:
            started = time.perf_counter()
            mask = np.asarray(graphcut.segment(item.image, None, box=box, device="cpu",
                                               **{**options, "lam": lam}), dtype=bool)
            row[lam] = (iou(mask, item.truth), int(mask.sum()), time.perf_counter() - started)
        rows.append(row)
        print(f"  {set_name} {item.name}: " + " ".join(
            f"lam {lam:g} {row[lam][0]:.3f}" for lam in lams), flush=True)
    return rows


def rules(lams):
    """(name, rule(row) -> IoU) for every fixed lam, the oracle and the guards."""
    found = [(f"fixed lam {lam:g}", lambda row, lam=lam: row[lam][0]) for lam in lams]
    found.append(("best lam per image (oracle, reads the truth)",
                  lambda row: max(value[0] for value in row.values())))
    for lo, hi in itertools.combinations(sorted(lams), 2):
        for share in GUARD_SHARES:
            def guard(row, lo=lo, hi=hi, share=share):
                return row[hi][0] if row[hi][1] >= share * row[lo][1] else row[lo][0]
            found.append((f"guard lo {lo:g} hi {hi:g} area >= {share:g}", guard))
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", default="gmm-core")
    parser.add_argument("--lams", default="20,35,50,100")
    parser.add_argument("--sets", default="dev,photos-dev")
    parser.add_argument("--count", type=int, default=None, help="first N items of each set")
    args = parser.parse_args(argv)
    lams = [float(value) for value in args.lams.split(",")]
    sets = args.sets.split(",")
    started = time.perf_counter()
    results = {name: sweep(args.method, lams, name, args.count) for name in sets}
    print(f"\n### {args.method}: box IoU by lam\n")
    print("| rule | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    for name, rule in rules(lams):
        means = [statistics.mean(rule(row) for row in results[s]) for s in sets]
        print(f"| {name} | " + " | ".join(f"{m:.3f}" for m in means) + " |")
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
