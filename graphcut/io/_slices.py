"""A volume stored as a folder of 2-D slices: which files are its slices, in which order.

Slices are the folder's image files (:data:`graphcut.io.IMAGE_SUFFIXES`, hidden names
excepted) in natural name order (``slice_2`` before ``slice_10``). Every one of them must be a
regular file (a symbolic link to one is followed): a FIFO, socket or device named like an image
is refused by name, never skipped and never opened (a FIFO would block), and so is a broken
symbolic link, so that a volume never silently loses a slice. A sub-folder is not a slice.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from graphcut._safety import file_kind

from ._images import IMAGE_SUFFIXES, ImageReadError

__all__ = ["VolumeReadError", "slice_files"]


class VolumeReadError(ImageReadError):
    """A file or folder cannot be read as a volume; the message names it and says why."""


def _natural_key(path: Path):
    return [int(part) if part.isdigit() else part.lower()
            for part in re.split(r"(\d+)", path.name)]


def slice_files(folder) -> list[Path]:
    """The slice files of the volume folder ``folder``, in natural name order.

    Parameters
    ----------
    folder : str or os.PathLike
        A folder of 2-D slice images (a volume, or a volume's seeds).

    Returns
    -------
    list of pathlib.Path
        At least one path; each is a regular file (checked with ``stat``, nothing opened).

    Raises
    ------
    VolumeReadError
        the folder holds no slice image, or one named like a slice is a FIFO, socket, device
        or broken symbolic link; the message names that file and says what it is.
    """
    folder = Path(folder)
    files = []
    for path in folder.iterdir():
        if path.name.startswith(".") or path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            raise VolumeReadError(f"{os.fspath(path)}: a slice of the folder "
                                  f"{os.fspath(folder)} is a broken symbolic link") from None
        if stat.S_ISDIR(mode):
            continue
        if not stat.S_ISREG(mode):
            raise VolumeReadError(f"{os.fspath(path)}: is {file_kind(mode)}, not a regular file; "
                                  f"every slice of the folder {os.fspath(folder)} must be an "
                                  "image file")
        files.append(path)
    if not files:
        raise VolumeReadError(f"{os.fspath(folder)}: holds no slice images (expected "
                              f"{', '.join(IMAGE_SUFFIXES)} files)")
    return sorted(files, key=_natural_key)
