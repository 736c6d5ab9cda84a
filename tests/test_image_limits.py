"""Images above Pillow's decompression-bomb limit (``max_pixels`` / ``--max-pixels``),
multi-page files (the first page, said out loud) and lossless masks and label images, through
the API and the command line."""

import logging
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

import graphcut
from graphcut.cli import main
from graphcut.io import ImageReadError, ImageTooLargeError, read_image, write_mask
from graphcut.io import read_seeds, write_seeds

SIZE = (60, 60)  # 3600 pixels: "too large" once Pillow's limit is lowered to 1000


def disc_files(folder, suffix=".png"):
    """A 60x60 grey disc image and its seeds in ``folder``."""
    rows, cols = np.indices(SIZE)
    inside = (rows - 30) ** 2 + (cols - 30) ** 2 < 15 ** 2
    rng = np.random.default_rng(0)
    image = np.clip(np.where(inside, 180, 60) + rng.normal(0, 10, SIZE), 0, 255).astype(np.uint8)
    seeds = np.zeros(SIZE, np.uint8)
    seeds[28:32, 25:35] = graphcut.FOREGROUND
    seeds[:3, :] = graphcut.BACKGROUND
    Image.fromarray(image).save(folder / f"disc{suffix}")
    write_seeds(folder / "disc_seeds.png", seeds)
    return folder / f"disc{suffix}", folder / "disc_seeds.png", image


@pytest.fixture
def low_pillow_limit(monkeypatch):
    """Pillow refuses more than 1000 pixels (a warning) and 2000 (an error), as it does above
    89 and 179 megapixels by default."""
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    return 1000


# ----- max_pixels ----------------------------------------------------------------------------
def test_max_pixels_opens_images_above_pillows_own_limit(tmp_path, low_pillow_limit):
    image_path, seeds_path, image = disc_files(tmp_path)
    with pytest.raises(ImageTooLargeError) as caught:
        read_image(image_path)  # 3600 > 2 x 1000: Pillow itself refuses it
    assert caught.value.pixels == 3600 and caught.value.limit == 1000
    assert "--max-pixels" in str(caught.value) and "disc.png" in str(caught.value)
    assert isinstance(caught.value, ImageReadError)
    with pytest.raises(ImageTooLargeError, match="60x60 = 3600 pixels"):
        read_image(image_path, max_pixels=3000)
    np.testing.assert_array_equal(read_image(image_path, max_pixels=3600), image)
    assert Image.MAX_IMAGE_PIXELS == low_pillow_limit  # Pillow's global is restored
    # seeds of the image's size are expected, not a bomb: the image's size is their limit
    assert read_seeds(seeds_path, SIZE).shape == SIZE
    with pytest.raises(ImageTooLargeError):
        read_seeds(seeds_path)
    assert Image.MAX_IMAGE_PIXELS == low_pillow_limit


def test_segment_and_batch_take_max_pixels(tmp_path, low_pillow_limit):
    image_path, seeds_path, image = disc_files(tmp_path)
    refused = CliRunner().invoke(main, ["segment", str(image_path), "--seeds", str(seeds_path),
                                        "-o", str(tmp_path / "mask.png"), "--device", "cpu"])
    assert refused.exit_code == 1 and "--max-pixels" in refused.output
    assert not (tmp_path / "mask.png").exists()
    done = CliRunner().invoke(main, ["segment", str(image_path), "--seeds", str(seeds_path),
                                     "-o", str(tmp_path / "mask.png"), "--device", "cpu",
                                     "--max-pixels", "4000"])
    assert done.exit_code == 0, done.output
    expected = graphcut.segment(image, read_seeds(seeds_path, SIZE), device="cpu")
    np.testing.assert_array_equal(read_image(tmp_path / "mask.png", max_pixels=0) == 255,
                                  expected)

    images, seeds = tmp_path / "images", tmp_path / "seeds"
    images.mkdir(), seeds.mkdir()
    image_path.rename(images / "disc.png")
    seeds_path.rename(seeds / "disc.png")
    for extra, status, code in (([], "failed", 1), (["--max-pixels", "3600"], "ok", 0)):
        out = tmp_path / f"out{len(extra)}"
        result = CliRunner().invoke(main, ["batch", str(images), "--seeds-dir", str(seeds),
                                           "-o", str(out), "--device", "cpu", "--no-progress",
                                           *extra])
        assert result.exit_code == code, result.output
        summary = (out / "summary.csv").read_text()
        assert f",{status}," in summary
        if status == "failed":
            assert "--max-pixels" in summary


def test_max_pixels_must_be_positive():
    for command in ("segment", "batch", "gui"):
        result = CliRunner().invoke(main, [command, "--help"])
        assert "--max-pixels" in result.output
    result = CliRunner().invoke(main, ["segment", "x.png", "--seeds", "s.png", "-o", "m.png",
                                       "--max-pixels", "0"])
    assert result.exit_code == 2


# ----- multi-page files ---------------------------------------------------------------------
def three_page_tiff(path):
    pages = [np.full((20, 30), value, np.uint8) for value in (10, 120, 240)]
    Image.fromarray(pages[0]).save(path, save_all=True,
                                   append_images=[Image.fromarray(p) for p in pages[1:]])
    return pages


def test_multi_page_tiff_reads_the_first_page_and_says_so(tmp_path, caplog):
    pages = three_page_tiff(tmp_path / "stack.tif")
    with caplog.at_level(logging.WARNING, logger="graphcut.imageio"):
        np.testing.assert_array_equal(read_image(tmp_path / "stack.tif"), pages[0])
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert "stack.tif" in record.getMessage() and "3 pages" in record.getMessage()
    assert "only the first page" in record.getMessage()
    caplog.clear()
    Image.fromarray(pages[1]).save(tmp_path / "one.tif")
    with caplog.at_level(logging.WARNING, logger="graphcut.imageio"):
        read_image(tmp_path / "one.tif")
    assert caplog.records == []


def test_the_command_line_warns_about_a_multi_page_image(tmp_path):
    rows, cols = np.indices((20, 30))
    first = np.where((rows - 10) ** 2 + (cols - 15) ** 2 < 36, 200, 40).astype(np.uint8)
    Image.fromarray(first).save(tmp_path / "stack.tif", save_all=True,
                                append_images=[Image.fromarray(255 - first)])
    seeds = np.zeros((20, 30), np.uint8)
    seeds[10, 15], seeds[0, :] = graphcut.FOREGROUND, graphcut.BACKGROUND
    write_seeds(tmp_path / "seeds.png", seeds)
    result = subprocess.run(
        [sys.executable, "-m", "graphcut.cli", "segment", str(tmp_path / "stack.tif"),
         "--seeds", str(tmp_path / "seeds.png"), "-o", str(tmp_path / "mask.png"),
         "--device", "cpu"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "WARNING" in result.stderr and "2 pages" in result.stderr
    assert "only the first page" in result.stderr


# ----- lossless masks and label images -------------------------------------------------------
@pytest.mark.parametrize("name", ["m.jpg", "m.JPEG", "m.webp", "m.gif", "m.bmp", "m", "m.xyz"])
def test_masks_and_labels_refuse_other_than_png_and_tiff(tmp_path, name):
    mask = np.zeros((8, 8), bool)
    mask[2:5, 2:5] = True
    with pytest.raises(ValueError, match="losslessly, as PNG or TIFF") as caught:
        write_mask(tmp_path / name, mask)
    assert name in str(caught.value)
    with pytest.raises(ValueError, match="losslessly"):
        write_seeds(tmp_path / name, mask.astype(np.uint8))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["m.png", "m.tif", "m.TIFF"])
def test_masks_round_trip_through_png_and_tiff(tmp_path, name):
    mask = np.zeros((8, 8), bool)
    mask[2:5, 2:5] = True
    write_mask(tmp_path / name, mask)
    written = np.asarray(Image.open(tmp_path / name))
    assert set(np.unique(written)) == {0, 255}
    np.testing.assert_array_equal(written == 255, mask)


def test_segment_refuses_a_lossy_mask_name_before_solving(tmp_path, monkeypatch):
    image_path, seeds_path, _ = disc_files(tmp_path)
    monkeypatch.setattr("graphcut.batch._image.segment", lambda *a, **k: pytest.fail("solved"))
    result = CliRunner().invoke(main, ["segment", str(image_path), "--seeds", str(seeds_path),
                                       "-o", str(tmp_path / "mask.jpg"), "--device", "cpu"])
    assert result.exit_code == 2
    assert "-o/--output" in result.output and "lossy" in result.output
    assert not (tmp_path / "mask.jpg").exists()
