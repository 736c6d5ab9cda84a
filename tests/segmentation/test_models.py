"""Colour models: the GMM against known mixtures and an independent EM step, the histogram
against today's regional costs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal

import graphcut
from graphcut._arrays import image_as_float
from graphcut.models import GMMModel, HistogramModel, make_model

TRUE_MEANS = np.array([[0.2, 0.3, 0.4], [0.7, 0.2, 0.1], [0.5, 0.8, 0.6]])
TRUE_WEIGHTS = np.array([0.5, 0.3, 0.2])


def true_covariances(rng):
    covariances = []
    for _ in range(3):
        a = rng.normal(0, 0.04, (3, 3))
        covariances.append(a @ a.T + 0.001 * np.eye(3))
    return np.array(covariances)


def mixture_image(shape=(150, 200), seed=0, means=TRUE_MEANS, weights=TRUE_WEIGHTS,
                  covariances=None):
    """(values (H, W, C), covariances): pixels drawn i.i.d. from a Gaussian mixture."""
    rng = np.random.default_rng(seed)
    covariances = true_covariances(rng) if covariances is None else covariances
    n = shape[0] * shape[1]
    which = rng.choice(len(weights), n, p=weights)
    x = np.empty((n, means.shape[1]))
    for k in range(len(weights)):
        chosen = which == k
        x[chosen] = rng.multivariate_normal(means[k], covariances[k], int(chosen.sum()))
    return x.reshape(*shape, means.shape[1]), covariances


def mixture_nll(x, weights, means, covariances):
    p = sum(w * multivariate_normal(m, c).pdf(x) for w, m, c in zip(weights, means, covariances))
    return -np.log(p)


def by_first_coordinate(model):
    order = np.argsort(model.means[:, 0])
    return model.weights[order], model.means[order], model.covariances[order]


def test_gmm_recovers_a_known_mixture():
    values, covariances = mixture_image()
    model = GMMModel(3, em_steps=40, covariance_floor=1e-9).fit(values, np.ones((150, 200), bool))
    weights, means, fitted = by_first_coordinate(model)
    order = np.argsort(TRUE_MEANS[:, 0])
    np.testing.assert_allclose(weights, TRUE_WEIGHTS[order], atol=0.01)
    np.testing.assert_allclose(means, TRUE_MEANS[order], atol=0.005)
    np.testing.assert_allclose(fitted, covariances[order], atol=2e-4)
    # the fitted mixture explains the pixels as well as the true one (to sampling error)
    x = values.reshape(-1, 3)
    ours = model.costs(values).mean()
    truth = mixture_nll(x, TRUE_WEIGHTS, TRUE_MEANS, covariances).mean()
    assert abs(ours - truth) < 0.01 and ours <= truth + 1e-3


def test_gmm_costs_are_the_mixture_density():
    values, _ = mixture_image((30, 40), seed=3)
    model = GMMModel(4).fit(values, np.ones((30, 40), bool))
    expected = mixture_nll(values.reshape(-1, 3), model.weights, model.means, model.covariances)
    np.testing.assert_allclose(model.costs(values).ravel(), expected, rtol=1e-9, atol=1e-9)


def reference_em_step(x, weight, weights, means, covariances, floor):
    """One EM step written out with scipy densities (independent of graphcut.models)."""
    dens = np.stack([w * multivariate_normal(m, c).pdf(x)
                     for w, m, c in zip(weights, means, covariances)], axis=1)
    resp = dens / dens.sum(axis=1, keepdims=True) * weight[:, None]
    counts = resp.sum(axis=0)
    new_means = (resp.T @ x) / counts[:, None]
    new_covs = []
    for k in range(len(counts)):
        d = x - new_means[k]
        new_covs.append((resp[:, k, None] * d).T @ d / counts[k] + floor * np.eye(x.shape[1]))
    return counts / counts.sum(), new_means, np.array(new_covs)


@pytest.mark.parametrize("channels", [3, 1])
def test_gmm_refit_is_one_em_step(channels):
    rng = np.random.default_rng(7)
    values = rng.random((24, 30, channels))
    weight = rng.choice([0.0, 1.0, 2.5], size=(24, 30))
    model = GMMModel(3, em_steps=0).fit(values, np.ones((24, 30), bool))
    start = (model.weights.copy(), model.means.copy(), model.covariances.copy())
    model.refit(values, weight)
    expected = reference_em_step(values.reshape(-1, channels), weight.ravel(), *start,
                                 model.covariance_floor)
    for ours, theirs in zip((model.weights, model.means, model.covariances), expected):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_gmm_refit_never_raises_the_sample_cost():
    values, _ = mixture_image((40, 50), seed=5)
    rng = np.random.default_rng(1)
    mask = rng.random((40, 50)) < 0.6
    model = GMMModel(5, em_steps=0).fit(values, mask)
    previous = model.costs(values)[mask].sum()
    for _ in range(15):
        model.refit(values, mask)
        current = model.costs(values)[mask].sum()
        # EM with the covariance floor is EM for a slightly regularised likelihood: allow the
        # floor's size, which is far below any real change
        assert current <= previous + 1e-6 * mask.sum()
        previous = current


def test_gmm_grey_images_use_one_dimension():
    means = np.array([[0.2], [0.75]])
    covariances = np.array([[[0.002]], [[0.004]]])
    values, _ = mixture_image((100, 100), seed=2, means=means, weights=np.array([0.4, 0.6]),
                              covariances=covariances)
    model = GMMModel(2, em_steps=30, covariance_floor=1e-9).fit(values, np.ones((100, 100), bool))
    weights, fitted_means, fitted = by_first_coordinate(model)
    assert fitted_means.shape == (2, 1) and fitted.shape == (2, 1, 1)
    np.testing.assert_allclose(weights, [0.4, 0.6], atol=0.02)
    np.testing.assert_allclose(fitted_means, means, atol=0.005)
    np.testing.assert_allclose(fitted, covariances, rtol=0.1)


def test_gmm_weights_count_pixels_that_many_times():
    values, _ = mixture_image((40, 50), seed=9)
    mask = np.zeros((40, 50), bool)
    mask[5:30, 10:45] = True
    plain = GMMModel().fit(values, mask)
    doubled = GMMModel().fit(values, np.where(mask, 2.0, 0.0))
    for a, b in ((plain.weights, doubled.weights), (plain.means, doubled.means),
                 (plain.covariances, doubled.covariances)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_gmm_single_colour_sample_has_finite_costs():
    values = np.full((20, 20, 3), 0.5)
    values[:, 10:] = 0.2
    model = GMMModel().fit(values, np.ones((20, 20), bool))
    assert len(model.weights) == 2  # two colours: nothing left to split
    costs = model.costs(values)
    assert np.isfinite(costs).all()


def test_histogram_model_equals_todays_regional_costs():
    rng = np.random.default_rng(0)
    image = (rng.random((30, 40, 3)) * 255).astype(np.uint8)
    seeds = np.zeros((30, 40), np.uint8)
    seeds[:5] = 2
    seeds[12:18, 15:25] = 1
    cost_object, cost_background = graphcut.regional_costs(image, seeds)
    values = image_as_float(image)
    assert np.array_equal(HistogramModel().fit(values, seeds == 1).costs(values), cost_object)
    assert np.array_equal(HistogramModel().fit(values, seeds == 2).costs(values),
                          cost_background)


def test_models_refuse_bad_input():
    values = np.zeros((4, 5, 3))
    for model in (GMMModel(), HistogramModel()):
        with pytest.raises(ValueError, match="empty"):
            model.fit(values, np.zeros((4, 5), bool))
        with pytest.raises(ValueError, match="mask shape"):
            model.fit(values, np.ones((5, 4), bool))
        with pytest.raises(RuntimeError, match="before fit"):
            type(model)().costs(values)
    with pytest.raises(ValueError, match="unknown colour model 'svm'"):
        make_model("svm")
    with pytest.raises(ValueError, match="components"):
        GMMModel(0)
    with pytest.raises(ValueError, match="bins"):
        HistogramModel(bins=1)


@pytest.mark.gpu
def test_gmm_on_the_gpu_matches_the_cpu():
    import cupy

    values, _ = mixture_image((60, 80), seed=4)
    mask = np.zeros((60, 80), bool)
    mask[10:50, 5:70] = True
    cpu = GMMModel().fit(values, mask)
    gpu = GMMModel().fit(cupy.asarray(values), cupy.asarray(mask))
    for a, b in ((cpu.weights, gpu.weights), (cpu.means, gpu.means),
                 (cpu.covariances, gpu.covariances)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cpu.costs(values), gpu.costs(cupy.asarray(values)).get(),
                               rtol=1e-9, atol=1e-9)


def test_histogram_labels_share_one_cell_index_and_equal_separate_fits():
    """``Histogram`` fits every label on one per-pixel cell index (kept while the same features
    array comes back): its costs equal one ``HistogramModel`` per label fitted on its own, also
    after a new image on the same model object."""
    from graphcut.models import Histogram
    rng = np.random.default_rng(4)
    model = Histogram()
    for _ in range(2):  # the second image must not reuse the first one's cells
        values = image_as_float((rng.random((24, 31, 3)) * 255).astype(np.uint8))
        samples = [rng.random((24, 31)) < 0.1 for _ in range(4)]
        for _ in range(2):  # a second fit on the same values reuses the index
            costs = model.fit(values, samples).costs(values)
            for sample, cost in zip(samples, costs):
                assert np.array_equal(cost, HistogramModel().fit(values, sample).costs(values))
