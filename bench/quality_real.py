"""Real images annotated by people, for bench/bench_quality_real.py, loaded from installed
packages at bench time (never stored in this repository).

- ``nuclei``: the fluorescence nuclei image of the 2018 Data Science Bowl (BBBC038) that the
  ``stardist`` wheel ships with its hand-made instance mask (``stardist/data/images/img2d.tif``
  and ``mask2d.tif``; 512 x 512 uint16, 125 nuclei; the package is BSD-3-Clause, the images
  are BBBC038v1's, which the Broad Bioimage Benchmark Collection releases under CC0 1.0). It
  is read with ``tifffile`` from the package's folder without importing ``stardist`` (which
  needs TensorFlow): ``pip install --no-deps stardist`` is enough.

The one image is cut into its four 256 x 256 quadrants, and the quadrants are split ONCE into
development and test by :data:`SPLIT_SEED` (a seeded permutation; :func:`split` writes the
result down): options are chosen on "dev" only, "test" is read for the final report only.
Each quadrant gives two kinds of items:

- all its nuclei as one object (``truth = mask > 0``), for the clicks protocol;
- single nuclei (``truth = mask == id``) fully inside the quadrant and at least
  :data:`MIN_NUCLEUS_AREA` pixels, :data:`NUCLEI_PER_QUADRANT` of them chosen with the same
  seed, for the box-around-one-object protocol.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass

import numpy as np

SPLIT_SEED = 2026
QUADRANT = 256
NUCLEI_PER_QUADRANT = 8
MIN_NUCLEUS_AREA = 30
#: the split, written down (and checked against the seed by :func:`split`)
SPLIT = {"dev": ("q01", "q11"), "test": ("q00", "q10")}


@dataclass(frozen=True)
class RealItem:
    name: str
    image: np.ndarray     # as shipped (uint16 grey here)
    truth: np.ndarray     # bool (H, W)
    kind: str             # "all" (every object) or "one" (a single object)


def _package_file(package: str, *parts: str) -> str:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"the real-image sets need the {package!r} package: "
                         f"pip install --no-deps {package}")
    path = os.path.join(spec.submodule_search_locations[0], *parts)
    if not os.path.exists(path):
        raise SystemExit(f"{path} is missing from the installed {package!r} package")
    return path


def load_nuclei():
    """(image uint16 (512, 512), instance mask (512, 512)) of stardist's DSB2018 sample."""
    import tifffile
    image = tifffile.imread(_package_file("stardist", "data", "images", "img2d.tif"))
    mask = tifffile.imread(_package_file("stardist", "data", "images", "mask2d.tif"))
    return image, mask


def split() -> dict:
    """{"dev": quadrant names, "test": quadrant names} from :data:`SPLIT_SEED`."""
    names = [f"q{r}{c}" for r in range(2) for c in range(2)]
    order = np.random.default_rng(SPLIT_SEED).permutation(len(names))
    chosen = {"dev": tuple(sorted(names[i] for i in order[:2])),
              "test": tuple(sorted(names[i] for i in order[2:]))}
    assert chosen == SPLIT, (chosen, SPLIT)
    return chosen


def real_set(which: str, kind: str) -> list[RealItem]:
    """The items of split ``which`` ("dev" or "test") of ``kind`` ("all" or "one")."""
    if which not in SPLIT or kind not in ("all", "one"):
        raise ValueError(f"unknown set {which!r} / kind {kind!r}")
    image, mask = load_nuclei()
    items = []
    for name in split()[which]:
        r, c = int(name[1]), int(name[2])
        window = np.s_[r * QUADRANT:(r + 1) * QUADRANT, c * QUADRANT:(c + 1) * QUADRANT]
        crop, labels = image[window], mask[window]
        if kind == "all":
            items.append(RealItem(f"nuclei-{name}", crop, labels > 0, "all"))
            continue
        border = set(np.unique(np.r_[labels[0], labels[-1], labels[:, 0], labels[:, -1]]))
        ids, areas = np.unique(labels, return_counts=True)
        inside = [int(i) for i, a in zip(ids, areas)
                  if i and i not in border and a >= MIN_NUCLEUS_AREA]
        rng = np.random.default_rng(SPLIT_SEED + 10 * r + c)
        for i in sorted(rng.choice(inside, min(NUCLEI_PER_QUADRANT, len(inside)),
                                   replace=False)):
            items.append(RealItem(f"nucleus-{name}-{i}", crop, labels == i, "one"))
    return items
