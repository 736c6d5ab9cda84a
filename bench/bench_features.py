"""Time of the learned model's per-pixel features on the CPU (``pixel_features``), the fast
path (graphcut/models/_features_cpu.py) against the generic one that CuPy runs (the code
before the fast path), with OpenCV's filters or SciPy's, on one thread or several.

Smooth random images (the features' cost does not depend on the content): a colour image of
``--megapixels`` and a grey volume of ``--volume``^3 voxels. Each case is run ``--repeat``
times; the minimum wall and CPU (process) seconds are printed, with the load average (on a
shared machine the CPU seconds are the steadier column).

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \\
    python bench/bench_features.py [--megapixels 4] [--volume 128] [--repeat 2]
        [--cases generic,scipy,opencv-1,opencv]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy import ndimage

CASES = {
    "generic": "generic path (before)",
    "scipy": "fast path, SciPy's filters, all threads",
    "opencv-1": "fast path, OpenCV, 1 thread",
    "opencv": "fast path, OpenCV, all threads",
}


def _run(case, values):
    from graphcut.models import _features, _features_cpu
    if case == "generic":
        return _features.generic_pixel_features(values)
    saved = _features_cpu._opencv, _features_cpu.MAX_THREADS
    try:
        if case == "scipy":
            _features_cpu._opencv = lambda: None
        if case == "opencv-1":
            _features_cpu.MAX_THREADS = 1
        if case.startswith("opencv") and _features_cpu._opencv() is None:
            raise SystemExit("OpenCV is not installed: pip install opencv-python-headless")
        return _features.pixel_features(values)
    finally:
        _features_cpu._opencv, _features_cpu.MAX_THREADS = saved


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megapixels", type=float, default=4.0)
    parser.add_argument("--volume", type=int, default=128, help="side of the volume; 0: none")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args(argv)
    side = int(round((args.megapixels * 1e6) ** 0.5))
    inputs = [(f"{side}x{side} colour", (side, side), 3)]
    if args.volume:
        inputs.append((f"{args.volume}^3 grey volume", (args.volume,) * 3, 1))
    print("| input | features | wall s (min) | CPU s (min) | load |")
    print("|---|---|---|---|---|")
    for label, shape, channels in inputs:
        rng = np.random.default_rng(0)
        values = ndimage.gaussian_filter(rng.random(shape + (channels,)),
                                         (2.0,) * len(shape) + (0.0,))
        for case in args.cases.split(","):
            walls, cpus = [], []
            for _ in range(args.repeat):
                wall, cpu = time.perf_counter(), time.process_time()
                _run(case, values)
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
            print(f"| {label} | {CASES[case]} | {min(walls):.2f} | {min(cpus):.2f} | "
                  f"{os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
