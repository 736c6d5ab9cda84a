"""The third hostile campaign (issue #22): ``graphcut batch`` (serial, processes and Dask share
the planning, the lock, the summary and the records tested here).

Hostile files are built on the fly, small on disk; what could hang runs in a subprocess with a
timeout.
"""

from __future__ import annotations

import csv
import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import graphcut.batch._image as batch_image
from graphcut.batch import (FAILED, OK, SKIPPED, SUMMARY_NAME, read_mask_metadata, run_batch,
                            serial_runner)
from graphcut.batch._lock import LOCK_NAME
from graphcut.batch._run import remove_temporary_files
from graphcut.io import read_volume_record
from test_hostile_campaign3 import run_cli, volume_pair
from synthetic import disc_image, disc_seeds

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")


def folders(tmp_path: Path, stems=("a",)):
    images, seeds, out = tmp_path / "images", tmp_path / "seeds", tmp_path / "out"
    images.mkdir(), seeds.mkdir()
    for stem in stems:
        Image.fromarray(disc_image()).save(images / f"{stem}.png")
        Image.fromarray(disc_seeds()).save(seeds / f"{stem}.png")
    return images, seeds, out


def batch(images, seeds, out, **options):
    return run_batch(images, seeds, out, device="cpu", progress=False, runner=serial_runner,
                     **options)


def summary_rows(out: Path) -> list[dict]:
    text = (out / SUMMARY_NAME).read_bytes().decode("utf-8", "surrogateescape")
    return list(csv.DictReader(io.StringIO(text, newline="")))


# --- rule 1: lock, summary and outputs are never written through a symbolic link ---------------

def test_a_planted_lock_symlink_is_refused_and_its_target_untouched(tmp_path):
    images, seeds, out = folders(tmp_path)
    out.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    (out / LOCK_NAME).symlink_to(outside)
    with pytest.raises(OSError, match="symbolic link"):
        batch(images, seeds, out)
    assert outside.read_text() == "precious"
    done = run_cli("batch", images, "--seeds-dir", seeds, "-o", out, "--device", "cpu",
                   "--no-progress")
    assert done.returncode == 1 and "symbolic link" in done.stderr, done.stderr
    assert outside.read_text() == "precious"
    assert not (out / "a.png").exists()


def test_a_planted_overlays_symlink_is_refused(tmp_path):
    images, seeds, out = folders(tmp_path)
    out.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (out / "overlays").symlink_to(outside)
    with pytest.raises(OSError, match="symbolic link"):
        run_batch(images, seeds, out, device="cpu", progress=False, overlay=True,
                  runner=serial_runner)
    assert list(outside.iterdir()) == []


def test_a_lock_fifo_is_refused_without_waiting(tmp_path):
    images, seeds, out = folders(tmp_path)
    out.mkdir()
    os.mkfifo(out / LOCK_NAME)
    done = run_cli("batch", images, "--seeds-dir", seeds, "-o", out, "--device", "cpu",
                   "--no-progress", timeout=60)
    assert done.returncode == 1 and "FIFO" in done.stderr, done.stderr


@pytest.mark.parametrize("name", [LOCK_NAME, SUMMARY_NAME])
def test_a_folder_in_place_of_the_lock_or_summary_is_refused(tmp_path, name):
    images, seeds, out = folders(tmp_path)
    (out / name).mkdir(parents=True)
    with pytest.raises(OSError, match=f"{name}: is a folder, not a regular file"):
        batch(images, seeds, out)
    assert not (out / "a.png").exists()


def test_a_summary_fifo_is_refused_without_hanging(tmp_path):
    images, seeds, out = folders(tmp_path)
    out.mkdir()
    os.mkfifo(out / SUMMARY_NAME)
    done = run_cli("batch", images, "--seeds-dir", seeds, "-o", out, "--device", "cpu",
                   "--no-progress", timeout=60)
    assert done.returncode == 1, done.stderr
    assert "summary.csv" in done.stderr and "named pipe (FIFO)" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (out / LOCK_NAME).exists()  # the lock was released


def test_a_summary_symlink_to_dev_zero_is_refused(tmp_path):
    images, seeds, out = folders(tmp_path)
    out.mkdir()
    (out / SUMMARY_NAME).symlink_to("/dev/zero")
    done = run_cli("batch", images, "--seeds-dir", seeds, "-o", out, "--device", "cpu",
                   "--no-progress", timeout=60)
    assert done.returncode == 1, done.stderr
    assert "symbolic link" in done.stderr and "Traceback" not in done.stderr
    assert (out / SUMMARY_NAME).is_symlink()


def test_a_huge_previous_summary_is_refused_by_its_size(tmp_path):
    images, seeds, out = folders(tmp_path)
    out.mkdir()
    with open(out / SUMMARY_NAME, "wb") as handle:
        handle.truncate(1 << 30)  # sparse: 1 GiB declared, nothing on disk
    done = run_cli("batch", images, "--seeds-dir", seeds, "-o", out, "--device", "cpu",
                   "--no-progress", env={"GRAPHCUT_MEMORY_LIMIT": "256M"})
    assert done.returncode == 1, done.stderr
    assert "previous summary" in done.stderr and "Traceback" not in done.stderr
    assert not (out / "a.png").exists()


def test_fifo_volume_seeds_are_a_failed_image_not_missing_seeds(tmp_path):
    images, seeds, out = tmp_path / "images", tmp_path / "seeds", tmp_path / "out"
    images.mkdir(), seeds.mkdir()
    volume, _ = volume_pair(tmp_path)
    os.replace(volume, images / "vol.npy")
    os.mkfifo(seeds / "vol.npy")
    records = batch(images, seeds, out)
    assert [r["status"] for r in records] == [FAILED]
    assert "FIFO" in records[0]["reason"] and "no seed file" not in records[0]["reason"]


# --- rule 6: records of what was read, when it was read -----------------------------------------

def test_seeds_changed_during_the_solve_are_redone_next_time(tmp_path, monkeypatch):
    images, seeds, out = folders(tmp_path)
    real_solve = batch_image._solve

    def solve_while_the_seeds_change(*args, **kwargs):
        result = real_solve(*args, **kwargs)
        changed = disc_seeds()
        changed[10:14, 10:14] = 1
        Image.fromarray(changed).save(seeds / "a.png")
        later = time.time() + 5
        os.utime(seeds / "a.png", (later, later))
        return result

    monkeypatch.setattr(batch_image, "_solve", solve_while_the_seeds_change)
    assert [r["status"] for r in batch(images, seeds, out)] == [OK]
    monkeypatch.setattr(batch_image, "_solve", real_solve)
    second = batch(images, seeds, out)
    assert [r["status"] for r in second] == [OK]  # redone, not "already done"
    third = batch(images, seeds, out)
    assert [r["status"] for r in third] == [SKIPPED]


def volume_folders(tmp_path: Path):
    images, seeds, out = tmp_path / "images", tmp_path / "seeds", tmp_path / "out"
    images.mkdir(), seeds.mkdir()
    volume, volume_seeds = volume_pair(tmp_path)
    os.replace(volume, images / "vol.npy")
    os.replace(volume_seeds, seeds / "vol.npy")
    return images, seeds, out


def test_volume_masks_carry_records_and_are_redone_after_changes(tmp_path):
    images, seeds, out = volume_folders(tmp_path)
    first = batch(images, seeds, out)
    assert [r["status"] for r in first] == [OK]
    record = read_volume_record(out / "vol.tif")
    assert record is not None and record == read_mask_metadata(out / "vol.tif")
    assert record["flow"] == first[0]["flow"] and record["depth"] == 4
    skipped = batch(images, seeds, out)
    assert [r["status"] for r in skipped] == [SKIPPED]
    row = summary_rows(out)[0]
    assert row["flow"] == str(first[0]["flow"]) and row["width"] == "24"
    assert row["height"] == "24" and float(row["seconds"]) > 0
    # a changed --lam redoes it
    assert [r["status"] for r in batch(images, seeds, out, lam=3.0)] == [OK]
    assert [r["status"] for r in batch(images, seeds, out, lam=3.0)] == [SKIPPED]
    # changed seeds redo it
    labels = np.load(seeds / "vol.npy")
    labels[0, 0, :] = 2
    np.save(seeds / "vol.npy", labels)
    later = time.time() + 5
    os.utime(seeds / "vol.npy", (later, later))
    assert [r["status"] for r in batch(images, seeds, out, lam=3.0)] == [OK]


# --- rule 5: interrupted runs leave no temporary file -------------------------------------------

def test_clean_up_knows_every_temporary_name_also_in_overlays(tmp_path):
    out = tmp_path / "out"
    (out / "overlays").mkdir(parents=True)
    left = [out / "overlays" / ".vol.tif.abcd1234.tmp", out / ".vol.tif.k2j3h4g5.tmp",
            out / ".summary.csv.zz99yy88.tmp", out / (".x" * 100 + ".q1w2e3r4.tmp")]
    kept = [out / "vol.tif", out / "overlays" / "a.png", out / "notes.tmp"]
    for path in left + kept:
        path.write_bytes(b"x")
    assert sorted(remove_temporary_files(out)) == sorted(left)
    assert all(path.exists() for path in kept)


@pytest.mark.slow
def test_sigterm_during_a_volume_batch_leaves_no_temporary_file(tmp_path):
    images, seeds, out = volume_folders(tmp_path)
    for stem in ("b", "c"):
        os.link(images / "vol.npy", images / f"{stem}.npy")
        os.link(seeds / "vol.npy", seeds / f"{stem}.npy")
    script = textwrap.dedent(f"""
        import os, signal, sys
        import graphcut.io._volume_writing as volumeio
        real = volumeio.atomic_write
        def write_then_terminated(path, write, **options):
            def interrupted(handle):
                write(handle)
                if "overlays" in os.fspath(path):  # mid-write of the overlay: SIGTERM
                    os.kill(os.getpid(), signal.SIGTERM)
            real(path, interrupted, **options)
        volumeio.atomic_write = write_then_terminated
        from graphcut.cli import main
        sys.argv = ["graphcut", "batch", {str(images)!r}, "--seeds-dir", {str(seeds)!r},
                    "-o", {str(out)!r}, "--device", "cpu", "--overlay", "--no-progress",
                    "-j", "1"]
        main()
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    leftovers = [p for folder in (out, out / "overlays") for p in folder.iterdir()
                 if p.name.endswith(".tmp")]
    assert leftovers == []


# --- rule 4: any name; one CSV record per image -------------------------------------------------

def test_odd_names_give_one_summary_record_each(tmp_path):
    stems = ["comma,quote\"", "new\nline", "carriage\rreturn", "tab\tand space ",
             os.fsdecode(b"latin1-\xe9"), "n" * 200]
    images, seeds, out = folders(tmp_path, stems)
    records = batch(images, seeds, out)
    assert [r["status"] for r in records] == [OK] * len(stems)
    rows = summary_rows(out)
    assert sorted(Path(row["image"]).stem for row in rows) == sorted(stems)
    assert all(row["status"] == OK for row in rows)
    again = batch(images, seeds, out)
    assert [r["status"] for r in again] == [SKIPPED] * len(stems)
    assert len(summary_rows(out)) == len(stems)


def test_the_longest_names_work_in_batch(tmp_path):
    stem = "s" * (255 - len(".png"))
    images, seeds, out = folders(tmp_path, [stem])
    records = run_batch(images, seeds, out, device="cpu", progress=False, overlay=True,
                        runner=serial_runner)
    assert [r["status"] for r in records] == [OK], records[0]["reason"]
    assert (out / f"{stem}.png").is_file() and (out / "overlays" / f"{stem}.png").is_file()
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    assert [r["status"] for r in batch(images, seeds, out)] == [SKIPPED]
