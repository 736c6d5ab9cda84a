"""The binary problem's GPU path in one launch (``energy_kernels.cu``'s ``binary_capacities``)
and the capacity of a cut in one launch (``cut_capacity_2d``), against the NumPy path
(``_binary_on_host``, itself checked against PyMaxflow elsewhere) and a brute-force sum over
the arcs: the same integer capacities, the same cut capacities, the offset within rounding,
and the generic path's error messages when a value is out of range.

Run on the strict CPU stand-in of CuPy (tests/support/fake_cupy.py: the kernels compiled as
host C++, one thread; it does not show races or real timing) and, where there is a GPU, on
CuPy (``gpu`` marker).
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import fake_cupy
from graphcut.segmentation._problems import (_fused_on_device, binary_problem,
                                             cut_capacity)
from test_energy_kernels import gpu, on_host  # noqa: F401  (the fixture and its helper)


def _case(shape, seed, *, weighted=False, negative=True):
    rng = np.random.default_rng(seed)
    low = -3.0 if negative else 0.0
    cost_object = rng.uniform(low, 6.0, shape)
    cost_background = rng.uniform(low, 6.0, shape)
    constraints = rng.choice(np.array([0, 0, 0, 1, 2], np.uint8), shape)
    right = rng.integers(0, 5000, (shape[0], shape[1] - 1)).astype(np.int32)
    down = rng.integers(0, 5000, (shape[0] - 1, shape[1])).astype(np.int32)
    weights = rng.uniform(0.5, 3.0, shape) if weighted else None
    return cost_object, cost_background, constraints, (right, down), weights


def _brute_cut(network, side):
    """The cut's capacity summed arc by arc (Python loops: tiny grids only)."""
    h, w = side.shape
    total = 0
    for y in range(h):
        for x in range(w):
            total += int(network.sink[y, x]) if side[y, x] else int(network.source[y, x])
            for (dy, dx), forward, backward in (((0, 1), network.forward[1],
                                                 network.backward[1]),
                                                ((1, 0), network.forward[0],
                                                 network.backward[0])):
                if y + dy < h and x + dx < w and side[y, x] != side[y + dy, x + dx]:
                    total += int(forward[y, x] if side[y, x] else backward[y, x])
    return total


@pytest.mark.parametrize("shape", [(1, 1), (1, 6), (5, 1), (7, 9), (40, 33)])
@pytest.mark.parametrize("weighted", [False, True])
def test_fused_problem_equals_the_host_problem(gpu, shape, weighted):  # noqa: F811
    cost_object, cost_background, constraints, (right, down), weights = _case(
        shape, sum(shape), weighted=weighted)
    device = [gpu.asarray(a) for a in (cost_object, cost_background, constraints, right, down)]
    device_weights = None if weights is None else gpu.asarray(weights)
    assert _fused_on_device(device[0], device[1], device[3:], device[2], device_weights)
    got = binary_problem(device[0], device[1], tuple(device[3:]), device[2], scale=1000.0,
                         weights=device_weights)
    expected = binary_problem(cost_object, cost_background, (right, down), constraints,
                              scale=1000.0, weights=weights)
    np.testing.assert_array_equal(on_host(got.network.source), expected.network.source)
    np.testing.assert_array_equal(on_host(got.network.sink), expected.network.sink)
    for mine, theirs in zip((*got.network.forward, *got.network.backward),
                            (*expected.network.forward, *expected.network.backward)):
        np.testing.assert_array_equal(on_host(mine), theirs)
    assert got.offset == pytest.approx(expected.offset, rel=1e-12, abs=1e-9)
    assert got.scale == expected.scale
    rng = np.random.default_rng(7)
    for _ in range(3):  # the energy of a few masks: the cut capacity in one launch
        side = rng.random(shape) < 0.5
        want = _brute_cut(expected.network, side) if side.size <= 100 else \
            cut_capacity(expected.network, side)
        assert cut_capacity(expected.network, side) == want
        assert cut_capacity(got.network, gpu.asarray(side)) == want
        assert got.energy(gpu.asarray(side)) == pytest.approx(expected.energy(side),
                                                              rel=1e-12, abs=1e-9)


@contextlib.contextmanager
def _generic_path_allowed():
    """The error paths run the generic path (CuPy ufuncs): the stand-in's strict mode off."""
    strict = fake_cupy.ndarray.strict
    fake_cupy.set_strict(False)
    try:
        yield
    finally:
        fake_cupy.set_strict(strict)


def test_fused_problem_keeps_the_generic_messages(gpu):  # noqa: F811
    with _generic_path_allowed():
        _check_messages(gpu)


def _check_messages(gpu):  # noqa: F811
    cost_object, cost_background, constraints, nlinks, _ = _case((6, 7), 3, negative=False)
    on_device = [gpu.asarray(a) for a in (cost_object, cost_background, constraints)]
    links = tuple(gpu.asarray(a) for a in nlinks)
    bad_costs = cost_background.copy()
    bad_costs[2, 3] = np.nan
    with pytest.raises(ValueError, match=r"background costs \(source capacities\) must be "
                                         "finite"):
        binary_problem(on_device[0], gpu.asarray(bad_costs), links, on_device[2], scale=10.0)
    with pytest.raises(ValueError, match=r"object costs \(sink capacities\) reach .* int32"):
        binary_problem(gpu.asarray(cost_object * 1e9), on_device[1], links, on_device[2],
                       scale=1000.0)
    bad_constraints = constraints.copy()
    bad_constraints[0, 0] = 7
    with pytest.raises(ValueError, match="7"):
        binary_problem(*on_device[:2], links, gpu.asarray(bad_constraints), scale=10.0)
    big = tuple(gpu.asarray(np.full(a.shape, 2**30, np.int32)) for a in nlinks)
    with pytest.raises(ValueError, match="hard-constraint capacity .* int32"):
        binary_problem(*on_device[:2], big, on_device[2], scale=10.0)


def test_other_layouts_take_the_generic_path(gpu):  # noqa: F811
    cost_object, cost_background, constraints, (right, down), _ = _case((5, 6), 4)
    device = [gpu.asarray(a) for a in (cost_object, cost_background, constraints, right, down)]
    assert not _fused_on_device(device[0], device[1], device[3:],
                                gpu.asarray(constraints.astype(np.int32)), None)
    assert not _fused_on_device(device[0], device[1], device[3:], device[2],
                                gpu.asarray(np.ones((1, 6))))
    assert not _fused_on_device(cost_object, cost_background, (right, down), constraints,
                                None)
