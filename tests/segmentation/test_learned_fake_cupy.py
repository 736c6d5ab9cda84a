"""The learned model's GPU path (features, training, scoring: the same code with CuPy) run
with the NumPy stand-in for CuPy (tests/support/fake_cupy.py) and ``cupyx.scipy.ndimage``
standing in as SciPy's: the features and the costs equal the NumPy path's."""

import numpy as np
import pytest
from scipy import ndimage as scipy_ndimage

import fake_cupy
from graphcut.models import learned_models
from graphcut.models._features import (STATISTICS_PIXELS, generic_pixel_features,
                                       pixel_features)

# float32 features and scores on both sides, the same operations in the same order: the
# stand-in runs NumPy, so only the chunking of the scoring differs (CPU vs GPU chunk sizes)
COST_TOLERANCE = 1e-5   # nats
FEATURE_TOLERANCE = 1e-6


@pytest.fixture
def cupy(monkeypatch, kernel_library):
    """The stand-in CuPy with the package's kernels compiled as host C++ (the learned model's
    scoring kernel, models/learned_kernels.cu, among them), loaded afresh through NVRTC's path."""
    yield from fake_cupy.stand_in_cupy(monkeypatch, kernel_library)


def _on_stand_in(array):
    return type(array).__module__.split(".")[0] == "cupy"


@pytest.mark.parametrize("channels", [1, 3])
def test_features_equal_numpy(cupy, channels):
    values = np.random.default_rng(channels).random((40, 52, channels)).astype(np.float32)
    cpu = generic_pixel_features(values)  # the same code on NumPy (the fast CPU path:
    gpu = pixel_features(cupy.asarray(values))  # tests/segmentation/test_features_cpu.py)
    assert _on_stand_in(gpu)
    np.testing.assert_allclose(np.asarray(gpu), cpu, atol=FEATURE_TOLERANCE)


@pytest.mark.parametrize("classifier,count", [("logistic", 2), ("logistic", 3),
                                              ("gaussian", 2)])
def test_costs_equal_numpy(cupy, classifier, count):
    rng = np.random.default_rng(count)
    features = pixel_features(rng.random((64, 70, 3)).astype(np.float32))
    masks = [np.zeros(features.shape[:2], bool) for _ in range(count)]
    for index, mask in enumerate(masks):
        mask[5 + 20 * index:15 + 20 * index, 10:60] = True
    cpu_views = learned_models(count, classifier=classifier)
    gpu_views = learned_models(count, classifier=classifier)
    gpu_features = cupy.asarray(features)
    for cpu_view, gpu_view, mask in zip(cpu_views, gpu_views, masks):
        cpu_view.fit(features, mask)
        gpu_view.fit(gpu_features, cupy.asarray(mask))
    for cpu_view, gpu_view in zip(cpu_views, gpu_views):
        gpu_costs = gpu_view.costs(gpu_features)
        assert _on_stand_in(gpu_costs)
        np.testing.assert_allclose(np.asarray(gpu_costs), cpu_view.costs(features),
                                   atol=COST_TOLERANCE)


@pytest.mark.parametrize("features", [1, 9, 27])
def test_fused_kernel_equals_the_numpy_formula(cupy, features):
    """models/learned_kernels.cu (compiled as host C++) against the formula in float64 on
    NumPy: z = b0 + b1 . x + b2 . x^2 clipped to [-30, 30], costs softplus(-z) and
    softplus(z) capped at MAX_COST; the kernel works in float32 (tolerance 1e-5 nats + 1e-5
    relative), including saturated pixels where the cap applies."""
    from graphcut.models._learned import MAX_COST
    from graphcut.models._learned_kernels import fused_binary_costs
    rng = np.random.default_rng(features)
    x = rng.normal(0, 2, (23, 31, features)).astype(np.float32)
    beta = rng.normal(0, 1.5, 2 * features + 1)
    costs = fused_binary_costs(cupy.asarray(x), cupy.asarray(beta), MAX_COST)
    assert _on_stand_in(costs) and costs.dtype == np.float64 and costs.shape == (2, 23, 31)
    x64 = x.astype(np.float64)
    z = np.clip(beta[0] + x64 @ beta[1:features + 1] + (x64 * x64) @ beta[features + 1:],
                -30, 30)
    expected = np.minimum(np.stack([np.logaddexp(0, -z), np.logaddexp(0, z)]), MAX_COST)
    assert (expected == MAX_COST).any() and (expected < 1).any()  # both regimes are checked
    np.testing.assert_allclose(np.asarray(costs), expected, atol=1e-5, rtol=1e-5)


def test_statistics_subsample_is_close_to_all_pixels(monkeypatch):
    """Above STATISTICS_PIXELS pixels the standardisation uses a regular subsample; on a
    natural-looking image its mean and standard deviation are those of all pixels."""
    from graphcut.models import _features
    rng = np.random.default_rng(5)
    values = scipy_ndimage.gaussian_filter(rng.random((300, 310)), 3)[..., None]
    monkeypatch.setattr(_features, "STATISTICS_PIXELS", 300 * 310 // 7)
    sub = pixel_features(values)
    assert STATISTICS_PIXELS > 300 * 310  # the module's own value: every pixel here
    np.testing.assert_allclose(sub.mean(axis=(0, 1)), 0, atol=0.05)
    np.testing.assert_allclose(sub.std(axis=(0, 1)), 1, atol=0.05)


def test_previous_log_odds_equal_numpy(cupy):
    """``Learned.log_odds`` (the gated hold's previous classifier) on the stand-in: the NumPy
    path's numbers, reused from the last fit or retrained aside alike."""
    from graphcut.models import Learned
    rng = np.random.default_rng(5)
    values = rng.random((48, 56, 1)).astype(np.float32)
    obj, bg = np.zeros((48, 56), bool), np.zeros((48, 56), bool)
    obj[5:15, 10:40], bg[30:40, 10:50] = True, True
    cpu = Learned().log_odds(Learned().features(values), (obj, bg))
    model = Learned()
    features = model.features(cupy.asarray(values))
    samples = (cupy.asarray(obj), cupy.asarray(bg))
    retrained = model.log_odds(features, samples)
    model.fit(features, samples)
    reused = model.log_odds(features, tuple(s.copy() for s in samples))
    for gpu in (retrained, reused):
        assert _on_stand_in(gpu)
        np.testing.assert_allclose(np.asarray(gpu), cpu, atol=2 * COST_TOLERANCE)


def test_logistic_fit_on_the_device_equals_the_host_fit(cupy):
    """fit_logistic's device path (one kernel and one product per Newton step,
    models/learned_kernels.cu's logistic_step_terms) against its NumPy path on the same
    quadratic design: the same weights to rounding, and a fit that separates the classes."""
    from graphcut.models._logistic import _design, fit_logistic

    rng = np.random.default_rng(3)
    features = rng.normal(size=(500, 4))
    y = (features[:, 0] + 0.5 * features[:, 1] ** 2 + rng.normal(0, 0.3, 500) > 0.4)
    w = rng.uniform(0.2, 2.0, 500)
    x = _design(features, np)
    expected = fit_logistic(x, y.astype(np.float64), w, l2=0.05)
    got = fit_logistic(cupy.asarray(x), cupy.asarray(y.astype(np.float64)), cupy.asarray(w),
                       l2=0.05)
    assert _on_stand_in(got)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-9, atol=1e-9)
    predicted = (x @ expected) > 0
    assert (predicted == y).mean() > 0.85  # the fit is a real classifier, not zeros
