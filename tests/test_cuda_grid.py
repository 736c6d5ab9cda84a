"""The GPU grid solver against PyMaxflow (flow, source side) and the cut certificate."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import GRID_KINDS, random_grid_network

from graphcut.solver import GridNetwork, cut_capacity, min_cut

pytestmark = pytest.mark.gpu


def assert_same_cut(network, repeats=1):
    expected = min_cut(network, device="cpu")
    for _ in range(repeats):
        got = min_cut(network, device="cuda")
        assert got.backend == "cuda"
        assert got.flow == expected.flow
        side = got.source_side.get() if hasattr(got.source_side, "get") else got.source_side
        np.testing.assert_array_equal(side, expected.source_side)
        assert cut_capacity(network, side) == got.flow


@pytest.mark.parametrize("kind", GRID_KINDS)
def test_random_grids_match_pymaxflow(kind):
    rng = np.random.default_rng(hash(kind) % 2**32)
    for _ in range(40):
        shape = tuple(int(v) for v in rng.integers(1, 40, size=2))
        assert_same_cut(random_grid_network(rng, shape, kind=kind))


@pytest.mark.parametrize("shape", [(1, 1), (1, 97), (97, 1), (2, 3), (31, 37), (64, 64),
                                   (127, 253), (257, 131)])
def test_odd_shapes_repeatable(shape):
    rng = np.random.default_rng(sum(shape))
    assert_same_cut(random_grid_network(rng, shape, max_capacity=1000), repeats=3)


def test_asymmetric_links_and_large_capacities():
    rng = np.random.default_rng(7)
    h, w = 60, 70
    big = np.iinfo(np.int32).max
    network = GridNetwork(
        source=rng.integers(big // 2, big, (h, w)), sink=rng.integers(big // 2, big, (h, w)),
        right=rng.integers(0, big, (h, w - 1)), down=rng.integers(0, big, (h - 1, w)),
        left=rng.integers(0, 3, (h, w - 1)), up=rng.integers(0, big, (h - 1, w)))
    result = min_cut(network, device="cuda")
    assert result.flow > 2**31
    assert_same_cut(network)


def test_segmentation_like_grid_larger():
    """A smooth two-region energy, large enough to need many global relabels."""
    rng = np.random.default_rng(3)
    h, w = 700, 900
    yy, xx = np.mgrid[:h, :w]
    inside = (yy - h / 2) ** 2 / (h / 3) ** 2 + (xx - w / 2) ** 2 / (w / 3) ** 2 < 1
    noise = rng.normal(0, 0.3, (h, w))
    score = np.where(inside, 1.0, -1.0) + noise
    source = np.clip(50 * score, 0, None).astype(np.int32)
    sink = np.clip(-50 * score, 0, None).astype(np.int32)
    right = rng.integers(20, 60, (h, w - 1))
    down = rng.integers(20, 60, (h - 1, w))
    assert_same_cut(GridNetwork(source, sink, right, down), repeats=2)


def test_cupy_inputs_give_cupy_side():
    import cupy
    rng = np.random.default_rng(11)
    network = random_grid_network(rng, (50, 60))
    on_gpu = GridNetwork(*(cupy.asarray(a) for a in (network.source, network.sink, network.right,
                                                      network.down, network.left, network.up)))
    result = min_cut(on_gpu, device="cuda")
    assert isinstance(result.source_side, cupy.ndarray)
    expected = min_cut(network, device="cpu")
    assert result.flow == expected.flow
    np.testing.assert_array_equal(result.source_side.get(), expected.source_side)


@pytest.mark.parametrize("name", ["camera", "astronaut", "coins", "coffee"])
@pytest.mark.parametrize("zoom", [0.5, 1.0, 2.0])
def test_sample_segmentation_grids(name, zoom):
    """The bundled samples' energies at several sizes: same flow and mask as PyMaxflow."""
    from pathlib import Path

    from skimage.transform import rescale

    import graphcut
    samples = Path(__file__).resolve().parent.parent / "samples"
    image = graphcut.read_image(samples / "images" / f"{name}.png")
    seeds = graphcut.read_seeds(samples / "seeds" / f"{name}.png", shape=image.shape[:2])
    if zoom != 1.0:
        channel_axis = -1 if image.ndim == 3 else None
        image = rescale(image, zoom, order=1, channel_axis=channel_axis, preserve_range=True,
                        anti_aliasing=False).astype(image.dtype)
        seeds = rescale(seeds, zoom, order=0, preserve_range=True,
                        anti_aliasing=False).astype(np.uint8)
    assert_same_cut(graphcut.build_network(image, seeds), repeats=2)


def test_too_large_for_gpu_memory(monkeypatch):
    from graphcut.solver import cuda
    from graphcut.solver.cuda import grid

    network = random_grid_network(np.random.default_rng(5), (20, 30))
    grid.release_cached_state()
    monkeypatch.setattr(grid, "STATE_BYTES_PER_PIXEL", 2**52)
    with pytest.raises(cuda.GPUMemoryError, match="GiB"):
        min_cut(network, device="cuda")
    fallback = min_cut(network, device="auto")
    assert fallback.backend == "cpu"
    assert fallback.flow == min_cut(network, device="cpu").flow
