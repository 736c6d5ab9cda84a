"""Volumes end to end on the CPU: energy on (Z, Y, X) and (Z, Y, X, C) arrays, spacing,
Segmenter re-solves, reading TIFF stacks / .npy / slice folders, writing masks, and the
`graphcut segment` and `graphcut batch` commands on volumes."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import tifffile
from click.testing import CliRunner
from PIL import Image

import graphcut
from graphcut.cli import main
from graphcut.solver import cut_capacity, min_cut
from graphcut.io import VolumeReadError, is_volume

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "volume"
sys.path.insert(0, str(SAMPLE))
import make_volume_sample  # noqa: E402


def blob(shape=(12, 20, 24), seed=0):
    rng = np.random.default_rng(seed)
    z, y, x = np.indices(shape)
    d, h, w = shape
    inside = ((z - d / 2) / (d / 3)) ** 2 + ((y - h / 2) / (h / 3)) ** 2 \
        + ((x - w / 2) / (w / 3)) ** 2 < 1
    volume = np.clip(np.where(inside, 0.7, 0.3) + rng.normal(0, 0.08, shape), 0, 1)
    seeds = np.zeros(shape, np.uint8)
    seeds[d // 2, h // 2, w // 2 - 2:w // 2 + 2] = 1
    seeds[0] = 2
    return volume, seeds, inside


# ---- energy and segmentation ------------------------------------------------------------------

def test_sample_volume_matches_its_truth():
    volume = graphcut.read_volume(SAMPLE / "cells.tif")
    seeds = graphcut.read_volume_seeds(SAMPLE / "cells_seeds.tif", volume.shape)
    expected_volume, expected_seeds = make_volume_sample.make()
    np.testing.assert_array_equal(volume, expected_volume)
    np.testing.assert_array_equal(seeds, expected_seeds)
    mask = graphcut.segment(volume, seeds, device="cpu")
    truth = make_volume_sample.truth()
    assert (mask & truth).sum() / (mask | truth).sum() > 0.97


def test_volume_network_is_6_connected_and_certified():
    volume, seeds, _ = blob()
    net = graphcut.build_network(volume, seeds)
    assert net.ndim == 3 and [a.shape for a in net.forward] == [(11, 20, 24), (12, 19, 24),
                                                               (12, 20, 23)]
    result = min_cut(net, device="cpu")
    assert cut_capacity(net, result.source_side) == result.flow
    assert result.source_side[seeds == 1].all() and not result.source_side[seeds == 2].any()


def test_grey_volume_with_channel_axis_none_or_inferred_from_seeds():
    volume, seeds, inside = blob()
    inferred = graphcut.segment(volume, seeds, device="cpu")
    explicit = graphcut.segment(volume, seeds, device="cpu", channel_axis=None)
    np.testing.assert_array_equal(inferred, explicit)
    assert (inferred == inside).mean() > 0.95


def test_colour_volume_channel_axis():
    volume, seeds, inside = blob()
    rgb = np.stack([volume, 1 - volume, volume * 0.5], axis=-1)
    last = graphcut.segment(rgb, seeds, device="cpu")
    first = graphcut.segment(np.moveaxis(rgb, -1, 0), seeds, channel_axis=0, device="cpu")
    np.testing.assert_array_equal(last, first)
    assert (last == inside).mean() > 0.95


def test_spacing_weighs_the_slice_links():
    volume, seeds, _ = blob()
    flat = graphcut.nlink_weights(volume, channel_axis=None)
    thick = graphcut.nlink_weights(volume, channel_axis=None, spacing=(4, 1, 1))
    np.testing.assert_allclose(thick[2], flat[2] / 4)   # z-links, last in the tuple
    np.testing.assert_allclose(thick[0], flat[0])
    assert graphcut.build_network(volume, seeds, spacing=(4, 1, 1)).forward[0].sum() < \
        graphcut.build_network(volume, seeds).forward[0].sum()
    with pytest.raises(ValueError, match="spacing must be 3"):
        graphcut.segment(volume, seeds, spacing=(1, 1), device="cpu")


def test_volume_seed_errors():
    volume, seeds, _ = blob()
    with pytest.raises(ValueError, match="3-D image needs 3-D seeds"):
        graphcut.segment(volume, seeds[0], device="cpu", channel_axis=None)
    with pytest.raises(ValueError, match=r"24x20x11 .*but the image is 24x20x12"):
        graphcut.segment(volume, seeds[1:], device="cpu", channel_axis=None)
    with pytest.raises(ValueError, match="no foreground"):
        graphcut.segment(volume, np.where(seeds == 1, 0, seeds), device="cpu")


def test_segmenter_volume_resolves_equal_fresh_solves():
    volume, seeds, _ = blob()
    session = graphcut.Segmenter(volume, channel_axis=None, device="cpu", spacing=(2, 1, 1))
    rng = np.random.default_rng(2)
    for step in range(5):
        mask = session.update(seeds)
        fresh, result = graphcut.segment(volume, seeds, device="cpu", spacing=(2, 1, 1),
                                         return_result=True)
        np.testing.assert_array_equal(mask, fresh)
        assert session.last_result.flow == result.flow
        z, y, x = (int(rng.integers(1, n - 2)) for n in volume.shape)
        seeds[z, y:y + 2, x:x + 3] = int(rng.integers(0, 3))
        seeds[6, 10, 12] = 1


def test_segmenter_explains_a_grey_volume_read_as_colour():
    volume, seeds, _ = blob(shape=(20, 24, 3))
    session = graphcut.Segmenter(volume, device="cpu")   # read as (H, W, C) with C = 3
    with pytest.raises(ValueError, match="channel_axis=None"):
        session.update(seeds)
    with pytest.raises(ValueError, match="channel_axis=None"):
        graphcut.Segmenter(np.zeros((8, 20, 24)), device="cpu")


# ---- files --------------------------------------------------------------------------------------

def test_tiff_npy_and_slice_folder_read_the_same(tmp_path):
    volume = (blob()[0] * 255).astype(np.uint8)
    tifffile.imwrite(tmp_path / "v.tif", volume)
    np.save(tmp_path / "v.npy", volume)
    folder = tmp_path / "slices"
    folder.mkdir()
    for z in range(volume.shape[0]):  # natural order: slice_2 before slice_10
        Image.fromarray(volume[z]).save(folder / f"slice_{z}.png")
    for source in (tmp_path / "v.tif", tmp_path / "v.npy", folder):
        assert is_volume(source)
        np.testing.assert_array_equal(graphcut.read_volume(source), volume)
    Image.fromarray(volume[0]).save(tmp_path / "image.tif")
    assert not is_volume(tmp_path / "image.tif")


def test_hyperstack_axes_are_reordered(tmp_path):
    data = np.random.default_rng(0).integers(0, 255, (5, 2, 6, 7), dtype=np.uint8)  # Z C Y X
    tifffile.imwrite(tmp_path / "h.tif", data, imagej=True, metadata={"axes": "ZCYX"})
    np.testing.assert_array_equal(graphcut.read_volume(tmp_path / "h.tif"),
                                  np.moveaxis(data, 1, -1))
    tifffile.imwrite(tmp_path / "t.tif", np.zeros((3, 4, 6, 7), np.uint8), imagej=True,
                     metadata={"axes": "TZYX"})
    with pytest.raises(VolumeReadError, match="time series"):
        graphcut.read_volume(tmp_path / "t.tif")


def test_bad_volume_inputs(tmp_path):
    folder = tmp_path / "slices"
    folder.mkdir()
    Image.fromarray(np.zeros((4, 5), np.uint8)).save(folder / "a1.png")
    Image.fromarray(np.zeros((4, 6), np.uint8)).save(folder / "a2.png")
    with pytest.raises(VolumeReadError, match="a2.png: slice 1"):
        graphcut.read_volume(folder)
    with pytest.raises(VolumeReadError, match="no such file"):
        graphcut.read_volume(tmp_path / "missing.tif")
    np.save(tmp_path / "flat.npy", np.zeros((4, 5)))
    with pytest.raises(VolumeReadError, match=r"shape \(4, 5\)"):
        graphcut.read_volume(tmp_path / "flat.npy")
    np.save(tmp_path / "seeds.npy", np.full((2, 4, 5), 7, np.uint8))
    with pytest.raises(ValueError, match="seeds.npy.*unknown label values 7"):
        graphcut.read_volume_seeds(tmp_path / "seeds.npy", (2, 4, 5))
    np.save(tmp_path / "seeds.npy", np.ones((2, 4, 5), np.uint8))
    with pytest.raises(ValueError, match="5x4x2 .* image is 5x4x3"):
        graphcut.read_volume_seeds(tmp_path / "seeds.npy", (3, 4, 5))


def test_mask_and_seed_writers_round_trip(tmp_path):
    mask = blob()[2]
    graphcut.write_volume_mask(tmp_path / "m.tif", mask)
    graphcut.write_volume_mask(tmp_path / "m.npy", mask)
    for path in (tmp_path / "m.tif", tmp_path / "m.npy"):
        read = graphcut.read_volume(path)
        assert read.dtype == np.uint8 and set(np.unique(read)) == {0, 255}
        np.testing.assert_array_equal(read == 255, mask)
    seeds = blob()[1]
    graphcut.write_volume_seeds(tmp_path / "s.tif", seeds)
    np.testing.assert_array_equal(graphcut.read_volume_seeds(tmp_path / "s.tif"), seeds)
    with pytest.raises(ValueError, match="refusing to overwrite"):
        graphcut.write_volume_mask(tmp_path / "m.tif", mask, inputs=[tmp_path / "m.tif"])
    with pytest.raises(ValueError, match="unknown volume file suffix"):
        graphcut.write_volume_mask(tmp_path / "m.png", mask)


def test_seed_slices_folder_in_stroke_form(tmp_path):
    volume, seeds, _ = blob()
    folder = tmp_path / "seeds"
    folder.mkdir()
    for z in range(seeds.shape[0]):
        rgb = np.zeros(seeds.shape[1:] + (3,), np.uint8)
        rgb[seeds[z] == 1] = (255, 0, 0)
        rgb[seeds[z] == 2] = (0, 0, 255)
        Image.fromarray(rgb).save(folder / f"{z:03d}.png")
    np.testing.assert_array_equal(graphcut.read_volume_seeds(folder, volume.shape), seeds)


# ---- command line -------------------------------------------------------------------------------

def test_cli_segments_the_sample_volume(tmp_path):
    out = tmp_path / "mask.tif"
    overlay = tmp_path / "overlay.tif"
    result = CliRunner().invoke(main, ["segment", str(SAMPLE / "cells.tif"), "--seeds",
                                       str(SAMPLE / "cells_seeds.tif"), "-o", str(out),
                                       "--overlay", str(overlay), "--device", "cpu",
                                       "--spacing", "1,1,1"])
    assert result.exit_code == 0, result.output
    assert "64x64x40 voxels" in result.output and "backend cpu" in result.output
    mask = tifffile.imread(out)
    assert mask.shape == (40, 64, 64) and mask.dtype == np.uint8
    volume = graphcut.read_volume(SAMPLE / "cells.tif")
    seeds = graphcut.read_volume_seeds(SAMPLE / "cells_seeds.tif")
    np.testing.assert_array_equal(mask == 255, graphcut.segment(volume, seeds, device="cpu"))
    assert tifffile.imread(overlay).shape == (40, 64, 64, 3)


def test_cli_volume_from_slice_folder_to_npy(tmp_path):
    volume, seeds, _ = blob()
    folder = tmp_path / "slices"
    folder.mkdir()
    for z in range(volume.shape[0]):
        Image.fromarray((volume[z] * 255).astype(np.uint8)).save(folder / f"{z}.png")
    np.save(tmp_path / "seeds.npy", seeds)
    result = CliRunner().invoke(main, ["segment", str(folder), "--seeds",
                                       str(tmp_path / "seeds.npy"), "-o",
                                       str(tmp_path / "mask.npy"), "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert np.load(tmp_path / "mask.npy").shape == volume.shape


@pytest.mark.parametrize("extra,match", [
    (["-o", "mask.png"], "multi-page"),
    (["-o", "mask.tif", "--spacing", "1,2"], "three positive numbers"),
])
def test_cli_volume_usage_errors(tmp_path, extra, match):
    result = CliRunner().invoke(main, ["segment", str(SAMPLE / "cells.tif"), "--seeds",
                                       str(SAMPLE / "cells_seeds.tif"), "--device", "cpu",
                                       *[str(tmp_path / e) if e.startswith("mask") else e
                                         for e in extra]])
    assert result.exit_code == 2 and match in result.output


def test_cli_bad_volume_seeds_exit_1(tmp_path):
    np.save(tmp_path / "seeds.npy", np.ones((3, 4, 5), np.uint8))
    result = CliRunner().invoke(main, ["segment", str(SAMPLE / "cells.tif"), "--seeds",
                                       str(tmp_path / "seeds.npy"), "-o",
                                       str(tmp_path / "m.tif"), "--device", "cpu"])
    assert result.exit_code == 1 and "seeds.npy" in result.output
    assert not (tmp_path / "m.tif").exists()


def test_batch_handles_volumes_and_images(tmp_path):
    images, seeds_dir = tmp_path / "images", tmp_path / "seeds"
    images.mkdir()
    seeds_dir.mkdir()
    (images / "cells.tif").write_bytes((SAMPLE / "cells.tif").read_bytes())
    (seeds_dir / "cells.tif").write_bytes((SAMPLE / "cells_seeds.tif").read_bytes())
    samples = SAMPLE.parent
    (images / "coins.png").write_bytes((samples / "images" / "coins.png").read_bytes())
    (seeds_dir / "coins.png").write_bytes((samples / "seeds" / "coins.png").read_bytes())
    np.save(images / "lonely.npy", np.zeros((3, 4, 5), np.uint8))   # a volume without seeds
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["batch", str(images), "--seeds-dir", str(seeds_dir),
                                       "-o", str(out), "--device", "cpu", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert tifffile.imread(out / "cells.tif").shape == (40, 64, 64)
    assert (out / "coins.png").exists()
    summary = (out / "summary.csv").read_text()
    assert "lonely.npy,skipped" in summary and "cells.tif,ok" in summary
