"""One batch at a time per output folder: an exclusive ``flock`` on ``OUT_DIR/.graphcut-batch.lock``.

The lock is held for the whole run (planning, segmentation, summary, clean-up of temporary
files), so a second run into the same folder is refused at once instead of deleting the first
run's temporary files or overwriting its summary. The kernel releases it when the process ends,
even on ``kill -9``; the file is removed at the end of a run. The lock file is never opened
through a symbolic link, nor when it is a FIFO or a device (planted in the output folder, either
would make the run write, or wait, outside the outputs): the run is refused, naming it.
``flock`` works between processes of one machine and, on Linux, on NFS (as a whole-file
``fcntl`` lock); on a filesystem without locks the run goes on unlocked with a warning.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from pathlib import Path

from .._safety import NotARegularFileError, SymlinkRefusedError, open_no_follow
from ._records import display

log = logging.getLogger("graphcut.batch")

LOCK_NAME = ".graphcut-batch.lock"


class OutputFolderBusyError(RuntimeError):
    """Another batch is writing to the same output folder."""


@contextlib.contextmanager
def output_folder_lock(out_dir):
    """Hold the batch lock of ``out_dir`` (which must exist) for the ``with`` block.

    Raises
    ------
    OutputFolderBusyError
        another process holds it; the message names its process id.
    OSError
        the lock file cannot be created, or is a symbolic link, a FIFO or a device
        (the message names it).
    """
    import fcntl

    path = Path(out_dir) / LOCK_NAME
    descriptor = _acquire(path, out_dir, fcntl)
    try:
        if descriptor is not None:
            os.ftruncate(descriptor, 0)
            os.write(descriptor, f"{os.getpid()}\n".encode())
        yield
    finally:
        if descriptor is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)
            os.close(descriptor)


def _acquire(path: Path, out_dir, fcntl) -> int | None:
    """The locked descriptor of ``path``, or None where the filesystem has no locks."""
    while True:
        try:
            descriptor = open_no_follow(path, os.O_RDWR | os.O_CREAT, 0o644)
        except (SymlinkRefusedError, NotARegularFileError) as error:
            raise OSError(f"cannot use the batch lock file: {error}") from None
        except OSError as error:
            raise OSError(error.errno, f"cannot create the lock file {display(path)!r}: "
                                       f"{error.strerror}") from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            holder = _read_holder(descriptor)
            os.close(descriptor)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise OutputFolderBusyError(
                    f"another graphcut batch{holder} is writing to {display(out_dir)!r}; "
                    "wait for it to finish or choose another output folder") from None
            log.warning("cannot lock %s (%s); going on without protection against a "
                        "concurrent run into the same folder", display(path), error.strerror)
            return None
        # The file may have been removed (and another run started with a new one) between
        # our open and our lock: then ours is not the lock file any more; try again.
        try:
            if os.stat(path).st_ino == os.fstat(descriptor).st_ino:
                return descriptor
        except FileNotFoundError:
            pass
        os.close(descriptor)


def _read_holder(descriptor: int) -> str:
    with contextlib.suppress(OSError, ValueError):
        pid = int(os.pread(descriptor, 32, 0).decode().strip())
        return f" (process {pid})"
    return ""
