"""Stereo by alpha-expansion: energy terms, the move construction, the expansion loop, files
and the ``graphcut stereo`` command.

Oracles: brute force over every cut of tiny move problems, scipy's maximum flow and residual
source set (tests/oracle.py), a synthetic layered scene with known disparities, and the
sample's ground truth.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image
from skimage import data

from graphcut.cli import main
from graphcut.solver import cut_capacity, min_cut
from graphcut.stereo import (PairWeights, alpha_expansion, bad_pixel_rate, data_costs, disparity,
                             expansion_network, labeling_energy, smoothness_weights)
from graphcut.stereo_io import (InstanceDump, colorize_disparity, read_disparity,
                                write_disparity)
from oracle import residual_source_side, scipy_max_flow

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "stereo"
MAX_D = 12


def layered_scene(height=64, width=96):
    """A rectified pair of three fronto-parallel textured layers with known disparities.

    Returns (left, right, ground truth, non-occluded mask). Layers (back to front): gravel at
    disparity 2, a grass rectangle at 6, a brick disk at 10. Each layer's texture is fixed to
    the layer, so right (y, x) shows the topmost layer k covering left (y, x + d_k).
    """
    pad = MAX_D
    yy, xx = np.mgrid[0:height, 0:width + pad]
    textures = [image[100:100 + height, 50:50 + width + pad]
                for image in (data.gravel(), data.grass(), data.brick())]
    disparities = [2, 6, 10]
    masks = [np.ones(yy.shape, dtype=bool), (yy >= 10) & (yy < 50) & (xx >= 20) & (xx < 60),
             (yy - 36) ** 2 + (xx - 70) ** 2 < 15 ** 2]
    left = np.zeros((height, width), dtype=np.uint8)
    right = np.zeros_like(left)
    layer_left = np.zeros((height, width), dtype=int)
    layer_right = np.zeros_like(layer_left)
    for k, (texture, mask, d) in enumerate(zip(textures, masks, disparities)):
        seen_left, seen_right = mask[:, :width], mask[:, d:d + width]
        left[seen_left] = texture[:, :width][seen_left]
        right[seen_right] = texture[:, d:d + width][seen_right]
        layer_left[seen_left] = k
        layer_right[seen_right] = k
    truth = np.take(disparities, layer_left)
    ys, xs = np.mgrid[0:height, 0:width]
    matched = xs - truth
    visible = (matched >= 0) & (layer_right[ys, np.clip(matched, 0, None)] == layer_left)
    return left, right, truth, visible


def random_problem(rng, shape=(5, 7), labels=4, max_cost=20, max_weight=9):
    costs = rng.integers(0, max_cost + 1, size=(labels, *shape)).astype(np.int32)
    weights = PairWeights(rng.integers(0, max_weight + 1, size=(shape[0], shape[1] - 1)),
                          rng.integers(0, max_weight + 1, size=(shape[0] - 1, shape[1])))
    return costs, weights


# ---------------------------------------------------------------------------- energy terms

def test_data_costs_shape_truncation_and_unmatched_columns():
    rng = np.random.default_rng(0)
    left = rng.integers(0, 256, size=(6, 10), dtype=np.uint8)
    right = rng.integers(0, 256, size=(6, 10), dtype=np.uint8)
    costs = data_costs(left, right, max_disparity=3, truncation=15, birchfield_tomasi=False)
    assert costs.shape == (4, 6, 10) and costs.dtype == np.int32
    assert costs.min() >= 0 and costs.max() <= 15
    for d in range(4):
        expected = np.minimum(np.abs(left[:, d:].astype(int) - right[:, :10 - d]), 15)
        np.testing.assert_array_equal(costs[d, :, d:], expected)
        assert (costs[d, :, :d] == 15).all()  # x - d < 0: no match inside the right image


def test_data_costs_argmin_recovers_a_constant_shift_in_colour():
    left = data.astronaut()[200:240, 200:280]
    right = np.roll(left, -5, axis=1)  # left (y, x) == right (y, x - 5)
    for bt in (True, False):
        costs = data_costs(left, right, max_disparity=8, channel_axis=-1, birchfield_tomasi=bt)
        assert (costs[5, :, 5:-5] == 0).all()
        mean_cost = costs[:, :, 8:-5].mean(axis=(1, 2))
        assert np.delete(mean_cost, 5).min() > 1  # every wrong shift costs clearly more


def test_birchfield_tomasi_is_insensitive_to_half_pixel_sampling():
    x = np.arange(40, dtype=np.float64)
    signal = 100 + 40 * np.sin(x / 5.0)
    ramp = np.interp(x + 0.5, x, signal)  # the same signal sampled half a pixel to the right
    left = np.tile(np.rint(ramp), (3, 1)).astype(np.uint8)
    right = np.tile(np.rint(signal), (3, 1)).astype(np.uint8)
    bt = data_costs(left, right, max_disparity=0, birchfield_tomasi=True, truncation=255)
    ad = data_costs(left, right, max_disparity=0, birchfield_tomasi=False, truncation=255)
    assert (bt <= ad).all()
    assert ad[0, :, 1:-1].max() >= 3  # plain differences see the half-pixel offset
    assert bt[0, :, 1:-1].max() <= 1  # BT does not (up to rounding to the uint8 grid)


@pytest.mark.parametrize("kwargs, error", [
    ({"max_disparity": -1}, ValueError),
    ({"max_disparity": 10}, ValueError),      # not below the width
    ({"max_disparity": 2.0}, TypeError),
    ({"max_disparity": 2, "truncation": -3}, ValueError),
])
def test_data_costs_rejects_bad_options(kwargs, error):
    image = np.zeros((4, 10), dtype=np.uint8)
    with pytest.raises(error):
        data_costs(image, image, **kwargs)


def test_data_costs_rejects_pairs_of_different_size():
    with pytest.raises(ValueError, match="differ in size"):
        data_costs(np.zeros((4, 10)), np.zeros((4, 11)), max_disparity=2)
    with pytest.raises(ValueError, match="channel_axis"):
        data_costs(np.zeros((4, 10, 3)), np.zeros((4, 10, 3)), max_disparity=2)


def test_smoothness_weights_follow_the_intensity_edges():
    image = np.zeros((4, 6), dtype=np.uint8)
    image[:, 3:] = 200  # a vertical edge between columns 2 and 3
    weights = smoothness_weights(image, weight=5, edge_threshold=8, flat_factor=3)
    assert weights.horizontal.shape == (4, 5) and weights.vertical.shape == (3, 6)
    expected = np.full((4, 5), 15)
    expected[:, 2] = 5
    np.testing.assert_array_equal(weights.horizontal, expected)
    assert (weights.vertical == 15).all()


# -------------------------------------------------------------------- the move construction

def all_move_energies(costs, weights, labels, alpha, switches):
    """Energy of ``where(switch, alpha, labels)`` for a stack of switch masks (N, H, W),
    written out directly from the definition of the energy."""
    proposals = np.where(switches, alpha, labels)
    ys, xs = np.indices(labels.shape)
    data_term = costs[proposals, ys, xs].sum(axis=(1, 2))
    horizontal = (weights.horizontal * (proposals[:, :, 1:] != proposals[:, :, :-1]))
    vertical = (weights.vertical * (proposals[:, 1:, :] != proposals[:, :-1, :]))
    return data_term + horizontal.sum(axis=(1, 2)) + vertical.sum(axis=(1, 2))


def all_cut_capacities(network, switches):
    """Capacity of every cut (N, H, W); switch = sink side."""
    keep = ~switches
    total = (network.source * switches).sum(axis=(1, 2)) + (network.sink * keep).sum(axis=(1, 2))
    total += (network.right * (keep[:, :, :-1] & switches[:, :, 1:])).sum(axis=(1, 2))
    total += (network.left * (keep[:, :, 1:] & switches[:, :, :-1])).sum(axis=(1, 2))
    total += (network.down * (keep[:, :-1, :] & switches[:, 1:, :])).sum(axis=(1, 2))
    total += (network.up * (keep[:, 1:, :] & switches[:, :-1, :])).sum(axis=(1, 2))
    return total


@pytest.mark.parametrize("seed", range(3))
def test_move_network_cut_capacity_is_the_energy_of_every_move(seed):
    """Brute force: for each of the 2**12 cuts y of a 3x4 move problem,
    energy(labels after y) == constant + capacity of the cut."""
    rng = np.random.default_rng(seed)
    costs, weights = random_problem(rng, shape=(3, 4), labels=4)
    labels = rng.integers(0, 4, size=(3, 4)).astype(np.int32)
    switches = (np.arange(2 ** 12)[:, None] >> np.arange(12) & 1).astype(bool).reshape(-1, 3, 4)
    for alpha in range(4):
        network, constant = expansion_network(costs, weights, labels, alpha)
        assert network.left.max() == 0 and network.up.max() == 0  # one arc per edge
        assert (np.minimum(network.source, network.sink) == 0).all()
        energies = all_move_energies(costs, weights, labels, alpha, switches)
        np.testing.assert_array_equal(energies, constant + all_cut_capacities(network, switches))
        for k in rng.choice(len(switches), 20):  # the library's energy and cut capacity agree
            assert labeling_energy(costs, weights, np.where(switches[k], alpha, labels)) \
                == energies[k] == constant + cut_capacity(network, ~switches[k])
        cut = min_cut(network, device="cpu")
        assert constant + cut.flow == energies.min()
        assert scipy_max_flow(network) == cut.flow


def test_move_network_does_not_modify_inputs():
    rng = np.random.default_rng(5)
    costs, weights = random_problem(rng)
    labels = rng.integers(0, 4, size=(5, 7)).astype(np.int32)
    copies = [a.copy() for a in (costs, *weights, labels)]
    expansion_network(costs, weights, labels, 2)
    alpha_expansion(costs, weights, device="cpu", initial_labels=labels)
    for before, after in zip(copies, (costs, *weights, labels)):
        np.testing.assert_array_equal(before, after)


# ------------------------------------------------------------------------- alpha-expansion

@pytest.mark.parametrize("seed", range(3))
def test_alpha_expansion_moves_are_exact_and_never_raise_the_energy(seed):
    rng = np.random.default_rng(seed)
    costs, weights = random_problem(rng, shape=(9, 11), labels=5)
    seen = []

    def check(move, network, cut):
        # the backend's cut against scipy's maximum flow and residual source set
        assert cut.flow == scipy_max_flow(network)
        np.testing.assert_array_equal(cut.source_side, residual_source_side(network))
        assert cut_capacity(network, cut.source_side) == cut.flow
        seen.append(move)

    result = alpha_expansion(costs, weights, device="cpu",
                             initial_labels=np.zeros((9, 11), np.int32), callback=check)
    assert seen == result.moves and result.num_moves > 5 and result.accepted_moves > 0
    energy = result.initial_energy
    for move in result.moves:
        assert move.energy_before == energy
        assert move.energy_after == move.constant + move.flow  # the move energy identity
        assert move.accepted == (move.energy_after < energy)
        energy = move.energy_after if move.accepted else energy
    assert energy == result.energy == labeling_energy(costs, weights, result.labels)
    assert result.energy < result.initial_energy
    assert result.converged
    # converged means: no expansion move from the final labelling lowers the energy
    for alpha in range(costs.shape[0]):
        network, constant = expansion_network(costs, weights, result.labels, alpha)
        assert constant + min_cut(network, device="cpu").flow >= result.energy
    assert set(result.maxflow_seconds) == {"cpu"}


def test_alpha_expansion_stops_at_max_cycles():
    rng = np.random.default_rng(1)
    costs, weights = random_problem(rng, shape=(8, 8), labels=6, max_weight=30)
    result = alpha_expansion(costs, weights, device="cpu", max_cycles=1,
                             initial_labels=np.zeros((8, 8), np.int32))
    assert result.cycles == 1 and result.num_moves == 6


def test_alpha_expansion_rejects_bad_input():
    costs, weights = random_problem(np.random.default_rng(2))
    with pytest.raises(ValueError, match="shape"):
        alpha_expansion(costs, PairWeights(weights.vertical, weights.horizontal), device="cpu")
    with pytest.raises(ValueError, match="max_cycles"):
        alpha_expansion(costs, weights, device="cpu", max_cycles=0)
    with pytest.raises(ValueError, match="initial_labels"):
        alpha_expansion(costs, weights, device="cpu", initial_labels=np.full((5, 7), 9))
    with pytest.raises(ValueError, match="device"):
        alpha_expansion(costs, weights, device="tpu")


def test_layered_scene_is_recovered():
    left, right, truth, visible = layered_scene()
    result = disparity(left, right, max_disparity=MAX_D, device="cpu")
    # occluded pixels (seen in the left view only) have no match; score the others
    assert visible.mean() > 0.9
    assert bad_pixel_rate(result.labels, truth, valid=visible) < 0.02
    assert result.converged and result.labels.dtype == np.int32


def test_sample_pair_bad_pixel_rate():
    left = np.asarray(Image.open(SAMPLES / "left.png"))
    right = np.asarray(Image.open(SAMPLES / "right.png"))
    truth = read_disparity(SAMPLES / "disparity_gt.png")
    assert left.shape == right.shape == truth.shape + (3,)
    result = disparity(left, right, max_disparity=16, channel_axis=-1, device="cpu")
    assert bad_pixel_rate(result.labels, truth) < 0.30  # README reports the measured value
    # the winner-takes-all start is far worse: smoothing does the work
    costs = data_costs(left, right, max_disparity=16, channel_axis=-1)
    assert bad_pixel_rate(costs.argmin(axis=0), truth) > 0.5


@pytest.mark.gpu
def test_cuda_moves_match_cpu():
    left, right, _, _ = layered_scene(48, 64)
    cpu = disparity(left, right, max_disparity=MAX_D, device="cpu")
    gpu = disparity(left, right, max_disparity=MAX_D, device="cuda")
    assert [m.flow for m in gpu.moves] == [m.flow for m in cpu.moves]
    np.testing.assert_array_equal(gpu.labels, cpu.labels)
    assert gpu.energy == cpu.energy and set(gpu.maxflow_seconds) == {"cuda"}


# -------------------------------------------------------------------------------- files

def test_dumped_instances_reread_give_the_indexed_flows(tmp_path):
    from graphcut.solver.dimacs import read_dimacs
    rng = np.random.default_rng(3)
    costs, weights = random_problem(rng, shape=(6, 8), labels=4)
    with InstanceDump(tmp_path / "moves") as dump:
        result = alpha_expansion(costs, weights, device="cpu", callback=dump)
    index = json.loads((tmp_path / "moves" / "index.json").read_text())
    entries = index["instances"]
    assert [e["file"] for e in entries] == [f"move_{i:04d}.max" for i in
                                            range(1, result.num_moves + 1)]
    assert [e["flow"] for e in entries] == [m.flow for m in result.moves]
    for entry in entries:
        network = read_dimacs(tmp_path / "moves" / entry["file"])
        assert network.num_vertices == 6 * 8 + 2
        assert min_cut(network, device="cpu").flow == entry["flow"]
        assert scipy_max_flow(network) == entry["flow"]


def test_disparity_files_round_trip(tmp_path):
    values = np.array([[0, 3, 17], [255, 1, 2]], dtype=np.int32)
    write_disparity(tmp_path / "d.npy", values)
    stored = np.load(tmp_path / "d.npy")
    assert stored.dtype == np.int32 and np.array_equal(stored, values)
    write_disparity(tmp_path / "d.png", values)
    with Image.open(tmp_path / "d.png") as image:
        raw = np.asarray(image)
    np.testing.assert_array_equal(raw, values * 256)  # KITTI: disparity x 256, 16 bit
    back = read_disparity(tmp_path / "d.png")
    assert np.isnan(back[0, 0]) and np.array_equal(back[values > 0], values[values > 0])
    with pytest.raises(ValueError, match=".npy"):
        write_disparity(tmp_path / "d.png", np.array([[300]]))  # 300 * 256 > 65535
    with pytest.raises(ValueError, match="file type"):
        write_disparity(tmp_path / "d.tif", values)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.npy", "d.png"]  # no temp left


def test_colorize_disparity_orders_colours():
    rgb = colorize_disparity(np.array([[0.0, 8.0, 16.0, np.nan]]), max_disparity=16)
    assert rgb.shape == (1, 4, 3) and rgb.dtype == np.uint8
    assert rgb[0, 0, 2] > rgb[0, 0, 0] and rgb[0, 2, 0] > rgb[0, 2, 2]  # far blue, near red
    assert (rgb[0, 3] == 0).all()


# ---------------------------------------------------------------------------------- CLI

@pytest.fixture
def pair_files(tmp_path):
    left, right, truth, _ = layered_scene(40, 64)
    Image.fromarray(left).save(tmp_path / "left.png")
    Image.fromarray(right).save(tmp_path / "right.png")
    return tmp_path / "left.png", tmp_path / "right.png", left, right


def run_cli(*args):
    return CliRunner().invoke(main, ["stereo", *map(str, args)])


def test_cli_writes_npy_png_preview_and_instances(pair_files, tmp_path):
    left_path, right_path, left, right = pair_files
    out = run_cli(left_path, right_path, "--max-disparity", MAX_D, "-o", tmp_path / "d.npy",
                  "--preview", tmp_path / "preview.png", "--device", "cpu",
                  "--dump-instances", tmp_path / "moves")
    assert out.exit_code == 0, out.output
    expected = disparity(left, right, max_disparity=MAX_D, device="cpu")
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), expected.labels)
    assert f"energy: {expected.energy}" in out.output
    assert f"moves: {expected.num_moves} solved" in out.output
    assert "max-flow time [cpu]:" in out.output
    with Image.open(tmp_path / "preview.png") as preview:
        assert preview.mode == "RGB" and preview.size == (64, 40)
    index = json.loads((tmp_path / "moves" / "index.json").read_text())
    assert [e["flow"] for e in index["instances"]] == [m.flow for m in expected.moves]

    out = run_cli(left_path, right_path, "-d", MAX_D, "-o", tmp_path / "d.png",
                  "--device", "cpu")
    assert out.exit_code == 0, out.output
    with Image.open(tmp_path / "d.png") as image:
        np.testing.assert_array_equal(np.asarray(image), expected.labels * 256)


def test_cli_errors(pair_files, tmp_path):
    left_path, right_path, left, _ = pair_files
    Image.fromarray(left[:, :50]).save(tmp_path / "narrow.png")
    original = left_path.read_bytes()
    cases = [
        ((left_path, tmp_path / "narrow.png", "-d", 4, "-o", tmp_path / "x.npy"), 1,
         "differ in size"),
        ((left_path, right_path, "-d", 64, "-o", tmp_path / "x.npy"), 2, "image width 64"),
        ((left_path, right_path, "-d", -1, "-o", tmp_path / "x.npy"), 2, "max-disparity"),
        ((left_path, right_path, "-d", 4, "-o", tmp_path / "x.jpg"), 2, ".npy or .png"),
        ((left_path, right_path, "-d", 4, "-o", left_path), 2, "input image"),
        ((left_path, tmp_path / "missing.png", "-d", 4, "-o", tmp_path / "x.npy"), 2,
         "does not exist"),
        ((left_path, right_path, "-o", tmp_path / "x.npy"), 2, "--max-disparity"),
    ]
    for args, code, message in cases:
        out = run_cli(*args, "--device", "cpu")
        assert out.exit_code == code, (args, out.output)
        assert message in out.output, (args, out.output)
    (tmp_path / "broken.png").write_bytes(b"not a png")
    out = run_cli(left_path, tmp_path / "broken.png", "-d", 4, "-o", tmp_path / "x.npy")
    assert out.exit_code == 1 and "cannot read image" in out.output
    assert left_path.read_bytes() == original
    assert not (tmp_path / "x.npy").exists()
