"""``summary.csv``: read, written whole (atomically), and appended to row by row as images finish.

The file is UTF-8 CSV with the header :data:`SUMMARY_FIELDS`, one line per image. File names
that are not valid UTF-8 are written as the bytes they have on disk (Python's
``surrogateescape``), so every name round-trips; read such a file with
``encoding_errors="surrogateescape"`` (pandas) or ``errors="surrogateescape"`` (``open``).

While a batch runs, :class:`SummaryLog` appends each row with one ``write`` on a file opened in
append mode and ``fsync``: a process killed at any moment leaves every finished image's row
complete, at worst a last line cut short by a power failure, which :func:`read_summary` drops.
At the end the file is rewritten in image-name order, one row per image.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from .._safety import open_no_follow, read_small_file
from ..io import atomic_write
from ._records import SUMMARY_FIELDS

_ENCODING = dict(encoding="utf-8", errors="surrogateescape")


def _csv_bytes(records, *, header: bool) -> bytes:
    """The rows as CSV lines ending in "\n". Each row is written with the terminator "\r\n",
    which makes the csv module quote every field holding "\r" or "\n" (with "\n" alone, a
    name holding "\r" would be left unquoted and split its row in two), and then ends in
    "\n"."""
    lines = []
    rows = ([dict(zip(SUMMARY_FIELDS, SUMMARY_FIELDS))] if header else []) + list(records)
    for row in rows:
        text = io.StringIO()
        csv.DictWriter(text, fieldnames=SUMMARY_FIELDS, extrasaction="ignore",
                       lineterminator="\r\n").writerow(row)
        lines.append(text.getvalue()[:-2] + "\n")
    return "".join(lines).encode(**_ENCODING)


def read_summary(path) -> dict[str, dict]:
    """Rows of an existing summary file keyed by image path, the last row of an image winning
    ({} when the file is absent or unreadable). A last line without its end (a write cut short)
    is ignored.

    The file is read only when it is a regular file (not through a symbolic link), after its
    size was checked against the memory available.

    Raises
    ------
    graphcut.solver.files.NotARegularFileError
        it is a FIFO, a device, a socket or a
        folder (refused by name, never opened).
    graphcut._safety.SymlinkRefusedError
        it is a symbolic link.
    graphcut.solver.memory.HostMemoryError
        it is too large for the memory available.
    """
    try:
        data = read_small_file(path, "previous summary", follow_symlinks=False)
    except FileNotFoundError:
        return {}
    except OSError as error:
        if type(error) is OSError or isinstance(error, PermissionError):
            return {}
        raise
    if not data.endswith(b"\n"):
        data = data[:data.rfind(b"\n") + 1]
    try:
        rows = csv.DictReader(io.StringIO(data.decode(**_ENCODING), newline=""))
        return {row["image"]: row for row in rows
                if row.get("image") and None not in row.values()}
    except (csv.Error, KeyError):
        return {}


def write_summary(path, records) -> Path:
    """Write ``records`` as CSV (header :data:`SUMMARY_FIELDS`, one row per record), atomically.

    Columns: image, status (ok / failed / skipped), reason, width, height (pixels), flow
    (maximum flow, integer), seconds (wall time for the image), backend, seeds, mask, lam and
    sigma (the parameters the mask was made with; sigma empty: estimated from the image).
    """
    path = Path(path)
    data = _csv_bytes(records, header=True)
    atomic_write(path, lambda handle: handle.write(data))
    return path


class SummaryLog:
    """``summary.csv`` during a run: created with the rows known at the start (atomically),
    then one row appended and flushed to disk per finished image (:meth:`add`); :meth:`close`
    rewrites it in ``order`` with one row per image.

    Raises
    ------
    OSError
        the file cannot be written (the message names it).
    """

    def __init__(self, path, records):
        self.path = Path(path)
        write_summary(self.path, records)
        self._descriptor = open_no_follow(self.path, os.O_WRONLY | os.O_APPEND)

    def add(self, record: dict) -> None:
        """Append ``record`` as one line, written with a single ``write`` and fsync'd."""
        data = _csv_bytes([record], header=False)
        try:
            written = os.write(self._descriptor, data)
            if written != len(data):  # not seen on local disks; keep the file parseable
                os.write(self._descriptor, data[written:])
            os.fsync(self._descriptor)
        except OSError as error:
            raise OSError(error.errno, f"cannot write {os.fspath(self.path)!r}: "
                                       f"{error.strerror or error}") from None

    def close(self, records=None) -> None:
        """Stop appending; with ``records``, rewrite the file as exactly those rows."""
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None
        if records is not None:
            write_summary(self.path, records)
