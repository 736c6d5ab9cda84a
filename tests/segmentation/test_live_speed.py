"""The speed changes of the live models give the same numbers as the code they replace:
the coarse grid's block pooling (NumPy's strided views against the reshaped reduction), the
GMM's reductions over its components and its log densities in chunks of rows, the GMM's
principal-axis split on the host for a small GPU sample, and the learned model's scoring
kernel read through shared-memory tiles (against the float64 formula, on the stand-in with
more features than a tile holds, and on a GPU with every tile size)."""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.models import _gmm
from graphcut.models._principal_axes import principal_axis_split
from graphcut.segmentation._coarse import _pool
from test_learned_fake_cupy import cupy  # noqa: F401 - the stand-in CuPy fixture

# the kernel works in float32 (as tests/segmentation/test_learned_fake_cupy.py states)
MAX_COST_TOLERANCE = {"atol": 1e-5, "rtol": 1e-5}


def formula_costs(features, shape):
    """Random float32 features, weights, and the costs of the formula in float64."""
    from graphcut.models._learned import MAX_COST
    rng = np.random.default_rng(features)
    x = rng.normal(0, 2, (*shape, features)).astype(np.float32)
    beta = rng.normal(0, 1.5 / np.sqrt(features), 2 * features + 1)
    x64 = x.astype(np.float64)
    z = np.clip(beta[0] + x64 @ beta[1:features + 1] + (x64 * x64) @ beta[features + 1:],
                -30, 30)
    expected = np.minimum(np.stack([np.logaddexp(0, -z), np.logaddexp(0, z)]), MAX_COST)
    return x, beta, expected


@pytest.mark.parametrize("shape,f", [((1, 1), 1), ((5, 7), 3), ((37, 53), 4), ((64, 64), 8),
                                     ((301, 403), 2)])
def test_pooling_equals_the_reshaped_reduction(shape, f):
    rng = np.random.default_rng(shape[0])
    h, w = shape
    hc, wc = -(-h // f), -(-w // f)
    for array, reduce in ((rng.random(shape) > 0.9, "any"), (rng.random(shape), "max"),
                          (rng.random(shape) > 0.5, "max")):
        padded = np.pad(array, ((0, hc * f - h), (0, wc * f - w)), mode="edge")
        expected = getattr(padded.reshape(hc, f, wc, f), reduce)(axis=(1, 3))
        got = _pool(array, f, np, reduce)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("components", [1, 2, 5, 7, 9])
def test_reductions_over_components_equal_numpys(components):
    array = np.random.default_rng(components).normal(0, 30, (1001, components))
    np.testing.assert_array_equal(_gmm._across_components(np.maximum, array), array.max(axis=1))
    np.testing.assert_array_equal(_gmm._across_components(np.add, array), array.sum(axis=1))


def test_log_densities_in_chunks_match_the_whole_image(monkeypatch):
    """The chunks' matrix products may round their last bit otherwise: the costs agree to
    1e-12 nats, and a model fitted and evaluated with tiny chunks gives the same costs."""
    rng = np.random.default_rng(3)
    values = rng.random((70, 90, 3))
    mask = values[..., 0] > 0.5
    whole = _gmm.GMMModel(components=3).fit(values, mask)
    monkeypatch.setattr(_gmm, "CHUNK_ROWS", 257)
    chunked = _gmm.GMMModel(components=3).fit(values, mask)
    np.testing.assert_allclose(chunked.means, whole.means, rtol=1e-12)
    np.testing.assert_allclose(chunked.costs(values), whole.costs(values), atol=1e-12)
    features = whole._features_of(values)
    linear, constant = whole._linear_form(3)
    log_parts = features @ linear + constant
    expected = -np.log(np.exp(log_parts).sum(axis=1))
    costs, parts, total = _gmm._log_densities_in_chunks(features, linear, constant)
    np.testing.assert_allclose(costs, expected, atol=1e-12)
    np.testing.assert_allclose(parts / total[:, None],
                               np.exp(log_parts) / np.exp(log_parts).sum(axis=1)[:, None],
                               atol=1e-12)


def test_a_small_gpu_sample_is_split_on_the_host(cupy):  # noqa: F811
    rng = np.random.default_rng(4)
    x = rng.random((500, 3))
    weight = rng.random(500)
    split = principal_axis_split
    expected, count = split(x, weight, 5)
    got, got_count = split(cupy.asarray(x), cupy.asarray(weight), 5)
    assert type(got).__module__.split(".")[0] == "cupy" and got_count == count == 5
    np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.parametrize("features", [40, 64])
def test_scoring_beyond_a_tile_equals_the_formula(cupy, features):  # noqa: F811
    """More features than a shared-memory tile holds: each thread reads its own row."""
    from graphcut.models._learned import MAX_COST
    from graphcut.models._learned_kernels import fused_binary_costs
    x, beta, expected = formula_costs(features, (13, 17))
    costs = fused_binary_costs(cupy.asarray(x), cupy.asarray(beta), MAX_COST)
    np.testing.assert_allclose(np.asarray(costs), expected, **MAX_COST_TOLERANCE)


@pytest.mark.gpu
@pytest.mark.parametrize("features", [1, 9, 27, 32, 33, 64])
@pytest.mark.parametrize("shape", [(1, 1), (17, 15), (300, 301)])
def test_scoring_kernel_on_the_gpu_equals_the_formula(features, shape):
    """Tiles of 256 rows, a last partial tile, and the direct path beyond 32 features."""
    import cupy as real
    from graphcut.models._learned import MAX_COST
    from graphcut.models._learned_kernels import fused_binary_costs
    x, beta, expected = formula_costs(features, shape)
    costs = fused_binary_costs(real.asarray(x), real.asarray(beta), MAX_COST)
    np.testing.assert_allclose(costs.get(), expected, **MAX_COST_TOLERANCE)
