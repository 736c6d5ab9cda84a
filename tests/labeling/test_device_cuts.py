"""The GPU's cutter of expansion moves (``_device_cuts.device_move_cut``) solves the balanced
network (``_balance.balanced``) and reports the move network's own flow and source side.

On the CPU the push-relabel core is stood in for by PyMaxflow (``min_cut(device="cpu")``), so
what is checked here is the wrapper: which network the core is handed and how its answer is
turned back into the move network's (the offset, the source side). On the GPU the same
comparison runs with the real core, CuPy networks in and out.
"""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.labeling import _device_cuts, expansion_network
from graphcut.solver import min_cut
from oracle import random_labeling_problem


def move_networks(rng, count):
    for _ in range(count):
        shape = tuple(int(n) for n in rng.integers(2, 12, 2))
        labels = int(rng.integers(2, 5))
        costs, weights = random_labeling_problem(rng, shape, labels=labels)
        current = rng.integers(0, labels, shape).astype(np.int32)
        alpha = int(rng.integers(0, labels))
        yield expansion_network(costs, weights, current, alpha,
                                linear_truncation=int(rng.integers(1, 3)))[0]


@pytest.mark.parametrize("balance", [True, False])
def test_the_cut_of_the_balanced_network_is_the_moves_own(monkeypatch, balance):
    handed = []

    def core(network, device):  # the push-relabel core, stood in for by PyMaxflow
        assert device == "cuda"
        handed.append(network)
        return min_cut(network, device="cpu")
    monkeypatch.setattr(_device_cuts, "min_cut", core)
    monkeypatch.setattr(_device_cuts, "BALANCE", balance)
    rng = np.random.default_rng(31)
    for network in move_networks(rng, 60):
        expected = min_cut(network, device="cpu")
        got = _device_cuts.device_move_cut(network)
        assert got.flow == expected.flow
        np.testing.assert_array_equal(got.source_side, expected.source_side)
        assert got.stats.get("balanced", False) is balance
        # balanced: the core gets arcs both ways (a move network has forward arcs only)
        backward = any(bool(arc.any()) for arc in handed[-1].backward)
        assert backward == (balance and any(bool(arc.any()) for arc in network.forward))


@pytest.mark.gpu
def test_gpu_moves_are_cut_with_the_cpus_flow_and_source_side():
    import cupy
    rng = np.random.default_rng(32)
    for network in move_networks(rng, 25):
        expected = min_cut(network, device="cpu")
        got = _device_cuts.device_move_cut(_on_gpu(network, cupy))
        assert got.flow == expected.flow and got.stats["balanced"]
        np.testing.assert_array_equal(cupy.asnumpy(got.source_side), expected.source_side)


def _on_gpu(network, cupy):
    from graphcut.solver import GridNetwork
    return GridNetwork.from_checked(cupy.asarray(network.source), cupy.asarray(network.sink),
                                    tuple(cupy.asarray(a) for a in network.forward),
                                    tuple(cupy.asarray(a) for a in network.backward))
