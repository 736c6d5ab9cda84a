"""Temporary files of atomic writes that even SIGKILL cannot leave behind.

A killed process runs no clean-up, so the atomic writers (``graphcut.io.atomic_write`` and
:func:`graphcut.solver.dimacs.write_dimacs`) avoid naming their temporary file at all where
the OS allows it:

- On Linux, :func:`create_temporary` opens an *anonymous* file in the output's folder
  (``O_TMPFILE``): it has no name, so a process killed while writing it leaves nothing behind
  (the kernel frees it). :func:`publish` then gives it its name: ``link`` of
  ``/proc/self/fd/N`` onto the output when no file of that name exists, otherwise a link to
  a reserved temporary name renamed over the output (``os.replace``), so that a reader never
  sees a half-written file.
- Elsewhere (or where the file system refuses ``O_TMPFILE``), a named temporary file as
  before. Its name, and the reserved name above, is ``.<name>.graphcut.<8 random>.tmp``
  (:data:`OUR_TEMPORARY_NAME`, within the file system's name limit whatever the output's
  name), and :func:`sweep_stale_temporaries` removes such files left by an earlier, killed
  run the first time a process writes into that folder: regular files only (symbolic links
  and everything else are left alone), older than this process, not locked by a writer (each
  writer holds an advisory ``flock`` on its temporary file until it is done: a killed
  process's lock is gone, a live one's is not, whatever the clocks say), only in that folder.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import threading
import time

from .files import NAME_MAX, shortened_name

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; the age test alone decides
    fcntl = None

__all__ = ["OUR_TEMPORARY_NAME", "create_temporary", "publish", "sweep_stale_temporaries",
           "temporary_name"]

# ".<name or its start>.graphcut.<8 random characters>.tmp": also matched by
# graphcut._safety.TEMPORARY_NAME (the clean-up after Ctrl-C), but recognisably ours.
OUR_TEMPORARY_NAME = re.compile(r"\..+\.graphcut\.[A-Za-z0-9_]{8}\.tmp\Z", re.S)
_MARK, _RANDOM, _SUFFIX = ".graphcut.", 8, ".tmp"
_O_TMPFILE = getattr(os, "O_TMPFILE", 0)
_PROC_FD = "/proc/self/fd"
# Temporary files changed before this instant were left by an earlier run (or process).
_STARTED = time.time()
_swept: set = set()
_swept_lock = threading.Lock()


def temporary_name(path) -> str:
    """The name of a temporary file for the output ``path``, in the same folder.

    Parameters
    ----------
    path : str or os.PathLike
        The output file.

    Returns
    -------
    str
        ``.<name>.graphcut.<8 random characters>.tmp``, the output's name shortened (at a
        character boundary) so that the whole fits in :data:`graphcut._safety.NAME_MAX` bytes.

    Examples
    --------
    >>> name = temporary_name("out/mask.png")
    >>> name.startswith(".mask.png.graphcut.") and name.endswith(".tmp")
    True
    >>> len(os.fsencode(temporary_name("x" * 255))) <= 255
    True
    """
    name = shortened_name(path, NAME_MAX - 1 - len(_MARK) - _RANDOM - len(_SUFFIX))
    return "." + name + _MARK + secrets.token_hex(_RANDOM // 2) + _SUFFIX


def create_temporary(folder, path) -> tuple[int, str | None]:
    """Open a new temporary file for writing ``path`` in ``folder`` (``path``'s folder).

    Parameters
    ----------
    folder : str or os.PathLike
        The folder of the output.
    path : str or os.PathLike
        The output file (its name gives the temporary name, if one is needed).

    Returns
    -------
    (int, str or None)
        An open, writable descriptor and the temporary file's path, or ``None`` when the file
        is anonymous (``O_TMPFILE``: nothing to clean up, see :func:`publish`). Its
        permissions are those a plain ``open()`` gives (0666 less the umask).

    Raises
    ------
    OSError
        the folder cannot be written (permission, read-only, full, missing).
    """
    if _O_TMPFILE and os.path.isdir(_PROC_FD):
        flags = os.O_WRONLY | _O_TMPFILE | getattr(os, "O_CLOEXEC", 0)
        try:
            return _locked(os.open(folder, flags, 0o666)), None
        except OSError as error:  # not supported by this kernel or file system
            if error.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
    for _ in range(100):
        name = os.path.join(folder, temporary_name(path))
        try:
            descriptor = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                                 | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
                                 | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:
            continue
        return _locked(descriptor), name
    raise FileExistsError(errno.EEXIST, "no free temporary name", os.fspath(folder))


def _locked(descriptor: int) -> int:
    """``descriptor`` with a shared advisory lock taken (held until it is closed), which tells
    :func:`sweep_stale_temporaries` that the file is being written."""
    if fcntl is not None:
        with contextlib.suppress(OSError):  # a file system without locks: age alone decides
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    return descriptor


def _remove_if_unlocked(path: str, found: os.stat_result) -> bool:
    """Remove the regular file ``path`` (``found``: its ``lstat``) unless a writer holds its
    lock; opens it without following a link and checks it is still that file."""
    if fcntl is None:
        os.unlink(path)
        return True
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
        | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(path, flags)
    try:
        opened = os.fstat(descriptor)
        if (opened.st_dev, opened.st_ino) != (found.st_dev, found.st_ino):
            return False
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a live writer holds it
        os.unlink(path)
        return True
    finally:
        os.close(descriptor)


def publish(descriptor: int, temporary: str | None, path) -> None:
    """Give the written temporary file the name ``path``, replacing a file of that name.

    Parameters
    ----------
    descriptor : int
        The open descriptor from :func:`create_temporary` (still open).
    temporary : str or None
        Its path, or ``None`` for an anonymous file.
    path : str or os.PathLike
        The output; a symbolic link of that name is replaced, never followed.

    Raises
    ------
    OSError
        the link or rename fails; a reserved name made on the way is removed.
    """
    path = os.fspath(path)
    if temporary is None:
        # linkat(/proc/self, "fd/N", AT_FDCWD, name, AT_SYMLINK_FOLLOW): a src_dir_fd makes
        # Python call linkat (plain link() would link the /proc symbolic link itself).
        proc = os.open(os.path.dirname(_PROC_FD), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            source = f"{os.path.basename(_PROC_FD)}/{descriptor}"
            try:
                os.link(source, path, src_dir_fd=proc, follow_symlinks=True)  # no overwrite
                return
            except FileExistsError:
                pass
            for _ in range(100):
                temporary = os.path.join(os.path.dirname(path), temporary_name(path))
                try:
                    os.link(source, temporary, src_dir_fd=proc, follow_symlinks=True)
                    break
                except FileExistsError:
                    continue
            else:
                raise FileExistsError(errno.EEXIST, "no free temporary name", path)
        finally:
            os.close(proc)
    try:
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def sweep_stale_temporaries(folder) -> list[str]:
    """Remove our temporary files that a killed earlier run left in ``folder``.

    Done once per folder and process; only names matching :data:`OUR_TEMPORARY_NAME`, only
    regular files (a symbolic link or anything else of that name is left alone, nothing is
    followed), only files last changed before this process started and not locked by a live
    writer, only in ``folder`` itself. Errors (a file gone, no permission) are ignored: the sweep never stops a write.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder an output is about to be written to.

    Returns
    -------
    list of str
        The paths removed.
    """
    removed = []
    try:
        info = os.stat(folder)
        key = (info.st_dev, info.st_ino)
        with _swept_lock:
            if key in _swept:
                return removed
            _swept.add(key)
        with os.scandir(folder) as entries:
            for entry in entries:
                if not OUR_TEMPORARY_NAME.match(entry.name):
                    continue
                with contextlib.suppress(OSError):
                    found = entry.stat(follow_symlinks=False)
                    # ctime: a link, rename or write updates it, so a file in use is newer
                    if stat.S_ISREG(found.st_mode) and found.st_ctime < _STARTED \
                            and _remove_if_unlocked(entry.path, found):
                        removed.append(entry.path)
    except OSError:
        pass
    return removed

