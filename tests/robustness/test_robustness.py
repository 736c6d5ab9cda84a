"""Bad input and faults at every entry point: Python API, CLI, batch, GUI loaders.

Every case ends in a specific error (API: ImageReadError / ValueError / TypeError /
GPUMemoryError; CLI: exit 1 for a bad file or a failed job, exit 2 for a usage error; batch: a
"failed" summary row while the other images go on), never in a traceback, a partial output
file or a modified input. GPU faults are simulated on the CPU with a fake CUDA backend.
docs/robustness.md lists the guarantees and points at these tests.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import struct
import sys
import types
import zlib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

import graphcut
from graphcut import solver
from graphcut.batch import FAILED, OK, run_batch, segment_file
from graphcut.cli import main
from graphcut.io import ImageReadError, read_image, write_mask
from graphcut.io import read_seeds
from synthetic import disc_image, disc_seeds, disc_truth, iou

H, W = 60, 80


# ---- helpers --------------------------------------------------------------------------------

def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def digest(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (relative path -> hex digest)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def temporaries(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"]


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_header_only(width: int, height: int) -> bytes:
    """A tiny PNG whose header declares ``width`` x ``height`` grey pixels (no pixel data):
    the shape of a decompression bomb, without the bomb."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header)
            + png_chunk(b"IDAT", zlib.compress(b"")) + png_chunk(b"IEND", b""))


def good_png_bytes() -> bytes:
    import io
    buffer = io.BytesIO()
    Image.fromarray(disc_image("grey", seed=4)).save(buffer, format="PNG")
    return buffer.getvalue()


def good_jpeg_bytes() -> bytes:
    import io
    buffer = io.BytesIO()
    Image.fromarray(disc_image("colour", seed=4)).save(buffer, format="JPEG")
    return buffer.getvalue()


def corrupt_png() -> bytes:
    """A PNG whose compressed pixel data is damaged (its IDAT CRC no longer matches)."""
    data = bytearray(good_png_bytes())
    start = data.index(b"IDAT") + 4
    for offset in range(20, 60):
        data[start + offset] ^= 0x5A
    return bytes(data)


# name -> (file name, bytes, words expected in the error)
BAD_IMAGES = {
    "truncated_png": ("t.png", good_png_bytes()[:400], ("truncated", "corrupt")),
    "corrupt_png": ("c.png", corrupt_png(), ("cannot",)),
    "truncated_jpeg": ("t.jpg", good_jpeg_bytes()[:300], ("truncated", "corrupt")),
    "zero_byte": ("z.png", b"", ("not an image file",)),
    "text_with_png_extension": ("text.png", b"this is plain text\n" * 20, ("not an image file",)),
    "html_with_jpg_extension": ("page.jpg", b"<html><body>hi</body></html>",
                                ("not an image file",)),
    "bomb_over_limit": ("big.png", png_header_only(10_000, 10_000), ("decompression bomb",)),
    "bomb_far_over_limit": ("huge.png", png_header_only(60_000, 60_000),
                            ("decompression bomb",)),
}


@pytest.fixture
def good(tmp_path):
    """A good grey image and its seeds in tmp_path/in/."""
    folder = tmp_path / "in"
    folder.mkdir()
    Image.fromarray(disc_image("grey", seed=1)).save(folder / "disc.png")
    Image.fromarray(disc_seeds()).save(folder / "seeds.png")
    return folder


def make_bad_image(folder: Path, case: str) -> Path:
    name, data, _ = BAD_IMAGES[case]
    path = folder / name
    path.write_bytes(data)
    return path


# ---- images ---------------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(BAD_IMAGES))
def test_bad_image_files_give_a_specific_error_everywhere(tmp_path, good, case):
    path = make_bad_image(good, case)
    words = BAD_IMAGES[case][2]
    before = digest(good)

    with pytest.raises(ImageReadError) as caught:  # API
        read_image(path)
    message = str(caught.value)
    assert path.name in message and any(word in message for word in words), message

    result = run("segment", path, "--seeds", good / "seeds.png", "-o", tmp_path / "m.png",
                 "--device", "cpu")  # CLI
    assert result.exit_code == 1, result.output
    assert path.name in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "m.png").exists()

    record = segment_file(path, good / "seeds.png", tmp_path / "b.png", device="cpu")  # batch
    assert record["status"] == FAILED and path.name in record["reason"]
    assert any(word in record["reason"] for word in words), record["reason"]

    with pytest.raises(ImageReadError):  # the same file as seeds
        read_seeds(path, (H, W))
    assert digest(good) == before and temporaries(tmp_path) == []


def _mode_image(folder: Path, mode: str) -> tuple[Path, np.ndarray]:
    """The disc image saved in Pillow ``mode`` (and a suitable format); returns the path and
    the truth mask."""
    truth = disc_truth()
    grey = disc_image("grey", seed=7)
    colour = disc_image("colour", seed=7)
    if mode == "I;16":
        image, name = Image.fromarray(grey.astype(np.uint16) * 257), "deep.png"
    elif mode == "RGB16":  # 16-bit colour PNG (Pillow reads it as 8-bit RGB)
        _write_png16_rgb(folder / "deep_rgb.png", colour.astype(np.uint16) * 257)
        return folder / "deep_rgb.png", truth
    elif mode == "P":
        image = Image.fromarray(colour).quantize(colors=64)
        name = "palette.png"
    elif mode == "PA":
        image = Image.fromarray(colour).quantize(colors=64)
        image.save(folder / "palette_alpha.png", transparency=0)
        return folder / "palette_alpha.png", truth
    elif mode == "CMYK":
        image, name = Image.fromarray(colour).convert("CMYK"), "cmyk.tif"
    elif mode == "CMYK_JPEG":
        image, name = Image.fromarray(colour).convert("CMYK"), "cmyk.jpg"
    elif mode == "RGBA":
        rgba = np.dstack([colour, np.full((H, W), 128, np.uint8)])
        image, name = Image.fromarray(rgba), "alpha.png"
    elif mode == "LA":
        image, name = Image.fromarray(grey).convert("LA"), "grey_alpha.png"
    elif mode == "1":
        image, name = Image.fromarray(grey > 127), "bits.png"
    elif mode == "F":
        image, name = Image.fromarray(grey.astype(np.float32) / 255), "float.tif"
    else:
        raise AssertionError(mode)
    image.save(folder / name)
    return folder / name, truth


def _write_png16_rgb(path: Path, rgb16: np.ndarray) -> None:
    h, w, _ = rgb16.shape
    raw = b"".join(b"\x00" + rgb16[row].astype(">u2").tobytes() for row in range(h))
    header = struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header)
                     + png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b""))


@pytest.mark.parametrize("mode", ["I;16", "RGB16", "P", "PA", "CMYK", "CMYK_JPEG", "RGBA",
                                  "LA", "1", "F"])
def test_unusual_image_modes_are_handled(tmp_path, good, mode):
    path, truth = _mode_image(good, mode)
    image = read_image(path)
    assert image.shape[:2] == (H, W)
    record = segment_file(path, good / "seeds.png", tmp_path / "mask.png", device="cpu")
    assert record["status"] == OK, record
    mask = np.asarray(Image.open(tmp_path / "mask.png")) == 255
    assert iou(mask, truth) >= 0.9, mode


@pytest.mark.parametrize("shape", [(1, 9), (9, 1), (2, 2)])
def test_one_pixel_wide_images_segment(tmp_path, shape):
    h, w = shape
    image = np.zeros(shape, np.uint8)
    seeds = np.zeros(shape, np.uint8)
    seeds.flat[0], seeds.flat[-1] = 1, 2
    image.flat[: (h * w) // 2] = 200
    Image.fromarray(image).save(tmp_path / "thin.png")
    Image.fromarray(seeds).save(tmp_path / "seeds.png")
    mask = graphcut.segment(read_image(tmp_path / "thin.png"), seeds, device="cpu")
    assert mask.shape == shape and mask.flat[0] and not mask.flat[-1]
    result = run("segment", tmp_path / "thin.png", "--seeds", tmp_path / "seeds.png", "-o",
                 tmp_path / "m.png", "--device", "cpu")
    assert result.exit_code == 0, result.output


def test_a_single_pixel_cannot_hold_both_seeds(tmp_path):
    Image.fromarray(np.zeros((1, 1), np.uint8)).save(tmp_path / "dot.png")
    Image.fromarray(np.ones((1, 1), np.uint8)).save(tmp_path / "seeds.png")
    result = run("segment", tmp_path / "dot.png", "--seeds", tmp_path / "seeds.png", "-o",
                 tmp_path / "m.png", "--device", "cpu")
    assert result.exit_code == 1 and "no background seed" in result.stderr


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_infinity_in_float_images(tmp_path, good, bad):
    image = disc_image("grey", np.float32, seed=2)
    image[5, 7] = bad
    with pytest.raises(ValueError, match="NaN or infinite"):
        graphcut.segment(image, disc_seeds(), device="cpu")
    with pytest.raises(ValueError, match="NaN or infinite"):
        graphcut.segment(np.dstack([image] * 3), disc_seeds(), device="cpu")
    Image.fromarray(image).save(good / "nan.tif")
    result = run("segment", good / "nan.tif", "--seeds", good / "seeds.png", "-o",
                 tmp_path / "m.png", "--device", "cpu")
    assert result.exit_code == 1 and "NaN or infinite" in result.stderr
    assert "Traceback" not in result.output and not (tmp_path / "m.png").exists()
    record = segment_file(good / "nan.tif", good / "seeds.png", tmp_path / "m.png")
    assert record["status"] == FAILED and "NaN or infinite" in record["reason"]


@pytest.mark.parametrize("array,error,match", [
    (np.zeros((H, W), complex), TypeError, "dtype"),
    (np.zeros((H, W, 5), np.uint8), ValueError, "5 channels"),
    (np.zeros((2, H, W, 3), np.uint8), ValueError, "shape"),
    (np.zeros((0, W), np.uint8), ValueError, "image is empty"),
    (np.array([["a"] * W] * H), TypeError, "dtype"),
])
def test_bad_arrays_give_specific_errors(array, error, match):
    seeds = disc_seeds()[: array.shape[0]] if array.ndim == 2 else disc_seeds()
    with pytest.raises(error, match=match):
        graphcut.segment(array, seeds, device="cpu")


# ---- seeds ----------------------------------------------------------------------------------

def _strokes(fg=(255, 0, 0), bg=(0, 0, 255)) -> np.ndarray:
    labels = disc_seeds()
    rgb = np.zeros((H, W, 3), np.uint8)
    rgb[labels == 1] = fg
    rgb[labels == 2] = bg
    return rgb


SEED_CASES = {
    "size_mismatch": (lambda: disc_seeds()[:-1], "same size"),
    "no_foreground": (lambda: np.where(disc_seeds() == 1, 0, disc_seeds()).astype(np.uint8),
                      "no foreground seed"),
    "no_background": (lambda: np.where(disc_seeds() == 2, 0, disc_seeds()).astype(np.uint8),
                      "no background seed"),
    "no_seeds_at_all": (lambda: np.zeros((H, W), np.uint8), "no foreground seed"),
    "unknown_labels": (lambda: np.where(disc_seeds() == 2, 254, disc_seeds()) + 1,
                       "unknown label values 255"),
    "mask_used_as_seeds": (lambda: (disc_truth() * 255).astype(np.uint8),
                           "unknown label values 255"),
    "off_red_strokes": (lambda: _strokes(fg=(250, 4, 0)), "(250, 4, 0)"),
    "green_and_yellow_strokes": (lambda: _strokes(fg=(0, 255, 0), bg=(255, 255, 0)),
                                 "pure red (255, 0, 0)"),
    "off_blue_strokes": (lambda: _strokes(bg=(0, 0, 200)), "pure blue (0, 0, 255)"),
}


# Seeds lacking one label are an error for segmenting, but the desktop app loads them (seeds
# saved before the work was finished) and segments once both labels are painted.
PARTIAL_SEED_CASES = {"no_foreground", "no_background", "no_seeds_at_all"}


@pytest.mark.parametrize("case", sorted(SEED_CASES))
def test_bad_seeds_give_specific_errors_everywhere(tmp_path, good, case):
    make, match = SEED_CASES[case]
    Image.fromarray(make()).save(good / "bad.png")
    before = digest(good)
    with pytest.raises(ValueError) as caught:
        read_seeds(good / "bad.png", (H, W))
    assert match in str(caught.value) and "bad.png" in str(caught.value)
    result = run("segment", good / "disc.png", "--seeds", good / "bad.png", "-o",
                 tmp_path / "m.png", "--device", "cpu")
    assert result.exit_code == 1 and match in result.stderr, result.output
    assert "Traceback" not in result.output and not (tmp_path / "m.png").exists()
    record = segment_file(good / "disc.png", good / "bad.png", tmp_path / "m.png")
    assert record["status"] == FAILED and match in record["reason"]
    assert digest(good) == before


def test_bad_seed_arrays_through_the_api():
    image = disc_image("grey")
    with pytest.raises(TypeError, match="integer label array"):
        graphcut.segment(image, disc_seeds().astype(float), device="cpu")
    with pytest.raises(ValueError, match="same size"):
        graphcut.segment(image, disc_seeds()[:, :-2], device="cpu")
    with pytest.raises(ValueError, match="unknown label values -1"):
        graphcut.segment(image, disc_seeds().astype(np.int8) - 1, device="cpu")


# ---- parameters -----------------------------------------------------------------------------

@pytest.mark.parametrize("option,value,accepted", [
    ("--lam", "-1", ">=0"), ("--lam", "nan", "finite"), ("--lam", "inf", "finite"),
    ("--lam", "abc", "not a valid"), ("--sigma", "0", ">0"), ("--sigma", "-2", ">0"),
    ("--sigma", "nan", "finite"), ("--sigma", "inf", "finite"),
    ("--device", "gpu", "'auto', 'cpu', 'cuda'"),
])
@pytest.mark.parametrize("command", ["segment", "batch"])
def test_bad_parameters_are_usage_errors(tmp_path, good, command, option, value, accepted):
    if command == "segment":
        args = ["segment", good / "disc.png", "--seeds", good / "seeds.png"]
    else:
        args = ["batch", good, "--seeds-dir", tmp_path / "seeds"]
        (tmp_path / "seeds").mkdir()
    result = run(*args, "-o", tmp_path / "out", option, value)
    assert result.exit_code == 2, result.output
    assert option in result.output and accepted in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kwargs,match", [
    ({"lam": -1.0}, "lam must be"), ({"lam": float("nan")}, "lam must be"),
    ({"lam": float("inf")}, "lam must be"), ({"sigma": 0.0}, "sigma must be"),
    ({"sigma": -1.0}, "sigma must be"), ({"sigma": float("nan")}, "sigma must be"),
    ({"sigma": float("inf")}, "sigma must be"), ({"device": "gpu"}, "unknown device 'gpu'"),
])
def test_bad_parameters_through_the_api(kwargs, match):
    with pytest.raises(ValueError, match=match):
        graphcut.segment(disc_image("grey"), disc_seeds(), **{"device": "cpu", **kwargs})


def test_device_cuda_without_a_gpu_is_a_usage_error(tmp_path, good, monkeypatch):
    monkeypatch.setattr(solver.api, "cuda_status", lambda: (False, "CuPy sees no CUDA device"))
    commands = [
        ["segment", good / "disc.png", "--seeds", good / "seeds.png", "-o", tmp_path / "m.png"],
        ["batch", good, "--seeds-dir", good, "-o", tmp_path / "out"],
        ["batch", good, "--seeds-dir", good, "-o", tmp_path / "out", "--local-cluster", "1"],
        ["maxflow", Path(__file__).resolve().parents[2] / "samples" / "dimacs" / "textbook_6.max"],
    ]
    for args in commands:
        result = run(*args, "--device", "cuda")
        assert result.exit_code == 2, (args, result.output)
        assert "--device" in result.output and "no CUDA device" in result.output
    assert not (tmp_path / "m.png").exists() and not (tmp_path / "out").exists()


# ---- GPU faults (a fake CUDA backend that runs out of memory) -------------------------------

class FakeGPUMemoryError(solver.GPUMemoryError):
    """What the fake backend raises: a GPUMemoryError, as the real one's."""


@pytest.fixture
def fake_gpu(monkeypatch):
    """Pretend a GPU is present: ``graphcut.solver.cuda`` is a stand-in whose grid solver
    raises GPUMemoryError for networks with more than ``fake.limit`` pixels and otherwise
    solves on the CPU, and whose memory check up front (``require_free_memory``) sees
    ``fake.free_bytes``; ``cupy`` is a stand-in whose arrays are NumPy arrays."""
    from graphcut.solver import cpu

    fake = types.ModuleType("graphcut.solver.cuda")
    fake.GPUMemoryError = FakeGPUMemoryError
    fake.limit = 1000
    fake.calls = []

    def grid_min_cut(network):
        fake.calls.append(network.shape)
        h, w = network.shape
        if h * w > fake.limit:
            raise FakeGPUMemoryError(f"the network of {h}x{w} pixels needs 1.2 GiB of GPU "
                                     "memory but 0.5 GiB are free")
        return cpu.grid_min_cut(network)

    def require_free_memory(need_bytes, what, *, headroom=0.9):
        if need_bytes > headroom * fake.free_bytes:
            raise FakeGPUMemoryError(f"{what} needs about {need_bytes} bytes of GPU memory, "
                                     f"{fake.free_bytes} are free")

    fake.free_bytes = float("inf")  # what the memory check up front sees
    fake.require_free_memory = require_free_memory
    fake.grid_min_cut = grid_min_cut
    fake.csr_min_cut = cpu.csr_min_cut
    cupy = types.ModuleType("cupy")
    cupy.asarray = np.asarray
    monkeypatch.setitem(sys.modules, "graphcut.solver.cuda", fake)
    monkeypatch.setattr(solver, "cuda", fake, raising=False)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setattr(solver.api, "cuda_status", lambda: (True, "Fake GPU"))

    class FakeGridSolver:
        """The segmentation's incremental solver on the fake GPU: every solve is the fake's
        grid_min_cut of the network with the capacities last set."""

        device_name = "Fake GPU"

        def __init__(self, network):
            self.source, self.sink, self.forward = network.source, network.sink, network.forward

        def set_terminals(self, source, sink, *, region=None):
            self.source, self.sink = source, sink

        def set_nlinks(self, forward, backward=None):
            self.forward = tuple(forward)

        def solve(self, *, cancel=None):
            return grid_min_cut(solver.GridNetwork(self.source, self.sink, forward=self.forward))

        def close(self):
            pass

    import graphcut.segmentation._solving as solving
    real_open = solving.open_grid_solver
    monkeypatch.setattr(solving, "open_grid_solver", lambda network, *, device="auto": (
        FakeGridSolver(network) if device == "cuda" else real_open(network, device=device)))
    return fake


def test_gpu_out_of_memory_with_device_cuda_is_a_clear_error(fake_gpu):
    network = graphcut.build_network(disc_image("grey"), disc_seeds())
    with pytest.raises(MemoryError, match="GPU memory"):
        graphcut.min_cut(network, device="cuda")
    with pytest.raises(MemoryError, match="GPU memory"):
        graphcut.segment(disc_image("grey"), disc_seeds(), device="cuda")


def test_gpu_out_of_memory_with_device_auto_falls_back_to_the_cpu(fake_gpu, caplog):
    image, seeds = disc_image("grey"), disc_seeds()
    expected = graphcut.segment(image, seeds, device="cpu")
    with caplog.at_level(logging.WARNING, logger="graphcut.solver"):
        mask, result = graphcut.segment(image, seeds, device="auto", return_result=True)
    assert fake_gpu.calls == [(H, W)]
    assert result.backend == "cpu" and np.array_equal(mask, expected)
    assert "falling back to the CPU" in caplog.text and "GPU memory" in caplog.text


def test_gpu_out_of_memory_in_the_cli(tmp_path, good, fake_gpu, caplog):
    result = run("segment", good / "disc.png", "--seeds", good / "seeds.png", "-o",
                 tmp_path / "m.png", "--device", "cuda")
    assert result.exit_code == 1, result.output
    assert "GPU" in result.stderr and "memory" in result.stderr and "--device" in result.stderr
    assert "Traceback" not in result.output and not (tmp_path / "m.png").exists()
    with caplog.at_level(logging.WARNING, logger="graphcut.solver"):
        result = run("segment", good / "disc.png", "--seeds", good / "seeds.png", "-o",
                     tmp_path / "m.png", "--device", "auto")
    assert result.exit_code == 0, result.output
    assert "backend cpu" in result.stdout and "falling back to the CPU" in caplog.text


def test_one_failed_image_does_not_poison_the_next(tmp_path, fake_gpu):
    images, seeds = tmp_path / "images", tmp_path / "seeds"
    images.mkdir()
    seeds.mkdir()
    big = disc_image("grey", seed=3)  # 4800 pixels: over the fake GPU's limit
    small = disc_image("grey", seed=3, h=20, w=30)  # 600 pixels: fits
    for name, image in (("a_big", big), ("b_small", small), ("c_big", big), ("d_small", small)):
        Image.fromarray(image).save(images / f"{name}.png")
        Image.fromarray(disc_seeds(*image.shape)).save(seeds / f"{name}.png")
    records = {Path(r["image"]).stem: r for r in run_batch(images, seeds, tmp_path / "out",
                                                            device="cuda", progress=False)}
    assert records["a_big"]["status"] == records["c_big"]["status"] == FAILED
    assert records["a_big"]["reason"].startswith("out of the GPU: the network of 60x80")
    assert records["b_small"]["status"] == records["d_small"]["status"] == OK
    assert iou(np.asarray(Image.open(tmp_path / "out" / "b_small.png")) == 255,
               disc_truth(20, 30)) >= 0.9
    records = run_batch(images, seeds, tmp_path / "out2", device="auto", progress=False)
    assert all(r["status"] == OK for r in records)


# ---- output files ---------------------------------------------------------------------------

def test_existing_outputs_are_not_clobbered_without_overwrite(tmp_path, good):
    out = tmp_path / "mask.png"
    out.write_bytes(b"precious")
    args = ["segment", good / "disc.png", "--seeds", good / "seeds.png", "-o", out,
            "--device", "cpu"]
    result = run(*args)
    assert result.exit_code == 2 and "--overwrite" in result.output
    assert out.read_bytes() == b"precious"
    overlay = tmp_path / "overlay.png"
    overlay.write_bytes(b"also precious")
    result = run(*args[:-4], "-o", tmp_path / "new.png", "--overlay", overlay, "--device", "cpu")
    assert result.exit_code == 2 and overlay.read_bytes() == b"also precious"
    assert not (tmp_path / "new.png").exists()
    result = run(*args, "--overwrite")
    assert result.exit_code == 0, result.output
    assert iou(np.asarray(Image.open(out)) == 255, disc_truth()) >= 0.95


def test_stereo_output_is_not_clobbered_without_overwrite(tmp_path):
    left = disc_image("grey", seed=1)
    Image.fromarray(left).save(tmp_path / "left.png")
    Image.fromarray(np.roll(left, -2, axis=1)).save(tmp_path / "right.png")
    out = tmp_path / "d.npy"
    out.write_bytes(b"precious")
    args = ["stereo", tmp_path / "left.png", tmp_path / "right.png", "-d", "3", "-o", out,
            "--device", "cpu", "--max-cycles", "1"]
    result = run(*args)
    assert result.exit_code == 2 and "--overwrite" in result.output
    assert out.read_bytes() == b"precious"
    assert run(*args, "--overwrite").exit_code == 0
    assert np.load(out).shape == left.shape


def _disk_full(monkeypatch):
    """Every file write through graphcut's atomic writer fails as on a full disk."""
    def fsync(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "fsync", fsync)


def test_full_disk_gives_a_clear_error_and_leaves_no_partial_file(tmp_path, good, monkeypatch):
    old = tmp_path / "old.png"
    old.write_bytes(b"previous result")
    _disk_full(monkeypatch)
    before = digest(good)
    for target in (tmp_path / "new.png", old):
        result = run("segment", good / "disc.png", "--seeds", good / "seeds.png", "-o",
                     target, "--device", "cpu", "--overwrite")
        assert result.exit_code == 1, result.output
        assert "No space left on device" in result.stderr and target.name in result.stderr
        assert "Traceback" not in result.output
    assert not (tmp_path / "new.png").exists() and old.read_bytes() == b"previous result"
    with pytest.raises(OSError, match="new.png.*No space left"):
        write_mask(tmp_path / "new.png", disc_truth())
    assert temporaries(tmp_path) == [] and digest(good) == before


def test_full_disk_in_a_batch_fails_each_image_and_the_summary_clearly(tmp_path, monkeypatch):
    images, seeds = tmp_path / "images", tmp_path / "seeds"
    images.mkdir()
    seeds.mkdir()
    for stem in ("a", "b"):
        Image.fromarray(disc_image("grey", seed=5)).save(images / f"{stem}.png")
        Image.fromarray(disc_seeds()).save(seeds / f"{stem}.png")
    _disk_full(monkeypatch)
    result = run("batch", images, "--seeds-dir", seeds, "-o", tmp_path / "out",
                 "--device", "cpu", "--no-progress")
    assert result.exit_code == 1, result.output
    assert "No space left on device" in result.output and "summary.csv" in result.output
    assert "Traceback" not in result.output
    assert list((tmp_path / "out").iterdir()) == []


def test_unwritable_output_folder_gives_a_clear_error(tmp_path, good, monkeypatch):
    import graphcut.io._writing as writing

    def refuse(folder, path):  # as os.open(folder, O_TMPFILE) in a folder we may not write
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(folder))

    monkeypatch.setattr(writing, "create_temporary", refuse)
    result = run("segment", good / "disc.png", "--seeds", good / "seeds.png", "-o",
                 tmp_path / "m.png", "--device", "cpu")
    assert result.exit_code == 1
    assert "m.png" in result.stderr and "Permission denied" in result.stderr
    assert "Traceback" not in result.output
    record = segment_file(good / "disc.png", good / "seeds.png", tmp_path / "m.png")
    assert record["status"] == FAILED and "Permission denied" in record["reason"]
    assert "m.png" in record["reason"]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root may write into read-only folders")
def test_read_only_output_folder_for_real(tmp_path, good):
    out = tmp_path / "locked"
    out.mkdir()
    out.chmod(0o555)
    try:
        result = run("segment", good / "disc.png", "--seeds", good / "seeds.png", "-o",
                     out / "m.png", "--device", "cpu")
        assert result.exit_code == 1 and "Permission denied" in result.stderr
    finally:
        out.chmod(0o755)


def test_missing_output_folder_for_segment_is_clear(tmp_path, good):
    result = run("segment", good / "disc.png", "--seeds", good / "seeds.png", "-o",
                 tmp_path / "nowhere" / "m.png", "--device", "cpu")
    assert result.exit_code == 1 and "does not exist" in result.stderr


def test_inputs_are_never_modified(tmp_path, good):
    Image.fromarray(_strokes()).save(good / "strokes.png")
    make_bad_image(good, "truncated_png")
    before = digest(good)
    run("segment", good / "disc.png", "--seeds", good / "strokes.png", "-o", tmp_path / "m.png",
        "--overlay", tmp_path / "o.png", "--device", "cpu")
    run("segment", good / "t.png", "--seeds", good / "seeds.png", "-o", tmp_path / "x.png")
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for stem in ("disc", "t", "seeds", "strokes"):
        (seeds / f"{stem}.png").write_bytes((good / "seeds.png").read_bytes())
    seeds_before = digest(seeds)
    run("batch", good, "--seeds-dir", seeds, "-o", tmp_path / "out", "--overlay",
        "--device", "cpu")
    image = read_image(good / "disc.png")
    labels = read_seeds(good / "seeds.png", image.shape)
    image_copy, labels_copy = image.copy(), labels.copy()
    graphcut.segment(image, labels, device="cpu")
    assert np.array_equal(image, image_copy) and np.array_equal(labels, labels_copy)
    assert digest(good) == before and digest(seeds) == seeds_before


# ---- DIMACS through the CLI -----------------------------------------------------------------

@pytest.mark.parametrize("name,data,match", [
    ("empty.max", b"", "line 1"),
    ("binary.max", bytes(range(256)) * 4, "line 1"),
    ("text.max", b"hello world\n", "line 1"),
    ("short.max", b"p max 4 5\nn 1 s\nn 4 t\na 1 2 3\n", "line 1"),
    ("bad.max.gz", b"not gzip at all", "not valid gz data"),
    ("bad.max.bz2", b"BZh9" + b"\x00" * 40, "not valid bz2 data"),
])
def test_bad_dimacs_files_in_the_cli(tmp_path, name, data, match):
    (tmp_path / name).write_bytes(data)
    result = run("maxflow", tmp_path / name, "--device", "cpu")
    assert result.exit_code == 1, result.output
    assert match in result.stderr and name in result.stderr
    assert "Traceback" not in result.output


# ---- the GUI's loaders ----------------------------------------------------------------------

@pytest.fixture
def window(monkeypatch):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    pytest.importorskip("PyQt6.QtWidgets", reason="the desktop app needs PyQt6 (graphcut[gui])")
    from graphcut.gui import MainWindow
    w = MainWindow(device="cpu")
    w.errors = []
    monkeypatch.setattr(w, "show_error", lambda title, text: w.errors.append(text))
    monkeypatch.setattr(w, "confirm_discard", lambda: True)
    yield w
    w.close()
    w.deleteLater()


def test_gui_loaders_report_bad_files(tmp_path, good, window):
    assert window.open_image(good / "disc.png")
    for case in sorted(BAD_IMAGES):
        path = make_bad_image(tmp_path, case)
        assert not window.open_image(path), case
        assert path.name in window.errors[-1]
        assert not window.load_seeds(path), case
    assert window.image().shape == (H, W)  # the good image stays open
    for case in sorted(set(SEED_CASES) - PARTIAL_SEED_CASES):
        Image.fromarray(SEED_CASES[case][0]()).save(tmp_path / f"{case}.png")
        assert not window.load_seeds(tmp_path / f"{case}.png"), case
        assert SEED_CASES[case][1] in window.errors[-1]
    errors = len(window.errors)
    for case in sorted(PARTIAL_SEED_CASES):  # work in progress: loads, segments once complete
        Image.fromarray(SEED_CASES[case][0]()).save(tmp_path / f"{case}.png")
        assert window.load_seeds(tmp_path / f"{case}.png"), case
    assert len(window.errors) == errors
    assert window.load_seeds(good / "seeds.png")


# ---- interruption -----------------------------------------------------------------------------

def test_ctrl_c_in_a_serial_batch_leaves_no_partial_file(tmp_path, monkeypatch):
    """KeyboardInterrupt while the second image is being written (in process: --jobs 1): the
    CLI exits 130, the first mask is complete, no temporary file is left and the summary lists
    the finished image."""
    import graphcut.batch as batch
    images, seeds = tmp_path / "images", tmp_path / "seeds"
    images.mkdir()
    seeds.mkdir()
    for stem in ("a", "b", "c"):
        Image.fromarray(disc_image("grey", seed=5)).save(images / f"{stem}.png")
        Image.fromarray(disc_seeds()).save(seeds / f"{stem}.png")
    calls = []

    def interrupted(**kwargs):
        calls.append(kwargs["image_path"])
        if len(calls) == 2:
            out = Path(kwargs["out_path"])
            (out.parent / f".{out.name}.x1y2z3w4.tmp").write_bytes(b"half")
            raise KeyboardInterrupt
        return segment_file(**kwargs)

    monkeypatch.setattr(batch, "segment_file", interrupted)
    result = run("batch", images, "--seeds-dir", seeds, "-o", tmp_path / "out",
                 "--device", "cpu", "--no-progress", "--jobs", "1")
    assert result.exit_code == 130 and "interrupted" in result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.png", "summary.csv"]
    assert [Path(i).name for i in batch.read_summary(tmp_path / "out" / "summary.csv")] == [
        "a.png"]
    assert iou(np.asarray(Image.open(tmp_path / "out" / "a.png")) == 255, disc_truth()) > 0.9


def test_gpu_out_of_memory_while_building_falls_back_with_auto(monkeypatch, caplog):
    """CuPy running out of memory while the network is built on the GPU: with device="auto" the
    image is segmented on the CPU (same mask), with "cuda" the MemoryError reaches the caller."""
    import graphcut.segmentation._segment as segmentation

    rng = np.random.default_rng(4)
    image = rng.random((30, 40))
    seeds = np.zeros((30, 40), dtype=np.uint8)
    seeds[:2] = 2
    seeds[14:16, 18:22] = 1

    def out_of_memory(*args, **kwargs):
        raise MemoryError("Out of memory allocating 1,234,567,890 bytes")

    expected = graphcut.segment(image, seeds, device="cpu")
    monkeypatch.setattr(segmentation, "resolve_device", lambda device: "cuda")
    monkeypatch.setattr(segmentation, "array_segmentation_backend", lambda *args, **kwargs: "cuda")
    real_segmenter = segmentation.Segmenter

    def segmenter(image, *, device, **options):  # runs out of memory on the GPU
        if device != "cpu":
            out_of_memory()
        return real_segmenter(image, device=device, **options)

    monkeypatch.setattr(segmentation, "Segmenter", segmenter)
    with caplog.at_level("WARNING", logger="graphcut"):
        mask = segmentation.segment(image, seeds, device="auto")
    assert "segmenting on the CPU instead" in caplog.text
    np.testing.assert_array_equal(mask, expected)
    with pytest.raises(MemoryError, match="Out of memory"):
        segmentation.segment(image, seeds, device="cuda")
