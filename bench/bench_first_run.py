"""The first session on a new machine: how long the default model waits for CuPy's compiler.

CuPy compiles its own kernels (reductions, ``cupyx.scipy.ndimage`` filters, element-wise
operations) the first time each is used, and keeps them in its kernel cache
(``CUPY_CACHE_DIR``, by default ``~/.cupy/kernel_cache``); graphcut's own kernels come
precompiled in the wheel. So the first session on a machine (or in a new container) pays for
every CuPy kernel the default model's path uses, once.

Each run is a new process with empty kernel caches (a fresh ``CUPY_CACHE_DIR`` and
``CUDA_CACHE_PATH``), then a second new process on the caches the first one filled. In each:
``import graphcut``, a ``graphcut.Segmenter`` with the default model on the image,
``warm_up`` (what the app and napari run when an image opens: the throwaway update that
compiles), then two updates with the user's strokes. Images: ``micro``, a synthetic
fluorescence micrograph (1024 x 1024, uint16, 120 blurred nuclei on a dim noisy ground: the
default picks the learned model), and ``photo``, the bundled astronaut (512 x 512 colour: the
default picks the live GMM). With ``--sites``, every CuPy compile of the cold process is timed
and charged to the graphcut line that caused it (a wrapper around CuPy's private
``cupy.cuda.compiler._compile_with_cache_cuda``; where it is missing only the totals print).

    python bench/bench_first_run.py                       # both images, GPU
    python bench/bench_first_run.py --images micro --sites
    CUPY_NVRTC_USE_PCH=0 python bench/bench_first_run.py  # without precompiled headers

Needs a GPU. The shipped fatbins count only in an installed wheel or after
``python solver/cuda/_variants.py build``; otherwise graphcut's own kernels are compiled by
NVRTC too (the table says which).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ("micro", "photo")


def synthetic_micrograph(size: int = 1024, nuclei: int = 120, seed: int = 0) -> np.ndarray:
    """A grey uint16 fluorescence-like image: ``nuclei`` Gaussian blobs (sigma 6-14 pixels,
    peak about 1500 counts) on a ground of 200 +- 20 counts.

    Examples
    --------
    >>> image = synthetic_micrograph(64, nuclei=3)
    >>> image.shape, image.dtype.name
    ((64, 64), 'uint16')
    """
    rng = np.random.default_rng(seed)
    rows, cols = np.mgrid[:size, :size]
    image = rng.normal(200.0, 20.0, (size, size))
    margin = min(20, size // 4)
    for _ in range(nuclei):
        r, c = rng.integers(margin, size - margin, 2)
        sigma = rng.uniform(6.0, 14.0)
        image += 1500.0 * np.exp(-((rows - r) ** 2 + (cols - c) ** 2) / (2 * sigma ** 2))
    return np.clip(image, 0, 65535).astype(np.uint16)


def bench_image(kind: str) -> np.ndarray:
    """The image of ``kind`` (:data:`IMAGES`)."""
    if kind == "micro":
        return synthetic_micrograph()
    from PIL import Image
    with Image.open(ROOT / "samples" / "images" / "astronaut.png") as file:
        return np.asarray(file.convert("RGB"))


def user_strokes(shape) -> list:
    """Two seed images: an object stroke at the centre and a background stroke along the top
    left, then one more background stroke."""
    h, w = shape[:2]
    seeds = np.zeros((h, w), np.uint8)
    seeds[h // 2 - 5:h // 2 + 5, w // 2 - 10:w // 2 + 10] = 1
    seeds[10:20, 10:w // 5] = 2
    second = seeds.copy()
    second[3 * h // 10:3 * h // 10 + 5, 3 * w // 10:3 * w // 10 + 40] = 2
    return [seeds, second]


def _compile_sites():
    """Wrap CuPy's compile step; returns the list it fills with (seconds, graphcut line)."""
    import traceback

    import cupy.cuda.compiler as compiler
    log = []
    original = getattr(compiler, "_compile_with_cache_cuda", None)
    if original is None:
        return None

    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            where = "?"
            for frame in reversed(traceback.extract_stack()[:-1]):
                parts = Path(frame.filename).parts
                if "graphcut" in parts and "cupy" not in parts and "cupyx" not in parts:
                    where = f"{'/'.join(parts[parts.index('graphcut'):])}:{frame.lineno}"
                    break
            log.append((time.perf_counter() - started, where))
    compiler._compile_with_cache_cuda = timed
    return log


def one_process(kind: str, sites: bool) -> dict:
    """The measurements of one process (run with ``--child``)."""
    started = time.perf_counter()
    import graphcut
    from graphcut.segmentation import warm_up
    imported = time.perf_counter()
    log = _compile_sites() if sites else None
    image = bench_image(kind)
    session = graphcut.Segmenter(image, device="cuda")
    made = time.perf_counter()
    warm_up(session)
    warmed = time.perf_counter()
    updates = []
    for seeds in user_strokes(image.shape):
        before = time.perf_counter()
        session.update(seeds)
        updates.append(time.perf_counter() - before)
    result = {"model": getattr(session.model, "name", str(session.model)),
              "import": imported - started, "segmenter": made - imported,
              "warm_up": warmed - made, "updates": updates,
              "total": time.perf_counter() - started,
              "pch": os.environ.get("CUPY_NVRTC_USE_PCH")}
    if log is not None:
        by_site = {}
        for seconds, where in log:
            count, total = by_site.get(where, (0, 0.0))
            by_site[where] = (count + 1, total + seconds)
        result["compiles"] = len(log)
        result["compile_seconds"] = sum(seconds for seconds, _ in log)
        result["sites"] = sorted(by_site.items(), key=lambda kv: -kv[1][1])[:15]
    from graphcut.solver.cuda import _loader
    result["own_kernels"] = sorted(set(_loader._origins.values()))
    return result


def run(kind: str, caches: dict, sites: bool) -> dict:
    env = dict(os.environ, **caches)
    done = subprocess.run([sys.executable, __file__, "--child", kind,
                           *(["--sites"] if sites else [])],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=1200)
    if done.returncode != 0:
        raise RuntimeError(f"{kind}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", default=",".join(IMAGES))
    parser.add_argument("--sites", action="store_true",
                        help="time every CuPy compile of the cold run and name its graphcut line")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(one_process(args.child, args.sites)))
        return
    print("| image | model | caches | import s | Segmenter s | warm_up s | first / second "
          "update s | process s | graphcut's kernels | CUPY_NVRTC_USE_PCH |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for kind in args.images.split(","):
        with tempfile.TemporaryDirectory() as cupy_cache, \
                tempfile.TemporaryDirectory() as cuda_cache:
            caches = {"CUPY_CACHE_DIR": cupy_cache, "CUDA_CACHE_PATH": cuda_cache}
            cold = run(kind, caches, args.sites)
            warm = run(kind, caches, False)
        for name, r in (("empty", cold), ("filled", warm)):
            print(f"| {kind} | {r['model']} | {name} | {r['import']:.2f} | {r['segmenter']:.2f} "
                  f"| {r['warm_up']:.2f} | {r['updates'][0]:.3f} / {r['updates'][1]:.3f} | "
                  f"{r['total']:.2f} | {', '.join(r['own_kernels'])} | {r['pch']} |")
        if "compiles" in cold:
            print(f"\n{kind}, empty caches: {cold['compiles']} CuPy compiles, "
                  f"{cold['compile_seconds']:.1f} s; by graphcut line:")
            for where, (count, seconds) in cold["sites"]:
                print(f"  {seconds:6.2f} s {count:3d}x {where}")
            print()


if __name__ == "__main__":
    main()
