"""The GPU's balancing of an expansion move's network (``expansion_kernels.cu``'s
``balance_network``, called by ``_cuda.balanced_network``) gives the arrays and the offset of
the NumPy ``_balance.balanced``, its oracle (itself checked against every cut's capacity in
test_balanced_cuts.py). Run on the stand-in for CuPy (the kernels compiled as host C++,
tests/support/fake_cupy.py) and, marked ``gpu``, on a real GPU."""

from __future__ import annotations

import itertools
import sys

import numpy as np
import pytest

import fake_cupy
from graphcut.labeling import PairWeights, expansion_network
from graphcut.labeling._balance import balanced
from graphcut.solver import GridNetwork
from oracle import random_grid_network
from test_balanced_cuts import cut_capacity

INT32_MAX = int(np.iinfo(np.int32).max)


@pytest.fixture(params=["stand-in", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request, monkeypatch):
    """``(cupy, balanced_network)`` on a GPU or on the stand-in."""
    if request.param == "cuda":
        import cupy

        from graphcut.labeling._cuda import balanced_network
        yield cupy, balanced_network
        return
    stand_in = fake_cupy.stand_in_cupy(monkeypatch, request.getfixturevalue("kernel_library"))
    module = next(stand_in)
    monkeypatch.delitem(sys.modules, "graphcut.labeling._cuda", raising=False)
    from graphcut.labeling._cuda import balanced_network
    yield module, balanced_network
    sys.modules.pop("graphcut.labeling._cuda", None)
    next(stand_in, None)


def _on(cupy, network):
    return GridNetwork.from_checked(*(cupy.asarray(a) for a in (network.source, network.sink)),
                                    tuple(cupy.asarray(a) for a in network.forward),
                                    tuple(cupy.asarray(a) for a in network.backward))


def _host(array):
    return np.asarray(array.get() if hasattr(array, "get") else array)


def _networks(rng):
    for trial in range(30):
        shape = tuple(int(n) for n in rng.integers(1, 9, 2))
        if trial % 3 == 0 and min(shape) > 1:  # a move's network: arcs forward only
            costs = rng.integers(0, 40, (3, *shape)).astype(np.int32)
            weights = PairWeights(rng.integers(0, 15, (shape[0], shape[1] - 1)),
                                  rng.integers(0, 15, (shape[0] - 1, shape[1])))
            labels = rng.integers(0, 3, shape).astype(np.int32)
            yield expansion_network(costs, weights, labels, int(rng.integers(0, 3)))[0]
        else:  # both directions, odd differences (the floor of negative halves)
            yield random_grid_network(rng, shape, kind=("random", "sparse")[trial % 2])


def test_the_kernel_gives_numpys_balanced_network_and_offset(device):
    cupy, balanced_network = device
    rng = np.random.default_rng(18)
    for network in _networks(rng):
        expected, offset = balanced(network)
        result = balanced_network(_on(cupy, network))
        assert result is not None
        got, got_offset = result
        assert got_offset == offset
        np.testing.assert_array_equal(_host(got.source), expected.source)
        np.testing.assert_array_equal(_host(got.sink), expected.sink)
        for got_arcs, expected_arcs in ((got.forward, expected.forward),
                                        (got.backward, expected.backward)):
            for a, b in zip(got_arcs, expected_arcs):
                np.testing.assert_array_equal(_host(a), b)


def test_a_terminal_beyond_int32_answers_none(device):
    """Two arcs into one pixel with a source capacity, half of each pushed into it: its netted
    source capacity exceeds int32, and the caller must solve the network as given (NumPy
    says None too). One less and it fits exactly: the kernel balances it (NumPy's looser
    bound still says None) and every cut costs the network's less the offset."""
    cupy, balanced_network = device
    zeros = np.zeros((3, 3), np.int32)
    right, down = np.zeros((3, 2), np.int32), np.zeros((2, 3), np.int32)
    right[1, 0] = down[0, 1] = INT32_MAX - 1  # each pushes (INT32_MAX - 1) / 2 into (1, 1)
    source = zeros.copy()
    source[1, 1] = 2
    network = GridNetwork(source, zeros, right, down, 0 * right, 0 * down)  # one way
    assert balanced(network) is None
    assert balanced_network(_on(cupy, network)) is None
    source[1, 1] = 1  # 1 + 2 * (INT32_MAX - 1) / 2 = INT32_MAX
    fits = GridNetwork(source, zeros, right, down, 0 * right, 0 * down)
    result = balanced_network(_on(cupy, fits))
    assert result is not None
    even = GridNetwork(*(_host(a) for a in (result[0].source, result[0].sink)),
                       *(_host(a) for a in result[0].forward[::-1]),
                       *(_host(a) for a in result[0].backward[::-1]))
    assert int(even.source[1, 1]) == INT32_MAX
    for bits in itertools.product([False, True], repeat=9):
        side = np.array(bits).reshape(3, 3)
        assert cut_capacity(fits, side) == cut_capacity(even, side) + result[1]
