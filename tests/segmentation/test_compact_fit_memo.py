"""A mixture model remembers its labels' compact fits (``_grabcut.fit_samples``): a label
whose sample (rows and weights) is unchanged is not fitted again, and every mixture equals a
fresh model's fit of the same samples, also after GrabCut's refits of the mixtures in use."""

from __future__ import annotations

import numpy as np

from graphcut.models import GMM
from graphcut.models._gmm import GMMModel
from graphcut.segmentation._grabcut import fit_samples


def _samples(shape, seed):
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(3):
        sample = np.zeros(shape)
        r, c = rng.integers(0, shape[0] - 6), rng.integers(0, shape[1] - 6)
        sample[r:r + 6, c:c + 6] = rng.uniform(1, 3)
        samples.append(sample)
    return samples


def _parameters(model):
    return [(m.weights, m.means, m.covariances) for m in model._fitted]


def _assert_same(model, fresh):
    for got, want in zip(_parameters(model), _parameters(fresh)):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_unchanged_samples_are_not_fitted_again(monkeypatch):
    rng = np.random.default_rng(0)
    values = rng.random((40, 50, 3))
    samples = _samples((40, 50), 1)
    calls = []
    fit = GMMModel.fit
    monkeypatch.setattr(GMMModel, "fit", lambda self, *a: calls.append(1) or fit(self, *a))
    model = GMM(components=3)
    fit_samples(model, values, samples)
    assert len(calls) == 3
    fit_samples(model, values, samples)
    assert len(calls) == 3                          # all three remembered
    samples[1] = samples[1].copy()
    samples[1][0:3, 0:3] = 1.0                      # a stroke of label 1
    fit_samples(model, values, samples)
    assert len(calls) == 4                          # label 1 only
    _assert_same(model, fit_samples(GMM(components=3), values, samples))


def test_refits_do_not_change_what_is_remembered():
    rng = np.random.default_rng(2)
    values = rng.random((40, 50, 3))
    samples = _samples((40, 50), 3)
    model = GMM(components=3)
    fit_samples(model, values, samples)
    before = [tuple(a.copy() for a in p) for p in _parameters(model)]
    model.refit(values, [np.ones((40, 50))] * 3)    # GrabCut's iteration on the whole image
    assert not np.array_equal(_parameters(model)[0][1], before[0][1])
    fit_samples(model, values, samples)             # remembered: the fits as they were
    for got, want in zip(_parameters(model), before):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    _assert_same(model, fit_samples(GMM(components=3), values, samples))
