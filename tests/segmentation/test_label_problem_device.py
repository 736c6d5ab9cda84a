"""Several objects' label problem (``_problems.label_problem``: quantised costs relative to
each pixel's cheapest label, pins, offset) built on the GPU path equals the host's, its oracle
(checked against brute force in test_multilabel.py). Run on the stand-in for CuPy (the shipped
kernels compiled as host C++, the array code as NumPy; tests/support/fake_cupy.py) and, marked
``gpu``, on a real GPU."""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.segmentation import label_problem
from test_device_seeds import gpu  # noqa: F401 - the fixture: the stand-in or CuPy


def _host(array):
    return np.asarray(array.get() if hasattr(array, "get") else array)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_device_problem_equals_the_hosts(gpu, weighted):  # noqa: F811
    rng = np.random.default_rng(18)
    for trial in range(6):
        labels, h, w = int(rng.integers(2, 5)), int(rng.integers(2, 9)), int(rng.integers(2, 9))
        costs = rng.normal(0, 2, (labels, h, w))
        right = rng.integers(0, 50, (h, w - 1)).astype(np.int32)
        down = rng.integers(0, 50, (h - 1, w)).astype(np.int32)
        pinned = np.where(rng.random((h, w)) < 0.4, rng.integers(0, labels, (h, w)), -1)
        weights = rng.random((h, w)) + 0.5 if weighted else None
        host = label_problem(costs, (right, down), pinned, scale=1000.0, weights=weights)
        device = label_problem(gpu.asarray(costs), (gpu.asarray(right), gpu.asarray(down)),
                               gpu.asarray(pinned), scale=1000.0,
                               weights=None if weights is None else gpu.asarray(weights))
        np.testing.assert_array_equal(_host(device.costs), host.costs)
        assert device.offset == pytest.approx(host.offset, rel=1e-12), trial
        pins = pinned >= 0  # the pins: 0 for the pinned label, unaffordable for the others
        chosen = np.take_along_axis(host.costs, np.maximum(pinned, 0)[None], axis=0)[0]
        assert (chosen[pins] == 0).all()
        assert (host.costs[:, pins] >= 0).all() and (host.costs.max(axis=0)[pins] > 0).all()
