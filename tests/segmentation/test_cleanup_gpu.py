"""``clean_mask``: one object's clean-up on the host and on the GPU (flood fills), against the
label clean-up (scipy.ndimage) it must equal. The GPU path runs here on the kernel model
(tests/gpu_model.py) and, where there is a GPU, on the device."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

import gpu_model
from graphcut.segmentation import clean_labels, clean_mask
from graphcut.io import BACKGROUND, FOREGROUND

def random_case(rng, shape, density=0.55):
    """A blobby random mask with holes and islands, and seeds that respect it (object seeds
    inside, background seeds outside)."""
    noise = ndimage.gaussian_filter(rng.random(shape), sigma=rng.uniform(0.6, 2.0))
    mask = noise > np.quantile(noise, 1 - density)
    seeds = np.zeros(shape, np.uint8)
    inside, outside = np.flatnonzero(mask), np.flatnonzero(~mask)
    for pixels, label in ((inside, FOREGROUND), (outside, BACKGROUND)):
        if pixels.size:
            chosen = rng.choice(pixels, size=min(pixels.size, int(rng.integers(1, 6))),
                                replace=False)
            seeds.flat[chosen] = label
    return mask, seeds


def expected(mask, seeds, keep, area):
    labels = clean_labels(mask.astype(np.uint8), [FOREGROUND], seeds, keep=keep,
                          fill_holes_area=area)
    return labels == FOREGROUND


CASES = [((1, 1), 0), ((1, 17), 1), ((23, 1), 2), ((37, 53), 3), ((64, 64), 4), ((70, 33), 5),
         ((96, 130), 6)]


@pytest.mark.parametrize("keep", ["connected", "all"])
def test_clean_mask_on_the_host_equals_the_label_clean_up(keep):
    rng = np.random.default_rng(1)
    for shape, _ in CASES:
        mask, seeds = random_case(rng, shape)
        for area in (0, 3, 50):
            got = clean_mask(mask, seeds, keep=keep, fill_holes_area=area)
            np.testing.assert_array_equal(got, expected(mask, seeds, keep, area))


@pytest.fixture
def model_flood(monkeypatch):
    """graphcut.solver.cuda on the CuPy stand-in, with the flood's and the masks' kernels
    run by the model."""
    with gpu_model.cuda_modules_on_model() as load:
        flood, masks = load("graphcut.segmentation.flood"), load("graphcut.segmentation.masks")
        monkeypatch.setattr(flood, "kernel", gpu_model.model_kernel)
        monkeypatch.setattr(masks, "kernel", gpu_model.model_kernel)
        import cupy  # the stand-in
        yield cupy


@pytest.mark.parametrize("keep", ["connected", "all"])
def test_clean_mask_gpu_path_on_the_kernel_model(model_flood, keep):
    cupy = model_flood
    rng = np.random.default_rng(2)
    for shape, _ in CASES:
        mask, seeds = random_case(rng, shape)
        for area in (0, 4, 1000):
            got = clean_mask(cupy.asarray(mask), cupy.asarray(seeds), keep=keep,
                             fill_holes_area=area)
            assert type(got) is cupy.ndarray  # stayed on the (stand-in) device
            np.testing.assert_array_equal(np.asarray(got), expected(mask, seeds, keep, area))


def test_clean_mask_gpu_path_without_a_seed_in_the_object(model_flood):
    """No object seed inside the mask: the largest part is kept, as on the host."""
    cupy = model_flood
    mask = np.zeros((20, 30), bool)
    mask[2:5, 2:5] = mask[10:18, 10:25] = True
    seeds = np.zeros(mask.shape, np.uint8)
    seeds[0, 0] = BACKGROUND
    got = clean_mask(cupy.asarray(mask), cupy.asarray(seeds), keep="connected")
    np.testing.assert_array_equal(np.asarray(got), expected(mask, seeds, "connected", 0))


@pytest.fixture
def gpu_cupy():
    """CuPy, where there is a GPU (else the test is skipped)."""
    cupy = pytest.importorskip("cupy")
    from graphcut.solver import cuda_status
    if not cuda_status()[0]:
        pytest.skip("no GPU")
    return cupy


@pytest.mark.gpu
@pytest.mark.parametrize("keep", ["connected", "all"])
def test_clean_mask_on_the_gpu(gpu_cupy, keep):
    cupy = gpu_cupy
    rng = np.random.default_rng(3)
    for shape, _ in CASES + [((517, 389), 7), ((1000, 1500), 8)]:
        mask, seeds = random_case(rng, shape)
        for area in (0, 4, 100, 10**6):
            got = clean_mask(cupy.asarray(mask), cupy.asarray(seeds), keep=keep,
                             fill_holes_area=area)
            assert isinstance(got, cupy.ndarray)
            np.testing.assert_array_equal(got.get(), expected(mask, seeds, keep, area))


# ----- with a box or lasso: the region folded into the seeds (region_seeds) -------------------

def region_case(rng, shape):
    """A random case cut with a box or a lasso: the mask and the object seeds inside the
    region only, as a cut gives them; returns (mask, seeds, outside)."""
    from graphcut.segmentation import allowed_region

    mask, seeds = random_case(rng, shape)
    h, w = shape
    if min(shape) < 8 or rng.random() < 0.5:
        r0, c0 = int(rng.integers(0, max(1, h // 3))), int(rng.integers(0, max(1, w // 3)))
        box = (r0, c0, int(rng.integers(r0 + 1, h + 1)), int(rng.integers(c0 + 1, w + 1)))
        region = allowed_region(shape, box=box)
    else:
        angles = np.sort(rng.uniform(0, 2 * np.pi, 7))
        radius = rng.uniform(0.3, 0.6, 7)
        lasso = [(h / 2 + r * h * np.sin(a), w / 2 + r * w * np.cos(a))
                 for a, r in zip(angles, radius)]
        region = allowed_region(shape, lasso=lasso)
    outside = ~region
    mask &= region
    seeds[(seeds == FOREGROUND) & outside] = 0
    return mask, seeds, outside


def expected_in_region(mask, seeds, outside, keep, area):
    labels = clean_labels(mask.astype(np.uint8), [FOREGROUND], seeds, keep=keep,
                          fill_holes_area=area, outside=outside)
    return labels == FOREGROUND


REGION_SHAPES = [(1, 9), (12, 1), (23, 31), (64, 64), (70, 33), (96, 130)]


@pytest.mark.parametrize("keep", ["connected", "all"])
def test_region_seeds_give_the_clean_up_with_the_region(keep):
    """The equivalence clean_mask's GPU path relies on, checked with the host's label clean-up
    (scipy.ndimage): the region folded into the seeds gives what the seeds and the region
    give."""
    from graphcut.segmentation import region_seeds

    rng = np.random.default_rng(4)
    for shape in REGION_SHAPES * 4:
        mask, seeds, outside = region_case(rng, shape)
        folded = region_seeds(seeds, outside)
        for area in (0, 5, 10**6):
            got = clean_labels(mask.astype(np.uint8), [FOREGROUND], folded, keep=keep,
                               fill_holes_area=area) == FOREGROUND
            np.testing.assert_array_equal(got, expected_in_region(mask, seeds, outside, keep,
                                                                  area))
            host = clean_mask(mask, seeds, keep=keep, fill_holes_area=area, outside=outside)
            np.testing.assert_array_equal(host, got)


@pytest.mark.parametrize("keep", ["connected", "all"])
def test_clean_mask_with_a_region_on_the_kernel_model(model_flood, keep):
    cupy = model_flood
    rng = np.random.default_rng(5)
    for shape in REGION_SHAPES * 2:
        mask, seeds, outside = region_case(rng, shape)
        for area in (0, 4, 1000):
            got = clean_mask(cupy.asarray(mask), cupy.asarray(seeds), keep=keep,
                             fill_holes_area=area, outside=cupy.asarray(outside))
            assert type(got) is cupy.ndarray
            np.testing.assert_array_equal(np.asarray(got),
                                          expected_in_region(mask, seeds, outside, keep, area))


@pytest.mark.gpu
@pytest.mark.parametrize("keep", ["connected", "all"])
def test_clean_mask_with_a_region_on_the_gpu(gpu_cupy, keep):
    cupy = gpu_cupy
    rng = np.random.default_rng(6)
    for shape in REGION_SHAPES + [(517, 389), (1000, 1500)]:
        mask, seeds, outside = region_case(rng, shape)
        for area in (0, 4, 100, 10**6):
            got = clean_mask(cupy.asarray(mask), cupy.asarray(seeds), keep=keep,
                             fill_holes_area=area, outside=cupy.asarray(outside))
            assert isinstance(got, cupy.ndarray)
            np.testing.assert_array_equal(got.get(),
                                          expected_in_region(mask, seeds, outside, keep, area))
