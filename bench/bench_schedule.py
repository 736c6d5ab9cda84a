"""Push-relabel schedules of the GPU grid solver for interactive re-solves (Segmenter.update).

For each scripted stroke sequence on astronaut upscaled (bench/stroke_scripts.py: confirming
strokes, which land where the mask already has their label, and correcting strokes, a robot
user fixing the mask's largest error; each kind gets its own table), every
Schedule in a small grid of (cycles, launches_per_relabel, bfs_passes_per_check) re-solves the
same sequence: one Segmenter per schedule, the first update from scratch, then one incremental
update per stroke. Prints the median and max of Segmenter.update (energy + solve, synchronised)
per schedule, the from-scratch first update, and the solver's median counters per update
(global relabels, BFS tile passes, and the GPU time of the relabels and of the push-relabel
launches from CUDA events). Every schedule gives the same masks (checked against the first
schedule's); only the time differs. ``--schedules`` names the schedules to compare (default: a
grid of 24), e.g. ``4,16,2 8,16,2`` (cycles, launches per relabel, BFS passes per check; a
fourth number: the first batch's launches, doubling up to the second, 0 for a flat schedule);
``--repeats`` runs the
whole list that many times, interleaved, and reports the median over the runs of each
schedule's median, so that drifts of the machine hit every schedule alike.

    python bench/bench_schedule.py [--size 2048x2048] [--strokes 10] [--schedules ...]
        [--repeats 1] [--stroke-kinds confirming,correcting]
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import statistics
import time

import numpy as np
from bench_interactive import paint, parse_size, scaled_inputs
from stroke_scripts import STROKE_KINDS, script_for

import graphcut
from graphcut.gui.strokes import SeedCanvas


def run(schedule_fields, image, seeds, strokes):
    import cupy

    import graphcut.solver.cuda.incremental as incremental
    original = dict(incremental.INTERACTIVE_SCHEDULE)
    incremental.INTERACTIVE_SCHEDULE.clear()
    incremental.INTERACTIVE_SCHEDULE.update(schedule_fields)
    try:
        session = graphcut.Segmenter(image, device="cuda")
        session.prepare()
        canvas = SeedCanvas(seeds.shape)
        canvas.begin_edit()
        canvas.replace(seeds)
        canvas.end_edit()
        cupy.cuda.Device().synchronize()
        started = time.perf_counter()
        masks = [session.update(canvas.labels)]
        first = time.perf_counter() - started
        times, counters = [], []
        for stroke in strokes:
            region = paint(canvas, stroke)
            cupy.cuda.Device().synchronize()
            started = time.perf_counter()
            masks.append(session.update(canvas.labels, region=region))
            times.append(time.perf_counter() - started)
            counters.append(session.last_result.stats)
        return first, times, masks, counters
    finally:
        incremental.INTERACTIVE_SCHEDULE.clear()
        incremental.INTERACTIVE_SCHEDULE.update(original)


def parse_schedule(text: str) -> dict:
    """'4,16,2' -> Schedule fields; a fourth number is ``first_launches`` ('4,16,2,1': batches
    of 1, 2, 4, 8, 16 launches); without it, or 0, every batch is the second number's (as in
    ``INTERACTIVE_SCHEDULE``)."""
    values = [int(v) for v in text.split(",")]
    fields = dict(zip(("cycles", "launches_per_relabel", "bfs_passes_per_check"), values))
    fields["first_launches"] = (values[3] if len(values) > 3 else 0) or None
    return fields


def label(fields: dict) -> str:
    return (f"{fields['cycles']} | {fields['launches_per_relabel']} | "
            f"{fields['bfs_passes_per_check']} | {fields.get('first_launches') or '-'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="2048x2048")
    parser.add_argument("--strokes", type=int, default=10)
    parser.add_argument("--schedules", nargs="*",
                        help="cycles,launches,passes each (default: a grid of 24)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--stroke-kinds", default=",".join(STROKE_KINDS),
                        help="comma-separated, of: confirming, correcting (default: both)")
    args = parser.parse_args()
    kinds = [k for k in args.stroke_kinds.split(",") if k]
    if not kinds or set(kinds) - set(STROKE_KINDS):
        parser.error(f"--stroke-kinds takes {', '.join(STROKE_KINDS)}")
    shape = parse_size(args.size)
    image, bundled = scaled_inputs(shape)
    for kind in kinds:
        seeds, strokes = script_for(kind, image, bundled, args.strokes, "cuda")
        compare(args, kind, shape, image, seeds, strokes)


def compare(args, kind, shape, image, seeds, strokes):
    """Every schedule on one stroke script; prints its table."""
    if args.schedules:
        grid_fields = [parse_schedule(text) for text in args.schedules]
    else:
        grid_fields = [dict(cycles=c, launches_per_relabel=k, bfs_passes_per_check=p,
                            first_launches=None)
                       for c, k, p in itertools.product((4, 8, 16), (4, 8, 16, 32), (2, 4))]
    run(grid_fields[0], image, seeds, strokes)  # warm-up: kernels, pools
    reference = None
    runs = {i: [] for i in range(len(grid_fields))}
    for _ in range(args.repeats):
        for i, fields in enumerate(grid_fields):
            first, times, masks, counters = run(fields, image, seeds, strokes)
            if reference is None:
                reference = masks
            assert all(np.array_equal(a, b) for a, b in zip(masks, reference)), fields
            runs[i].append((statistics.median(times), max(times), first, counters))
    rows = []
    for i, fields in enumerate(grid_fields):
        measured = runs[i]
        counters = [c for m in measured for c in m[3]]

        def median_of(key, scale=1.0):
            return statistics.median(c[key] for c in counters) * scale

        rows.append((statistics.median(m[0] for m in measured), max(m[1] for m in measured),
                     statistics.median(m[2] for m in measured), fields,
                     median_of("global_relabels"), median_of("bfs_passes"),
                     median_of("global_relabel_seconds", 1e3),
                     median_of("push_relabel_seconds", 1e3)))
    rows.sort(key=lambda r: r[0])
    import cupy
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else name
    print(f"{datetime.date.today()}, {name}: Segmenter.update at {shape[0]}x{shape[1]}, "
          f"{len(strokes)} {kind} strokes, {args.repeats} run(s) of each schedule; same masks "
          "under every schedule: yes")
    print("| cycles | launches/relabel | BFS passes/check | first batch | update median ms | "
          "max ms | first (from scratch) ms | relabels | BFS passes | relabel GPU ms | "
          "push-relabel GPU ms |\n|---|---|---|---|---|---|---|---|---|---|---|")
    for median, largest, first, fields, relabels, passes, relabel_ms, pr_ms in rows:
        print(f"| {label(fields)} | {median * 1e3:.1f} | {largest * 1e3:.1f} | "
              f"{first * 1e3:.1f} | {relabels:.0f} | {passes:.0f} | {relabel_ms:.1f} | "
              f"{pr_ms:.1f} |")


if __name__ == "__main__":
    main()
