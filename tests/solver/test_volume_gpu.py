"""The GPU solver on volumes (grid_kernels.cu's *_3d kernels) against PyMaxflow: flows and
source sides on random volumes (odd shapes, 1-voxel-thick, zero and saturated capacities), the
sample, segmentation-like volumes, dynamic re-solves against fresh solves, and GPU memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from oracle import GRID_KINDS, random_grid_network
from test_cuda_grid import assert_same_cut

import graphcut
from graphcut.solver import GridNetwork, min_cut

pytestmark = pytest.mark.gpu
SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.mark.parametrize("kind", GRID_KINDS)
def test_random_volumes_match_pymaxflow(kind):
    rng = np.random.default_rng(100 + GRID_KINDS.index(kind))
    for _ in range(30):
        shape = tuple(int(v) for v in rng.integers(1, 24, size=3))
        assert_same_cut(random_grid_network(rng, shape, kind=kind,
                                            symmetric=bool(rng.integers(2))))


@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 1, 200), (200, 1, 1), (1, 200, 1),
                                   (1, 37, 41), (37, 1, 41), (37, 41, 1), (3, 5, 7),
                                   (33, 9, 65), (17, 67, 31), (64, 64, 64)])
def test_odd_and_thin_shapes_repeatable(shape):
    rng = np.random.default_rng(sum(shape))
    assert_same_cut(random_grid_network(rng, shape, max_capacity=1000), repeats=3)


def test_asymmetric_links_and_large_capacities():
    rng = np.random.default_rng(17)
    big = np.iinfo(np.int32).max
    net = random_grid_network(rng, (9, 20, 30), max_capacity=big, terminal_max=big)
    assert min_cut(net, device="cuda").flow > 2**31
    assert_same_cut(net)


def test_segmentation_like_volume():
    """A noisy ellipsoid: smooth energy, long paths, many global relabels."""
    rng = np.random.default_rng(3)
    shape = (70, 90, 110)
    z, y, x = np.indices(shape)
    inside = ((z - 35) / 25) ** 2 + ((y - 45) / 30) ** 2 + ((x - 55) / 40) ** 2 < 1
    score = np.where(inside, 1.0, -1.0) + rng.normal(0, 0.4, shape)
    source = np.clip(50 * score, 0, None).astype(np.int32)
    sink = np.clip(-50 * score, 0, None).astype(np.int32)
    forward = [rng.integers(10, 40, s) for s in ((69, 90, 110), (70, 89, 110), (70, 90, 109))]
    assert_same_cut(GridNetwork(source, sink, forward=forward), repeats=2)


def test_cupy_volume_gives_cupy_side():
    import cupy
    rng = np.random.default_rng(11)
    net = random_grid_network(rng, (10, 20, 30))
    on_gpu = GridNetwork(cupy.asarray(net.source), cupy.asarray(net.sink),
                         forward=[cupy.asarray(a) for a in net.forward],
                         backward=[cupy.asarray(a) for a in net.backward])
    result = min_cut(on_gpu, device="cuda")
    assert isinstance(result.source_side, cupy.ndarray)
    expected = min_cut(net, device="cpu")
    assert result.flow == expected.flow
    np.testing.assert_array_equal(result.source_side.get(), expected.source_side)


def test_sample_volume_segments_like_the_cpu():
    """The histogram: the same integers, flow and mask on both devices. The default (auto:
    the learned model on a grey volume) scores its features in float on each device, so its
    t-links may round apart by one: flows within 1e-5, masks within 1e-4 of the voxels."""
    volume = graphcut.read_volume(SAMPLES / "volume" / "cells.tif")
    seeds = graphcut.read_volume_seeds(SAMPLES / "volume" / "cells_seeds.tif", volume.shape)
    for model in ("histogram", None):
        cpu_mask, cpu = graphcut.segment(volume, seeds, device="cpu", return_result=True,
                                         model=model)
        gpu_mask, gpu = graphcut.segment(volume, seeds, device="cuda", return_result=True,
                                         model=model)
        assert gpu.backend == "cuda"
        if model == "histogram":
            assert gpu.flow == cpu.flow
            np.testing.assert_array_equal(gpu_mask, cpu_mask)
        else:
            assert abs(gpu.flow - cpu.flow) <= 1e-5 * cpu.flow
            assert np.count_nonzero(gpu_mask != cpu_mask) <= 1e-4 * cpu_mask.size


def test_segmenter_volume_resolves_equal_fresh_solves():
    """Dynamic re-solve on the GPU (Kohli-Torr, kept preflow) after random strokes."""
    rng = np.random.default_rng(21)
    shape = (24, 40, 50)
    z, y, x = np.indices(shape)
    inside = ((z - 12) / 8) ** 2 + ((y - 20) / 12) ** 2 + ((x - 25) / 15) ** 2 < 1
    volume = np.clip(np.where(inside, 0.65, 0.35) + rng.normal(0, 0.12, shape), 0, 1)
    seeds = np.zeros(shape, np.uint8)
    seeds[12, 20, 20:30] = 1
    seeds[0] = 2
    session = graphcut.Segmenter(volume, channel_axis=None, device="cuda")
    for step in range(8):
        mask = session.update(seeds)
        fresh_mask, fresh = graphcut.segment(volume, seeds, device="cuda", return_result=True)
        assert session.last_result.flow == fresh.flow, step
        np.testing.assert_array_equal(mask, fresh_mask)
        assert session.last_result.stats["incremental"] == (step > 0)
        label = int(rng.integers(0, 3))
        zc, yc, xc = (int(rng.integers(0, n - 3)) for n in shape)
        seeds[zc:zc + 3, yc:yc + 2, xc:xc + int(rng.integers(1, 4))] = label
        if not (seeds == 1).any():
            seeds[12, 20, 25] = 1


def test_volume_too_large_for_gpu_memory(monkeypatch):
    from graphcut.solver import cuda
    from graphcut.solver.cuda import grid, grid3d

    net = random_grid_network(np.random.default_rng(5), (6, 7, 8))
    grid.release_cached_state()
    monkeypatch.setattr(grid3d, "STATE_BYTES_PER_VOXEL", 2**52)
    with pytest.raises(cuda.GPUMemoryError, match="6x7x8 volume"):
        min_cut(net, device="cuda")
    fallback = min_cut(net, device="auto")
    assert fallback.backend == "cpu"
    assert fallback.flow == min_cut(net, device="cpu").flow
