"""``graphcut batch`` and graphcut.batch: a folder with good and broken images."""

from __future__ import annotations

import csv
import os

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from graphcut.batch import FAILED, OK, SKIPPED, SUMMARY_FIELDS, run_batch, segment_file
from graphcut.cli import main
from test_segment import disc_image, disc_seeds, disc_truth, iou

GOOD = {"grey": disc_image("grey", np.uint8, seed=1),
        "colour": disc_image("colour", np.uint8, seed=2),
        "deep": disc_image("grey", np.uint16, seed=3)}


@pytest.fixture
def folders(tmp_path):
    """images/ with three good images, a broken one, one with wrong-size seeds, one without
    seeds and a non-image file; seeds/ with the seed files."""
    images, seeds = tmp_path / "images", tmp_path / "seeds"
    images.mkdir()
    seeds.mkdir()
    for stem, image in GOOD.items():
        Image.fromarray(image).save(images / f"{stem}.png")
        Image.fromarray(disc_seeds()).save(seeds / f"{stem}.png")
    (images / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n this is not a png")
    Image.fromarray(disc_seeds()).save(seeds / "broken.png")
    Image.fromarray(GOOD["grey"]).save(images / "small.png")
    Image.fromarray(disc_seeds()[:-5]).save(seeds / "small.png")
    Image.fromarray(GOOD["grey"]).save(images / "unseeded.png")
    (images / "notes.txt").write_text("not an image")
    return images, seeds, tmp_path / "out"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def summary(out):
    with open(out / "summary.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0].keys()) == SUMMARY_FIELDS
    return {os.path.basename(row["image"]): row for row in rows}


def leftovers(folder):
    return [p.name for p in folder.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"]


def test_batch_reports_failures_and_writes_the_rest(folders):
    images, seeds, out = folders
    inputs_before = {p: p.read_bytes() for p in list(images.iterdir()) + list(seeds.iterdir())}
    result = run("batch", images, "--seeds-dir", seeds, "-o", out, "--device", "cpu",
                 "--overlay")
    assert result.exit_code == 1
    assert "broken.png" in result.stderr and "small.png" in result.stderr
    assert "Traceback" not in result.output
    assert "6 images: 3 ok, 1 skipped, 2 failed" in result.stdout
    for stem in GOOD:
        mask = np.asarray(Image.open(out / f"{stem}.png")) == 255
        assert iou(mask, disc_truth()) >= 0.95, stem
        assert (out / "overlays" / f"{stem}.png").exists()
    assert not (out / "broken.png").exists() and not (out / "small.png").exists()
    rows = summary(out)
    assert set(rows) == {"broken.png", "colour.png", "deep.png", "grey.png", "small.png",
                         "unseeded.png"}
    assert rows["broken.png"]["status"] == FAILED
    assert "not an image file" in rows["broken.png"]["reason"]
    assert rows["small.png"]["status"] == FAILED and "same size" in rows["small.png"]["reason"]
    assert rows["unseeded.png"]["status"] == SKIPPED
    assert "no seed file" in rows["unseeded.png"]["reason"]
    for stem in GOOD:
        row = rows[f"{stem}.png"]
        assert row["status"] == OK and row["reason"] == "" and row["backend"] == "cpu"
        assert (row["width"], row["height"]) == ("80", "60")
        assert int(row["flow"]) > 0 and float(row["seconds"]) > 0
    assert leftovers(out) == []
    assert {p: p.read_bytes() for p in inputs_before} == inputs_before


def test_rerun_skips_done_images_and_overwrite_redoes_them(folders):
    images, seeds, out = folders
    run("batch", images, "--seeds-dir", seeds, "-o", out)
    first = summary(out)
    stamp = (out / "grey.png").stat().st_mtime_ns
    os.utime(out / "grey.png", ns=(stamp - 10**9, stamp - 10**9))
    stamp = (out / "grey.png").stat().st_mtime_ns

    again = run("batch", images, "--seeds-dir", seeds, "-o", out)
    assert again.exit_code == 1  # the broken image still fails
    assert "0 ok, 4 skipped, 2 failed" in again.stdout
    rows = summary(out)
    for stem in GOOD:
        assert rows[f"{stem}.png"]["status"] == SKIPPED
        assert rows[f"{stem}.png"]["flow"] == first[f"{stem}.png"]["flow"]  # carried over
    assert (out / "grey.png").stat().st_mtime_ns == stamp

    redo = run("batch", images, "--seeds-dir", seeds, "-o", out, "--overwrite")
    assert "3 ok, 1 skipped, 2 failed" in redo.stdout
    assert (out / "grey.png").stat().st_mtime_ns != stamp
    assert all(summary(out)[f"{stem}.png"]["status"] == OK for stem in GOOD)


def test_fixed_inputs_then_success_exit_0(folders):
    images, seeds, out = folders
    (images / "broken.png").unlink()
    (images / "small.png").unlink()
    result = run("batch", images, "--seeds-dir", seeds, "-o", out, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "3 ok, 1 skipped, 0 failed" in result.stdout


@pytest.mark.parametrize("which", ["images", "seeds"])
def test_output_folder_may_not_be_an_input_folder(folders, which):
    images, seeds, _ = folders
    target = images if which == "images" else seeds
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    result = run("batch", images, "--seeds-dir", seeds, "-o", target)
    assert result.exit_code == 2
    assert f"is the {which} folder" in result.output
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before


def test_bad_options_and_folders_exit_2(folders):
    images, seeds, out = folders
    assert run("batch", images, "--seeds-dir", seeds, "-o", out, "--lam", "x").exit_code == 2
    assert run("batch", images, "--seeds-dir", images / "nothere", "-o", out).exit_code == 2
    assert run("batch", images, "--seeds-dir", images, "-o", out).exit_code == 2
    assert not out.exists()


def test_duplicate_stems_fail_instead_of_sharing_a_mask(folders):
    images, seeds, out = folders
    Image.fromarray(GOOD["grey"]).save(images / "grey.bmp")
    records = run_batch(images, seeds, out, progress=False)
    by_name = {os.path.basename(r["image"]): r for r in records}
    assert by_name["grey.png"]["status"] == by_name["grey.bmp"]["status"] == FAILED
    assert "stem" in by_name["grey.bmp"]["reason"]
    assert by_name["colour.png"]["status"] == OK


def test_segment_file_never_raises(tmp_path, folders):
    images, seeds, _ = folders
    cases = [
        (images / "missing.png", seeds / "grey.png", tmp_path / "a.png", "no such file"),
        (images / "grey.png", None, tmp_path / "b.png", "no seed file"),
        (images / "grey.png", seeds / "missing.png", tmp_path / "c.png", "no such file"),
        (images / "grey.png", seeds / "grey.png", tmp_path / "nofolder" / "d.png",
         "does not exist"),
        (images / "grey.png", seeds / "grey.png", images / "grey.png", "overwrite"),
        (images / "grey.png", seeds / "grey.png", seeds / "grey.png", "overwrite"),
    ]
    for image, seed_file, out, reason in cases:
        record = segment_file(image, seed_file, out)
        assert record["status"] == FAILED and reason in record["reason"], record
        assert set(record) == set(SUMMARY_FIELDS)
    record = segment_file(images / "grey.png", seeds / "grey.png", tmp_path / "ok.png",
                          lam=5.0, device="cpu")
    assert record["status"] == OK and record["flow"] > 0 and record["width"] == 80
    assert segment_file(images / "grey.png", seeds / "grey.png",
                        tmp_path / "ok.png")["status"] == SKIPPED
    assert segment_file(images / "grey.png", seeds / "grey.png", tmp_path / "ok.png",
                        overwrite=True)["status"] == OK
    assert leftovers(tmp_path) == []
