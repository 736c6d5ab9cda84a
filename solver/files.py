"""Opening input files safely: only regular files, never blocking on a FIFO or a device."""

from __future__ import annotations

import os
import re
import stat

__all__ = ["NAME_MAX", "NotARegularFileError", "TEMPORARY_NAME", "check_regular_file",
           "open_regular_file", "shortened_name", "temporary_prefix"]

# The longest file name (bytes) of common Linux, macOS and Windows file systems.
NAME_MAX = 255
# The random part mkstemp adds (8 characters) and the suffix of temporary files.
_RANDOM, _SUFFIX = 8, ".tmp"
# Temporary files of atomic writes: ".<name or part of it>.<8 random characters>.tmp".
TEMPORARY_NAME = re.compile(r"\..+\.[A-Za-z0-9_]{8}\.tmp\Z", re.S)

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


def temporary_prefix(path) -> str:
    """The prefix of a temporary file (``tempfile.mkstemp(prefix=..., suffix=".tmp")``) next to
    ``path`` such that the temporary name fits in :data:`NAME_MAX` bytes: ``"." + name + "."``,
    the name shortened (at a character boundary) when it is too long.

    Parameters
    ----------
    path : str or os.PathLike
        The output file.

    Returns
    -------
    str
        The prefix, starting with "." (a hidden file) and ending with ".".

    Examples
    --------
    >>> temporary_prefix("out/mask.png")
    '.mask.png.'
    >>> len(os.fsencode(temporary_prefix("x" * 255))) + 8 + 4 <= NAME_MAX
    True
    """
    return "." + shortened_name(path, NAME_MAX - 2 - _RANDOM - len(_SUFFIX)) + "."


def shortened_name(path, room: int) -> str:
    """``path``'s file name, cut to at most ``room`` bytes at a UTF-8 character boundary (the
    part of a temporary name that repeats the output's name).

    Examples
    --------
    >>> shortened_name("out/mask.png", 100)
    'mask.png'
    >>> shortened_name("é" * 3, 5)
    'éé'
    """
    name = os.fsencode(os.path.basename(os.fspath(path)))
    if len(name) > room:
        name = name[:room]
        while name and (name[-1] & 0xC0) == 0x80:  # not in the middle of a UTF-8 character
            name = name[:-1]
        if name and name[-1] >= 0xC0:
            name = name[:-1]
    return os.fsdecode(name)
