"""Opening input files safely: only regular files, never blocking on a FIFO or a device."""

from __future__ import annotations

import os
import stat

__all__ = ["NotARegularFileError", "check_regular_file", "open_regular_file"]

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


class NotARegularFileError(OSError):
    """An input path names a folder, a FIFO, a device or a socket instead of a regular file."""


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "something else"


def open_regular_file(path):
    """Open ``path`` (symbolic links followed) for binary reading; return ``(file, size)``.

    The file is opened without blocking and checked before anything is read, so a FIFO
    (which would wait for a writer), ``/dev/zero`` (endless) or a folder is refused at once.

    Raises
    ------
    NotARegularFileError
        ``path`` is not a regular file; the message names it and says
        what it is.
    OSError
        it cannot be opened (missing, no permission, ...).
    """
    name = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(name, flags)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFileError(f"{name}: is {_kind(info.st_mode)}, not a regular file; "
                                       "only regular files are read")
        os.set_blocking(descriptor, True)
        handle = os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise
    return handle, info.st_size


def check_regular_file(path) -> None:
    """Raise unless ``path`` (symbolic links followed) is a regular file; opens nothing.

    Raises
    ------
    NotARegularFileError
        a folder, FIFO, device or socket.
    OSError
        it does not exist (FileNotFoundError) or cannot be examined.
    """
    name = os.fspath(path)
    mode = os.stat(name).st_mode
    if not stat.S_ISREG(mode):
        raise NotARegularFileError(f"{name}: is {_kind(mode)}, not a regular file; only regular "
                                   "files are read")
