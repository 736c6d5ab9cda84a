"""The Gaussian mixture's costs in one GPU launch (graphcut/models/gmm_kernels.cu,
``_gmm_kernels.fused_mixture_costs``), run on the CPU stand-in of CuPy
(tests/support/fake_cupy.py: the kernel compiled as host C++; it does not show races or real
timing) and on a GPU where there is one: within 1e-9 nats of -log sum_k pi_k N(x; mu_k,
Sigma_k) written out from the mixture's parameters (test_gmm_costs_cpu's reference), equal to
the NumPy costs to rounding, and used by GMMModel.costs for an image the model did not learn
from."""

import numpy as np
import pytest

import fake_cupy
from graphcut.models import GMMModel
from test_gmm_costs_cpu import _fitted, _image, _reference_costs


@pytest.fixture(params=["stand-in", pytest.param("cuda", marks=pytest.mark.gpu)])
def cupy(request, monkeypatch):
    if request.param == "cuda":
        import cupy
        yield cupy
        return
    yield from fake_cupy.stand_in_cupy(monkeypatch, request.getfixturevalue("kernel_library"))


def _host(array):
    return np.asarray(array.get() if hasattr(array, "get") else array)


@pytest.mark.parametrize("channels,components", [(1, 1), (1, 3), (3, 5), (4, 5), (4, 16)])
def test_fused_costs_equal_the_mixture_density(cupy, channels, components):
    from graphcut.models._gmm_kernels import fused_mixture_costs

    values = _image(channels=channels, seed=channels + components)
    model = _fitted(values, components=components)
    device_values = cupy.asarray(values)
    got = fused_mixture_costs(device_values, *model._linear_form(channels))
    assert got is not None and type(got).__module__.split(".")[0] == "cupy"
    np.testing.assert_allclose(_host(got), _reference_costs(model, values), rtol=0, atol=1e-9)
    # GMMModel.costs on an image it did not learn from takes the kernel: the same numbers
    costs = model.costs(device_values)
    np.testing.assert_array_equal(_host(costs).ravel(), _host(got))
    np.testing.assert_allclose(_host(costs), model.costs(values), rtol=1e-12, atol=1e-12)


def test_other_inputs_take_the_generic_path(cupy):
    from graphcut.models._gmm_kernels import fused_mixture_costs

    values = _image(channels=5)
    model = _fitted(values, components=3)
    linear, constant = model._linear_form(5)
    assert fused_mixture_costs(cupy.asarray(values), linear, constant) is None  # 5 channels
    three = _image(channels=3)
    linear, constant = _fitted(three, components=3)._linear_form(3)
    assert fused_mixture_costs(cupy.asarray(three.astype(np.float32)), linear, constant) is None
    assert fused_mixture_costs(three, linear, constant) is None                  # NumPy
    strided = cupy.asarray(np.ascontiguousarray(three.transpose(1, 0, 2))).transpose(1, 0, 2)
    assert fused_mixture_costs(strided, linear, constant) is None                # not contiguous
