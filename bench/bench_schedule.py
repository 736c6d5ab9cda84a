"""Push-relabel schedules of the GPU grid solver for interactive re-solves (Segmenter.update).

For a scripted stroke sequence on astronaut upscaled (bench_interactive's strokes), every
Schedule in a small grid of (cycles, launches_per_relabel, bfs_passes_per_check) re-solves the
same sequence: one Segmenter per schedule, the first update from scratch, then one incremental
update per stroke. Prints the median and max of Segmenter.update (energy + solve, synchronised)
per schedule, and the from-scratch first update. Every schedule gives the same masks (checked
against the first schedule's); only the time differs.

    python bench/bench_schedule.py [--size 2048x2048] [--strokes 10]
"""

from __future__ import annotations

import argparse
import datetime
import functools
import itertools
import statistics
import time

import numpy as np
from bench_interactive import paint, parse_size, scaled_inputs, stroke_script

import graphcut
from graphcut.gui.strokes import SeedCanvas
from graphcut.solver.cuda import grid


def run(schedule_fields, image, seeds, strokes):
    import cupy
    original = grid.Schedule
    grid.Schedule = functools.partial(original, **schedule_fields)
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
        times = []
        for stroke in strokes:
            region = paint(canvas, stroke)
            cupy.cuda.Device().synchronize()
            started = time.perf_counter()
            masks.append(session.update(canvas.labels, region=region))
            times.append(time.perf_counter() - started)
        return first, times, masks
    finally:
        grid.Schedule = original


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="2048x2048")
    parser.add_argument("--strokes", type=int, default=10)
    args = parser.parse_args()
    shape = parse_size(args.size)
    image, seeds = scaled_inputs(shape)
    truth = graphcut.segment(image, seeds, device="cuda")
    strokes = stroke_script(truth, args.strokes)
    grid_fields = [dict(cycles=c, launches_per_relabel=k, bfs_passes_per_check=p)
                   for c, k, p in itertools.product((4, 8, 16), (4, 8, 16, 32), (2, 4))]
    run(grid_fields[0], image, seeds, strokes)  # warm-up: kernels, pools
    rows, reference = [], None
    for fields in grid_fields:
        first, times, masks = run(fields, image, seeds, strokes)
        if reference is None:
            reference = masks
        assert all(np.array_equal(a, b) for a, b in zip(masks, reference)), fields
        rows.append((statistics.median(times), max(times), first, fields))
    rows.sort(key=lambda r: r[0])
    import cupy
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else name
    print(f"{datetime.date.today()}, {name}: Segmenter.update at {shape[0]}x{shape[1]}, "
          f"{args.strokes} strokes; same masks under every schedule: yes")
    print("| cycles | launches/relabel | BFS passes/check | update median ms | max ms | "
          "first (from scratch) ms |\n|---|---|---|---|---|---|")
    default = grid.Schedule()
    for median, largest, first, f in rows:
        mark = " (default)" if (f["cycles"], f["launches_per_relabel"],
                                f["bfs_passes_per_check"]) == (
            default.cycles, default.launches_per_relabel, default.bfs_passes_per_check) else ""
        print(f"| {f['cycles']} | {f['launches_per_relabel']} | {f['bfs_passes_per_check']}{mark} "
              f"| {median * 1e3:.1f} | {largest * 1e3:.1f} | {first * 1e3:.1f} |")


if __name__ == "__main__":
    main()
