"""bench/quality_real_variants.py's estimates checked against their definitions: the clicks'
cross-validated temperature at its two ends (held-out clicks the other folds classify surely
right / surely wrong), the threshold fitted to a mask against the mask it was drawn from, and
the costs' changes against their formulas. Importing the script patches nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import quality_real_variants as variants  # noqa: E402

from graphcut.models import Learned  # noqa: E402
from graphcut.models._learned import Learned as LearnedClass  # noqa: E402


def _image(dark_blob=False):
    """A 40 x 40 grey image: bright squares (objects) on a dark ground; with ``dark_blob`` one
    square is as dark as the ground (an object that looks like the background)."""
    image = np.full((40, 40), 0.1)
    for r, c in ((4, 4), (4, 26), (26, 4), (26, 26)):
        image[r:r + 10, c:c + 10] = 0.9
    if dark_blob:
        image[26:36, 26:36] = 0.1
    return image[..., None]


def _clicks(shape, points):
    sample = np.zeros(shape)
    for r, c in points:
        sample[r - 1:r + 2, c - 1:c + 2] = 1.0
    return sample


def _fitted(image, samples):
    model = Learned(prior=0)
    features = model.features(image)
    model.fit(features, samples)
    return model, features


def test_importing_the_script_patches_nothing():
    assert LearnedClass.costs.__module__ == "graphcut.models._learned"
    assert LearnedClass.fit.__module__ == "graphcut.models._learned"


def test_temperature_is_the_largest_when_every_held_out_click_is_classified_surely_right():
    image = _image()
    obj = _clicks((40, 40), [(8, 8), (8, 30), (30, 8), (30, 30)])
    bg = _clicks((40, 40), [(20, 20), (2, 20), (38, 20), (20, 2)])
    model, features = _fitted(image, (obj, bg))
    assert variants._temperature(model, features, (obj, bg)) == variants.TEMPERATURES[-1]


def test_temperature_is_the_smallest_when_a_held_out_click_looks_like_the_other_label():
    image = _image(dark_blob=True)  # the object click at (30, 30) lies on background's look
    obj = _clicks((40, 40), [(8, 8), (8, 30), (30, 30)])
    bg = _clicks((40, 40), [(20, 20), (2, 20)])
    model, features = _fitted(image, (obj, bg))
    assert variants._temperature(model, features, (obj, bg)) == variants.TEMPERATURES[0]


def test_temperature_without_a_click_to_hold_out_is_one():
    image = _image()
    obj, bg = _clicks((40, 40), [(8, 8)]), _clicks((40, 40), [(20, 20)])
    model, features = _fitted(image, (obj, bg))
    assert variants._temperature(model, features, (obj, bg)) == 1.0


def test_mask_threshold_recovers_the_side_a_mask_was_drawn_from():
    grey = np.random.default_rng(3).random((50, 60))
    for mask in (grey > 0.7, grey <= 0.25):
        t = variants._mask_threshold(grey, mask)
        side = grey > t if mask.mean() < 0.5 and grey[mask].mean() > 0.5 else grey <= t
        assert (side & mask).sum() / (side | mask).sum() > 0.97


def test_cost_changes_follow_their_formulas():
    class Model:
        guide = np.zeros((4, 4), bool)
    Model.guide[1:3, 1:3] = True  # area 4, perimeter 4 (every pixel on the outline): r = 2
    c = [np.full((4, 4), 1.0), np.full((4, 4), 2.0)]
    biased = variants._changed(Model(), None, c, "bias", 0.5)
    assert np.allclose(biased[0], 1.0) and np.allclose(biased[1], 2.5)
    biased = variants._changed(Model(), None, c, "bias", -0.5)
    assert np.allclose(biased[0], 1.5) and np.allclose(biased[1], 2.0)
    scaled = variants._changed(Model(), None, c, "scale", 3.0)  # factor 3 / 2
    assert np.allclose(scaled[0], 1.5) and np.allclose(scaled[1], 3.0)
    scaled = variants._changed(Model(), None, c, "scale", 100.0)  # clipped to 2
    assert np.allclose(scaled[1], 4.0)


def test_the_thresholds_replace_otsus_in_the_prior(monkeypatch):
    """``threshold``: the prior's Otsu call answers with the method asked for; Otsu's on the
    log of a skewed (log-normal) sample lies below Otsu's own and inside the sample's range."""
    import skimage.filters as filters
    monkeypatch.setattr(filters, "threshold_otsu", filters.threshold_otsu)  # restored after
    otsu = filters.threshold_otsu
    sample = np.random.default_rng(2).lognormal(0.0, 1.0, 5000)
    variants._patch_threshold("li")
    assert filters.threshold_otsu(sample) == filters.threshold_li(sample)
    monkeypatch.setattr(filters, "threshold_otsu", otsu)
    variants._patch_threshold("log-otsu")
    logged = filters.threshold_otsu(sample)
    assert sample.min() < logged < otsu(sample)


def test_the_local_peak_split_is_the_librarys_local_split(monkeypatch):
    """The ``local-split --method local-peak`` variant (measured first, its own code) and
    ``Learned(split="local")`` (graphcut/models/_local_split.py) split the same pixels."""
    from scipy import ndimage

    from graphcut.models._features import pixel_features
    from graphcut.models._local_split import local_bright_side

    rng = np.random.default_rng(3)
    grey = 0.05 + 0.1 * np.linspace(0, 1, 64)[None, :] + rng.normal(0, 0.01, (48, 64))
    grey[8:18, 8:18], grey[30:38, 40:50] = 0.9, 0.3
    for values in (grey, 1.0 - grey):               # bright and dark nuclei
        features = pixel_features(ndimage.gaussian_filter(values, 1)[..., None]
                                  .astype(np.float32), scales=(1.0,))
        host = features[..., 1:2].mean(axis=-1).astype(np.float64)
        monkeypatch.setattr(variants, "PEAK_RADIUS", 10)
        monkeypatch.setattr(variants, "PEAK_SHARE", 0.3)
        up, down = (variants.local_split(host, "local-peak", 101),
                    variants.local_split(-host, "local-peak", 101))
        expected = up if up.sum() <= down.sum() else ~down
        library = local_bright_side(features, 1)
        assert 0 < library.sum() < library.size
        np.testing.assert_array_equal(library, expected)


def _dense_grey():
    """A 64 x 96 tile (float32): bright nuclei (0.9) over a third of it, their columns at the
    left, and a ground (0.1 -> 0.4 from left to right, a little noise): the image's median
    lies in the ground's upper part, as on a dense tile."""
    rng = np.random.default_rng(5)
    grey = 0.1 + 0.3 * np.linspace(0, 1, 96)[None, :] + rng.normal(0, 0.01, (64, 96))
    for r in range(2, 62, 12):
        for c in range(2, 50, 12):
            grey[r:r + 10, c:c + 10] = 0.9
    return grey.astype(np.float32)


def test_the_median_base_is_the_librarys_local_threshold():
    """``split-base --method median`` at the library's radius is the library's threshold map,
    to the bit; an unknown base is refused."""
    import pytest

    from graphcut.models._local_split import PEAK_RADIUS, PEAK_SHARE, local_threshold

    grey = _dense_grey()
    expected, otsu = local_threshold(grey, block=21)
    got, got_otsu = variants.base_threshold(grey, "median", PEAK_RADIUS, block=21,
                                            share=PEAK_SHARE)
    assert got_otsu == otsu
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError):
        variants.base_threshold(grey, "mean", PEAK_RADIUS, block=21, share=PEAK_SHARE)


def test_the_dark_base_is_the_grounds_median():
    """The ``dark`` base is the median of the grey below Otsu's threshold, below the image's
    median on a dense tile: its floor is halfway from Otsu's threshold to it (the lowest
    threshold, far from the nuclei), and its map is nowhere above the median base's."""
    from skimage.filters import threshold_otsu

    from graphcut.models._prior import grey_sample

    grey = _dense_grey()
    otsu = float(threshold_otsu(grey_sample(grey)))
    ground = float(np.median(grey[grey <= otsu]))
    assert ground < float(np.median(grey)) - 0.02         # the premise: a dense tile
    median, _ = variants.base_threshold(grey, "median", 10, block=21, share=0.3)
    dark, dark_otsu = variants.base_threshold(grey, "dark", 10, block=21, share=0.3)
    assert dark_otsu == otsu
    assert (dark <= median).all() and (dark < median - 0.01).any()
    assert abs(float(dark.min()) - 0.5 * (otsu + ground)) < 1e-5
    assert abs(float(median.min()) - 0.5 * (otsu + float(np.median(grey)))) < 1e-5


def test_the_split_base_variant_patches_the_librarys_split(monkeypatch):
    """``split-base`` routes ``Learned(split="local")``'s split through
    :func:`base_threshold`: the bright side is the grey above the dark base's map, and not the
    library's on the dense tile."""
    import graphcut.models._local_split as split
    from graphcut.models._features import pixel_features

    features = pixel_features(_dense_grey()[..., None], scales=(1.0,))
    grey = np.ascontiguousarray(features[..., 1])
    before = split.local_bright_side(features, 1, block=21)
    monkeypatch.setattr(split, "local_threshold", split.local_threshold)
    monkeypatch.setattr(variants, "PEAK_RADIUS", 10)
    monkeypatch.setattr(variants, "PEAK_SHARE", 0.3)
    variants._patch_split_base("dark")
    after = split.local_bright_side(features, 1, block=21)
    expected = grey > variants.base_threshold(grey, "dark", 10, block=21, share=0.3)[0]
    np.testing.assert_array_equal(after, expected)
    assert after.sum() > before.sum()
