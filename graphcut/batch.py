"""Batch segmentation of a folder: one mask per image that has a seed file of the same stem.

Layout: ``IMAGES_DIR/<stem>.<ext>`` (PNG, JPEG, TIFF, BMP) with ``SEEDS_DIR/<stem>.png`` gives
``OUT_DIR/<stem>.png`` (mask, 0 / 255), optionally ``OUT_DIR/overlays/<stem>.png``, and
``OUT_DIR/summary.csv`` with one row per image (columns :data:`SUMMARY_FIELDS`).

:func:`segment_file` does one image and never raises for bad input (it returns a failed
record with the reason). :func:`run_batch` plans the jobs, hands the images to a *runner*
(:func:`serial_runner` here, :class:`graphcut.distributed.DaskRunner` on a Dask cluster) that
calls :func:`segment_file` for each and yields the records as they complete, shows the
progress, and writes the summary in image-name order, so every runner gives the same outputs.
"""

from __future__ import annotations

import contextlib
import csv
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .energy import DEFAULT_LAM
from .imageio import (IMAGE_SUFFIXES, atomic_write, check_lossless_suffix, read_image,
                      write_mask, write_overlay)
from .seeds import read_seeds
from .segmentation import segment

log = logging.getLogger("graphcut.batch")

SUMMARY_NAME = "summary.csv"
OVERLAY_FOLDER = "overlays"
SUMMARY_FIELDS = ("image", "status", "reason", "width", "height", "flow", "seconds", "backend",
                  "seeds", "mask")
OK, FAILED, SKIPPED = "ok", "failed", "skipped"


@dataclass(frozen=True)
class Job:
    """One image of a batch and where its outputs go (``seeds`` is None when missing)."""

    image: Path
    seeds: Path | None
    mask: Path
    overlay: Path | None = None


def failed_record(image, seeds, mask, reason: str) -> dict:
    """A summary record with status "failed" for an image that could not be done."""
    return _record(image, seeds, mask, FAILED, reason)


def _record(image, seeds, mask, status, reason="", **values) -> dict:
    record = dict.fromkeys(SUMMARY_FIELDS, "")
    record.update(image=str(image), seeds="" if seeds is None else str(seeds), mask=str(mask),
                  status=status, reason=reason, **values)
    return record


def segment_paths(image_path, seeds_path, mask_path, *, overlay_path=None, lam=DEFAULT_LAM,
                  sigma=None, device="auto", max_pixels=None):
    """Read an image and its seed file, segment, write the overlay (if asked) and then the mask.

    Both outputs are written atomically and never replace an input. ``max_pixels``: the
    largest image accepted (see :func:`graphcut.read_image`). Raises what
    :func:`graphcut.read_image`, :func:`graphcut.read_seeds`, :func:`graphcut.segment` and the
    writers raise. Returns ``(mask, result)``.
    """
    check_lossless_suffix(mask_path, "mask")  # before the solve, not after it
    image = read_image(image_path, max_pixels=max_pixels)
    seeds = read_seeds(seeds_path, image.shape[:2], max_pixels=max_pixels)
    mask, result = segment(image, seeds, lam=lam, sigma=sigma, device=device,
                           return_result=True)
    inputs = (image_path, seeds_path)
    if overlay_path is not None:
        write_overlay(overlay_path, image, mask, inputs=inputs)
    write_mask(mask_path, mask, inputs=inputs)
    return mask, result


def segment_file(image_path, seeds_path, out_path, *, overlay_path=None, lam=DEFAULT_LAM,
                 sigma=None, device="auto", overwrite=False, max_pixels=None) -> dict:
    """Segment one image file with its seed file and write the mask (and overlay).

    Never raises for bad input: an unreadable image, bad seeds, an output that would replace
    an input, an unwritable destination... give a record with status "failed" and the reason.
    When the mask (and the overlay, if asked for) exist already and ``overwrite`` is false,
    nothing is done and the status is "skipped". The mask is written last, atomically, so its
    presence means the image is done.

    Returns:
        A dict with the keys :data:`SUMMARY_FIELDS`: status "ok" / "failed" / "skipped",
        reason ("" when ok), width and height (pixels), flow (the maximum flow), seconds (wall
        time for this image: read, solve, write), backend ("cpu" / "cuda"), and the paths.
    """
    started = time.perf_counter()
    image_path, out_path = Path(image_path), Path(out_path)
    seeds_path = None if seeds_path is None else Path(seeds_path)
    overlay_path = None if overlay_path is None else Path(overlay_path)

    def failed(reason):
        return _record(image_path, seeds_path, out_path, FAILED, reason,
                       seconds=round(time.perf_counter() - started, 4))

    if seeds_path is None:
        return failed("no seed file")
    outputs = [out_path] + ([overlay_path] if overlay_path is not None else [])
    for output in outputs:
        for source in (image_path, seeds_path):
            if output.exists() and source.exists() and os.path.samefile(output, source):
                return failed(f"refusing to overwrite the input file {os.fspath(source)!r}")
    if not overwrite and all(path.exists() for path in outputs):
        return _record(image_path, seeds_path, out_path, SKIPPED, _ALREADY_DONE)
    try:
        mask, result = segment_paths(image_path, seeds_path, out_path, overlay_path=overlay_path,
                                     lam=lam, sigma=sigma, device=device, max_pixels=max_pixels)
    except (OSError, ValueError, TypeError) as error:
        return failed(str(error))
    except MemoryError as error:  # GPUMemoryError (device "cuda") or the host's memory
        where = "the GPU" if "GPU" in type(error).__name__ else "memory"
        return failed(f"out of {where}: {error or type(error).__name__}")
    except Exception as error:  # one image's unexpected failure must not stop a batch
        log.debug("unexpected error on %s", image_path, exc_info=True)
        return failed(f"{type(error).__name__}: {error}")
    return _record(image_path, seeds_path, out_path, OK, height=mask.shape[0],
                   width=mask.shape[1], flow=result.flow, backend=result.backend,
                   seconds=round(time.perf_counter() - started, 4))


_ALREADY_DONE = "already done (outputs exist; use --overwrite to redo)"


def _done(job: Job) -> bool:
    """Whether the job's outputs (mask, and overlay when asked for) all exist."""
    return job.mask.exists() and (job.overlay is None or job.overlay.exists())


def _same_folder(a: Path, b: Path) -> bool:
    return a.exists() and b.exists() and os.path.samefile(a, b)


def find_jobs(images_dir, seeds_dir, out_dir, *, overlay=False) -> list[Job]:
    """The jobs of a batch: every image file directly in ``images_dir`` (suffixes
    :data:`graphcut.imageio.IMAGE_SUFFIXES`, hidden files ignored), sorted by name, with its
    seed file ``seeds_dir/<stem>.png`` (None when missing) and its outputs in ``out_dir``.

    Raises:
        NotADirectoryError: ``images_dir`` or ``seeds_dir`` is not a folder.
        ValueError: ``out_dir`` is ``images_dir`` or ``seeds_dir`` (masks named <stem>.png
            could replace inputs), or ``seeds_dir`` is ``images_dir``.
    """
    images_dir, seeds_dir, out_dir = Path(images_dir), Path(seeds_dir), Path(out_dir)
    for name, folder in (("images", images_dir), ("seeds", seeds_dir)):
        if not folder.is_dir():
            raise NotADirectoryError(f"the {name} folder {os.fspath(folder)!r} does not exist "
                                     "or is not a folder")
    if _same_folder(out_dir, images_dir):
        raise ValueError(f"the output folder {os.fspath(out_dir)!r} is the images folder; "
                         "masks would overwrite images of the same name: choose another one")
    if _same_folder(out_dir, seeds_dir):
        raise ValueError(f"the output folder {os.fspath(out_dir)!r} is the seeds folder; masks "
                         "would overwrite the seed files: choose another one")
    if _same_folder(images_dir, seeds_dir):
        raise ValueError(f"the seeds folder {os.fspath(seeds_dir)!r} is the images folder; seed "
                         "files <stem>.png would be taken for images: keep them apart")
    jobs = []
    for path in sorted(images_dir.iterdir()):
        if path.name.startswith(".") or path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        if not path.is_file():
            continue
        seeds = seeds_dir / f"{path.stem}.png"
        jobs.append(Job(path, seeds if seeds.is_file() else None, out_dir / f"{path.stem}.png",
                        out_dir / OVERLAY_FOLDER / f"{path.stem}.png" if overlay else None))
    return jobs


def _duplicate_stems(jobs) -> set[str]:
    seen, duplicates = set(), set()
    for job in jobs:
        (duplicates if job.image.stem in seen else seen).add(job.image.stem)
    return duplicates


# One call of segment_file: (index of the job in name order, segment_file's keyword arguments).
Call = tuple[int, dict]
# A runner takes the calls and yields (index, record) pairs as the images complete, in any
# order; closing the iterator (Ctrl-C, an error in the driver) must cancel what is left.
Runner = Callable[[list[Call]], Iterator[tuple[int, dict]]]


def serial_runner(calls: list[Call]) -> Iterator[tuple[int, dict]]:
    """Run the calls one after the other in this process."""
    for index, kwargs in calls:
        yield index, segment_file(**kwargs)


def run_batch(images_dir, seeds_dir, out_dir, *, lam=DEFAULT_LAM, sigma=None, device="auto",
              overwrite=False, overlay=False, progress=True, max_pixels=None,
              runner: Runner | None = None) -> list[dict]:
    """Segment every image of ``images_dir`` that has a seed file.

    Creates ``out_dir`` (and its overlays folder) when needed, shows a tqdm progress bar on
    stderr (``progress``) that advances as images complete, logs each failure (logger
    "graphcut.batch") and carries on, and writes ``out_dir/summary.csv`` in image-name order.
    Images without a seed file are listed as skipped; images whose stems collide (``a.png`` and
    ``a.jpg``) fail, as their masks would share a name.

    Args:
        max_pixels: the largest image accepted (see :func:`graphcut.read_image`); None:
            Pillow's limit.
        runner: how the images are processed (see :data:`Runner`): :func:`serial_runner`
            (the default) one after the other in this process, or
            :class:`graphcut.distributed.DaskRunner` on a Dask cluster. The records, masks and
            summary do not depend on the runner (except the seconds).

    Returns:
        The records of :func:`segment_file`, in image-name order.

    Raises:
        NotADirectoryError, ValueError: bad folders (see :func:`find_jobs`).
        OSError: the output folder or the summary cannot be written.
        KeyboardInterrupt: passed on after the runner was closed (remaining images cancelled)
            and temporary files were removed; finished masks stay (each is complete), the
            summary is not written.
    """
    from tqdm import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    out_dir = Path(out_dir)
    jobs = find_jobs(images_dir, seeds_dir, out_dir, overlay=overlay)
    out_dir.mkdir(parents=True, exist_ok=True)
    if overlay:
        (out_dir / OVERLAY_FOLDER).mkdir(exist_ok=True)
    previous = read_summary(out_dir / SUMMARY_NAME)
    duplicates = _duplicate_stems(jobs)
    records: list[dict | None] = [None] * len(jobs)
    calls: list[Call] = []
    for index, job in enumerate(jobs):
        if job.image.stem in duplicates:
            records[index] = _record(job.image, job.seeds, job.mask, FAILED,
                                     f"another image has the stem {job.image.stem!r}; their "
                                     "masks would share one file")
        elif job.seeds is None:
            records[index] = _record(job.image, None, job.mask, SKIPPED,
                                     f"no seed file {job.image.stem}.png in the seeds folder")
        elif not overwrite and _done(job):
            records[index] = _record(job.image, job.seeds, job.mask, SKIPPED, _ALREADY_DONE)
            _carry_over(records[index], previous.get(str(job.image)))
        else:
            # Skipping is decided here, once: a task that runs again (its worker died after it
            # had finished) must redo its image, not report it as skipped.
            calls.append((index, dict(image_path=job.image, seeds_path=job.seeds,
                                      out_path=job.mask, overlay_path=job.overlay, lam=lam,
                                      sigma=sigma, device=device, overwrite=True,
                                      max_pixels=max_pixels)))
    runner = serial_runner if runner is None else runner
    try:
        with logging_redirect_tqdm(), tqdm(total=len(jobs), desc="segment", unit="image",
                                           file=sys.stderr, disable=not progress) as bar:
            for job, record in zip(jobs, records):
                if record is not None:
                    _log_failure(job, record)
                    bar.update()
            with contextlib.closing(iter(runner(calls))) as results:
                for index, record in results:
                    job = jobs[index]
                    # the runner may have sent other spellings of the paths (absolute ones)
                    record.update(image=str(job.image), seeds=str(job.seeds),
                                  mask=str(job.mask))
                    _log_failure(job, record)
                    records[index] = record
                    bar.set_postfix_str(job.image.name, refresh=False)
                    bar.update()
    finally:
        remove_temporary_files(out_dir)
    missing = [jobs[i].image.name for i, record in enumerate(records) if record is None]
    if missing:
        raise RuntimeError(f"the runner returned no result for {', '.join(missing[:5])}"
                           + (" ..." if len(missing) > 5 else ""))
    write_summary(out_dir / SUMMARY_NAME, records)
    return records


def _log_failure(job: Job, record: dict) -> None:
    if record["status"] == FAILED:
        log.warning("%s: failed: %s", job.image.name, record["reason"])


# Temporary files of graphcut.imageio.atomic_write: ".<name>.<8 random characters>.tmp".
_TEMPORARY = re.compile(r"\.(?P<name>.+\.png|summary\.csv)\.[A-Za-z0-9_]{8}\.tmp\Z")


def remove_temporary_files(out_dir) -> list[Path]:
    """Remove the temporary files that interrupted writes of masks, overlays or the summary
    left in ``out_dir`` (and its overlays folder): a worker killed mid-write, a cancelled run.
    Finished outputs are never touched. Returns the removed paths."""
    removed = []
    for folder in (Path(out_dir), Path(out_dir) / OVERLAY_FOLDER):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if _TEMPORARY.match(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    if removed:
        log.info("removed %d temporary file(s) of interrupted writes", len(removed))
    return removed


def _carry_over(record: dict, old: dict | None) -> None:
    """Keep a skipped image's numbers from the previous summary, when it had them."""
    if old and old.get("status") in (OK, SKIPPED):
        for key in ("width", "height", "flow", "seconds", "backend"):
            record[key] = old.get(key, "")


def read_summary(path) -> dict[str, dict]:
    """Rows of an existing summary file keyed by image path ({} when absent or unreadable)."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            return {row["image"]: row for row in csv.DictReader(handle) if "image" in row}
    except (OSError, csv.Error, UnicodeDecodeError, KeyError):
        return {}


def write_summary(path, records) -> Path:
    """Write ``records`` as CSV (header :data:`SUMMARY_FIELDS`, one row per image), atomically.

    Columns: image, status (ok / failed / skipped), reason, width, height (pixels), flow
    (maximum flow, integer), seconds (wall time for the image), backend, seeds, mask.
    """
    path = Path(path)

    def write(handle):
        writer = csv.DictWriter(handle, fieldnames=SUMMARY_FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(records)

    atomic_write(path, write, mode="w")
    return path


def counts(records) -> dict[str, int]:
    """Number of records per status."""
    totals = {OK: 0, SKIPPED: 0, FAILED: 0}
    for record in records:
        totals[record["status"]] = totals.get(record["status"], 0) + 1
    return totals


__all__ = ["FAILED", "Job", "OK", "OVERLAY_FOLDER", "SKIPPED", "SUMMARY_FIELDS", "SUMMARY_NAME",
           "counts", "failed_record", "find_jobs", "read_summary", "remove_temporary_files",
           "run_batch", "segment_file", "serial_runner", "write_summary"]
