"""The third hostile campaign (issue #22): readers and writers of the library and the CLI.

Every hostile file is built on the fly and is small on disk (FIFOs, symbolic links, sparse or
highly compressed files). Anything that could hang on a regression (a FIFO opened for reading)
runs in a subprocess or a thread with a timeout, so CI fails instead of hanging.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
import tifffile
from click.testing import CliRunner
from PIL import Image

import graphcut
from graphcut._safety import (NAME_MAX, TEMPORARY_NAME, NotARegularFileError, NpyReadError,
                              SymlinkRefusedError, open_no_follow, read_npy, read_small_file,
                              temporary_prefix)
from graphcut.cli import main
from graphcut.io import ImageMemoryError, ImageReadError, ImageTooLargeError, atomic_write
from graphcut.io import read_seeds
from graphcut.solver.memory import LIMIT_VARIABLE
from graphcut.solver.networks import CSRNetwork
from graphcut.io import VolumeReadError, is_volume, read_volume, read_volume_seeds
from graphcut.segmentation import segment_volume_paths
from synthetic import disc_image, disc_seeds

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")


def run_cli(*args, env=None, timeout=60) -> subprocess.CompletedProcess:
    """``graphcut ARGS`` in a fresh interpreter, killed after ``timeout`` seconds (a hang
    fails the test instead of hanging CI)."""
    environment = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-c", "from graphcut.cli import main; main()",
                           *map(os.fspath, args)], capture_output=True, text=True,
                          timeout=timeout, env=environment)


def within(seconds: float, function, *args, **kwargs):
    """``function(*args, **kwargs)`` in a thread that must end within ``seconds``; returns its
    result or raises its exception. A thread blocked on a FIFO is failed, not waited for."""
    outcome = {}

    def target():
        try:
            outcome["value"] = function(*args, **kwargs)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{function.__name__} did not return within {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def volume_pair(folder: Path, depth=4, h=24, w=24):
    """A (D, H, W) float volume with a bright ball, and its seeds; saved as .npy."""
    z, y, x = np.mgrid[:depth, :h, :w]
    ball = (y - h / 2) ** 2 + (x - w / 2) ** 2 < (h / 4) ** 2
    rng = np.random.default_rng(1)
    volume = np.where(ball, 0.8, 0.2) + rng.normal(0, 0.05, ball.shape)
    seeds = np.zeros(ball.shape, np.uint8)
    seeds[:, h // 2 - 1:h // 2 + 1, w // 2 - 1:w // 2 + 1] = 1
    seeds[:, :2, :] = 2
    np.save(folder / "vol.npy", volume)
    np.save(folder / "vol_seeds.npy", seeds)
    return folder / "vol.npy", folder / "vol_seeds.npy"


def image_pair(folder: Path, stem="img"):
    Image.fromarray(disc_image()).save(folder / f"{stem}.png")
    Image.fromarray(disc_seeds()).save(folder / f"{stem}_seeds.png")
    return folder / f"{stem}.png", folder / f"{stem}_seeds.png"


# --- rule 2: nothing hangs; FIFOs, devices and sockets are refused by name ----------------------

@pytest.mark.parametrize("name", ["image.tif", "image.npy", "image.png"])
def test_a_fifo_image_is_refused_by_segment(tmp_path, name):
    image, seeds = image_pair(tmp_path)
    fifo = tmp_path / name
    os.mkfifo(fifo)
    done = run_cli("segment", fifo, "--seeds", seeds, "-o", tmp_path / "m.png",
                   "--device", "cpu")
    assert done.returncode == 1, done.stderr
    assert "named pipe (FIFO)" in done.stderr and name in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("name", ["seeds.tif", "seeds.npy"])
def test_a_fifo_of_volume_seeds_is_refused_by_segment(tmp_path, name):
    volume, _ = volume_pair(tmp_path)
    fifo = tmp_path / name
    os.mkfifo(fifo)
    done = run_cli("segment", volume, "--seeds", fifo, "-o", tmp_path / "m.tif",
                   "--device", "cpu")
    assert done.returncode == 1, done.stderr
    assert "named pipe (FIFO)" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "m.tif").exists()


def test_volume_readers_refuse_fifos_without_opening_them(tmp_path):
    for name in ("a.npy", "a.tif"):
        fifo = tmp_path / name
        os.mkfifo(fifo)
        assert within(10, is_volume, fifo) is False
        with pytest.raises(VolumeReadError, match="named pipe"):
            within(10, read_volume, fifo)
        with pytest.raises(VolumeReadError, match="named pipe"):
            within(10, read_volume_seeds, fifo)
    with pytest.raises(NpyReadError, match="named pipe"):
        within(10, read_npy, tmp_path / "a.npy")
    with pytest.raises(VolumeReadError, match="character device"):
        within(10, read_volume, "/dev/zero")


def test_a_fifo_settings_file_is_refused(tmp_path):
    image, seeds = image_pair(tmp_path)
    os.mkfifo(tmp_path / "img_seeds.json")
    done = run_cli("segment", image, "--seeds", seeds, "-o", tmp_path / "m.png",
                   "--device", "cpu")
    assert done.returncode == 1, done.stderr
    assert "img_seeds.json" in done.stderr and "named pipe" in done.stderr
    with pytest.raises(NotARegularFileError):
        within(10, read_small_file, tmp_path / "img_seeds.json", "settings file")


def test_a_fifo_box_image_is_not_opened_by_the_box_check(tmp_path):
    fifo = tmp_path / "box.png"
    os.mkfifo(fifo)
    done = run_cli("segment", fifo, "--box", "2,2,10,10", "-o", tmp_path / "m.png",
                   "--device", "cpu")
    assert done.returncode == 1 and "named pipe" in done.stderr, done.stderr


# --- rule 1: no symbolic link followed for a write ----------------------------------------------

def test_open_no_follow_refuses_links_fifos_and_devices(tmp_path):
    target = tmp_path / "outside.txt"
    target.write_text("keep")
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(SymlinkRefusedError, match="symbolic link"):
        open_no_follow(tmp_path / "link", os.O_RDWR | os.O_CREAT)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(NotARegularFileError, match="FIFO"):
        within(10, open_no_follow, tmp_path / "fifo", os.O_WRONLY | os.O_APPEND)
    assert target.read_text() == "keep"
    descriptor = open_no_follow(tmp_path / "new", os.O_RDWR | os.O_CREAT)
    os.close(descriptor)
    assert (tmp_path / "new").is_file()


def test_atomic_write_replaces_a_planted_link_not_its_target(tmp_path):
    target = tmp_path / "outside.txt"
    target.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / "mask.png").symlink_to(target)
    atomic_write(out / "mask.png", lambda handle: handle.write(b"new"))
    assert target.read_text() == "keep"
    assert not (out / "mask.png").is_symlink() and (out / "mask.png").read_bytes() == b"new"


# --- rule 1: no input replaced, a file inside an input folder included --------------------------

def test_output_inside_a_folder_of_input_slices_is_refused(tmp_path):
    slices = tmp_path / "slices"
    slices.mkdir()
    volume, seeds = volume_pair(tmp_path)
    array = np.load(volume)
    for z, plane in enumerate(array):
        Image.fromarray((np.clip(plane, 0, 1) * 255).astype(np.uint8)).save(
            slices / f"s{z}.png")
    before = {p.name: p.read_bytes() for p in slices.iterdir()}
    for output in ("mask.npy", "mask.tif"):
        done = run_cli("segment", slices, "--seeds", seeds, "-o", slices / output,
                       "--device", "cpu", "--overwrite")
        assert done.returncode == 2, done.stderr
        assert "inside the IMAGE folder" in done.stderr
    with pytest.raises(ValueError, match="input folder"):
        segment_volume_paths(slices, seeds, slices / "mask.tif", device="cpu")
    assert {p.name: p.read_bytes() for p in slices.iterdir()} == before


# --- rule 3: memory bounded before decoding -----------------------------------------------------

def test_compressed_multi_page_tiff_bomb_is_refused_before_decoding(tmp_path, monkeypatch):
    path = tmp_path / "bomb.tif"
    page = np.zeros((2000, 2000), np.uint8)
    with tifffile.TiffWriter(path) as tif:
        for _ in range(16):
            tif.write(page, compression="zlib", contiguous=False,
                      metadata={"axes": "ZYX"} if _ == 0 else None)
    assert path.stat().st_size < 1_000_000  # 64 MB of pixels in well under 1 MB
    monkeypatch.setenv(LIMIT_VARIABLE, "32M")
    with pytest.raises(ImageMemoryError, match=r"bomb\.tif.*GRAPHCUT_MEMORY_LIMIT=32M"):
        read_volume(path)
    monkeypatch.setenv(LIMIT_VARIABLE, "1G")
    assert read_volume(path).shape == (16, 2000, 2000)
    with pytest.raises(ImageTooLargeError, match="slices of 2000x2000"):
        read_volume(path, max_pixels=1000)


def test_a_tiff_of_many_shaped_series_is_read_as_one_stack(tmp_path):
    """300 one-pixel pages each written as its own shaped series: tifffile's series detection
    is quadratic in their number (20000 took minutes, for the first page alone); past 256
    pages they are read as one stack, every page."""
    path = tmp_path / "pages.tif"
    with tifffile.TiffWriter(path) as tif:
        for z in range(300):
            tif.write(np.full((1, 1), z % 256, np.uint8), contiguous=False)
    assert is_volume(path)
    volume = read_volume(path)
    assert volume.shape == (300, 1, 1)
    assert np.array_equal(volume[:, 0, 0], np.arange(300) % 256)


def sparse_npy(path: Path, shape, dtype=np.uint8) -> Path:
    """A .npy whose header declares ``shape`` and whose data is a hole (sparse on disk)."""
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(
            handle, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": shape})
        handle.truncate(handle.tell() + int(np.prod(shape)) * np.dtype(dtype).itemsize)
    return path


def test_sparse_npy_bomb_is_refused_before_reading(tmp_path, monkeypatch):
    path = sparse_npy(tmp_path / "sparse.npy", (1000, 3000, 1000))  # 3 GB declared
    assert path.stat().st_blocks * 512 < 1_000_000
    monkeypatch.setenv(LIMIT_VARIABLE, "256M")
    with pytest.raises(ImageMemoryError, match=r"sparse\.npy.*GRAPHCUT_MEMORY_LIMIT=256M"):
        read_volume(path)
    with pytest.raises(MemoryError):
        read_npy(path)
    with pytest.raises(ImageMemoryError):
        read_volume_seeds(path)
    with pytest.raises(ImageTooLargeError):
        read_volume(path, max_pixels=10)


def test_a_volume_too_large_to_segment_is_refused_from_its_headers(tmp_path, monkeypatch):
    """50 MB of voxels decode within the limit but segmenting them needs ~13 GiB: refused
    from the headers, as check_image_file refuses an image, before anything is decoded."""
    import graphcut.segmentation._volume_paths as volume_paths
    from graphcut.segmentation import check_volume_file
    sparse_npy(tmp_path / "v.npy", (50, 1000, 1000))
    sparse_npy(tmp_path / "s.npy", (50, 1000, 1000))
    monkeypatch.setenv(LIMIT_VARIABLE, "1G")

    def must_not_read(*args, **kwargs):
        raise AssertionError("the volume was read before the memory check")

    monkeypatch.setattr(volume_paths, "read_volume", must_not_read)
    with pytest.raises(MemoryError, match=r"v\.npy \(1000x1000 grey\), 50 slices on the CPU"):
        segment_volume_paths(tmp_path / "v.npy", tmp_path / "s.npy", tmp_path / "m.tif",
                             device="cpu")
    monkeypatch.setenv(LIMIT_VARIABLE, "64G")  # (the histogram's ~13 GiB: within most hosts)
    assert check_volume_file(tmp_path / "v.npy", "cpu", model="histogram") == "cpu"
    assert check_volume_file(tmp_path / "missing.npy", "cpu") is None


def test_batch_refuses_the_bombs_as_failed_images(tmp_path):
    images, seeds, out = tmp_path / "images", tmp_path / "seeds", tmp_path / "out"
    images.mkdir(), seeds.mkdir()
    sparse_npy(images / "big.npy", (1000, 3000, 1000))
    sparse_npy(seeds / "big.npy", (1000, 3000, 1000))
    done = run_cli("batch", images, "--seeds-dir", seeds, "-o", out, "--device", "cpu",
                   "--no-progress", "-j", "1",
                   env={LIMIT_VARIABLE: "256M"})
    assert done.returncode == 1, done.stderr
    rows = (out / "summary.csv").read_text()
    assert "failed" in rows and "GRAPHCUT_MEMORY_LIMIT=256M" in rows


def test_stereo_checks_memory_before_decoding(tmp_path, monkeypatch):
    for name in ("left.png", "right.png"):
        Image.fromarray(np.zeros((600, 800), np.uint8)).save(tmp_path / name)
    import graphcut.commands.stereo as stereo_command

    def must_not_decode(path):
        raise AssertionError(f"{path} was decoded before the memory check")

    monkeypatch.setattr(stereo_command, "_read_image", must_not_decode)
    monkeypatch.setenv(LIMIT_VARIABLE, "20M")
    result = CliRunner().invoke(main, ["stereo", str(tmp_path / "left.png"),
                                       str(tmp_path / "right.png"), "-d", "64", "-o",
                                       str(tmp_path / "d.npy"), "--device", "cpu"])
    assert result.exit_code == 1, result.output
    assert "cost volume for a 800x600 pair" in result.output
    assert "GRAPHCUT_MEMORY_LIMIT=20M" in result.output
    Image.fromarray(np.zeros((600, 700), np.uint8)).save(tmp_path / "right.png")
    monkeypatch.delenv(LIMIT_VARIABLE)
    result = CliRunner().invoke(main, ["stereo", str(tmp_path / "left.png"),
                                       str(tmp_path / "right.png"), "-d", "8", "-o",
                                       str(tmp_path / "d.npy"), "--device", "cpu"])
    assert result.exit_code == 1 and "differ in size" in result.output


def test_stereo_refuses_fifos_as_images_and_ground_truth(tmp_path):
    for name in ("left.png", "right.png"):
        Image.fromarray(np.zeros((20, 30), np.uint8)).save(tmp_path / name)
    for name in ("gt.npy", "gt.pfm", "gt.png", "fifo.png"):
        os.mkfifo(tmp_path / name)
    for left, truth in (("left.png", "gt.npy"), ("left.png", "gt.pfm"), ("left.png", "gt.png"),
                        ("fifo.png", None)):
        extra = ["--ground-truth", tmp_path / truth] if truth else []
        done = run_cli("stereo", tmp_path / left, tmp_path / "right.png", "-d", "4", "-o",
                       tmp_path / "d.npy", "--device", "cpu", "--overwrite", *extra)
        assert done.returncode == 1, done.stderr
        assert "named pipe (FIFO)" in done.stderr and "Traceback" not in done.stderr


def test_stereo_ground_truth_bomb_is_a_clear_error(tmp_path, monkeypatch):
    for name in ("left.png", "right.png"):
        Image.fromarray(np.zeros((20, 30), np.uint8)).save(tmp_path / name)
    sparse_npy(tmp_path / "gt.npy", (30000, 30000), np.float64)  # 7.2 GB declared
    monkeypatch.setenv(LIMIT_VARIABLE, "256M")
    result = CliRunner().invoke(main, ["stereo", str(tmp_path / "left.png"),
                                       str(tmp_path / "right.png"), "-d", "4", "-o",
                                       str(tmp_path / "d.npy"), "--device", "cpu",
                                       "--ground-truth", str(tmp_path / "gt.npy")])
    assert result.exit_code == 1, result.output
    assert "cannot read ground truth" in result.output and "GRAPHCUT_MEMORY_LIMIT" in result.output


def test_stereo_dump_folder_is_not_replaced_without_overwrite(tmp_path):
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "index.json").write_text('{"instances": []}\n')
    for name in ("left.png", "right.png"):
        Image.fromarray(np.zeros((20, 30), np.uint8)).save(tmp_path / name)
    result = CliRunner().invoke(main, ["stereo", str(tmp_path / "left.png"),
                                       str(tmp_path / "right.png"), "-d", "4", "-o",
                                       str(tmp_path / "d.npy"), "--dump-instances", str(dump),
                                       "--device", "cpu"])
    assert result.exit_code == 2 and "--overwrite" in result.output
    assert (dump / "index.json").read_text() == '{"instances": []}\n'


def test_deep_settings_json_is_a_clear_error(tmp_path):
    image, seeds = image_pair(tmp_path)
    (tmp_path / "img_seeds.json").write_text("[" * 200_000 + "]" * 200_000)
    done = run_cli("segment", image, "--seeds", seeds, "-o", tmp_path / "m.png",
                   "--device", "cpu")
    assert done.returncode == 1, done.stderr
    assert "nested too deeply" in done.stderr and "RecursionError" not in done.stderr


def test_huge_settings_files_are_refused_by_their_size(tmp_path, monkeypatch):
    from graphcut.io import read_settings
    path = tmp_path / "s.json"
    with open(path, "wb") as handle:
        handle.truncate(200_000_000)  # sparse: 200 MB declared
    with pytest.raises(ValueError, match="far larger than a settings file"):
        within(10, read_settings, path)
    with open(path, "wb") as handle:
        handle.truncate(8_000_000)
    monkeypatch.setenv(LIMIT_VARIABLE, "64M")
    with pytest.raises(ValueError, match="GRAPHCUT_MEMORY_LIMIT=64M"):
        read_settings(path)


# --- rule 6: label seeds that cannot be exact are refused ---------------------------------------

def test_jpeg_label_seeds_are_refused(tmp_path):
    image, _ = image_pair(tmp_path)
    Image.fromarray(disc_seeds()).save(tmp_path / "seeds.jpg", quality=90)
    with pytest.raises(ValueError, match="lossy JPEG"):
        read_seeds(tmp_path / "seeds.jpg")
    with pytest.raises(ValueError, match="lossy JPEG"):
        read_seeds(tmp_path / "seeds.jpg", multi=True)
    done = run_cli("segment", image, "--seeds", tmp_path / "seeds.jpg", "-o",
                   tmp_path / "m.png", "--device", "cpu")
    assert done.returncode == 1 and "lossy JPEG" in done.stderr, done.stderr
    assert not (tmp_path / "m.png").exists()


def test_float_seed_tiff_is_called_float_not_stroke_form(tmp_path):
    tifffile.imwrite(tmp_path / "seeds.tif", disc_seeds().astype(np.float32))
    with pytest.raises(ValueError, match="floating-point") as caught:
        read_seeds(tmp_path / "seeds.tif")
    assert "stroke-form" not in str(caught.value)


# --- the messages listed at the end of "Found" --------------------------------------------------

def test_a_finite_image_near_1e300_gets_a_message_about_its_range(tmp_path):
    image = np.where(disc_image() > 128, 1e300, -1e300)
    with pytest.raises(ValueError, match="too large to estimate sigma") as caught:
        graphcut.segment(image, disc_seeds(), device="cpu")
    assert "got inf" not in str(caught.value)
    mask = graphcut.segment(image, disc_seeds(), device="cpu", sigma=1.0)  # given: it works
    assert mask.shape == image.shape


@pytest.mark.parametrize("option", ["iterations", "fill_holes"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), "3"])
def test_non_integer_options_say_what_is_expected(option, value):
    with pytest.raises(ValueError, match=f"{option} must be an integer >= 0"):
        graphcut.segment(disc_image(), disc_seeds(), device="cpu", **{option: value})


def test_from_arcs_refuses_uint64_overflow_and_fractional_sizes():
    tails, heads = np.array([0, 1]), np.array([1, 2])
    huge = np.array([2**64 - 1, 5], np.uint64)
    with pytest.raises(ValueError, match="capacity of 18446744073709551615") as caught:
        CSRNetwork.from_arcs(3, 0, 2, tails, heads, huge)
    assert "negative" not in str(caught.value)
    with pytest.raises(ValueError, match="out of range"):
        CSRNetwork.from_arcs(3, 0, 2, np.array([0, 2**64 - 1], np.uint64), heads, np.ones(2))
    for bad in (3.5, float("nan"), "3"):
        with pytest.raises(ValueError, match="n must be an integer"):
            CSRNetwork.from_arcs(bad, 0, 2, tails, heads, np.array([1, 5]))
    with pytest.raises(ValueError, match="sink must be an integer"):
        CSRNetwork.from_arcs(3, 0, 1.5, tails, heads, np.array([1, 5]))
    network = CSRNetwork.from_arcs(np.int64(3), 0, 2.0, tails, heads, np.array([1, 5], np.uint64))
    assert network.num_vertices == 3 and network.num_arcs == 2


def test_a_truncated_npy_is_called_truncated(tmp_path):
    volume, seeds = volume_pair(tmp_path)
    data = volume.read_bytes()
    (tmp_path / "cut.npy").write_bytes(data[:len(data) // 2])
    with pytest.raises(VolumeReadError, match="truncated"):
        read_volume(tmp_path / "cut.npy")
    done = run_cli("segment", tmp_path / "cut.npy", "--seeds", seeds, "-o",
                   tmp_path / "m.tif", "--device", "cpu")
    assert done.returncode == 1, done.stderr
    assert "truncated" in done.stderr and "suffix" not in done.stderr


# --- rule 4: every file name the OS accepts -----------------------------------------------------

@pytest.mark.parametrize("name", ["x" * NAME_MAX, "é" * (NAME_MAX // 2),
                                  os.fsdecode(b"\xff" * NAME_MAX), "a\nb\rc.png"])
def test_temporary_names_fit_the_name_limit(name):
    prefix = temporary_prefix(name)
    temporary = os.fsencode(prefix) + b"abcdefgh" + b".tmp"
    assert len(temporary) <= NAME_MAX
    assert TEMPORARY_NAME.match(os.fsdecode(temporary))
    os.fsdecode(os.fsencode(prefix))  # round-trips


def test_outputs_with_the_longest_names_are_written(tmp_path):
    image, seeds = image_pair(tmp_path)
    mask = tmp_path / ("m" * (NAME_MAX - 4) + ".png")
    done = run_cli("segment", image, "--seeds", seeds, "-o", mask, "--device", "cpu")
    assert done.returncode == 0, done.stderr
    assert mask.is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    from graphcut.stereo.io import write_disparity
    write_disparity(tmp_path / ("d" * (NAME_MAX - 4) + ".npy"), np.zeros((2, 3), np.int32))
    from graphcut.solver.dimacs import write_dimacs
    write_dimacs(CSRNetwork.from_arcs(2, 0, 1, [0], [1], [3]), tmp_path / ("g" * (NAME_MAX - 4)
                                                                           + ".max"))
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# --- rule 5: SIGTERM leaves no temporary file ---------------------------------------------------

@pytest.mark.parametrize("signal_name, word", [("SIGTERM", "terminated"),
                                               ("SIGINT", "interrupted")])
def test_a_signal_during_segment_leaves_no_temporary_file(tmp_path, signal_name, word):
    """SIGTERM or Ctrl-C (SIGINT) while the mask is written: exit 128 + the signal's number
    (143, 130), a message, and no file in the output folder."""
    image, seeds = image_pair(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    script = textwrap.dedent(f"""
        import os, signal, sys
        import graphcut.io._writing as imageio
        real_fsync = os.fsync
        def fsync_then_terminated(descriptor):  # the signal arrives while the mask is written
            os.kill(os.getpid(), signal.{signal_name})
            real_fsync(descriptor)
        imageio.os = type(sys)("os_stand_in")
        imageio.os.__dict__.update(os.__dict__)
        imageio.os.fsync = fsync_then_terminated
        from graphcut.cli import main
        sys.argv = ["graphcut", "segment", {str(image)!r}, "--seeds", {str(seeds)!r}, "-o",
                    {str(out / "m.png")!r}, "--device", "cpu"]
        main()
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    number = getattr(signal, signal_name)
    assert done.returncode == 128 + number, done.stderr  # not killed mid-write
    assert word in done.stderr and "Traceback" not in done.stderr
    assert list(out.iterdir()) == []
