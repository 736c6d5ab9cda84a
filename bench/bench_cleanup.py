"""Benchmark: the app's clean-up on the GPU against the host, and the split of an interactive
update (energy / solve / clean-up) at 4 and 12 MP.

Input: the astronaut sample upscaled to each ``--sizes`` (bilinear; its bundled seeds, nearest
neighbour), segmented on the GPU (``graphcut.segment``) to give the mask to clean.

1. Clean-up: ``graphcut.segmentation.clean_mask(mask, seeds, keep="connected",
   fill_holes_area=100)`` (the app's default: keep the parts touching an object seed, fill holes
   under 100 pixels) on CuPy arrays (flood fills and hole sizes by GPU kernels), timed from the
   call to the cleaned mask on the GPU (synchronised), median of ``--repeats`` after a first
   call; against the same call on NumPy arrays (SciPy on the host, median of ``--cpu-repeats``).
   The two masks must be equal.
2. Update split: a ``graphcut.Segmenter`` on the GPU, the bundled seeds, then
   ``--strokes`` confirming strokes (bench/stroke_scripts.py); per update the seconds of its
   energy part and its solve part from ``last_result.stats``, and the wall time of
   ``update`` (synchronised), medians over the strokes; plus the GPU clean-up of each result.

    python bench/bench_cleanup.py [--sizes 2048x2048,3000x4000] [--repeats 5] [--strokes 10]

Prints a Markdown table. Needs the GPU backend.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_interactive import paint, parse_size, scaled_inputs  # noqa: E402
from stroke_scripts import stroke_script  # noqa: E402

import graphcut  # noqa: E402
from graphcut.gui.strokes import SeedCanvas  # noqa: E402
from graphcut.segmentation import clean_mask  # noqa: E402
from graphcut.solver import cuda_status  # noqa: E402

FILL_HOLES = 100


def timed(function, repeats: int, sync) -> tuple[float, object]:
    """Median seconds of ``repeats`` calls after a first, untimed one; the last result."""
    result = function()
    sync()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        sync()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def bench_size(shape, repeats: int, cpu_repeats: int, strokes: int) -> dict:
    import cupy
    sync = cupy.cuda.Device().synchronize
    image, seeds = scaled_inputs(shape)
    mask = graphcut.segment(image, seeds, device="cuda")
    gpu_mask, gpu_seeds = cupy.asarray(mask), cupy.asarray(seeds)
    gpu_s, gpu_clean = timed(lambda: clean_mask(gpu_mask, gpu_seeds, keep="connected",
                                                fill_holes_area=FILL_HOLES), repeats, sync)
    cpu_s, cpu_clean = timed(lambda: clean_mask(mask, seeds, keep="connected",
                                                fill_holes_area=FILL_HOLES), cpu_repeats,
                             lambda: None)
    equal = bool(np.array_equal(gpu_clean.get(), cpu_clean))

    session = graphcut.Segmenter(image, device="cuda")
    session.prepare()
    canvas = SeedCanvas(seeds.shape)
    canvas.begin_edit()
    canvas.replace(seeds)
    canvas.end_edit()
    session.update(canvas.labels)
    rows = []
    for stroke in stroke_script(mask, strokes):
        region = paint(canvas, stroke)
        sync()
        started = time.perf_counter()
        result = session.update(canvas.labels, region=region)
        sync()
        wall = time.perf_counter() - started
        stats = session.last_result.stats["seconds"]
        labels = cupy.asarray(canvas.labels)
        result_gpu = cupy.asarray(result)
        sync()
        started = time.perf_counter()
        clean_mask(result_gpu, labels, keep="connected", fill_holes_area=FILL_HOLES)
        sync()
        rows.append({"update": wall, "energy": stats["energy"], "solve": stats["solve"],
                     "clean": time.perf_counter() - started})
    median = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
    return {"shape": image.shape[:2], "gpu": gpu_s, "cpu": cpu_s, "equal": equal,
            "split": median, "strokes": len(rows)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2048x2048,3000x4000",
                        help="ROWSxCOLS or megapixels, comma-separated")
    parser.add_argument("--repeats", type=int, default=5, help="timed GPU clean-ups (median)")
    parser.add_argument("--cpu-repeats", type=int, default=3, help="timed host clean-ups")
    parser.add_argument("--strokes", type=int, default=10)
    args = parser.parse_args(argv)
    ok, why = cuda_status()
    if not ok:
        print(f"bench_cleanup needs the GPU backend: {why}", file=sys.stderr)
        return 2
    lines = [f"{datetime.date.today()}, {why}: `python bench/bench_cleanup.py --sizes "
             f"{args.sizes} --repeats {args.repeats} --strokes {args.strokes}`", "",
             "| image | clean-up GPU ms | clean-up host ms | equal | Segmenter.update ms "
             "(energy / solve) | GPU clean-up of that result ms |", "|---|---|---|---|---|---|"]
    for size in args.sizes.split(","):
        r = bench_size(parse_size(size), args.repeats, args.cpu_repeats, args.strokes)
        h, w = r["shape"]
        s = r["split"]
        lines.append(f"| {h * w / 2**20:.0f} MP ({h}x{w}) | {r['gpu'] * 1e3:.1f} | "
                     f"{r['cpu'] * 1e3:.1f} | {'yes' if r['equal'] else 'NO'} | "
                     f"{s['update'] * 1e3:.1f} ({s['energy'] * 1e3:.1f} / "
                     f"{s['solve'] * 1e3:.1f}) | {s['clean'] * 1e3:.1f} |")
        print(lines[-1], flush=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
