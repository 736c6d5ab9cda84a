"""Reading images and seed files, writing masks, overlays and seeds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import graphcut
from graphcut.io import ImageReadError, atomic_save, overlay, read_image, write_mask, \
    write_overlay
from graphcut.io import read_seeds, strokes_to_labels, write_seeds

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _labels(h=12, w=16):
    labels = np.zeros((h, w), dtype=np.uint8)
    labels[2:5, 3:7] = 1
    labels[8:, :] = 2
    return labels


def _no_temporary_files(folder: Path):
    return [p.name for p in folder.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"]


# ---- read_image -----------------------------------------------------------------------------

@pytest.mark.parametrize("array,suffix", [
    (np.arange(48, dtype=np.uint8).reshape(6, 8), ".png"),
    (np.arange(144, dtype=np.uint8).reshape(6, 8, 3), ".png"),
    (np.arange(192, dtype=np.uint8).reshape(6, 8, 4), ".png"),
    (np.arange(48, dtype=np.uint16).reshape(6, 8) * 1000, ".png"),
    (np.arange(48, dtype=np.uint16).reshape(6, 8) * 1000, ".tif"),
    (np.arange(144, dtype=np.uint8).reshape(6, 8, 3), ".bmp"),
    (np.arange(144, dtype=np.uint8).reshape(6, 8, 3), ".tiff"),
])
def test_lossless_formats_round_trip(tmp_path, array, suffix):
    path = tmp_path / f"image{suffix}"
    Image.fromarray(array).save(path)
    read = read_image(path)
    assert read.dtype == array.dtype and np.array_equal(read, array)


def test_sixteen_bit_colour_tiff_keeps_its_depth(tmp_path):
    import tifffile
    array = (np.arange(144).reshape(6, 8, 3) * 400).astype(np.uint16)
    tifffile.imwrite(tmp_path / "deep.tif", array, photometric="rgb")
    read = read_image(tmp_path / "deep.tif")
    assert read.dtype == np.uint16 and np.array_equal(read, array)


def test_palette_images_become_rgb_or_rgba(tmp_path):
    rgb = np.zeros((4, 5, 3), dtype=np.uint8)
    rgb[1:3, 1:4] = (200, 10, 30)
    palette = Image.fromarray(rgb).convert("P", palette=Image.Palette.ADAPTIVE, colors=4)
    palette.save(tmp_path / "p.png")
    assert Image.open(tmp_path / "p.png").mode == "P"
    assert np.array_equal(read_image(tmp_path / "p.png"), rgb)
    transparent_index = int(np.asarray(palette)[0, 0])
    palette.save(tmp_path / "pa.png", transparency=transparent_index)
    read = read_image(tmp_path / "pa.png")
    assert read.shape == (4, 5, 4)
    assert np.array_equal(read[..., :3], rgb)
    assert read[0, 0, 3] == 0 and read[1, 1, 3] == 255


def test_cmyk_jpeg_and_bilevel(tmp_path):
    Image.new("CMYK", (7, 5), (0, 255, 255, 0)).save(tmp_path / "c.jpg")
    read = read_image(tmp_path / "c.jpg")
    assert read.shape == (5, 7, 3) and read.dtype == np.uint8
    assert read[..., 0].mean() > 200 and read[..., 1].mean() < 60  # red
    bits = np.zeros((5, 7), dtype=bool)
    bits[1, 2] = True
    Image.fromarray(bits).save(tmp_path / "b.png")
    assert np.array_equal(read_image(tmp_path / "b.png"), bits)


def test_exif_orientation_is_applied(tmp_path):
    image = Image.new("RGB", (6, 4), (10, 20, 30))
    exif = image.getexif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise when shown
    image.save(tmp_path / "rotated.jpg", exif=exif)
    assert read_image(tmp_path / "rotated.jpg").shape == (6, 4, 3)


@pytest.mark.parametrize("setup,match", [
    (lambda folder: folder / "missing.png", "no such file"),
    (lambda folder: (folder / "text.png").write_text("not an image") and folder / "text.png",
     "not an image file"),
    (lambda folder: folder, "is a folder"),
])
def test_unreadable_files_name_the_file(tmp_path, setup, match):
    path = setup(tmp_path)
    with pytest.raises(ImageReadError, match=match) as caught:
        read_image(path)
    assert str(path) in str(caught.value)


def test_truncated_file_is_reported(tmp_path):
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(tmp_path / "a.png")
    data = (tmp_path / "a.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(data[:len(data) // 2])
    with pytest.raises(ImageReadError, match="truncated or corrupt") as caught:
        read_image(tmp_path / "cut.png")
    assert "cut.png" in str(caught.value)


def test_decompression_bombs_are_refused(tmp_path, monkeypatch):
    Image.new("L", (300, 200)).save(tmp_path / "big.png")
    with pytest.raises(ImageReadError, match="decompression bomb"):
        read_image(tmp_path / "big.png", max_pixels=10_000)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 20_000)
    with pytest.raises(ImageReadError, match="decompression bomb"):  # Pillow's own hard limit
        read_image(tmp_path / "big.png")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 50_000)
    with pytest.raises(ImageReadError, match="60000 pixels|more than the limit"):
        read_image(tmp_path / "big.png")
    assert read_image(tmp_path / "big.png", max_pixels=60_000).shape == (200, 300)


# ---- seeds ----------------------------------------------------------------------------------

def test_label_and_stroke_forms_read_identically(tmp_path):
    labels = _labels()
    Image.fromarray(labels).save(tmp_path / "grey.png")
    indexed = Image.fromarray(labels).convert("P")
    indexed.putpalette([0, 0, 0, 255, 0, 0, 0, 0, 255] + [0] * 759)
    indexed.save(tmp_path / "palette.png")
    assert Image.open(tmp_path / "palette.png").mode == "P"
    rgb = np.zeros(labels.shape + (3,), dtype=np.uint8)
    rgb[...] = (40, 200, 40)  # other colours are no seed
    rgb[labels == 1] = (255, 0, 0)
    rgb[labels == 2] = (0, 0, 255)
    Image.fromarray(rgb).save(tmp_path / "strokes.png")
    rgba = np.concatenate([rgb, np.full(labels.shape + (1,), 255, np.uint8)], axis=-1)
    rgba[0, 0] = (255, 0, 0, 0)  # transparent red is no seed
    Image.fromarray(rgba).save(tmp_path / "strokes_rgba.png")
    for name in ("grey.png", "palette.png", "strokes.png", "strokes_rgba.png"):
        read = read_seeds(tmp_path / name, labels.shape)
        assert read.dtype == np.uint8 and np.array_equal(read, labels), name


@pytest.mark.parametrize("stem", ["camera", "astronaut", "coins", "coffee"])
def test_bundled_seed_files_agree_in_both_forms(stem):
    image = read_image(SAMPLES / "images" / f"{stem}.png")
    labels = read_seeds(SAMPLES / "seeds" / f"{stem}.png", image.shape)
    strokes = read_seeds(SAMPLES / "seeds_strokes" / f"{stem}.png", image.shape)
    assert np.array_equal(labels, strokes)
    assert (labels == 1).any() and (labels == 2).any()


@pytest.mark.parametrize("labels,shape,match", [
    (_labels(), (13, 16), r"16x12 \(width x height\) but the image is 16x13"),
    (np.where(_labels() == 1, 7, _labels()).astype(np.uint8), None, "unknown label values 7"),
    (np.where(_labels() == 1, 0, _labels()).astype(np.uint8), None, "no foreground"),
    (np.where(_labels() == 2, 0, _labels()).astype(np.uint8), None, "no background"),
])
def test_bad_seed_files_are_reported(tmp_path, labels, shape, match):
    Image.fromarray(labels).save(tmp_path / "seeds.png")
    with pytest.raises(ValueError, match=match) as caught:
        read_seeds(tmp_path / "seeds.png", shape)
    assert "seeds.png" in str(caught.value)


def test_stroke_file_without_blue_is_reported(tmp_path):
    rgb = np.zeros((5, 5, 3), dtype=np.uint8)
    rgb[2, 2] = (255, 0, 0)
    rgb[3, 3] = (0, 0, 254)  # not pure blue
    Image.fromarray(rgb).save(tmp_path / "s.png")
    with pytest.raises(ValueError, match="no background"):
        read_seeds(tmp_path / "s.png")
    assert strokes_to_labels(rgb)[2, 2] == 1 and strokes_to_labels(rgb).sum() == 1


def test_seed_file_that_is_not_an_image(tmp_path):
    (tmp_path / "s.png").write_bytes(b"\x89PNG garbage")
    with pytest.raises(ImageReadError, match="s.png"):
        read_seeds(tmp_path / "s.png")


def test_write_seeds_round_trip_and_partial_seeds(tmp_path):
    labels = _labels()
    write_seeds(tmp_path / "out.png", labels)
    assert np.array_equal(read_seeds(tmp_path / "out.png"), labels)
    assert Image.open(tmp_path / "out.png").mode == "L"
    only_object = np.where(labels == 2, 0, labels).astype(np.uint8)
    write_seeds(tmp_path / "partial.png", only_object)  # allowed when writing
    assert np.array_equal(np.asarray(Image.open(tmp_path / "partial.png")), only_object)
    with pytest.raises(ValueError, match="unknown label"):
        write_seeds(tmp_path / "bad.png", labels + 253)  # 3 .. 254 are objects, 255 no label
    assert _no_temporary_files(tmp_path) == []


# ---- writing --------------------------------------------------------------------------------

def test_write_mask_is_0_255(tmp_path):
    mask = _labels() == 1
    write_mask(tmp_path / "mask.png", mask)
    written = np.asarray(Image.open(tmp_path / "mask.png"))
    assert written.dtype == np.uint8 and set(np.unique(written)) == {0, 255}
    assert np.array_equal(written == 255, mask)
    assert _no_temporary_files(tmp_path) == []


def test_overlay_tints_the_object_and_outlines_it(tmp_path):
    image = np.full((10, 12), 100, dtype=np.uint8)
    mask = np.zeros((10, 12), dtype=bool)
    mask[2:8, 3:9] = True
    rgb = overlay(image, mask, color=(255, 0, 0), opacity=0.5, outline=(0, 255, 0))
    assert rgb.shape == (10, 12, 3) and rgb.dtype == np.uint8
    assert tuple(rgb[0, 0]) == (100, 100, 100)           # background untouched
    assert tuple(rgb[4, 5]) == (178, 50, 50)             # interior tinted
    assert tuple(rgb[2, 5]) == (0, 255, 0)               # boundary outlined
    assert tuple(rgb[4, 2]) == (100, 100, 100)           # outline stays inside the object
    write_overlay(tmp_path / "o.png", image, mask)
    assert np.asarray(Image.open(tmp_path / "o.png")).shape == (10, 12, 3)
    with pytest.raises(ValueError, match="shape"):
        overlay(image, mask[:5])


def test_overlay_of_sixteen_bit_and_float_images():
    mask = np.zeros((4, 4), dtype=bool)
    deep = np.full((4, 4), 65535, dtype=np.uint16)
    assert overlay(deep, mask)[0, 0].tolist() == [255, 255, 255]
    wide = np.linspace(-5, 5, 16).reshape(4, 4)
    shown = overlay(wide, mask)
    assert shown[0, 0, 0] == 0 and shown[-1, -1, 0] == 255


def test_writers_refuse_to_overwrite_inputs(tmp_path):
    image = np.zeros((4, 4), dtype=np.uint8)
    Image.fromarray(image).save(tmp_path / "in.png")
    before = (tmp_path / "in.png").read_bytes()
    mask = np.ones((4, 4), dtype=bool)
    with pytest.raises(ValueError, match="refusing to overwrite"):
        write_mask(tmp_path / "in.png", mask, inputs=(tmp_path / "in.png",))
    with pytest.raises(ValueError, match="refusing to overwrite"):
        write_overlay(tmp_path / "." / "in.png", image, mask, inputs=[tmp_path / "in.png"])
    assert (tmp_path / "in.png").read_bytes() == before


def test_atomic_write_leaves_old_file_and_no_temporary_on_failure(tmp_path):
    write_mask(tmp_path / "m.png", np.ones((3, 3), dtype=bool))
    before = (tmp_path / "m.png").read_bytes()

    class Exploding:
        def save(self, handle, **options):
            handle.write(b"partial")
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_save(Exploding(), tmp_path / "m.png")
    assert (tmp_path / "m.png").read_bytes() == before
    assert _no_temporary_files(tmp_path) == []


def test_write_errors_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_mask(tmp_path / "no" / "m.png", np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="suffix"):
        write_mask(tmp_path / "m.xyz", np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="2-D"):
        write_mask(tmp_path / "m.png", np.ones((3, 3, 3), dtype=bool))


def test_written_files_have_normal_permissions(tmp_path):
    write_mask(tmp_path / "m.png", np.ones((3, 3), dtype=bool))
    assert (tmp_path / "m.png").stat().st_mode & 0o044  # readable by others (umask allowing)


def test_package_exports_io():
    assert graphcut.read_image is read_image and graphcut.read_seeds is read_seeds
