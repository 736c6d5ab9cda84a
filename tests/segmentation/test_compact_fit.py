"""The first fit of a mixture model reads only its samples' pixels (``fit_samples``): the
mixtures equal those of the fit on the whole image (to rounding), and the answers of several
objects' live updates are unchanged."""

import copy

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM, GMMModel, Histogram
from graphcut.segmentation import _grabcut
from graphcut.segmentation._grabcut import fit_samples
from test_learned_fake_cupy import cupy  # noqa: F401 - the stand-in CuPy fixture


def _image(seed=0, shape=(40, 60)):
    rng = np.random.default_rng(seed)
    image = rng.normal([0.3, 0.4, 0.5], 0.1, (*shape, 3))
    image[10:30, 10:25] = rng.normal([0.8, 0.5, 0.2], 0.1, (20, 15, 3))
    image[12:28, 35:55] = rng.normal([0.2, 0.7, 0.3], 0.1, (16, 20, 3))
    return np.clip(image, 0, 1)


def _samples(shape, weighted):
    first, second, third = (np.zeros(shape, bool) for _ in range(3))
    first[0:3, :], second[15:20, 15:20], third[18:22, 40:46] = True, True, True
    if not weighted:
        return [first, second, third]
    return [np.where(s, w, 0.0) for s, w in zip((first, second, third), (1.0, 7.5, 3.25))]


@pytest.mark.parametrize("weighted", [False, True])
def test_the_compact_fit_gives_the_whole_images_mixtures(weighted, monkeypatch):
    values = _image()
    samples = _samples(values.shape[:2], weighted)
    model = GMM(components=3)
    compact = fit_samples(copy.deepcopy(model), values, samples)
    monkeypatch.setattr(_grabcut, "COMPACT_FIT", 0.0)
    whole = fit_samples(copy.deepcopy(model), values, samples)
    for a, b in zip(compact._fitted, whole._fitted):
        np.testing.assert_allclose(a.weights, b.weights, rtol=1e-9)
        np.testing.assert_allclose(a.means, b.means, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(a.covariances, b.covariances, rtol=1e-8, atol=1e-12)
    for a, b in zip(compact.costs(values), whole.costs(values)):
        assert a.shape == values.shape[:2]
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-9)


def test_other_models_and_wide_samples_fit_on_the_whole_image(monkeypatch):
    """Only per-label mixtures are compacted, each label on its own sample's pixels, and
    only when that sample is small."""
    values = _image()
    seen = []
    for cls in (GMMModel, Histogram):
        original = cls.fit

        def watched(self, features, samples, _original=original):
            seen.append(features.shape)
            return _original(self, features, samples)
        monkeypatch.setattr(cls, "fit", watched)
    small = _samples(values.shape[:2], False)
    fit_samples(Histogram(), values, small)
    assert seen == [values.shape]
    wide = [np.ones(values.shape[:2], bool), np.zeros(values.shape[:2], bool)]
    wide[1][0, 0], wide[0][0, 0] = True, False
    seen.clear()
    fit_samples(GMM(components=2), values, wide)
    assert seen == [values.shape, (1, 1, 3)]  # the wide sample on the image, the other alone
    seen.clear()
    model = fit_samples(GMM(components=2, warm=True), values, small)
    assert seen == [(3 * 60, 1, 3), (25, 1, 3), (24, 1, 3)]
    # the rows are kept out of the live model's shared cache of per-pixel products
    assert all(kept[0].shape == values.shape for kept in model._products) or \
        not model._products
    assert all(m.shared_features is model._products for m in model._fitted)


def test_several_objects_live_answers_do_not_change(monkeypatch):
    """A live GMM's several-object update (one fit on the seeds, one expansion) gives the
    same labels with the compact fit as with the whole image's."""
    image = (_image(seed=3, shape=(60, 80)) * 255).astype(np.uint8)
    seeds = np.zeros(image.shape[:2], np.uint8)
    seeds[0:3, :], seeds[18:24, 15:20], seeds[18:24, 42:48] = 2, 1, 3
    model = GMM(core=0.4, warm=True)
    compact = graphcut.segment(image, seeds, model=model, device="cpu")
    monkeypatch.setattr(_grabcut, "COMPACT_FIT", 0.0)
    whole = graphcut.segment(image, seeds, model=model, device="cpu")
    np.testing.assert_array_equal(compact, whole)
    assert set(np.unique(compact)) == {0, 1, 3}


def test_a_small_device_sample_is_fitted_on_the_host(cupy, monkeypatch):  # noqa: F811
    """On the GPU (the stand-in CuPy) a compact sample of at most HOST_FIT_ROWS rows is fitted
    by NumPy; the mixtures equal the host path's, the costs come back on the device."""
    values = _image()
    samples = _samples(values.shape[:2], True)
    seen = []
    original = GMMModel.fit

    def watched(self, features, mask):
        seen.append(type(features).__module__.split(".")[0])
        return original(self, features, mask)
    monkeypatch.setattr(GMMModel, "fit", watched)
    on_device = fit_samples(GMM(components=3), cupy.asarray(values),
                            [cupy.asarray(s) for s in samples])
    on_host = fit_samples(GMM(components=3), values, samples)
    assert seen == ["numpy"] * 6
    for a, b in zip(on_device._fitted, on_host._fitted):
        np.testing.assert_array_equal(a.means, b.means)
    device_costs = on_device.costs(cupy.asarray(values))
    assert type(device_costs[0]).__module__.split(".")[0] == "cupy"
    for a, b in zip(device_costs, on_host.costs(values)):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-9, atol=1e-9)
    monkeypatch.setattr(_grabcut, "HOST_FIT_ROWS", 24)
    seen.clear()
    fit_samples(GMM(components=3), cupy.asarray(values), [cupy.asarray(s) for s in samples])
    assert seen == ["cupy", "cupy", "numpy"]  # 180 and 25 rows on the device, 24 on the host


@pytest.mark.gpu
def test_several_objects_live_on_the_gpu_agree_with_the_cpu():
    """The live GMM's several-object update on the GPU (its seeds' fit on the host) against
    the CPU's: the seeds obeyed, the labels equal but for rounding at a few pixels."""
    image = (_image(seed=4, shape=(120, 160)) * 255).astype(np.uint8)
    seeds = np.zeros(image.shape[:2], np.uint8)
    seeds[0:3, :], seeds[30:40, 30:40], seeds[35:45, 90:100] = 2, 1, 3
    model = GMM(core=0.4, warm=True)
    gpu = graphcut.segment(image, seeds, model=model, device="cuda")
    cpu = graphcut.segment(image, seeds, model=model, device="cpu")
    assert (gpu[seeds == 1] == 1).all() and (gpu[seeds == 3] == 3).all()
    assert (gpu[seeds == 2] == 0).all()
    assert np.mean(gpu != cpu) < 1e-3
