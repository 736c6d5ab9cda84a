"""Batch segmentation of a folder: one mask per image that has a seed file of the same stem.

Layout: ``IMAGES_DIR/<stem>.<ext>`` (PNG, JPEG, TIFF, BMP) with ``SEEDS_DIR/<stem>.png`` gives
``OUT_DIR/<stem>.png`` (mask, 0 / 255), optionally ``OUT_DIR/overlays/<stem>.png``, and
``OUT_DIR/summary.csv`` with one row per image (columns :data:`SUMMARY_FIELDS`).

:func:`segment_file` does one image and never raises for bad input (it returns a failed
record with the reason). :func:`run_batch` plans the jobs, hands the images to a *runner*
(:class:`ThreadRunner`: the GPU pipeline, or one image after another; :class:`ProcessRunner`:
one CPU worker process per core; :class:`graphcut.batch.dask.DaskRunner` on a Dask cluster)
that calls :func:`segment_file` for each and yields the records as they complete, shows the
progress, and keeps the summary as images finish, so every runner gives the same outputs.

Modules: ``_image`` (one image), ``_jobs`` (planning), ``_runners``, ``_run`` (run_batch),
``_summary`` (summary.csv), ``_lock`` (one run per output folder), ``dask`` (the Dask runner;
needs ``graphcut[distributed]``). Memory estimates come from :mod:`graphcut.segmentation`.
"""

from ._image import METADATA_KEY, PNG_OPTIONS, read_mask_metadata, segment_file, segment_paths
from ._jobs import Job, find_jobs
from ._lock import OutputFolderBusyError
from ._records import (FAILED, OK, OVERLAY_FOLDER, SKIPPED, STAGE_FIELDS, SUMMARY_FIELDS,
                       SUMMARY_NAME, counts, failed_record)
from ._run import default_runner, remove_temporary_files, run_batch
from ._runners import (GPU_PIPELINE_DEPTH, Call, ProcessRunner, Runner, ThreadRunner,
                       serial_runner, usable_cores)
from ._summary import read_summary, write_summary

__all__ = ["FAILED", "GPU_PIPELINE_DEPTH", "METADATA_KEY", "OK", "OVERLAY_FOLDER",
           "PNG_OPTIONS", "SKIPPED", "STAGE_FIELDS", "SUMMARY_FIELDS", "SUMMARY_NAME", "Call",
           "Job", "OutputFolderBusyError", "ProcessRunner", "Runner",
           "ThreadRunner", "counts", "default_runner", "failed_record", "find_jobs",
           "read_mask_metadata", "read_summary", "remove_temporary_files", "run_batch",
           "segment_file", "segment_paths", "serial_runner", "usable_cores", "write_summary"]
