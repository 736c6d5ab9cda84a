"""The locality costs of a live model's blocks on the GPU (``_locality._block_cost``: the
``nearest_seed_cost`` kernel's exact integer distances looked up in a table of the host's
costs) are the host path's numbers (SciPy's distance transform), bit for bit. Run on the
stand-in for CuPy (the shipped kernels compiled as host C++; tests/support/fake_cupy.py) and,
marked ``gpu``, on a real GPU; the table's arithmetic also on the host alone."""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.segmentation import _locality
from test_device_seeds import gpu  # noqa: F401 - the fixture: the stand-in or CuPy

CONSTANTS = dict(strength=2.0, far=3.0, rho=40.0, reach=160.0)


def _host(array):
    return np.asarray(array.get() if hasattr(array, "get") else array)


def _seeded(rng, shape, share):
    chosen = rng.random(shape) < share
    chosen.reshape(-1)[int(rng.integers(0, chosen.size))] = True  # at least one
    return chosen


def test_the_table_of_squared_distances_gives_the_transforms_costs():
    """The host's cost from SciPy's distances equals the table's entry at the brute-force
    integer squared distance (what the kernel computes), exactly."""
    rng = np.random.default_rng(18)
    for trial, block in enumerate((2, 8, 13)):
        shape = (int(rng.integers(5, 40)), int(rng.integers(5, 40)))
        chosen = _seeded(rng, shape, (0.002, 0.05, 0.3)[trial])
        _locality._memo.clear()
        expected = _locality._block_cost(chosen, block, xp=np, **CONSTANTS)
        rows, cols = np.indices(shape)
        seed_rows, seed_cols = np.nonzero(chosen)
        squared = ((rows[..., None] - seed_rows) ** 2 +
                   (cols[..., None] - seed_cols) ** 2).min(axis=-1)
        largest = (shape[0] - 1) ** 2 + (shape[1] - 1) ** 2
        distance = np.sqrt(np.arange(largest + 1, dtype=np.float64))
        table = _locality._cost_of_squared((distance * block) ** 2, **CONSTANTS)
        np.testing.assert_array_equal(table[squared], expected)


@pytest.mark.parametrize("block", [3, 8])
def test_block_priors_on_the_device_equal_the_hosts(gpu, block, monkeypatch):  # noqa: F811
    monkeypatch.setattr(_locality, "_memo", [])
    monkeypatch.setattr(_locality, "_tables", {})
    rng = np.random.default_rng(block)
    seeds = np.zeros((61, 77), np.uint8)
    for label, share in ((1, 0.01), (2, 0.03), (3, 0.0)):  # label 3: no seeds
        seeds[rng.random(seeds.shape) < share] = label
    labels, objects = [2, 1, 3], [1, 3]
    expected = _locality._locality_priors(seeds, labels, 1.5, np, far_cost=2.5,
                                          objects=objects, block=block)
    got = _locality._locality_priors(gpu.asarray(seeds), labels, 1.5, gpu, far_cost=2.5,
                                     objects=objects, block=block)
    assert got[2] is None and expected[2] is None
    for host, device in zip(expected[:2], got[:2]):
        assert type(device).__module__.split(".")[0] == "cupy"
        np.testing.assert_array_equal(_host(device), host)
    assert _locality._tables  # the kernel's path ran
    for name in ("DEVICE_PAIRS", "TABLE_ENTRIES"):  # too many pairs, too long a table:
        with monkeypatch.context() as patch:      # the host's transform on the device
            patch.setattr(_locality, name, 0)
            _locality._memo.clear()
            _locality._tables.clear()
            again = _locality._locality_priors(gpu.asarray(seeds), labels, 1.5, gpu,
                                               far_cost=2.5, objects=objects, block=block)
            assert not _locality._tables
        for host, device in zip(expected[:2], again[:2]):
            np.testing.assert_array_equal(_host(device), host)
