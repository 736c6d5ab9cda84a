"""Saving seeds and their settings as one pair of files: both or neither. No Qt.

A seed label image (``graphcut.write_seeds``) and its settings JSON
(``graphcut.segmentation.settings_path``: same name, ``.json``) only make sense together:
``graphcut segment`` reads the settings next to the seeds. :func:`save_seed_pair` first writes
both to temporary files in the destination folder (short names, so that a long destination
name still fits), then renames them over the destination, the JSON first; if renaming the
image fails, the previous JSON is put back. A failure at any step (full disk, read-only
folder) therefore leaves the previous pair, or no pair, exactly as it was, and no temporary
file behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

import graphcut
from graphcut.segmentation import settings_path, write_settings

_PREFIX = ".graphcut-"


def save_seed_pair(path, labels, settings: dict, *, inputs=()) -> None:
    """Write ``labels`` as the seed image ``path`` and ``settings`` as its JSON, atomically
    as a pair.

    Parameters
    ----------
    path : str or Path
        The seed label image (``.png``, ``.tif`` or ``.tiff``); the settings go to
        ``settings_path(path)``.
    labels : ndarray
        uint8 seed labels (0 none, 1 foreground, 2 background, 3.. further objects).
    settings : dict
        Checked and written by ``graphcut.segmentation.write_settings``.
    inputs : sequence of paths
        Files neither output may replace (the image the seeds belong to).

    Raises
    ------
    ValueError
        A suffix that is not lossless, bad labels or settings, or an output that is one of
        ``inputs``.
    OSError
        A file could not be written or renamed; the previous pair is unchanged.

    Examples
    --------
    >>> save_seed_pair("seeds/camera.png", labels, {"lam": 10.0})  # doctest: +SKIP
    """
    path = Path(path)
    json_path = settings_path(path)
    for output in (path, json_path):
        _refuse_input(output, inputs)
    staged_image = _temporary(path)
    staged_json = _temporary(json_path)
    backup = None
    try:
        graphcut.write_seeds(staged_image, labels)
        write_settings(staged_json, settings)
        if os.path.lexists(json_path):
            backup = _keep_copy(json_path)
        os.replace(staged_json, json_path)
        try:
            os.replace(staged_image, path)
        except OSError:
            if backup is not None:
                os.replace(backup, json_path)
                backup = None
            else:
                os.unlink(json_path)
            raise
    finally:
        for leftover in (staged_image, staged_json, backup):
            if leftover is not None:
                with contextlib.suppress(OSError):
                    os.unlink(leftover)


def _temporary(path: Path) -> str:
    """A new empty file in ``path``'s folder with ``path``'s suffix and a short name."""
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write {os.fspath(path)!r}: the folder "
                                f"{os.fspath(folder)!r} does not exist")
    descriptor, name = tempfile.mkstemp(dir=folder, prefix=_PREFIX, suffix=path.suffix)
    os.close(descriptor)
    return name


def _refuse_input(path: Path, inputs) -> None:
    for source in inputs:
        if source is not None and path.exists() and Path(source).exists() \
                and os.path.samefile(path, source):
            raise ValueError(f"refusing to overwrite the input file {os.fspath(source)!r} "
                             "with the seeds; choose another path")


def _keep_copy(path: Path) -> str:
    """A second name (a hard link, else a copy) for ``path`` itself (a symbolic link is
    kept as the link), in its folder, to put it back from."""
    name = _temporary(path)
    os.unlink(name)
    try:
        os.link(path, name, follow_symlinks=False)
    except OSError:
        shutil.copy2(path, name, follow_symlinks=False)
    return name
