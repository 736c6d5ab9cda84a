"""Per-pixel features of the learned model (graphcut.segmentation.features) against
independent computations: SciPy filters, finite differences, NumPy's eigvalsh; CPU = GPU."""

import numpy as np
import pytest
from scipy import ndimage

from graphcut.models import _features as features_module
from graphcut.segmentation.features import (DEFAULT_SCALES, feature_names, image_features,
                                            pixel_features)


def _image(shape=(48, 56), channels=1, seed=0):
    rng = np.random.default_rng(seed)
    smooth = ndimage.gaussian_filter(rng.random(shape + (channels,)), (2, 2, 0))
    return smooth + 0.05 * rng.random(shape + (channels,))


@pytest.mark.parametrize("channels, dims", [(1, 2), (3, 2), (1, 3), (3, 3)])
def test_shape_and_names(channels, dims):
    shape = (9, 20, 22)[-dims:]
    values = _image(shape[-2:], channels)
    if dims == 3:
        values = np.stack([values] * shape[0])
    result = pixel_features(values)
    names = feature_names(channels, dims)
    assert result.shape == tuple(values.shape[:-1]) + (len(names),)
    assert result.dtype == np.float32
    assert len(names) == channels + len(DEFAULT_SCALES) * (channels + 1 + dims)


def test_columns_match_independent_filters():
    values = _image(channels=3)
    raw = pixel_features(values, scales=(2.0,), standardise=False)
    names = feature_names(3, scales=(2.0,))
    column = {name: raw[..., k].astype(np.float64) for k, name in enumerate(names)}
    grey = values.mean(axis=-1)
    for c in range(3):
        np.testing.assert_allclose(column[f"value{c}"], values[..., c], atol=1e-6)
        np.testing.assert_allclose(column[f"gauss{c}@2"],
                                   ndimage.gaussian_filter(values[..., c], 2.0), atol=1e-5)
    np.testing.assert_allclose(column["gradient@2"],
                               2.0 * ndimage.gaussian_gradient_magnitude(grey, 2.0), atol=1e-5)
    # Hessian by finite differences of the smoothed grey image (interior, loose: the
    # difference quotient is not the derivative of the Gaussian), eigenvalues by eigvalsh
    # (the image's own smooth part: the added noise's second differences are far from it)
    smooth = ndimage.gaussian_filter(grey, 2.0)
    d0, d1 = np.gradient(smooth)
    h00, h01 = np.gradient(d0)
    _, h11 = np.gradient(d1)
    hessian = np.stack([np.stack([h00, h01], -1), np.stack([h01, h11], -1)], -2) * 4.0
    eigen = np.linalg.eigvalsh(hessian)
    inner = np.s_[6:-6, 6:-6]
    scale = np.abs(eigen[inner]).max()
    for k in range(2):
        error = np.abs(column[f"hessian{k}@2"][inner] - eigen[inner][..., k]).max()
        assert error < 0.15 * scale, (k, error, scale)  # a wrong sigma^2 or order: >= 0.5


def test_closed_form_eigenvalues_equal_eigvalsh():
    """The 2-D closed form against NumPy's eigvalsh of the same Gaussian-derivative Hessian."""
    grey = _image()[..., 0]
    raw = pixel_features(grey[..., None], scales=(1.5,), standardise=False)
    parts = {}
    for order in ((2, 0), (1, 1), (0, 2)):
        parts[order] = ndimage.gaussian_filter(grey.astype(np.float32), 1.5, order=order,
                                               mode="reflect") * 1.5 ** 2
    hessian = np.stack([np.stack([parts[2, 0], parts[1, 1]], -1),
                        np.stack([parts[1, 1], parts[0, 2]], -1)], -2).astype(np.float64)
    eigen = np.linalg.eigvalsh(hessian)
    np.testing.assert_allclose(raw[..., 3], eigen[..., 0], atol=1e-5)
    np.testing.assert_allclose(raw[..., 4], eigen[..., 1], atol=1e-5)
    assert (raw[..., 3] <= raw[..., 4]).all()


def test_standardised_columns():
    result = pixel_features(_image(channels=3) * 0.004)  # dark 16-bit-like range
    flat = result.reshape(-1, result.shape[-1]).astype(np.float64)
    np.testing.assert_allclose(flat.mean(axis=0), 0.0, atol=1e-4)
    np.testing.assert_allclose(flat.std(axis=0), 1.0, atol=1e-3)


def test_constant_image_gives_zeros_not_nan():
    result = pixel_features(np.full((10, 12, 1), 0.3))
    assert np.isfinite(result).all() and not result.any()


@pytest.mark.parametrize("values, scales", [(np.zeros((5, 5)), DEFAULT_SCALES),
                                            (np.zeros((5, 5, 1)), (0.0,)),
                                            (np.zeros((5, 5, 1)), ())])
def test_bad_input_is_rejected(values, scales):
    with pytest.raises(ValueError):
        pixel_features(values, scales=scales)


def test_image_features_computed_once_per_image(monkeypatch):
    calls = []
    real = features_module.pixel_features
    monkeypatch.setattr(features_module, "pixel_features",
                        lambda values: calls.append(1) or real(values))
    monkeypatch.setattr(features_module, "_last", [None, None])
    values = _image()
    first = image_features(values)
    assert image_features(values) is first
    assert image_features(values.copy()) is first       # equal values: the same image
    other = image_features(values + 1e-3)
    assert other is not first and len(calls) == 2
    np.testing.assert_array_equal(first, pixel_features(values))


@pytest.mark.gpu
def test_gpu_features_equal_cpu():
    """The CuPy path (cupyx.scipy.ndimage) gives the NumPy path's features to 1e-4 (float32
    filters; standardised units)."""
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001
        pytest.skip("no GPU")
    for values in (_image(channels=3), np.stack([_image((20, 24), 1)] * 6)):
        cpu = features_module.generic_pixel_features(values)  # the same code on NumPy; the
        gpu = pixel_features(cupy.asarray(values)).get()     # fast CPU path: test_features_cpu
        np.testing.assert_allclose(gpu, cpu, atol=1e-4)


def test_volume_hessians_in_chunks_equal_one_batch(monkeypatch):
    """A volume's 3x3 Hessian eigenvalues are found in chunks of EIGEN_CHUNK matrices (cuSOLVER
    refuses 128^3 at once); chunks that split the volume anywhere give the one-batch answer
    (the generic path, which CuPy runs, on NumPy)."""
    from graphcut.models import _features
    rng = np.random.default_rng(5)
    volume = rng.random((6, 7, 9, 1))
    whole = _features.generic_pixel_features(volume, scales=(1.0, 2.0))
    monkeypatch.setattr(_features, "EIGEN_CHUNK", 37)
    chunked = _features.generic_pixel_features(volume, scales=(1.0, 2.0))
    np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=1e-12)
