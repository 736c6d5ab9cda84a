"""Volumes through the one segmentation pipeline: every appearance model, a 3-D box, the
clean-up (6-connected) and the incremental Segmenter, checked against ground truth, SciPy's
labelling, brute-force cut sums and PyMaxflow's 3-D grid."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import ndimage

import graphcut
from graphcut.cli import main
from graphcut.models._texture import local_contrast
from graphcut.segmentation import box_mask, clean_labels
from graphcut.segmentation._problems import cut_capacity
from graphcut.solver import GridNetwork, min_cut


def _ball_volume(side=20, radius=6, noise=20.0, seed=0):
    """A bright noisy ball (the object) in a dark noisy grey volume; its truth and seeds (a
    small cube at its centre, background strokes along two far edges)."""
    rng = np.random.default_rng(seed)
    zz, yy, xx = np.indices((side, side, side))
    centre = side // 2
    truth = (zz - centre) ** 2 + (yy - centre) ** 2 + (xx - centre) ** 2 < radius ** 2
    volume = np.where(truth, 150.0, 80.0) + rng.normal(0, noise, truth.shape)
    volume = np.clip(volume, 0, 255).astype(np.uint8)
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[centre - 1:centre + 1, centre - 1:centre + 1, centre - 1:centre + 1] = 1
    seeds[0, 0, :] = seeds[-1, -1, :] = seeds[0, :, 0] = 2
    return volume, truth, seeds


def _iou(mask, truth):
    return (mask & truth).sum() / (mask | truth).sum()


@pytest.mark.parametrize("model", ["histogram", "gmm", "learned"])
def test_every_model_segments_a_ball(model):
    volume, truth, seeds = _ball_volume()
    mask = graphcut.segment(volume, seeds, model=model, channel_axis=None, device="cpu")
    assert mask.dtype == bool and mask.shape == truth.shape
    assert _iou(mask, truth) > 0.9
    assert mask[seeds == 1].all() and not mask[seeds == 2].any()  # hard constraints


@pytest.mark.parametrize("model", ["gmm", "learned"])
def test_a_3d_box_alone_finds_the_ball_and_nothing_outside(model):
    volume, truth, _ = _ball_volume()
    box = (3, 4, 3, 17, 17, 16)  # (z0, y0, x0, z1, y1, x1), half-open
    mask = graphcut.segment(volume, box=box, model=model, channel_axis=None, device="cpu")
    inside = np.zeros(truth.shape, bool)
    inside[3:17, 4:17, 3:16] = True
    assert not mask[~inside].any()  # outside the box is background, exactly
    assert _iou(mask, truth) > 0.85


def test_box_mask_of_a_volume_is_the_slice():
    expected = np.zeros((4, 5, 6), bool)
    expected[1:3, 0:4, 2:6] = True
    np.testing.assert_array_equal(box_mask((4, 5, 6), (1, 0, 2, 3, 4, 6)), expected)


@pytest.mark.parametrize("box, match", [
    ((1, 1, 3, 3), "six integers"),
    ((0, 0, 0, 5, 5, 9), "0 <= x0 < x1 <= 8"),
    ((2, 0, 0, 2, 5, 5), "0 <= z0 < z1"),
])
def test_bad_3d_boxes_are_refused(box, match):
    volume, _, seeds = _ball_volume(side=8, radius=2)
    with pytest.raises(ValueError, match=match):
        graphcut.segment(volume, seeds, box=box, channel_axis=None, device="cpu")


def test_a_lasso_on_a_volume_asks_for_a_box():
    volume, _, seeds = _ball_volume(side=8, radius=2)
    with pytest.raises(ValueError, match="a volume takes a box"):
        graphcut.segment(volume, seeds, lasso=[(0, 0), (0, 5), (5, 5)], channel_axis=None,
                         device="cpu")


def test_several_objects_in_a_volume_get_a_clear_message():
    volume, _, seeds = _ball_volume(side=10, radius=3)
    seeds[1, 1, 8] = 3
    with pytest.raises(ValueError, match="2 objects .* in a volume: .* one at a time"):
        graphcut.segment(volume, seeds, model="gmm", channel_axis=None, device="cpu")


def test_seeds_of_one_label_only_say_what_is_missing():
    volume, _, seeds = _ball_volume(side=10, radius=3)
    seeds[seeds == 2] = 0
    with pytest.raises(ValueError, match="background"):
        graphcut.segment(volume, seeds, model="learned", channel_axis=None, device="cpu")


def test_clean_up_keeps_the_seeded_6_connected_part_and_fills_its_cavity():
    """Oracle: SciPy's 6-connected labelling, written out independently here."""
    labels = np.zeros((9, 9, 9), np.uint8)
    labels[1:6, 1:6, 1:6] = 1
    labels[3, 3, 3] = 0                      # a 1-voxel cavity
    labels[6, 6, 6] = 1                      # touches the cube along a corner only: separate
    labels[7:9, 0:2, 7:9] = 1                # a far blob
    seeds = np.zeros_like(labels)
    seeds[2, 2, 2] = 1
    cleaned = clean_labels(labels, [1], seeds, keep="connected", fill_holes_area=2)
    parts, _ = ndimage.label(labels == 1, structure=ndimage.generate_binary_structure(3, 1))
    expected = parts == parts[2, 2, 2]
    expected[3, 3, 3] = True
    np.testing.assert_array_equal(cleaned == 1, expected)


def test_segment_with_clean_up_on_a_volume_drops_a_stray_blob():
    volume, truth, seeds = _ball_volume(noise=5.0)
    volume[1:3, 15:18, 1:3] = 150            # a small bright blob, far from every seed
    raw = graphcut.segment(volume, seeds, model="gmm", channel_axis=None, device="cpu")
    assert raw[1:3, 15:18, 1:3].all()
    kept = graphcut.segment(volume, seeds, model="gmm", keep="connected", channel_axis=None,
                            device="cpu")
    parts, _ = ndimage.label(raw, structure=ndimage.generate_binary_structure(3, 1))
    np.testing.assert_array_equal(kept, parts == parts[10, 10, 10])


@pytest.mark.parametrize("model", ["gmm", "learned"])
def test_segmenter_updates_equal_fresh_segments_on_a_volume(model):
    volume, truth, seeds = _ball_volume(side=16, radius=5)
    session = graphcut.Segmenter(volume, model=model, channel_axis=None, device="cpu")
    first = session.update(seeds)
    more = seeds.copy()
    more[8, 2:5, 2:5] = 2
    second = session.update(more)
    for mask, s in ((first, seeds), (second, more)):
        fresh = graphcut.segment(volume, s, model=model, channel_axis=None, device="cpu")
        np.testing.assert_array_equal(mask, fresh)


def test_cut_capacity_of_a_3d_network_is_the_sum_of_its_cut_arcs():
    """Brute force over the arcs of a random 3-D grid; and PyMaxflow's minimum cut's mask has
    the capacity of its flow."""
    rng = np.random.default_rng(1)
    shape = (3, 4, 5)
    forward = tuple(rng.integers(0, 9, tuple(n - (a == axis) for a, n in enumerate(shape)))
                    for axis in range(3))
    backward = tuple(rng.integers(0, 9, f.shape) for f in forward)
    network = GridNetwork(rng.integers(0, 20, shape), rng.integers(0, 20, shape),
                          forward=forward, backward=backward)
    side = rng.random(shape) < 0.5
    expected = int(network.source[~side].sum() + network.sink[side].sum())
    for axis in range(3):
        for index in np.ndindex(*forward[axis].shape):
            neighbour = list(index)
            neighbour[axis] += 1
            p, q = side[index], side[tuple(neighbour)]
            expected += int(forward[axis][index]) if p and not q else 0
            expected += int(backward[axis][index]) if q and not p else 0
    assert cut_capacity(network, side) == expected
    result = min_cut(network, device="cpu")
    assert cut_capacity(network, result.source_side) == result.flow


def test_texture_of_a_volume_is_the_cube_window_standard_deviation():
    rng = np.random.default_rng(2)
    values = rng.random((6, 7, 8, 2))
    grey = values.mean(axis=-1)
    mean = ndimage.uniform_filter(grey, size=3, mode="reflect")
    square = ndimage.uniform_filter(grey * grey, size=3, mode="reflect")
    np.testing.assert_allclose(local_contrast(values, 1) ** 2, square - mean * mean,
                               atol=1e-12)


def test_cli_segments_a_volume_with_the_learned_model(tmp_path):
    volume, truth, seeds = _ball_volume(side=16, radius=5)
    np.save(tmp_path / "volume.npy", volume)
    np.save(tmp_path / "seeds.npy", seeds)
    out = tmp_path / "mask.npy"
    result = CliRunner().invoke(main, ["segment", str(tmp_path / "volume.npy"), "--seeds",
                                       str(tmp_path / "seeds.npy"), "-o", str(out), "--model",
                                       "learned", "--keep", "connected", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    expected = graphcut.segment(volume, seeds, model="learned", keep="connected",
                                channel_axis=None, device="cpu")
    np.testing.assert_array_equal(np.load(out) != 0, expected)
    assert _iou(expected, truth) > 0.9


def test_cli_refuses_an_image_box_on_a_volume(tmp_path):
    volume, _, seeds = _ball_volume(side=8, radius=2)
    np.save(tmp_path / "volume.npy", volume)
    np.save(tmp_path / "seeds.npy", seeds)
    result = CliRunner().invoke(main, ["segment", str(tmp_path / "volume.npy"), "--seeds",
                                       str(tmp_path / "seeds.npy"), "-o",
                                       str(tmp_path / "mask.npy"), "--box", "0,0,4,4"])
    assert result.exit_code == 2 and "z0,y0,x0,z1,y1,x1" in result.output


@pytest.mark.gpu
@pytest.mark.parametrize("model", ["gmm", "learned"])
def test_gpu_volume_equals_cpu(model):
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001
        pytest.skip("no GPU")
    volume, truth, seeds = _ball_volume(side=24, radius=7)
    box = (2, 2, 2, 22, 22, 22)
    for options in ({}, {"box": box, "keep": "connected", "fill_holes": 20}):
        cpu = graphcut.segment(volume, seeds, model=model, channel_axis=None, device="cpu",
                               **options)
        gpu = graphcut.segment(volume, seeds, model=model, channel_axis=None, device="cuda",
                               **options)
        assert (cpu != gpu).sum() <= 0.001 * cpu.size
        assert _iou(gpu, truth) > 0.9


@pytest.fixture
def stand_in_cupy(monkeypatch, kernel_library):
    """tests/support/fake_cupy.py's NumPy stand-in for CuPy (with the shipped kernels compiled
    as host C++: the learned model's scoring kernel), with SciPy's gaussian_filter as
    ``cupyx.scipy.ndimage``'s (what the learned model's GPU features call)."""
    import fake_cupy
    module = fake_cupy.fake_cupy_module(kernel_library)
    monkeypatch.setenv("GRAPHCUT_CUDA_KERNELS", "nvrtc")
    fake_cupy.install_cupyx_ndimage(monkeypatch, module)
    return module


@pytest.mark.parametrize("model", ["gmm", "learned"])
def test_models_on_a_volume_give_numpys_costs_on_the_cupy_stand_in(stand_in_cupy, model):
    """The models' GPU code (the same array code with CuPy) on a (D, H, W, 1) volume: features
    (texture / Hessian eigenvalues in 3-D), fit and costs equal the NumPy path's."""
    from graphcut.models import model_from_settings
    volume, truth, seeds = _ball_volume(side=12, radius=4)
    values = (volume / 255.0)[..., None]
    samples = [seeds == 1, seeds == 2]
    costs = []
    for xp_values, xp_samples in ((values, samples),
                                  (stand_in_cupy.asarray(values),
                                   [stand_in_cupy.asarray(s) for s in samples])):
        appearance = model_from_settings({"model": model})
        features = appearance.features(xp_values)
        assert features.shape[:3] == volume.shape
        if xp_values is not values:  # really on the stand-in
            assert type(features).__module__.split(".")[0] == "cupy"
        appearance.fit(features, xp_samples)
        costs.append([np.asarray(c) for c in appearance.costs(features)])
    for cpu, gpu in zip(*costs):
        assert cpu.shape == volume.shape
        np.testing.assert_allclose(gpu, cpu, atol=1e-5)


def test_batch_segment_paths_passes_a_volumes_options(tmp_path):
    from graphcut.batch import segment_paths
    volume, truth, seeds = _ball_volume(side=12, radius=4)
    np.save(tmp_path / "volume.npy", volume)
    np.save(tmp_path / "seeds.npy", seeds)
    options = {"model": "gmm", "keep": "connected"}
    mask, _ = segment_paths(tmp_path / "volume.npy", tmp_path / "seeds.npy",
                            tmp_path / "mask.tif", device="cpu", segment_options=options)
    expected = graphcut.segment(volume, seeds, channel_axis=None, device="cpu", **options)
    np.testing.assert_array_equal(mask, expected)
