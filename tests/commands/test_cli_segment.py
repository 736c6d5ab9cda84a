"""``graphcut segment`` through click's CliRunner (and once through a real subprocess)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from graphcut.cli import main
from synthetic import disc_image, disc_seeds, disc_truth, iou

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture
def files(tmp_path):
    """A colour disc image, its label seeds and the same seeds as red/blue strokes."""
    Image.fromarray(disc_image("colour", np.uint8)).save(tmp_path / "disc.png")
    seeds = disc_seeds()
    Image.fromarray(seeds).save(tmp_path / "seeds.png")
    strokes = np.zeros(seeds.shape + (4,), dtype=np.uint8)
    strokes[seeds == 1] = (255, 0, 0, 255)
    strokes[seeds == 2] = (0, 0, 255, 255)
    Image.fromarray(strokes).save(tmp_path / "strokes.png")
    return tmp_path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def read_mask(path):
    mask = np.asarray(Image.open(path))
    assert set(np.unique(mask)) <= {0, 255}
    return mask == 255


def test_segment_writes_mask_and_overlay(files):
    result = run("segment", files / "disc.png", "--seeds", files / "seeds.png",
                 "-o", files / "mask.png", "--overlay", files / "overlay.png", "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert iou(read_mask(files / "mask.png"), disc_truth()) >= 0.95
    assert np.asarray(Image.open(files / "overlay.png")).shape == disc_truth().shape + (3,)
    line = result.stdout.strip()
    assert len(line.splitlines()) == 1
    assert "80x60 px" in line and "flow " in line and "backend cpu" in line and " s" in line
    assert [p.name for p in files.iterdir() if p.name.startswith(".")] == []


def test_stroke_seeds_give_the_same_mask(files):
    assert run("segment", files / "disc.png", "--seeds", files / "seeds.png",
               "-o", files / "a.png").exit_code == 0
    assert run("segment", files / "disc.png", "--seeds", files / "strokes.png",
               "-o", files / "b.png").exit_code == 0
    assert np.array_equal(read_mask(files / "a.png"), read_mask(files / "b.png"))


def test_lam_and_sigma_options_are_used(files):
    smooth = run("segment", files / "disc.png", "--seeds", files / "seeds.png",
                 "-o", files / "a.png", "--lam", "2", "--sigma", "0.1")
    assert smooth.exit_code == 0, smooth.output
    assert iou(read_mask(files / "a.png"), disc_truth()) >= 0.95
    default = run("segment", files / "disc.png", "--seeds", files / "seeds.png",
                  "-o", files / "b.png")
    assert smooth.stdout.split("flow ")[1].split(",")[0] != \
        default.stdout.split("flow ")[1].split(",")[0]


@pytest.mark.parametrize("make_bad,match", [
    (lambda d: Image.fromarray(disc_seeds()[:-1]).save(d / "bad.png"), "the same size"),
    (lambda d: Image.fromarray(np.where(disc_seeds() == 1, 0, disc_seeds()).astype(np.uint8))
     .save(d / "bad.png"), "no foreground seed"),
    (lambda d: Image.fromarray(np.where(disc_seeds() == 2, 0, disc_seeds()).astype(np.uint8))
     .save(d / "bad.png"), "no background seed"),
    (lambda d: Image.fromarray(np.where(disc_seeds() == 1, 255, disc_seeds()).astype(np.uint8))
     .save(d / "bad.png"), "unknown label values"),
    (lambda d: Image.fromarray((disc_seeds() * 3).astype(np.uint8)).save(d / "bad.png"),
     "no background seed"),  # labels 3 and 6 are two objects; 2 (background) is missing
    (lambda d: (d / "bad.png").write_text("hello"), "not an image file"),
])
def test_bad_seeds_exit_1_with_a_message(files, make_bad, match):
    make_bad(files)
    result = run("segment", files / "disc.png", "--seeds", files / "bad.png",
                 "-o", files / "mask.png")
    assert result.exit_code == 1
    assert match in result.stderr and "bad.png" in result.stderr
    assert "Traceback" not in result.output
    assert not (files / "mask.png").exists()


def test_unreadable_image_exits_1(files):
    data = (files / "disc.png").read_bytes()
    (files / "broken.png").write_bytes(data[:len(data) // 3])
    result = run("segment", files / "broken.png", "--seeds", files / "seeds.png",
                 "-o", files / "mask.png")
    assert result.exit_code == 1
    assert "broken.png" in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize("extra", [
    ["--lam", "-1"], ["--sigma", "0"], ["--device", "tpu"], ["--bogus"],
])
def test_bad_options_exit_2(files, extra):
    result = run("segment", files / "disc.png", "--seeds", files / "seeds.png",
                 "-o", files / "mask.png", *extra)
    assert result.exit_code == 2
    assert not (files / "mask.png").exists()


def test_missing_arguments_exit_2(files):
    assert run("segment", files / "disc.png", "-o", files / "m.png").exit_code == 2
    assert run("segment", files / "nothere.png", "--seeds", files / "seeds.png",
               "-o", files / "m.png").exit_code == 2


@pytest.mark.parametrize("target", ["disc.png", "seeds.png"])
def test_outputs_never_overwrite_inputs(files, target):
    before = (files / target).read_bytes()
    for option in ("-o", "--overlay"):
        args = ["segment", files / "disc.png", "--seeds", files / "seeds.png"]
        args += ["-o", files / target] if option == "-o" else \
            ["-o", files / "m.png", "--overlay", files / target]
        result = run(*args)
        assert result.exit_code == 2 and "overwrite" in result.output
    assert (files / target).read_bytes() == before


def test_quick_start_sample_gives_the_cameraman(tmp_path):
    result = run("segment", SAMPLES / "images" / "camera.png", "--seeds",
                 SAMPLES / "seeds" / "camera.png", "-o", tmp_path / "camera_mask.png")
    assert result.exit_code == 0, result.output
    mask = read_mask(tmp_path / "camera_mask.png")
    assert 0.25 < mask.mean() < 0.40
    for y, x in [(300, 80), (450, 60), (100, 200), (165, 235), (220, 210)]:  # coat, head, glove
        assert mask[y, x], (y, x)
    for y, x in [(10, 10), (60, 450), (400, 450), (420, 200), (170, 440)]:  # sky, grass, tower
        assert not mask[y, x], (y, x)


def test_real_command_line_entry_point(files):
    completed = subprocess.run(
        [sys.executable, "-m", "graphcut.cli", "segment", str(files / "disc.png"), "--seeds",
         str(files / "strokes.png"), "-o", str(files / "mask.png")],
        capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert "flow" in completed.stdout
    assert iou(read_mask(files / "mask.png"), disc_truth()) >= 0.95
