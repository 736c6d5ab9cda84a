"""The GPU path of the stereo pipeline, run on the CPU: the CUDA kernels compiled as host C++
and a NumPy-backed stand-in for CuPy (tests/fake_cupy.py); and the kernels compiled with nvcc
(they are in solver/cuda's table of shipped builds, loaded by its one loader). The device loop, the device cost
volume and the right-view labels must give exactly what the NumPy code gives (which the other
stereo tests check against brute force and ground truth). On a machine with a GPU the `gpu`
tests of test_stereo.py check the same on the real device.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import fake_cupy
from graphcut.solver import CutResult
from graphcut.solver import min_cut as real_min_cut


@pytest.fixture
def fake_gpu(kernel_library, monkeypatch):
    """Route device="cuda" through the fake CuPy; min-cuts are solved by the CPU backend (its
    cut is the same set the GPU backend returns)."""
    module = fake_cupy.fake_cupy_module(kernel_library)
    monkeypatch.setenv("GRAPHCUT_CUDA_KERNELS", "nvrtc")  # the stand-in compiles sources
    loaders = ("graphcut.labeling._cuda", "graphcut.stereo._cuda", *fake_cupy.LOADERS)
    saved = {name: sys.modules.pop(name) for name in ("cupy", *loaders) if name in sys.modules}
    sys.modules["cupy"] = module
    import graphcut.labeling._device_cuts as device_cuts
    import graphcut.labeling._expansion as expansion
    import graphcut.stereo._disparity as pipeline

    def min_cut(network, *, device="auto"):
        if device == "cpu":
            return real_min_cut(network, device="cpu")
        assert device == "cuda" and network.on_gpu
        cut = real_min_cut(network.to_numpy(), device="cpu")
        return CutResult(cut.flow, cut.source_side.view(fake_cupy.ndarray), "cuda", cut.stats)

    def resolve_device(device):
        return "cpu" if device == "cpu" else "cuda"

    monkeypatch.setattr(device_cuts, "min_cut", min_cut)  # the GPU's moves (balanced)
    monkeypatch.setattr(expansion, "resolve_device", resolve_device)
    monkeypatch.setattr(pipeline, "resolve_device", resolve_device)
    monkeypatch.setattr(pipeline, "_check_memory", lambda shape, d, backend, device, cost:
                        backend)
    try:
        yield module
    finally:  # the loaders imported with the stand-in must not outlive the test
        for name in ("cupy", *loaders):
            sys.modules.pop(name, None)
        sys.modules.update(saved)


def random_problem(rng, shape, labels, max_cost=60, max_weight=9):
    from graphcut.labeling import PairWeights
    costs = rng.integers(0, max_cost + 1, size=(labels, *shape)).astype(np.int32)
    weights = PairWeights(rng.integers(0, max_weight + 1, size=(shape[0], shape[1] - 1)),
                          rng.integers(0, max_weight + 1, size=(shape[0] - 1, shape[1])))
    return costs, weights


def same_moves(a, b):
    fields = ("alpha", "cycle", "flow", "constant", "energy_before", "energy_after",
              "accepted", "changed")
    return [[getattr(m, f) for f in fields] for m in a.moves] == \
        [[getattr(m, f) for f in fields] for m in b.moves]


@pytest.mark.parametrize("cap", [1, 2, 5])
@pytest.mark.parametrize("seed", range(2))
def test_device_loop_makes_the_host_loops_moves(fake_gpu, seed, cap):
    from graphcut.labeling import alpha_expansion
    rng = np.random.default_rng(seed)
    costs, weights = random_problem(rng, (9, 13), 6)
    host = alpha_expansion(costs, weights, device="cpu", linear_truncation=cap)
    device = alpha_expansion(fake_gpu.asarray(costs), weights, device="cuda",
                             linear_truncation=cap)
    assert type(device.labels) is np.ndarray
    np.testing.assert_array_equal(device.labels, host.labels)
    assert same_moves(device, host) and device.energy == host.energy
    assert device.initial_energy == host.initial_energy and host.num_moves > 6
    assert {"expansion_network", "apply_cut", "energy_terms", "cheapest_label"} \
        <= set(fake_gpu.kernel_calls)
    kept = alpha_expansion(fake_gpu.asarray(costs), weights, device="cuda",
                           linear_truncation=cap, device_labels=True)
    assert type(kept.labels) is not np.ndarray  # the device's array, not copied to the host
    np.testing.assert_array_equal(np.asarray(kept.labels), host.labels)
    assert alpha_expansion(costs, weights, device="cpu", device_labels=True).labels is not None


def test_device_loop_from_given_labels_with_a_callback(fake_gpu):
    from graphcut.labeling import alpha_expansion
    rng = np.random.default_rng(7)
    costs, weights = random_problem(rng, (6, 5), 4)
    start = rng.integers(0, 4, size=(6, 5)).astype(np.int32)
    networks = []
    device = alpha_expansion(costs, weights, device="cuda", initial_labels=start,
                             linear_truncation=2,
                             callback=lambda m, n, c: networks.append(n.to_numpy()))
    host_networks = []
    host = alpha_expansion(costs, weights, device="cpu", initial_labels=start,
                           linear_truncation=2,
                           callback=lambda m, n, c: host_networks.append(n))
    assert same_moves(device, host)
    for a, b in zip(networks, host_networks, strict=True):  # identical networks, not reused
        for name in ("source", "sink", "right", "down", "left", "up"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


@pytest.mark.parametrize("grey", [False, True])
@pytest.mark.parametrize("radius, window, aggregation", [
    (0, (9, 7), "box"), (2, (9, 7), "box"), (1, (5, 3), "box"), (0, (9, 7), "cross")])
def test_device_cost_volume_equals_the_host_one(fake_gpu, grey, radius, window, aggregation):
    from graphcut.stereo import CensusParameters, census_costs, right_view_labels
    rng = np.random.default_rng(3)
    shape = (23, 41) if grey else (23, 41, 3)
    left = rng.integers(0, 256, size=shape, dtype=np.uint8)
    right = np.roll(left, -4, axis=1)
    if aggregation == "cross":  # blocks of similar colour, so that the arms vary
        left = (left // 64 * 64 + left % 16).astype(np.uint8)
        right = np.roll(left, -4, axis=1)
    parameters = CensusParameters(window=window, aggregation_radius=radius,
                                  aggregation=aggregation, cross_threshold=12, cross_length=5,
                                  cross_minimum=1)
    channel_axis = None if grey else -1
    host = census_costs(left, right, max_disparity=20, channel_axis=channel_axis,
                        parameters=parameters, device="cpu")
    device = census_costs(left, right, max_disparity=20, channel_axis=channel_axis,
                          parameters=parameters, device="cuda")
    assert isinstance(device, fake_gpu.ndarray)
    np.testing.assert_array_equal(device.get(), host)
    np.testing.assert_array_equal(right_view_labels(device).get(), right_view_labels(host))
    if aggregation == "cross":
        assert {"cross_arms", "cross_rows", "cross_columns_mean"} <= set(fake_gpu.kernel_calls)


def test_device_pipeline_equals_the_host_pipeline(fake_gpu):
    from graphcut.stereo import disparity
    from graphcut.stereo.synthetic import synthetic_scene
    scene = synthetic_scene(shape=(60, 120), seed=2)
    kwargs = dict(max_disparity=scene.max_disparity, channel_axis=-1)
    host = disparity(scene.left, scene.right, device="cpu", **kwargs)
    device = disparity(scene.left, scene.right, device="cuda", **kwargs)
    assert host.backend == "cpu" and device.backend == "cuda"
    np.testing.assert_array_equal(device.disparity, host.disparity)
    np.testing.assert_array_equal(device.inconsistent, host.inconsistent)
    assert same_moves(device.expansion, host.expansion)


def test_fake_kernels_refuse_wrong_arguments(fake_gpu):
    """The stand-in is strict, so the launches it accepts are right."""
    from graphcut.labeling._cuda import kernel
    labels = fake_gpu.zeros((4, 4), dtype=np.int32)
    energy = fake_gpu.zeros((4, 4), dtype=np.int64)
    weights = (fake_gpu.zeros((4, 3), dtype=np.int32), fake_gpu.zeros((3, 4), dtype=np.int32))
    good = (labels, labels, *weights, np.int32(1), np.int32(4), np.int32(4), energy)
    kernel("energy_terms")((1,), (1,), good)
    with pytest.raises(TypeError, match="scalar"):
        kernel("energy_terms")((1,), (1,), good[:4] + (1,) + good[5:])
    with pytest.raises(TypeError, match=r"long long \*\): array of int32"):
        kernel("energy_terms")((1,), (1,), good[:-1] + (labels,))
    with pytest.raises(TypeError, match="contiguous"):
        kernel("energy_terms")((1,), (1,), (labels.T,) + good[1:])
    with pytest.raises(TypeError, match="arguments"):
        kernel("energy_terms")((1,), (1,), good[:-1])


@pytest.mark.parametrize("shape", [(1, 1), (1, 6), (6, 1), (3, 4)])
def test_device_pipeline_on_tiny_images(fake_gpu, shape):
    from graphcut.stereo import disparity
    rng = np.random.default_rng(sum(shape))
    left = rng.integers(0, 256, size=shape, dtype=np.uint8)
    right = np.roll(left, -1, axis=1)
    d = shape[1] - 1
    host = disparity(left, right, max_disparity=d, device="cpu")
    device = disparity(left, right, max_disparity=d, device="cuda")
    np.testing.assert_array_equal(device.disparity, host.disparity)
    assert same_moves(device.expansion, host.expansion)
