"""The GMM's texture channel (``texture=r``): local contrast against SciPy, the option's
checks, CPU / GPU agreement, and a grey object told from its background by texture alone."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

import graphcut
from graphcut.models._texture import local_contrast, with_texture


def reference_contrast(values, radius):
    """Standard deviation of the channels' mean over each window, by SciPy's generic filter
    (mirror padding, 'reflect' = NumPy's 'symmetric')."""
    grey = values.mean(axis=-1)
    return ndimage.generic_filter(grey, np.std, size=2 * radius + 1, mode="reflect")


@pytest.mark.parametrize("radius", [1, 2, 4])
@pytest.mark.parametrize("channels", [1, 3])
def test_local_contrast_matches_scipy(radius, channels):
    values = np.random.default_rng(radius).random((23, 31, channels))
    np.testing.assert_allclose(local_contrast(values, radius),
                               reference_contrast(values, radius), atol=1e-9)


def test_with_texture_appends_one_channel_and_zero_is_off():
    values = np.random.default_rng(0).random((9, 11, 3))
    assert with_texture(values, 0) is values
    extended = with_texture(values, 2)
    assert extended.shape == (9, 11, 4)
    np.testing.assert_array_equal(extended[..., :3], values)
    flat = with_texture(np.full((9, 11, 1), 0.3), 3)
    np.testing.assert_allclose(flat[..., 1], 0.0, atol=1e-7)  # a flat image has no contrast


def textured_scene(h=70, w=90, seed=3):
    """A square of smooth (blurred) noise on a background of fine noise with the same grey
    levels (the smooth noise is mapped onto the fine one's values, rank for rank): only the
    texture tells them apart."""
    rng = np.random.default_rng(seed)
    truth = np.zeros((h, w), bool)
    truth[15:55, 20:70] = True
    image = rng.uniform(0.2, 0.8, (h, w))
    smooth = ndimage.gaussian_filter(rng.normal(size=(h, w)), 4)[truth]
    image[truth] = np.sort(rng.choice(image[~truth], truth.sum()))[np.argsort(np.argsort(smooth))]
    seeds = np.zeros((h, w), np.uint8)
    seeds[34:36, 24:66] = 1
    seeds[2:4, 5:85] = 2
    return (image * 255).round().astype(np.uint8), truth, seeds


def test_texture_separates_what_colour_cannot():
    image, truth, seeds = textured_scene()
    options = dict(model="gmm", keep="connected", device="cpu")

    def iou(mask):
        return (mask & truth).sum() / (mask | truth).sum()

    assert iou(graphcut.segment(image, seeds, texture=0, **options)) < 0.6
    assert iou(graphcut.segment(image, seeds, texture=2, **options)) > 0.9
    assert iou(graphcut.segment(image, seeds, **options)) > 0.85  # the GMM's default: 4


@pytest.mark.parametrize("bad", [-1, 1.5, True, "4"])
def test_texture_option_is_checked(bad):
    image, _, seeds = textured_scene()
    with pytest.raises((ValueError, TypeError), match="texture"):
        graphcut.segment(image, seeds, model="gmm", texture=bad, device="cpu")


def test_texture_is_for_the_gmm_only():
    image, _, seeds = textured_scene()
    with pytest.raises(ValueError, match="gmm"):
        graphcut.segment(image, seeds, model="histogram", texture=2, device="cpu")
    with pytest.raises(ValueError, match="gmm"):
        graphcut.Segmenter(image, model="histogram", texture=2, device="cpu")


def test_segmenter_with_texture_answers_what_segment_does():
    image, _, seeds = textured_scene()
    session = graphcut.Segmenter(image, model="gmm", texture=3, device="cpu")
    np.testing.assert_array_equal(session.update(seeds),
                                  graphcut.segment(image, seeds, model="gmm", texture=3,
                                                   device="cpu"))


@pytest.mark.gpu
def test_local_contrast_and_textured_masks_agree_on_cpu_and_gpu():
    import cupy
    values = np.random.default_rng(1).random((40, 50, 3))
    np.testing.assert_allclose(local_contrast(cupy.asarray(values), 3).get(),
                               local_contrast(values, 3), atol=1e-12)
    image, _, seeds = textured_scene()
    cpu, cpu_result = graphcut.segment(image, seeds, model="gmm", device="cpu",
                                       return_result=True)
    gpu, gpu_result = graphcut.segment(image, seeds, model="gmm", device="cuda",
                                       return_result=True)
    np.testing.assert_array_equal(cpu, gpu)
    assert cpu_result.flow == gpu_result.flow
