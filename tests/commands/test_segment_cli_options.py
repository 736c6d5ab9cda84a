"""``graphcut segment`` / ``batch`` with boxes, colour models, several objects and the settings
file that travels with the seeds."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from graphcut.cli import main
from graphcut.segmentation import read_settings, settings_path, write_settings
from synthetic import two_objects
from synthetic import disc_image, disc_seeds, disc_truth, iou


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def files(tmp_path):
    Image.fromarray(disc_image("colour", np.uint8)).save(tmp_path / "disc.png")
    Image.fromarray(disc_seeds()).save(tmp_path / "seeds.png")
    return tmp_path


def read_png(path):
    return np.asarray(Image.open(path))


def test_box_alone(files):
    result = run("segment", files / "disc.png", "--box", "5,15,55,65", "--model", "gmm",
                 "-o", files / "mask.png", "--device", "cpu")
    assert result.exit_code == 0, result.output
    mask = read_png(files / "mask.png") == 255
    assert iou(mask, disc_truth()) > 0.9 and not mask[:5].any() and not mask[:, 65:].any()


@pytest.mark.parametrize("args,match", [
    ((), "give --seeds, --box or both"),
    (("--box", "1,2,3"), "four comma-separated integers"),
    (("--box", "0,0,61,10"), "row1 <= 60"),
    (("--box", "5,5,20,20", "--model", "svm"), "'svm' is not one of"),
    (("--box", "5,5,20,20", "--iterations", "-1"), "-1 is not in the range"),
])
def test_bad_options_are_usage_errors(files, args, match):
    result = run("segment", files / "disc.png", "-o", files / "mask.png", *args)
    assert result.exit_code == 2 and match in result.stderr, result.output
    assert not (files / "mask.png").exists()


def test_several_objects_give_a_label_image(tmp_path):
    image, truth, seeds = two_objects()
    Image.fromarray(image).save(tmp_path / "two.png")
    Image.fromarray(seeds).save(tmp_path / "seeds.png")
    result = run("segment", tmp_path / "two.png", "--seeds", tmp_path / "seeds.png", "-o",
                 tmp_path / "labels.png", "--overlay", tmp_path / "overlay.png", "--model", "gmm",
                 "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert "labels 1, 3" in result.stdout
    labels = read_png(tmp_path / "labels.png")
    assert labels.dtype == np.uint8 and (labels == truth).mean() > 0.98
    assert read_png(tmp_path / "overlay.png").shape == truth.shape + (3,)


def test_settings_next_to_the_seeds_are_used_and_options_win(files):
    box = [10, 20, 50, 60]
    write_settings(settings_path(files / "seeds.png"), {"model": "gmm", "box": box, "lam": 30,
                                                       "keep": "connected"})
    assert json.loads((files / "seeds.json").read_text())["graphcut_settings"] == 1
    seeds = np.zeros((60, 80), np.uint8)  # no seeds at all: the box says it all
    Image.fromarray(seeds).save(files / "seeds.png")
    result = run("segment", files / "disc.png", "--seeds", files / "seeds.png", "-o",
                 files / "mask.png", "--device", "cpu")
    assert result.exit_code == 0, result.output
    mask = read_png(files / "mask.png") == 255
    inside = np.zeros((60, 80), bool)
    inside[10:50, 20:60] = True
    assert mask.any() and not (mask & ~inside).any()
    # the command line wins over the file: a box that excludes the left half of the disc
    result = run("segment", files / "disc.png", "--seeds", files / "seeds.png", "--box",
                 "0,40,60,80", "-o", files / "mask.png", "--overwrite", "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert not read_png(files / "mask.png")[:, :40].any()


def test_bad_settings_file_is_reported_with_its_name(files):
    (files / "seeds.json").write_text('{"model": "gmm", "lam": -3}')
    result = run("segment", files / "disc.png", "--seeds", files / "seeds.png", "-o",
                 files / "mask.png", "--device", "cpu")
    assert result.exit_code == 1 and "seeds.json" in result.stderr and "'lam'" in \
        result.stderr, result.output
    (files / "seeds.json").write_text('{"model": "gmm",\n "lam": }')
    result = run("segment", files / "disc.png", "--seeds", files / "seeds.png", "-o",
                 files / "mask.png", "--device", "cpu")
    assert result.exit_code == 1 and "line 2" in result.stderr and "not valid JSON" in \
        result.stderr


def test_settings_round_trip_and_checks(tmp_path, caplog):
    path = tmp_path / "s.json"
    settings = {"model": "histogram", "lam": 12.5, "sigma": None, "iterations": 3,
                "box": (1, 2, 30, 40), "lasso": [(0.0, 0.0), (10.0, 0.0), (5.5, 9.0)],
                "keep": "all", "fill_holes": 64, "labels": {"1": {"name": "cat"}}}
    write_settings(path, settings)
    assert read_settings(path) == settings
    path.write_text('{"model": "gmm", "brush": 7}')
    with caplog.at_level("WARNING", logger="graphcut"):
        assert read_settings(path) == {"model": "gmm"}
    assert "unknown setting 'brush'" in caplog.text
    for text, match in [('{"graphcut_settings": 9}', "version"), ('[1, 2]', "JSON object"),
                        ('{"box": [1, 2, 3]}', "'box'"), ('{"iterations": 2.5}', "iterations"),
                        ('{"keep": "most"}', "'keep'"), ('{"lasso": [[1, 2]]}', "'lasso'")]:
        path.write_text(text)
        with pytest.raises(ValueError, match=match):
            read_settings(path)


def test_batch_uses_each_images_settings_and_writes_label_images(tmp_path):
    images, seeds_dir, out = tmp_path / "images", tmp_path / "seeds", tmp_path / "out"
    images.mkdir()
    seeds_dir.mkdir()
    image, truth, seeds = two_objects()
    Image.fromarray(image).save(images / "two.png")
    Image.fromarray(seeds).save(seeds_dir / "two.png")
    Image.fromarray(disc_image("colour", np.uint8)).save(images / "disc.png")
    Image.fromarray(np.zeros((60, 80), np.uint8)).save(seeds_dir / "disc.png")
    write_settings(seeds_dir / "disc.json", {"box": [5, 15, 55, 65], "model": "gmm"})
    result = run("batch", images, "--seeds-dir", seeds_dir, "-o", out, "--device", "cpu",
                 "--no-progress", "--model", "gmm")
    assert result.exit_code == 0, result.output
    assert iou(read_png(out / "disc.png") == 255, disc_truth()) > 0.9
    assert (read_png(out / "two.png") == truth).mean() > 0.98
