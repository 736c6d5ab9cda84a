"""The CPU's fast filter bank (graphcut.models._features_cpu) against the generic path that
CuPy runs (graphcut.models._features.generic_pixel_features, the old definition, kept as the
reference) for grey, colour and 16-bit images and volumes; its parts against SciPy and NumPy
(Gaussian weights, 3x3 eigenvalues); the learned model's masks unchanged."""

import tracemalloc

import numpy as np
import pytest
from scipy import ndimage

import graphcut
from graphcut.segmentation import image_as_float
from graphcut.models import _features, _features_cpu
from graphcut.models._features_cpu import eigenvalues_3x3, gaussian_weights
from synthetic import textured_disc

# OpenCV's filters sum in float32 (SciPy's in float64): measured 5.1e-5 at most on these
# images in standardised units (1.2e-5 of a raw column's largest magnitude)
OPENCV_TOLERANCE = 2e-4        # standardised units
OPENCV_RAW_TOLERANCE = 5e-5    # of a raw column's largest magnitude


def _smooth(shape, channels, seed=0):
    rng = np.random.default_rng(seed)
    values = ndimage.gaussian_filter(rng.random(shape + (channels,)), (2,) * len(shape) + (0,))
    return values + 0.05 * rng.random(shape + (channels,))


def _sixteen_bit(seed=3):
    """A dark 16-bit fluorescence-like image (values in the low thousands of 65535)."""
    rng = np.random.default_rng(seed)
    spots = ndimage.gaussian_filter((rng.random((70, 90)) > 0.995) * 60000.0, 3)
    image = (800 + spots + 40 * rng.standard_normal((70, 90))).clip(0, 65535)
    return image_as_float(image.astype(np.uint16))


CASES = {
    "grey": lambda: _smooth((48, 56), 1),
    "colour": lambda: _smooth((61, 47), 3),
    "colour, several strips": lambda: _smooth((150, 37), 3),
    "16-bit": _sixteen_bit,
    "grey volume": lambda: _smooth((9, 20, 22), 1),
    "grey volume, several strips": lambda: _smooth((70, 12, 11), 1),
    "colour volume": lambda: _smooth((12, 18, 21), 3),
}


@pytest.fixture
def scipy_filters(monkeypatch):
    """The fast path with SciPy's filters (as without OpenCV installed)."""
    monkeypatch.setattr(_features_cpu, "_opencv", lambda: None)


@pytest.fixture
def small_bands(monkeypatch):
    """Strips and bands of a few rows and a subsample for the statistics: several strips
    (each twice the widest Gaussian's reach), many bands, stride > 1."""
    monkeypatch.setattr(_features_cpu, "STRIP_BYTES", 1)
    monkeypatch.setattr(_features_cpu, "BAND_BYTES", 3000)
    monkeypatch.setattr(_features, "STATISTICS_PIXELS", 500)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("standardise", [True, False])
def test_scipy_filters_equal_the_generic_path_bit_for_bit(case, standardise, scipy_filters,
                                                          small_bands):
    """With SciPy's filters the fast path does the generic path's float32 operations (a
    volume's eigenvalues: closed form in float64 against NumPy's eigvalsh, which also
    computes in float64): the same bits."""
    values = CASES[case]()
    for scales in (_features.DEFAULT_SCALES, (0.7, 3.0)):
        fast = _features.pixel_features(values, scales=scales, standardise=standardise)
        reference = _features.generic_pixel_features(values, scales=scales,
                                                     standardise=standardise)
        assert fast.dtype == np.float32 and fast.shape == reference.shape
        np.testing.assert_array_equal(fast, reference)


@pytest.mark.parametrize("case", sorted(CASES))
def test_opencv_filters_equal_the_generic_path(case, small_bands):
    pytest.importorskip("cv2")
    values = CASES[case]()
    fast = _features.pixel_features(values)
    reference = _features.generic_pixel_features(values)
    np.testing.assert_allclose(fast, reference, rtol=0, atol=OPENCV_TOLERANCE)
    raw = _features.pixel_features(values, standardise=False)
    raw_reference = _features.generic_pixel_features(values, standardise=False)
    magnitude = np.abs(raw_reference).reshape(-1, raw.shape[-1]).max(axis=0)
    error = np.abs(raw - raw_reference).reshape(-1, raw.shape[-1]).max(axis=0)
    assert (error <= OPENCV_RAW_TOLERANCE * magnitude + 1e-12).all(), error / magnitude


def test_opencv_is_used_where_installed(monkeypatch):
    """Guards the comparison above: with OpenCV the filters are OpenCV's (not SciPy's, which
    would make it vacuous): the raw features differ from SciPy's in some bits."""
    pytest.importorskip("cv2")
    values = _smooth((40, 44), 3)
    with_opencv = _features.pixel_features(values, standardise=False)
    monkeypatch.setattr(_features_cpu, "_opencv", lambda: None)
    assert not np.array_equal(with_opencv, _features.pixel_features(values, standardise=False))


def test_tiny_images_fall_back_to_scipy_and_match():
    """Images smaller than a kernel's radius (OpenCV and SciPy reflect alike, but SciPy's
    filter is used there): equal to the generic path."""
    for shape in ((3, 40), (40, 2), (1, 1), (4, 9, 10)):
        values = _smooth(shape, 1)
        np.testing.assert_array_equal(_features.pixel_features(values, standardise=False),
                                      _features.generic_pixel_features(values,
                                                                       standardise=False))


def test_thread_count_does_not_change_the_result(monkeypatch, small_bands):
    values = _smooth((50, 41), 3)
    several = _features.pixel_features(values)
    monkeypatch.setattr(_features_cpu, "MAX_THREADS", 1)
    np.testing.assert_array_equal(_features.pixel_features(values), several)


def test_float32_input_is_not_modified():
    values = _smooth((30, 33), 3).astype(np.float32)
    kept = values.copy()
    _features.pixel_features(values)
    np.testing.assert_array_equal(values, kept)


def _extra_memory(values, scales):
    """Peak bytes allocated by pixel_features beyond its result."""
    _features.pixel_features(values[:8, :8], scales=scales)  # imports, caches
    tracemalloc.start()
    try:
        result = _features.pixel_features(values, scales=scales)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - result.nbytes


def test_memory_does_not_grow_with_the_image(monkeypatch):
    """Beyond the result, the memory is a strip's per thread and the statistics' subsample
    (at most STATISTICS_PIXELS pixels): on one thread an image four times as tall needs no
    more (the generic path needs whole-image planes: 10 more float32 planes for 4x the
    pixels); on two threads at most two strips' worth. (The two-thread peak depends on how
    the threads' strips happen to overlap in time, so it is bounded, not compared: under a
    loaded CI machine the tall image's peak was 1.3 times the short one's.)"""
    monkeypatch.setattr(_features_cpu, "STRIP_BYTES", 1)   # strips of 4 reaches: 32 rows
    monkeypatch.setattr(_features, "STATISTICS_PIXELS", 8000)
    scales = (1.0, 2.0)  # 15 features of a colour image
    short = _smooth((160, 150), 3).astype(np.float32)
    tall = np.concatenate([short] * 4)
    monkeypatch.setattr(_features_cpu, "MAX_THREADS", 1)
    extra_short, extra_tall = _extra_memory(short, scales), _extra_memory(tall, scales)
    assert extra_tall < 1.1 * extra_short, (extra_short, extra_tall)
    monkeypatch.setattr(_features_cpu, "MAX_THREADS", 2)
    if _features_cpu._thread_count() == 2:
        extra_two = _extra_memory(tall, scales)
        assert extra_two < 2.2 * extra_short, (extra_short, extra_two)
    assert extra_tall < 640 * 150 * 15 * 4 / 3  # under a third of the tall image's features


@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("sigma", [0.7, 1.0, 2.5, 8.0])
def test_gaussian_weights_are_scipys(sigma, order):
    """Correlating a line with the weights (its border reflected) gives SciPy's filter."""
    line = np.random.default_rng(int(sigma * 10) + order).random(300)
    weights = gaussian_weights(sigma, order)
    radius = len(weights) // 2
    assert radius == int(4 * sigma + 0.5)
    padded = np.pad(line, radius, mode="symmetric")  # NumPy's "symmetric" = SciPy's "reflect"
    ours = np.correlate(padded, weights, mode="valid")
    expected = ndimage.gaussian_filter1d(line, sigma, order=order, mode="reflect")
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-13)


def test_eigenvalues_3x3_equal_eigvalsh():
    rng = np.random.default_rng(7)
    matrices = rng.standard_normal((4000, 3, 3))
    matrices = matrices + matrices.transpose(0, 2, 1)
    rotation, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    special = [np.zeros((3, 3)), np.eye(3) * 2.5, np.diag([1.0, 1.0, 4.0]),
               np.diag([-3.0, 2.0, 2.0]), rotation @ np.diag([1.0, 1.0 + 1e-9, 5.0]) @ rotation.T,
               np.diag([1e-20, 0.0, -1e-20]), np.full((3, 3), 1e6)]
    matrices = np.concatenate([matrices, np.stack(special)])
    entries = [matrices[:, i, j] for i, j in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))]
    ours = np.stack(eigenvalues_3x3(*entries), axis=-1)
    expected = np.linalg.eigvalsh(matrices)
    scale = np.abs(expected).max(axis=-1, keepdims=True)
    assert (np.abs(ours - expected) <= 1e-7 * scale + 1e-300).all()
    assert (np.diff(ours, axis=-1) >= 0).all()


@pytest.mark.parametrize("grey", [True, False])
def test_learned_masks_unchanged(monkeypatch, grey):
    """The learned model's masks from the fast features equal those from the generic path's
    (with OpenCV's filters too, where installed)."""
    image, truth = textured_disc(colour=True)
    if grey:
        image = image[..., 0]
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[38:42, 30:58] = 1
    seeds[2:5, :] = 2
    seeds[:, 90:93] = 2
    monkeypatch.setattr(_features, "_last", [None, None])
    fast = graphcut.segment(image, seeds, model="learned", device="cpu")
    monkeypatch.setattr(_features, "_last", [None, None])
    monkeypatch.setattr(_features_cpu, "cpu_pixel_features",
                        lambda values, scales, standardise, _: _features.generic_pixel_features(
                            values, scales=scales, standardise=standardise))
    reference = graphcut.segment(image, seeds, model="learned", device="cpu")
    assert (reference & truth).sum() / (reference | truth).sum() > 0.8  # a real segmentation
    np.testing.assert_array_equal(fast, reference)


@pytest.mark.parametrize("shape", [(120, 130, 3), (36, 40, 44, 1)])
def test_constant_images_give_zeros(shape):
    """OpenCV's float32 sums make a constant image's Hessians vary by ~1e-6 of its value:
    that rounding noise is not standardised into unit-variance features (the generic path's
    exact constants are left at 0, and so are these)."""
    for level in (0.3, 0.0123, 1.0):
        result = _features.pixel_features(np.full(shape, level))
        assert np.isfinite(result).all() and not result.any()


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 8, 11])
def test_channel_mean_is_numpys(count):
    """The grey image (the channels' mean) equals NumPy's mean bit for bit, on values of
    mixed magnitudes (where the order of the additions shows)."""
    rng = np.random.default_rng(count)
    scale = rng.choice([1e-3, 1.0, 1e3], size=(300, 200, count))
    part = (rng.random((300, 200, count)) * scale).astype(np.float32)
    np.testing.assert_array_equal(_features_cpu._channel_mean(part), part.mean(axis=-1))
