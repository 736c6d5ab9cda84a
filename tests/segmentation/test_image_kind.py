"""``model="auto"`` tells colour micrographs from photographs (graphcut/models/_image_kind.py):
stained brightfield sections, dense H&E and fluorescence stored as RGB become ``Learned()``,
colour photographs the live GMM; the oracle is how each test image was made (Beer-Lambert
stains, dyes on black, photographs shipped with scikit-image)."""

import importlib.util
import os

import numpy as np
import pytest

import graphcut
from graphcut.models import (GMM, Auto, GreyStatistics, Learned, colour_statistics,
                             grey_statistics)
from graphcut.models._image_kind import GREY_PHOTO_MEDIAN, sample_pixels

from micrographs import fluorescence, stained_section
from synthetic import disc_image, disc_truth

PHOTO_MODEL = GMM(core=0.4, warm=True, outline=8, stroke_reach=0.2, locality=4, prune=1,
                  texture=0, stroke_share=0.05)
GREY_PHOTO_MODEL = GMM(core=0.4, warm=True, outline=8, stroke_reach=0.2, locality=4)  # no prune


def test_stained_sections_go_to_the_learned_model():
    section, _ = stained_section()
    stats = colour_statistics(section)
    assert stats.signs == ("brightfield",) and stats.brightfield > 0.8
    assert Auto().for_image(section) == Learned()
    dense, _ = stained_section(eosin=0.6)  # pink everywhere, no bright background
    assert "stain" in colour_statistics(dense).signs
    assert Auto().for_image(dense) == Learned()


@pytest.mark.parametrize("channels", [(2,), (1,), (0, 1)])
def test_fluorescence_stored_as_rgb_goes_to_the_learned_model(channels):
    image = fluorescence(channels)
    stats = colour_statistics(image)
    assert "fluorescence" in stats.signs and stats.empty_channel < 0.05  # blue: a stain hue too
    assert Auto(seed_share=0.2).for_image(image) == Learned(seed_share=0.2)


def test_three_dyes_on_black_go_to_the_learned_model():
    image = fluorescence((0, 1, 2))
    stats = colour_statistics(image)
    assert stats.empty_channel > 0.5 and stats.dark > 0.5  # every channel holds a dye
    assert Auto().for_image(image) == Learned()


def test_colour_photograph_like_images_go_to_the_gmm():
    for seed in range(3):
        image = disc_image("colour", np.uint8, seed=seed)
        assert colour_statistics(image).signs == ()
        assert Auto().for_image(image) == PHOTO_MODEL
    # a shaded scene: a red ball lit from one side on a green and blue ground
    yy, xx = np.mgrid[:80, :120] / 80.0
    shade = 0.35 + 0.6 * np.clip(1 - (xx - 0.4) ** 2 - (yy - 0.3) ** 2, 0, 1)
    ball = disc_truth(80, 120)[..., None]
    scene = shade[..., None] * np.where(ball, [0.9, 0.2, 0.15], [0.3, 0.6, 0.5])
    assert Auto().for_image(np.rint(scene * 255).astype(np.uint8)) == PHOTO_MODEL


def test_grey_micrographs_volumes_and_grey_stored_as_rgb_go_to_the_learned_model():
    grey = fluorescence((1,))[..., 1]
    assert Auto().for_image(grey) == Learned()
    assert Auto().for_image(np.stack([grey] * 3, -1)) == Learned()  # equal channels
    assert colour_statistics(np.stack([grey] * 3, -1)).grey
    assert Auto().for_image(np.stack([grey] * 5), channel_axis=None) == Learned()
    assert Auto().for_image(np.zeros((8, 8, 3))) == Learned()  # constant: nothing to see


def test_the_rule_reads_any_channel_axis_dtype_and_volume_alike():
    photo = disc_image("colour", np.uint8, seed=5)
    section, _ = stained_section(seed=5)
    for image, chosen in ((photo, PHOTO_MODEL), (section, Learned())):
        assert Auto().for_image(np.moveaxis(image, -1, 0), channel_axis=0) == chosen
        rgba = np.concatenate([image, np.full(image.shape[:2] + (1,), 255, np.uint8)], -1)
        assert Auto().for_image(rgba) == chosen  # alpha is not read
        volume = np.stack([image] * 4)
        assert Auto().for_image(volume) == chosen
    # the raw image and the values Segmenter holds give the very same numbers
    assert colour_statistics(section) == colour_statistics(section / 255.0)
    np.testing.assert_array_equal(sample_pixels(section), sample_pixels(section / 255.0))
    scaled = colour_statistics(section.astype(np.float64) * 7.0 + 3.0)  # scale and offset
    assert scaled.signs == colour_statistics(section).signs
    assert scaled.brightfield == pytest.approx(colour_statistics(section).brightfield, abs=1e-9)


def test_the_sample_is_a_fixed_grid_of_at_most_4096_pixels():
    image = np.arange(300 * 500 * 3, dtype=np.float64).reshape(300, 500, 3)
    pixels = sample_pixels(image)
    assert pixels.shape == (64 * 64, 3)
    np.testing.assert_array_equal(pixels[0], image[0, 0])
    np.testing.assert_array_equal(pixels[-1], image[-1, -1])
    assert sample_pixels(np.zeros((5, 7, 3))).shape == (35, 3)  # small: every pixel
    assert sample_pixels(np.zeros((40, 40, 40, 3))).shape == (16 ** 3, 3)
    with pytest.raises(ValueError, match="channels last"):
        colour_statistics(np.zeros((8, 8)))


def test_segmenter_on_a_stained_section_is_the_learned_model_and_equals_segment():
    section, nuclei = stained_section(seed=6)
    session = graphcut.Segmenter(section, model="auto", device="cpu")
    assert session.model == Learned() and session.lam == Learned.lam
    seeds = np.zeros(nuclei.shape, np.uint8)
    rng = np.random.default_rng(6)
    inside, outside = np.argwhere(nuclei), np.argwhere(~nuclei)
    for stroke in range(3):  # clicks added one at a time, the answer after each
        for points, label in ((inside, 1), (outside, 2)):
            y, x = points[rng.integers(len(points))]
            click = np.zeros(nuclei.shape, bool)
            click[max(0, y - 1):y + 2, max(0, x - 1):x + 2] = True
            seeds[click & (nuclei == (label == 1))] = label  # the click's agreeing pixels
        incremental = np.asarray(session.update(seeds.copy()))
        fresh = graphcut.segment(section, seeds, model="auto", device="cpu")
        np.testing.assert_array_equal(incremental, fresh)
        np.testing.assert_array_equal(
            fresh, graphcut.segment(section, seeds, model="learned", device="cpu"))


def _skimage(name):
    from skimage import data
    return getattr(data, name)()


@pytest.mark.parametrize("name", ["astronaut", "chelsea", "coffee", "rocket"])
def test_scikit_image_photographs_go_to_the_gmm(name):
    assert colour_statistics(_skimage(name)).signs == ()
    assert Auto().for_image(_skimage(name)) == PHOTO_MODEL


@pytest.mark.parametrize("name", ["camera", "moon", "page"])
def test_grey_photographs_go_to_the_gmm_and_grey_fluorescence_to_the_learned_model(name):
    """A grey photograph's mid-tones fill its range (median at least 0.4 of it); dyes on a
    dark background leave most pixels at its bottom (docs/appearance.md, "Grey
    photographs")."""
    photo = _skimage(name)
    nuclei = fluorescence((1,))[..., 1]  # one dye on black, as a grey image
    assert grey_statistics(photo).median >= GREY_PHOTO_MEDIAN > grey_statistics(nuclei).median
    for grey, chosen in ((photo, GREY_PHOTO_MODEL), (nuclei, Learned())):
        assert grey_statistics(grey).photograph == (chosen == GREY_PHOTO_MODEL)
        assert Auto().for_image(grey) == chosen
        assert Auto().for_image(grey[..., None]) == chosen  # one channel, channels last
        assert Auto().for_image(grey[None], channel_axis=0) == chosen
        as_rgb = np.stack([grey] * 3, -1)  # a grey image stored as RGB: read as grey
        assert colour_statistics(as_rgb).grey and Auto().for_image(as_rgb) == chosen
        assert grey_statistics(as_rgb).median == pytest.approx(grey_statistics(grey).median)
        # the numbers do not depend on the scale: Segmenter's float values give the same
        assert grey_statistics(grey / 255.0) == grey_statistics(grey)
        # volumes stay with the learned model, whatever their slices look like
        volume = np.stack([grey] * 4)
        assert Auto().for_image(volume, channel_axis=None) == Learned()
        assert Auto().for_image(volume[..., None]) == Learned()


def test_the_grey_rule_follows_the_median_of_the_range():
    """The oracle is the construction: a dark background with bright spots covering a
    known share of the pixels; the rescaled median is the background's (0) until the spots
    cover half the image."""
    rng = np.random.default_rng(3)
    for share, photograph in ((0.1, False), (0.3, False), (0.7, True)):
        image = np.where(rng.random((128, 128)) < share, 0.8, 0.0) + rng.uniform(0, 0.02,
                                                                                  (128, 128))
        stats = grey_statistics(image)
        assert stats.photograph is photograph
        assert (stats.dark > 0.5) is (not photograph)
    assert grey_statistics(np.full((16, 16), 7, np.uint8)) == GreyStatistics(0.0, 1.0)


def test_scikit_image_immunohistochemistry_goes_to_the_learned_model():
    image = _skimage("immunohistochemistry")
    assert colour_statistics(image).signs == ("brightfield",)
    assert Auto().for_image(image) == Learned()


def test_stardists_he_sample_goes_to_the_learned_model():
    spec = importlib.util.find_spec("stardist")
    path = (None if spec is None else
            os.path.join(spec.submodule_search_locations[0], "data", "images", "histo.jpg"))
    if path is None or not os.path.exists(path):
        pytest.skip("stardist's H&E sample is not installed")
    from skimage.io import imread
    image = imread(path)
    assert "stain" in colour_statistics(image).signs
    assert Auto().for_image(image) == Learned()


def test_the_gpu_path_reads_the_same_pixels_with_the_stand_in(monkeypatch, kernel_library):
    """CuPy arrays (the NumPy stand-in, tests/support/fake_cupy.py): the grid is gathered on
    the device and copied to the host, and the statistics are the host's exactly."""
    import sys

    import fake_cupy
    module = fake_cupy.fake_cupy_module(kernel_library)
    monkeypatch.setitem(sys.modules, "cupy", module)
    section, _ = stained_section(seed=8)
    for image in (section, disc_image("colour", np.uint8, seed=8), fluorescence((0, 1))):
        on_device = module.asarray(image)
        assert type(on_device).__module__.startswith("cupy")
        picked = sample_pixels(on_device)
        assert type(picked) is np.ndarray
        np.testing.assert_array_equal(picked, sample_pixels(image))
        assert colour_statistics(on_device) == colour_statistics(image)
        assert Auto().for_image(module.asarray(image / 255.0)) == Auto().for_image(image)
    for grey in (fluorescence((1,))[..., 1], _skimage("camera")):
        on_device = module.asarray(grey)
        assert grey_statistics(on_device) == grey_statistics(grey)
        assert Auto().for_image(on_device) == Auto().for_image(grey)


@pytest.mark.gpu
def test_the_statistics_are_the_same_on_the_gpu():
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001
        pytest.skip("no GPU")
    section, _ = stained_section(seed=7)
    camera = _skimage("camera")
    for image in (section, disc_image("colour", np.uint8, seed=7), fluorescence((1,)),
                  np.stack([camera] * 3, -1)):
        on_gpu = cupy.asarray(image)
        assert colour_statistics(on_gpu) == colour_statistics(image)
        assert Auto().for_image(on_gpu) == Auto().for_image(image)
        values = cupy.asarray(image) / 255.0  # what Segmenter holds on the GPU
        assert colour_statistics(values) == colour_statistics(image)
    for grey, chosen in ((camera, GREY_PHOTO_MODEL), (fluorescence((1,))[..., 1], Learned())):
        on_gpu = cupy.asarray(grey)
        assert grey_statistics(on_gpu) == grey_statistics(grey)
        assert grey_statistics(on_gpu / 255.0) == grey_statistics(grey)
        assert Auto().for_image(on_gpu) == chosen == Auto().for_image(grey)
        assert graphcut.Segmenter(grey, model="auto", device="cuda").model == chosen
    session = graphcut.Segmenter(section, model="auto", device="cuda")
    assert session.model == Learned()
