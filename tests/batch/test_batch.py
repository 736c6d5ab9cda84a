"""``graphcut batch`` and graphcut.batch: a folder with good and broken images."""

from __future__ import annotations

import csv
import json
import logging
import os

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image, PngImagePlugin

import graphcut
from graphcut.batch import (FAILED, OK, SKIPPED, STAGE_FIELDS, SUMMARY_FIELDS,
                            OutputFolderBusyError, read_mask_metadata, read_summary, run_batch,
                            segment_file, write_summary)
from graphcut.batch._lock import output_folder_lock
from graphcut.cli import main
from synthetic import disc_image, disc_seeds, disc_truth, iou

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
    with open(out / "summary.csv", newline="", errors="surrogateescape") as handle:
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
    assert record["lam"] == 5.0 and record["sigma"] == ""
    again = segment_file(images / "grey.png", seeds / "grey.png", tmp_path / "ok.png", lam=5.0)
    assert again["status"] == SKIPPED and again["flow"] == record["flow"]  # from the mask
    assert segment_file(images / "grey.png", seeds / "grey.png", tmp_path / "ok.png",
                        lam=5.0, overwrite=True)["status"] == OK
    other = segment_file(images / "grey.png", seeds / "grey.png", tmp_path / "ok.png", lam=9.0)
    assert other["status"] == OK and other["flow"] != record["flow"]  # other lam: redone
    assert leftovers(tmp_path) == []


# ---- resume: parameters and inputs recorded per mask ----------------------------------------

def test_masks_record_their_parameters_and_equal_a_plain_segmentation(folders):
    images, seeds, out = folders
    records = run_batch(images, seeds, out, device="cpu", lam=7.5, progress=False)
    grey = next(r for r in records if r["image"].endswith("grey.png"))
    metadata = read_mask_metadata(out / "grey.png")
    assert metadata["lam"] == 7.5 and metadata["sigma"] is None
    assert metadata["flow"] == grey["flow"] and (metadata["width"], metadata["height"]) == (80, 60)
    # pixel for pixel what graphcut.segment gives (the PNG encoding differs, not the mask)
    expected = graphcut.segment(GOOD["grey"], disc_seeds(), lam=7.5, device="cpu")
    assert np.array_equal(np.asarray(Image.open(out / "grey.png")), np.where(expected, 255, 0))
    rows = summary(out)
    assert rows["grey.png"]["lam"] == "7.5" and rows["grey.png"]["sigma"] == ""


def test_rerun_with_other_parameters_redoes_and_reports_new_numbers(folders, caplog):
    images, seeds, out = folders
    first = {os.path.basename(r["image"]): r for r in
             run_batch(images, seeds, out, device="cpu", progress=False)}
    with caplog.at_level(logging.WARNING, logger="graphcut.batch"):
        second = {os.path.basename(r["image"]): r for r in
                  run_batch(images, seeds, out, device="cpu", lam=3.0, progress=False)}
    assert "redoing 3 image(s) whose masks are out of date" in caplog.text
    assert "lam default -> 3.0" in caplog.text  # lam not given: the settings or the default
    rows = summary(out)
    for stem in GOOD:
        name = f"{stem}.png"
        assert second[name]["status"] == OK and second[name]["flow"] != first[name]["flow"]
        assert rows[name]["flow"] == str(second[name]["flow"]) and rows[name]["lam"] == "3.0"
        assert read_mask_metadata(out / name)["lam"] == 3.0
    third = {os.path.basename(r["image"]): r for r in
             run_batch(images, seeds, out, device="cpu", lam=3.0, progress=False)}
    assert all(third[f"{stem}.png"]["status"] == SKIPPED for stem in GOOD)
    assert all(third[f"{s}.png"]["flow"] == second[f"{s}.png"]["flow"] for s in GOOD)


def test_changed_seed_file_redoes_only_its_image(folders):
    images, seeds, out = folders
    run_batch(images, seeds, out, device="cpu", progress=False)
    edited = disc_seeds()
    edited[5:8, 5:20] = 2
    Image.fromarray(edited).save(seeds / "grey.png")
    records = {os.path.basename(r["image"]): r["status"] for r in
               run_batch(images, seeds, out, device="cpu", progress=False)}
    assert records["grey.png"] == OK
    assert records["colour.png"] == records["deep.png"] == SKIPPED


def test_a_mask_without_a_record_is_kept_unless_overwrite(folders):
    images, seeds, out = folders
    out.mkdir()
    Image.fromarray(np.zeros((60, 80), np.uint8)).save(out / "grey.png")  # hand-made
    records = {os.path.basename(r["image"]): r for r in
               run_batch(images, seeds, out, device="cpu", progress=False)}
    assert records["grey.png"]["status"] == SKIPPED
    assert "no record of how it was made" in records["grey.png"]["reason"]
    assert not np.asarray(Image.open(out / "grey.png")).any()  # untouched
    records = {os.path.basename(r["image"]): r for r in
               run_batch(images, seeds, out, device="cpu", overwrite=True, progress=False)}
    assert records["grey.png"]["status"] == OK
    assert np.asarray(Image.open(out / "grey.png")).any()


# ---- file names, concurrent runs, special files ---------------------------------------------

def test_file_names_that_are_not_utf8_are_done_and_summarised(tmp_path):
    images, seeds, out = tmp_path / "images", tmp_path / "seeds", tmp_path / "out"
    images.mkdir()
    seeds.mkdir()
    name = os.fsdecode(b"caf\xe9.png")  # Latin-1 bytes: not valid UTF-8
    Image.fromarray(GOOD["grey"]).save(images / name)
    Image.fromarray(disc_seeds()).save(seeds / name)
    Image.fromarray(GOOD["colour"]).save(images / "plain.png")
    Image.fromarray(disc_seeds()).save(seeds / "plain.png")
    result = run("batch", images, "--seeds-dir", seeds, "-o", out, "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert "2 images: 2 ok, 0 skipped, 0 failed" in result.stdout
    assert os.path.exists(os.path.join(os.fsencode(out), b"caf\xe9.png"))
    raw = (out / "summary.csv").read_bytes()
    assert b"caf\xe9.png" in raw  # the name's bytes as on disk
    rows = read_summary(out / "summary.csv")
    assert rows[str(images / name)]["status"] == OK
    again = run("batch", images, "--seeds-dir", seeds, "-o", out, "--device", "cpu")
    assert "0 ok, 2 skipped, 0 failed" in again.stdout


def test_a_second_run_into_the_same_folder_is_refused(folders):
    images, seeds, out = folders
    out.mkdir()
    other = out / ".grey.png.abcd1234.tmp"  # the running batch's write in progress
    other.write_bytes(b"half a mask")
    with output_folder_lock(out):
        result = run("batch", images, "--seeds-dir", seeds, "-o", out, "--device", "cpu")
        assert result.exit_code == 1, result.output
        assert "another graphcut batch" in result.stderr and "is writing to" in result.stderr
        with pytest.raises(OutputFolderBusyError, match=f"process {os.getpid()}"):
            run_batch(images, seeds, out, device="cpu", progress=False)
        assert other.exists() and not (out / "summary.csv").exists()
    assert run("batch", images, "--seeds-dir", seeds, "-o", out).exit_code == 1  # broken.png
    assert not other.exists() and (out / "summary.csv").exists()  # a killed run's leftover
    assert leftovers(out) == []


def test_special_entries_are_listed_in_the_summary(folders):
    images, seeds, out = folders
    (images / "loop.png").symlink_to("loop.png")
    (images / "dangling.png").symlink_to("nowhere.png")
    os.mkfifo(images / "fifo.png")
    (images / "folder.png").mkdir()
    Image.fromarray(GOOD["grey"]).save(images / "fifoseeds.png")
    os.mkfifo(seeds / "fifoseeds.png")
    result = run("batch", images, "--seeds-dir", seeds, "-o", out, "--device", "cpu")
    assert result.exit_code == 1 and "Traceback" not in result.output
    rows = summary(out)
    assert "folder.png" not in rows
    assert rows["loop.png"]["status"] == FAILED
    assert "symbolic link loop" in rows["loop.png"]["reason"]
    assert "broken symbolic link" in rows["dangling.png"]["reason"]
    assert "a FIFO, not a regular file" in rows["fifo.png"]["reason"]
    assert "the seed file" in rows["fifoseeds.png"]["reason"]
    assert "FIFO" in rows["fifoseeds.png"]["reason"]
    assert rows["grey.png"]["status"] == OK


# ---- the summary as images finish -----------------------------------------------------------

def test_each_row_is_in_the_summary_as_soon_as_its_image_is_done(folders):
    images, seeds, out = folders
    seen = []

    def runner(calls):
        for index, kwargs in calls:
            seen.append(set(read_summary(out / "summary.csv")))
            yield index, segment_file(**kwargs)

    records = run_batch(images, seeds, out, device="cpu", progress=False, runner=runner)
    planned = {r["image"] for r in records if r["status"] != OK and "broken" not in r["image"]
               and "small" not in r["image"]}
    assert seen[0] == planned  # skipped images are listed before any image runs
    assert [len(s) for s in seen] == list(range(len(planned), len(planned) + len(seen)))
    assert list(summary(out)) == sorted(summary(out))  # rewritten in name order at the end


def test_a_cut_short_last_row_is_ignored(tmp_path):
    path = tmp_path / "summary.csv"
    write_summary(path, [dict.fromkeys(SUMMARY_FIELDS, "x") | {"image": "a.png"}])
    with open(path, "ab") as handle:
        handle.write(b"b.png,ok,,80,6")  # a power cut in the middle of a row
    assert set(read_summary(path)) == {"a.png"}


def test_stage_times_are_reported(folders):
    images, seeds, out = folders
    records = run_batch(images, seeds, out, device="cpu", progress=False, jobs=1)
    done = [r for r in records if r["status"] == OK]
    for record in done:
        assert all(record[key] >= 0 for key in STAGE_FIELDS)
        assert sum(record[key] for key in STAGE_FIELDS) <= record["seconds"] + 1e-3


def test_segment_file_keeps_a_mask_it_did_not_write(tmp_path, folders):
    images, seeds, _ = folders
    foreign = tmp_path / "grey.png"
    Image.fromarray(np.full((60, 80), 255, np.uint8)).save(foreign)
    record = segment_file(images / "grey.png", seeds / "grey.png", foreign)
    assert record["status"] == SKIPPED and "no record" in record["reason"]
    assert np.asarray(Image.open(foreign)).all()
    assert segment_file(images / "grey.png", seeds / "grey.png", foreign,
                        overwrite=True)["status"] == OK


def test_a_mask_of_an_earlier_energy_revision_is_redone(folders, caplog):
    """A mask recorded without the energy revision (an earlier graphcut, whose defaults may
    give another mask for the same inputs) is out of date: the re-run redoes it and records
    the revision; one of the current revision is skipped."""
    from graphcut.batch import _image
    images, seeds, out = folders
    run_batch(images, seeds, out, device="cpu", progress=False)
    metadata = read_mask_metadata(out / "grey.png")
    assert metadata["energy"] == _image.ENERGY_REVISION
    del metadata["energy"]                      # as an earlier graphcut wrote it
    mask = Image.open(out / "grey.png")
    info = PngImagePlugin.PngInfo()
    info.add_text(_image.METADATA_KEY, json.dumps(metadata))
    mask.save(out / "grey.png", pnginfo=info)
    with caplog.at_level(logging.WARNING, logger="graphcut.batch"):
        records = {os.path.basename(r["image"]): r["status"] for r in
                   run_batch(images, seeds, out, device="cpu", progress=False)}
    assert "energy revision unrecorded -> " in caplog.text
    assert records["grey.png"] == OK
    assert records["colour.png"] == records["deep.png"] == SKIPPED
    assert read_mask_metadata(out / "grey.png")["energy"] == _image.ENERGY_REVISION
