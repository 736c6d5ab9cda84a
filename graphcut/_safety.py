"""File safety shared by every reader and writer: the one place that decides what may be
opened, how outputs are written and what an interrupted run leaves behind.

- Reading: :func:`require_regular_file` / :func:`open_regular_file` refuse folders, FIFOs,
  devices and sockets by name *before* opening them (a FIFO would block for ever, ``/dev/zero``
  would be read until memory runs out); :func:`read_small_file` reads a bounded regular file
  whole (settings JSON, the previous ``summary.csv``) after checking its size against the
  memory available.
- Writing: :func:`open_no_follow` opens a file of the outputs for writing without following a
  symbolic link planted in its place (lock files, the summary appended to);
  :func:`temporary_prefix` gives the prefix of a temporary file next to an output that keeps
  the temporary name within the file system's name limit whatever the output's name;
  :data:`TEMPORARY_NAME` matches those temporary names, for clean-up after an interruption.
- ``.npy`` arrays: :func:`npy_header` reads the shape and type from the header alone and
  refuses a truncated file; :func:`read_npy` checks the memory before reading the data (a
  sparse file of a few kilobytes on disk may declare gigabytes).
- Signals: :func:`terminate_as_interrupt` turns SIGTERM into :class:`Terminated` (a
  ``KeyboardInterrupt``), so that the clean-up that runs on Ctrl-C (temporary files removed,
  summary rewritten) runs on ``kill`` as well.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import threading

from .solver.files import (NAME_MAX, TEMPORARY_NAME, NotARegularFileError, check_regular_file,
                           open_regular_file, temporary_prefix)
from .solver.memory import require_host_memory

__all__ = ["NAME_MAX", "NotARegularFileError", "NpyReadError", "SymlinkRefusedError",
           "TEMPORARY_NAME", "Terminated", "check_regular_file", "file_kind", "npy_header",
           "open_no_follow", "open_regular_file", "read_npy", "read_small_file",
           "require_regular_file", "temporary_prefix", "terminate_as_interrupt"]


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


class SymlinkRefusedError(OSError):
    """A file graphcut writes (an output, a lock file, the summary) is a symbolic link: it is
    never followed, as that could write outside the outputs."""


class Terminated(KeyboardInterrupt):
    """SIGTERM received (see :func:`terminate_as_interrupt`); ``signal`` is its number."""

    signal = signal.SIGTERM


def file_kind(mode: int) -> str:
    """Words for the kind of file ``mode`` (an ``st_mode``) describes, e.g. "a named pipe
    (FIFO)"; "a regular file" for one."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def require_regular_file(path, error=NotARegularFileError) -> None:
    """Raise ``error`` (an exception type taking a message) unless ``path`` (symbolic links
    followed) is a regular file; opens nothing, so a FIFO or a device cannot block.

    Parameters
    ----------
    path : str or os.PathLike
        The file to be read.
    error : type
        The exception raised for a missing file, a folder, a FIFO, a device or a socket; its
        message names ``path`` and what it is.

    Raises
    ------
    error
        ``path`` is missing, cannot be examined or is not a regular file.

    Examples
    --------
    >>> require_regular_file("/dev/null")  # doctest: +SKIP
    Traceback (most recent call last):
    NotARegularFileError: /dev/null: is a character device, not a regular file; ...
    """
    name = os.fspath(path)
    try:
        check_regular_file(name)
    except FileNotFoundError:
        raise error(f"{name}: no such file") from None
    except NotARegularFileError as problem:
        raise error(str(problem)) from None
    except OSError as problem:
        raise error(f"{name}: cannot read the file ({problem.strerror or problem})") from None


def open_no_follow(path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` of a file among the outputs, never through a symbolic link and never a FIFO
    or device: returns the descriptor of a regular file.

    Parameters
    ----------
    path : str or os.PathLike
        The file; its last component must not be a symbolic link.
    flags : int
        ``os.O_*`` flags (``O_NOFOLLOW`` and ``O_NONBLOCK`` are added; blocking is restored
        once the file is known to be regular).
    mode : int
        Permissions of a file created (``O_CREAT``), before the umask.

    Returns
    -------
    int
        An open descriptor of a regular file.

    Raises
    ------
    SymlinkRefusedError
        ``path`` is a symbolic link (the message names it).
    NotARegularFileError
        ``path`` is a FIFO, a device, a socket or a folder.
    OSError
        It cannot be opened otherwise (permissions, missing folder, ...).
    """
    name = os.fspath(path)
    extra = os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    refused = ("{name}: is a symbolic link; graphcut never writes through a symbolic link "
               "among its outputs (it could write outside them): remove it")
    try:  # by name first: a FIFO opened for writing without a reader fails with ENXIO
        existing = os.lstat(name).st_mode
    except FileNotFoundError:
        existing = None
    if existing is not None and stat.S_ISLNK(existing):
        raise SymlinkRefusedError(errno.ELOOP, refused.format(name=name))
    if existing is not None and not stat.S_ISREG(existing):
        raise NotARegularFileError(f"{name}: is {file_kind(existing)}, not a regular file; "
                                   "remove it")
    try:
        descriptor = os.open(name, flags | extra, mode)
    except OSError as error:
        if os.path.islink(name):  # planted between the check and the open
            raise SymlinkRefusedError(error.errno, refused.format(name=name)) from None
        if error.errno == errno.ENXIO:
            raise NotARegularFileError(f"{name}: is not a regular file; remove it") from None
        raise
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFileError(f"{name}: is {file_kind(info.st_mode)}, not a regular "
                                       "file; remove it")
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def read_small_file(path, what: str, *, follow_symlinks: bool = True,
                    bytes_per_byte: int = 16, max_bytes: int | None = None) -> bytes:
    """The whole content of a regular file that is read into memory at once (settings JSON, a
    previous ``summary.csv``), after checking that it fits.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    what : str
        What the file is, for the memory error ("settings file", ...).
    follow_symlinks : bool
        False: a symbolic link is refused (:class:`SymlinkRefusedError`), for files among the
        outputs.
    bytes_per_byte : int
        Peak memory per byte of the file while it is parsed (the bytes, their text and the
        parsed objects), checked with :func:`graphcut.solver.memory.require_host_memory`.

    Returns
    -------
    bytes
        The content.

    Raises
    ------
    NotARegularFileError
        A folder, FIFO, device or socket (refused before it is opened).
    SymlinkRefusedError
        ``follow_symlinks`` is False and ``path`` is a symbolic link.
    HostMemoryError
        Parsing it would need more memory than is available (``GRAPHCUT_MEMORY_LIMIT``).
    ValueError
        It is larger than ``max_bytes``.
    OSError
        It cannot be read (missing, permissions).
    """
    name = os.fspath(path)
    if follow_symlinks:
        handle, size = open_regular_file(name)
    else:
        descriptor = open_no_follow(name, os.O_RDONLY)
        handle, size = os.fdopen(descriptor, "rb"), os.fstat(descriptor).st_size
    with handle:
        if max_bytes is not None and size > max_bytes:
            raise ValueError(f"{name}: {size} bytes is far larger than a {what} can be (at most "
                             f"{max_bytes}); refusing to read it")
        require_host_memory(size * bytes_per_byte, f"reading the {what} {name} ({size} bytes)")
        return handle.read(size + 1)[:size]


@contextlib.contextmanager
def terminate_as_interrupt():
    """Within the block, SIGTERM raises :class:`Terminated` (a ``KeyboardInterrupt``) in the
    main thread instead of ending the process at once, so that ``finally`` clauses remove
    temporary files. Does nothing outside the main thread. The previous handler is restored.

    Examples
    --------
    >>> with terminate_as_interrupt():
    ...     pass
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_terminated(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class NpyReadError(ValueError):
    """A ``.npy`` file cannot be read: not a regular file, a bad or truncated header, object
    values; the message names the file."""


def npy_header(path):
    """Shape, dtype and data offset of a ``.npy`` file from its header alone (nothing of the
    data is read), after checking that the file is regular and holds all the data it declares.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npy`` file.

    Returns
    -------
    tuple
        ``(shape, dtype, offset)``: the array's shape (tuple of int), its ``numpy.dtype`` and
        the byte offset of the data.

    Raises
    ------
    NpyReadError
        Not a regular file (a FIFO, a device: refused before opening), not a ``.npy`` file,
        an unsupported version, Python objects, or fewer data bytes than the header declares
        (a truncated file); the message names the file.
    """
    import numpy as np
    name = os.fspath(path)
    try:
        handle, size = open_regular_file(name)
        with handle:
            version = np.lib.format.read_magic(handle)
            read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                           (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read_header is None:
                raise ValueError(f"unsupported .npy format version {version}")
            shape, _, dtype = read_header(handle, max_header_size=100_000)
            offset = handle.tell()
    except NotARegularFileError as error:
        raise NpyReadError(str(error)) from None
    except FileNotFoundError:
        raise NpyReadError(f"{name}: no such file") from None
    except (OSError, ValueError, EOFError) as error:
        raise NpyReadError(f"{name}: not a .npy array that can be read ({error})") from None
    if dtype.hasobject:
        raise NpyReadError(f"{name}: holds Python objects; only numeric arrays are read")
    expected = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if size - offset < expected:
        raise NpyReadError(f"{name}: is truncated: its header declares shape {shape} of "
                           f"{dtype} ({expected} bytes of data) but the file holds only "
                           f"{max(0, size - offset)}")
    return tuple(int(n) for n in shape), dtype, offset


def read_npy(path, what: str = "array"):
    """A ``.npy`` file's array, after :func:`npy_header`'s checks and a check that twice its
    size fits in the memory available (``GRAPHCUT_MEMORY_LIMIT``).

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npy`` file.
    what : str
        What the array is, for the memory error ("disparity file", ...).

    Returns
    -------
    numpy.ndarray
        The array as stored.

    Raises
    ------
    NpyReadError
        See :func:`npy_header`.
    HostMemoryError
        The array does not fit in the memory available.
    """
    import numpy as np
    name = os.fspath(path)
    shape, dtype, _ = npy_header(name)
    need = 2 * int(np.prod(shape, dtype=object)) * dtype.itemsize
    require_host_memory(need, f"reading the {what} {name} (shape {shape}, {dtype})")
    try:
        handle, _ = open_regular_file(name)
        with handle:
            return np.lib.format.read_array(handle, allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        raise NpyReadError(f"{name}: cannot read the .npy array ({error})") from None
