"""``run_batch``: plan the jobs of a folder, run them, keep the summary as images finish."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sys
from pathlib import Path

from .._safety import TEMPORARY_NAME, SymlinkRefusedError
from ..io import default_max_pixels
from ..solver import resolve_device
from ._image import ALREADY_DONE, KEPT_UNRECORDED, UNRECORDED, skipped_record, stale_reason
from ._jobs import Job, duplicate_stems, find_jobs
from ._lock import output_folder_lock
from ._records import (FAILED, OK, OVERLAY_FOLDER, SKIPPED, SUMMARY_NAME, display,
                       make_record)
from ._runners import GPU_PIPELINE_DEPTH, Call, ProcessRunner, Runner, ThreadRunner, \
    usable_cores
from ._summary import SummaryLog, read_summary

log = logging.getLogger("graphcut.batch")

def default_runner(backend: str, *, jobs: int | None = None) -> Runner:
    """The runner :func:`run_batch` uses on this machine for ``backend`` ("cpu" / "cuda").

    GPU: :class:`ThreadRunner` of ``jobs`` threads (default :data:`GPU_PIPELINE_DEPTH`), the
    pipeline around the card. CPU: :class:`ProcessRunner` of ``jobs`` worker processes
    (default: the cores this process may use), or one thread when ``jobs`` is 1.
    """
    if backend == "cuda":
        return ThreadRunner(jobs or GPU_PIPELINE_DEPTH)
    jobs = jobs or usable_cores()
    return ThreadRunner(1) if jobs == 1 else ProcessRunner(jobs)


def _plan(jobs: list[Job], previous: dict, *, lam, sigma, device, overwrite, max_pixels,
          segment_options=None):
    """(records known without running: None where the image must run, the calls, the
    out-of-date masks as (name, reason), the masks kept for lack of a record)."""
    parameters = dict(lam="" if lam is None else float(lam),
                      sigma="" if sigma is None else float(sigma))
    duplicates = duplicate_stems(jobs)
    records: list[dict | None] = [None] * len(jobs)
    calls: list[Call] = []
    stale, unrecorded = [], []
    for index, job in enumerate(jobs):
        if job.problem is not None:
            records[index] = make_record(job.image, job.seeds, job.mask, FAILED, job.problem)
            continue
        if job.image.stem in duplicates:
            records[index] = make_record(job.image, job.seeds, job.mask, FAILED,
                                         f"another image has the stem {job.image.stem!r}; "
                                         "their masks would share one file")
            continue
        if job.seeds is None:
            records[index] = make_record(job.image, None, job.mask, SKIPPED,
                                         f"no seed file {job.image.stem}.png in the seeds "
                                         "folder")
            continue
        present = job.mask.is_file() and (job.overlay is None or job.overlay.is_file())
        if not overwrite and present:
            reason = stale_reason(job.mask, lam=lam, sigma=sigma, image_path=job.image,
                                  seeds_path=job.seeds, options=segment_options)
            if reason is None or reason == UNRECORDED:
                up_to_date = reason is None
                records[index] = skipped_record(job.image, job.seeds, job.mask,
                                                ALREADY_DONE if up_to_date else KEPT_UNRECORDED,
                                                **(parameters if up_to_date else {}))
                _carry_over(records[index], previous.get(os.fspath(job.image)))
                if not up_to_date:
                    unrecorded.append(job.mask.name)
                continue
            stale.append((job.mask.name, reason))
        # Skipping is decided here, once: a task that runs again (its worker died after it
        # had finished) must redo its image, not report it as skipped.
        calls.append((index, dict(image_path=job.image, seeds_path=job.seeds,
                                  out_path=job.mask, overlay_path=job.overlay, lam=lam,
                                  sigma=sigma, device=device, overwrite=True,
                                  max_pixels=max_pixels, segment_options=segment_options)))
    return records, calls, stale, unrecorded


def _carry_over(record: dict, old: dict | None) -> None:
    """Keep a skipped image's seconds and backend (and numbers its mask lacks) from the
    previous summary."""
    if old and old.get("status") in (OK, SKIPPED) and old.get("mask") == record["mask"]:
        for key in ("width", "height", "flow", "seconds", "backend", "lam", "sigma"):
            if record.get(key, "") == "" and old.get(key):
                record[key] = old[key]


def _log_plan(stale, unrecorded) -> None:
    if stale:
        name, reason = stale[0]
        log.warning("redoing %d image(s) whose masks are out of date (e.g. %s: %s)",
                    len(stale), display(name), reason)
    if unrecorded:
        log.warning("kept %d mask(s) that have no record of how they were made (e.g. %s); "
                    "use --overwrite to redo them", len(unrecorded), display(unrecorded[0]))


def run_batch(images_dir, seeds_dir, out_dir, *, lam=None, sigma=None, device="auto",
              overwrite=False, overlay=False, progress=True, max_pixels=None,
              jobs: int | None = None, runner: Runner | None = None,
              segment_options: dict | None = None) -> list[dict]:
    """Segment every image of ``images_dir`` that has a seed file.

    Creates ``out_dir`` (and its overlays folder) when needed and locks it for the run (a
    second run into it is refused), shows a tqdm progress bar on stderr (``progress``) that
    advances as images complete, logs each failure (logger "graphcut.batch") and carries on.
    ``out_dir/summary.csv`` is written at the start with the images known without running
    (skipped, unusable), gets one row per image as each finishes, and is rewritten at the end
    (also after Ctrl-C) in image-name order. Images without a seed file are listed as skipped;
    images whose stems collide (``a.png`` and ``a.jpg``) fail, as their masks would share a
    name; entries that are not regular files (symbolic link loops, FIFOs, ...) fail.

    Without ``overwrite``, an image is skipped when its outputs exist and its mask records the
    same ``lam``, ``sigma`` and unchanged input files; a mask made otherwise is redone (logged
    once), and a mask without a record (another program's) is kept and listed as skipped.

    Parameters
    ----------
    lam
        None: each image's settings file (next to its seeds), else the colour model's
        default.
    max_pixels
        the largest image accepted (see :func:`graphcut.read_image`); None:
        Pillow's limit.
    segment_options
        further :func:`graphcut.segment` options for every image
        (``model``, ``iterations``, ``keep``, ``fill_holes``); they win over the settings
        files.
    jobs
        images processed at once (see :func:`default_runner`); ignored with ``runner``.
    runner
        how the images are processed (see :data:`Runner`): by default the pipeline of
        threads on the GPU or worker processes on the CPU (:func:`default_runner`);
        :class:`graphcut.batch.dask.DaskRunner` on a Dask cluster. The records, masks
        and summary do not depend on the runner (except the seconds).

    Returns
    -------
    list[dict]
        The records of :func:`segment_file`, in image-name order.

    Raises
    ------
    NotADirectoryError, ValueError
        bad folders (see :func:`find_jobs`).
    OutputFolderBusyError
        another batch is writing to ``out_dir``.
    OSError
        the output folder or the summary cannot be written.
    graphcut.solver.BackendUnavailableError
        ``device="cuda"`` without a usable GPU (only
        when no ``runner`` is given; with one, the runner's workers decide).
    KeyboardInterrupt
        passed on after the runner was closed (remaining images cancelled,
        images in progress finished or stopped), temporary files were removed and the
        summary rewritten with the finished images.

    Examples
    --------
    Two images, one with a seed file: the other is listed as skipped.

    >>> import numpy as np
    >>> from pathlib import Path
    >>> from graphcut import write_mask, write_seeds
    >>> from graphcut.batch import read_summary, run_batch
    >>> for folder in ("images", "seeds"):
    ...     Path(folder).mkdir()
    >>> image = np.zeros((6, 6), bool)
    >>> image[1:4, 1:4] = True
    >>> write_mask("images/a.png", image)
    >>> write_mask("images/b.png", image)
    >>> seeds = np.zeros((6, 6), np.uint8)
    >>> seeds[2, 2], seeds[5, 5] = 1, 2
    >>> write_seeds("seeds/a.png", seeds)
    >>> records = run_batch("images", "seeds", "masks", device="cpu", progress=False)
    >>> [(Path(r["image"]).name, r["status"]) for r in records]
    [('a.png', 'ok'), ('b.png', 'skipped')]
    >>> sorted(p.name for p in Path("masks").iterdir())
    ['a.png', 'summary.csv']
    >>> summary = read_summary("masks/summary.csv")
    >>> [row["status"] for row in summary.values()]
    ['ok', 'skipped']

    Run again, the mask is up to date and not redone:

    >>> [r["status"] for r in run_batch("images", "seeds", "masks", progress=False)]
    ['skipped', 'skipped']
    """
    jobs_found = find_jobs(images_dir, seeds_dir, out_dir, overlay=overlay)
    if runner is None:
        runner = default_runner(resolve_device(device), jobs=jobs)
    with output_folder(out_dir, overlay=overlay):
        return run_jobs(jobs_found, out_dir, runner, lam=lam, sigma=sigma, device=device,
                        overwrite=overwrite, progress=progress, max_pixels=max_pixels,
                        segment_options=segment_options)


@contextlib.contextmanager
def output_folder(out_dir, *, overlay: bool):
    """Create ``out_dir`` (and its overlays folder), hold its batch lock for the ``with``
    block, and remove temporary files of interrupted writes on entry (a killed run's) and on
    exit (this run's: workers stopped mid-write).

    Raises
    ------
    OutputFolderBusyError
        another batch holds the folder.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    overlays = out_dir / OVERLAY_FOLDER
    if overlay and overlays.is_symlink():  # planted: overlays would be written outside
        raise SymlinkRefusedError(errno.ELOOP, f"{display(overlays)}: is a symbolic link; "
                                               "graphcut never writes through a symbolic link "
                                               "among its outputs: remove it")
    if overlay:
        overlays.mkdir(exist_ok=True)
    with output_folder_lock(out_dir):
        remove_temporary_files(out_dir)  # a killed run's; never another run's (we hold the lock)
        try:
            yield out_dir
        finally:
            remove_temporary_files(out_dir)


def run_jobs(jobs_found: list[Job], out_dir, runner: Runner, *, lam=None, sigma=None,
             device="auto", overwrite=False, progress=True, max_pixels=None,
             segment_options: dict | None = None) -> list[dict]:
    """The body of :func:`run_batch` for jobs of :func:`find_jobs`, inside
    :func:`output_folder`: plan, run, keep the summary."""
    from tqdm import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    out_dir = Path(out_dir)
    if max_pixels is None:  # this process's Pillow limit, for workers in other processes too
        max_pixels = default_max_pixels()
    previous = read_summary(out_dir / SUMMARY_NAME)
    records, calls, stale, unrecorded = _plan(jobs_found, previous, lam=lam, sigma=sigma,
                                              device=device, overwrite=overwrite,
                                              max_pixels=max_pixels,
                                              segment_options=segment_options)
    summary = SummaryLog(out_dir / SUMMARY_NAME, [r for r in records if r is not None])
    finished = False
    try:
        with logging_redirect_tqdm(), tqdm(total=len(jobs_found), desc="segment", unit="image",
                                           file=sys.stderr, disable=not progress) as bar:
            _log_plan(stale, unrecorded)
            for job, record in zip(jobs_found, records):
                if record is not None:
                    _log_failure(job, record)
                    bar.update()
            with contextlib.closing(iter(runner(calls))) as results:
                for index, record in results:
                    job = jobs_found[index]
                    # the runner may have sent other spellings of the paths (absolute ones)
                    record.update(image=os.fspath(job.image), seeds=os.fspath(job.seeds),
                                  mask=os.fspath(job.mask))
                    records[index] = record
                    summary.add(record)
                    _log_failure(job, record)
                    bar.set_postfix_str(display(job.image.name), refresh=False)
                    bar.update()
        finished = True
    finally:
        try:
            remove_temporary_files(out_dir)
            summary.close([r for r in records if r is not None])
        except OSError:
            if finished:
                raise
            log.warning("could not rewrite %s after the interruption", SUMMARY_NAME,
                        exc_info=True)
    missing = [display(jobs_found[i].image.name) for i, r in enumerate(records) if r is None]
    if missing:
        raise RuntimeError(f"the runner returned no result for {', '.join(missing[:5])}"
                           + (" ..." if len(missing) > 5 else ""))
    return records


def _log_failure(job: Job, record: dict) -> None:
    if record["status"] == FAILED:
        log.warning("%s: failed: %s", display(job.image.name), record["reason"])


# Temporary files of graphcut.io.atomic_write (masks, overlays, volumes, the summary):
# ".<name or its start>.<8 random characters>.tmp".
_TEMPORARY = TEMPORARY_NAME


def remove_temporary_files(out_dir) -> list[Path]:
    """Remove the temporary files that interrupted writes of masks, overlays or the summary
    left in ``out_dir`` (and its overlays folder): a worker killed mid-write, a cancelled run.
    Finished outputs are never touched. Call it only while holding the folder's batch lock
    (another run's temporary files would be its files in progress). Returns the removed
    paths."""
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
