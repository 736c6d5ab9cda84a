"""Appearance models on volumes: IoU against ground truth and seconds, through
``graphcut.segment`` (the same pipeline as images), from the same seeds for every model.

Two synthetic volumes with ground truth (no package here ships an annotated 3-D volume:
skimage's cells3d has no masks, stardist's 3-D demo data are synthetic too):

- ``cell``: the volume sample (samples/volume/make_volume_sample.py: a two-lobed cell
  brighter than its background, an intensity ramp, Gaussian noise; its scribbles) scaled to
  N^3;
- ``texture``: a ball with the background's mean intensity but a rougher texture (noise
  of 3x the standard deviation), seeds a small cube at its centre and strokes on the end
  slices: the intensity histograms overlap, texture features tell the two apart.

Each run is one call of ``graphcut.segment`` on a fresh process state (the first call per
model includes its imports; run with ``--repeat 2`` to see the warm time).

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \\
    python bench/bench_volume_models.py [--size 128] [--device cpu|cuda]
        [--models histogram,gmm,learned] [--scenes cell,texture] [--repeat 1]

Prints one Markdown row per (scene, model): IoU, seconds (the last repeat), object share.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import graphcut

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples" / "volume"))
from make_volume_sample import make, truth  # noqa: E402


def cell_scene(side: int):
    """The volume sample scaled to ``side``^3: (volume, seeds, truth)."""
    shape = (side, side, side)
    volume, seeds = make(shape)
    return volume, seeds, truth(shape)


def texture_scene(side: int, seed: int = 3):
    """A rough ball (noise sd 36) in a smooth background (sd 12), both of mean 110."""
    rng = np.random.default_rng(seed)
    zz, yy, xx = np.ogrid[:side, :side, :side]
    centre, radius = side / 2, side / 4
    inside = (zz - centre) ** 2 + (yy - centre) ** 2 + (xx - centre) ** 2 < radius ** 2
    noise = rng.standard_normal((side, side, side), dtype=np.float32)
    volume = np.clip(110 + np.where(inside, 36.0, 12.0) * noise, 0, 255).astype(np.uint8)
    seeds = np.zeros(inside.shape, np.uint8)
    c, r = int(centre), max(1, side // 16)
    seeds[c - r:c + r, c - r:c + r, c - r:c + r] = 1
    seeds[0, ::4, :] = seeds[-1, ::4, :] = 2
    return volume, seeds, inside


SCENES = {"cell": cell_scene, "texture": texture_scene}


def iou(mask, truth_mask) -> float:
    union = np.count_nonzero(mask | truth_mask)
    return np.count_nonzero(mask & truth_mask) / union if union else 1.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--models", default="histogram,gmm,learned")
    parser.add_argument("--scenes", default="cell,texture")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"| scene | model | {args.size}^3 IoU | seconds ({args.device}) | object share |")
    print("|---|---|---|---|---|")
    for scene in args.scenes.split(","):
        volume, seeds, truth_mask = SCENES[scene](args.size)
        for model in args.models.split(","):
            for _ in range(max(1, args.repeat)):
                started = time.perf_counter()
                mask = graphcut.segment(volume, seeds, model=model, channel_axis=None,
                                        device=args.device)
                seconds = time.perf_counter() - started
            print(f"| {scene} | {model} | {iou(mask, truth_mask):.3f} | {seconds:.2f} | "
                  f"{mask.mean():.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
