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


def truth(shape=SHAPE) -> np.ndarray:
    """The object, bool (Z, Y, X)."""
    z, y, x = np.indices(shape, dtype=np.float64)
    first = ((z - 20) / 11) ** 2 + ((y - 26) / 14) ** 2 + ((x - 24) / 12) ** 2 < 1
    second = ((z - 18) / 9) ** 2 + ((y - 38) / 10) ** 2 + ((x - 42) / 11) ** 2 < 1
    return first | second


def make(seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """(volume uint8 (Z, Y, X), seeds uint8 (Z, Y, X))."""
    rng = np.random.default_rng(seed)
    inside = truth()
    x = np.arange(SHAPE[2]) / SHAPE[2]
    values = 70 + 30 * x[None, None, :] + np.where(inside, 80, 0) + rng.normal(0, 22, SHAPE)
    volume = np.clip(np.rint(values), 0, 255).astype(np.uint8)
    seeds = np.zeros(SHAPE, dtype=np.uint8)
    seeds[19, 24:40, 26] = 1
    seeds[19, 38, 26:44] = 1
    seeds[0, 8:56, 8:56:12] = 2
    seeds[-1, 8:56, 8:56:12] = 2
    seeds[19, 2, 4:60] = 2
    seeds[19, 4:60, 61] = 2
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
