"""Summary records: one dict per image, the columns of ``summary.csv``.

A record has the keys :data:`SUMMARY_FIELDS` (the CSV columns) and may carry the per-stage
times :data:`STAGE_FIELDS` (seconds spent reading, waiting for the GPU, solving and writing;
returned to the caller and the benchmarks, not written to the CSV).
"""

from __future__ import annotations

import os

SUMMARY_NAME = "summary.csv"
OVERLAY_FOLDER = "overlays"
SUMMARY_FIELDS = ("image", "status", "reason", "width", "height", "flow", "seconds", "backend",
                  "seeds", "mask", "lam", "sigma")
STAGE_FIELDS = ("read_seconds", "wait_seconds", "solve_seconds", "write_seconds")
OK, FAILED, SKIPPED = "ok", "failed", "skipped"


def display(path) -> str:
    """``path`` for messages and logs: file names that are not valid UTF-8 (bytes from another
    encoding) are shown with ``\\xNN`` escapes instead of raising UnicodeEncodeError."""
    return os.fsencode(os.fspath(path)).decode("utf-8", "backslashreplace")


def make_record(image, seeds, mask, status, reason="", **values) -> dict:
    """A summary record; ``reason`` is kept to one line (each CSV row is one line)."""
    record = dict.fromkeys(SUMMARY_FIELDS, "")
    record.update(image=os.fspath(image), seeds="" if seeds is None else os.fspath(seeds),
                  mask=os.fspath(mask), status=status, reason=" ".join(str(reason).split()),
                  **values)
    return record


def failed_record(image, seeds, mask, reason: str, **values) -> dict:
    """A summary record with status "failed" for an image that could not be done."""
    return make_record(image, seeds, mask, FAILED, reason, **values)


def counts(records) -> dict[str, int]:
    """Number of records per status."""
    totals = {OK: 0, SKIPPED: 0, FAILED: 0}
    for record in records:
        totals[record["status"]] = totals.get(record["status"], 0) + 1
    return totals
