"""The first fit of a mixture model reads only its samples' pixels (``fit_samples``): the
mixtures equal those of the fit on the whole image (to rounding), and the answers of several
objects' live updates are unchanged."""

import copy

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM, Histogram
from graphcut.segmentation import _grabcut
from graphcut.segmentation._grabcut import fit_samples


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
    """Only per-label mixtures are compacted, and only when the samples are small: the
    model's fit is then called with the image itself."""
    values = _image()
    seen = []

    class Watched(Histogram):
        def fit(self, features, samples):
            seen.append(features.shape)
            return super().fit(features, samples)
    fit_samples(Watched(), values, _samples(values.shape[:2], False))
    wide = [np.ones(values.shape[:2], bool), np.zeros(values.shape[:2], bool)]
    wide[1][0, 0], wide[0][0, 0] = True, False

    class WatchedGMM(type(GMM())):
        def fit(self, features, samples):
            seen.append(features.shape)
            return super().fit(features, samples)
    fit_samples(WatchedGMM(components=2), values, wide)
    fit_samples(WatchedGMM(components=2), values, _samples(values.shape[:2], False))
    assert seen[:2] == [values.shape, values.shape]
    assert seen[2] == (3 * 60 + 25 + 24, 1, 3)


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
