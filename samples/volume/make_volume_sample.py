"""Make the synthetic volume sample: cells.tif (uint8, 40 x 64 x 64 voxels, Z, Y, X) and its
seeds cells_seeds.tif (labels 0 none, 1 object, 2 background), both multi-page TIFFs.

The object is a bent "cell": two overlapping ellipsoids (a dumbbell), brighter than the
background, on a slow intensity ramp along x, with Gaussian noise (as a light-sheet stack might
look). The seeds are one object stroke along the cell's axis in the middle slice and background
strokes in the first and last slices and along two edges of the middle slice. Deterministic.

    python samples/volume/make_volume_sample.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SHAPE = (40, 64, 64)
HERE = Path(__file__).resolve().parent


def _scaled(value: float, reference: int, size: int) -> int:
    return int(round(value * size / reference))


def truth(shape=SHAPE) -> np.ndarray:
    """The object, bool (Z, Y, X); other shapes scale the sample's geometry."""
    d, h, w = shape
    z = (np.arange(d, dtype=np.float64) * SHAPE[0] / d)[:, None, None]
    y = (np.arange(h, dtype=np.float64) * SHAPE[1] / h)[None, :, None]
    x = (np.arange(w, dtype=np.float64) * SHAPE[2] / w)[None, None, :]
    first = ((z - 20) / 11) ** 2 + ((y - 26) / 14) ** 2 + ((x - 24) / 12) ** 2 < 1
    second = ((z - 18) / 9) ** 2 + ((y - 38) / 10) ** 2 + ((x - 42) / 11) ** 2 < 1
    return first | second


def make(shape=SHAPE, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """(volume uint8 (Z, Y, X), seeds uint8 (Z, Y, X)) of ``shape`` (the sample's by default;
    the benchmarks scale it up)."""
    rng = np.random.default_rng(seed)
    d, h, w = shape
    inside = truth(shape)
    x = (np.arange(w) / w)[None, None, :]
    noise = rng.standard_normal(shape, dtype=np.float32 if d * h * w > 2**24 else np.float64)
    values = 70 + 30 * x + np.where(inside, 80, 0) + 22 * noise
    volume = np.clip(np.rint(values), 0, 255).astype(np.uint8)
    del values, noise

    def z(v):
        return _scaled(v, SHAPE[0], d)

    def y(v):
        return _scaled(v, SHAPE[1], h)

    def x_(v):
        return _scaled(v, SHAPE[2], w)

    seeds = np.zeros(shape, dtype=np.uint8)
    seeds[z(19), y(24):y(40), x_(26)] = 1
    seeds[z(19), y(38), x_(26):x_(44)] = 1
    seeds[0, y(8):y(56), x_(8):x_(56):max(1, x_(12))] = 2
    seeds[-1, y(8):y(56), x_(8):x_(56):max(1, x_(12))] = 2
    seeds[z(19), y(2), x_(4):x_(60)] = 2
    seeds[z(19), y(4):y(60), x_(61)] = 2
    return volume, seeds


def main() -> None:
    import graphcut
    volume, seeds = make()
    graphcut.write_volume_seeds(HERE / "cells_seeds.tif", seeds)
    import tifffile
    tifffile.imwrite(HERE / "cells.tif", volume, photometric="minisblack", compression="zlib",
                     metadata={"axes": "ZYX"})
    print(f"wrote cells.tif {volume.shape} and cells_seeds.tif")


if __name__ == "__main__":
    main()
