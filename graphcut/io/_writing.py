"""Writing files atomically: a temporary file in the destination folder (anonymous on Linux,
so that even SIGKILL leaves nothing behind; see :mod:`graphcut.solver.atomic`) given the
output's name only once complete, so a reader never sees a half-written file; the paths passed
as ``inputs`` are never overwritten. Masks and label images are written losslessly only.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np
from PIL import Image

from graphcut.solver.atomic import create_temporary, publish, sweep_stale_temporaries

# Suffixes that masks and label images may be written with: lossless formats only, so that
# 0/255 masks and 0/1/2 labels keep their exact values.
LOSSLESS_SUFFIXES = (".png", ".tif", ".tiff")
_LOSSY_FORMATS = {"JPEG", "MPO", "WEBP", "JPEG2000", "AVIF", "HEIF"}  # as Pillow names them

def _refuse_inputs(path: Path, inputs) -> None:
    for source in inputs:
        if source is None:
            continue
        if path.exists() and Path(source).exists() and os.path.samefile(path, source):
            raise ValueError(f"refusing to overwrite the input file {os.fspath(source)!r} with "
                             "an output; choose another output path")
        if Path(source).is_dir() and path.parent.is_dir() \
                and os.path.samefile(path.parent, source):
            raise ValueError(f"refusing to write {os.fspath(path)!r} into the input folder "
                             f"{os.fspath(source)!r} (it would replace or add a slice); "
                             "choose an output outside it")


def atomic_write(path, write, *, inputs=(), mode="wb") -> None:
    """Create or replace ``path`` atomically: ``write(handle)`` fills a temporary file in the
    same folder, which is given the name ``path`` only when complete (a link, or a rename over
    an existing file with ``os.replace``; a symbolic link at ``path`` is replaced, never
    followed). On any error, on Ctrl-C, SIGTERM and even SIGKILL, ``path`` is left as it was
    and no temporary file remains: on Linux the temporary file is anonymous (``O_TMPFILE``);
    elsewhere it is named ``.<name>.graphcut.<random>.tmp``, removed on errors, and one left
    by a killed run is removed at the next write into that folder.

    Parameters
    ----------
    path : str or os.PathLike
        The output file.
    write : callable
        ``write(handle)`` writes the content to an open file ``handle``.
    inputs : sequence of path-like, optional
        Files that must never be replaced (and folders that must not receive the output).
    mode : str
        ``"wb"`` (bytes) or ``"w"`` (UTF-8 text, newlines untranslated).

    Raises
    ------
    ValueError
        ``path`` is one of ``inputs`` (an existing file it must not replace).
    FileNotFoundError
        the destination folder does not exist.
    OSError
        the file cannot be written (read-only folder, disk full, ...); the message
        names ``path`` and the reason, and ``errno`` is kept.
    """
    path = Path(path)
    _refuse_inputs(path, inputs)
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write {os.fspath(path)!r}: the folder "
                                f"{os.fspath(folder)!r} does not exist")
    sweep_stale_temporaries(folder)
    try:
        descriptor, temporary = create_temporary(folder, path)
    except OSError as error:
        raise _write_error(path, error) from None
    try:
        text = {} if "b" in mode else {"newline": "", "encoding": "utf-8"}
        with os.fdopen(descriptor, mode, closefd=False, **text) as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        publish(descriptor, temporary, path)
    except BaseException as error:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        if isinstance(error, OSError):
            raise _write_error(path, error) from None
        raise
    finally:
        os.close(descriptor)


def _write_error(path, error: OSError) -> OSError:
    """``error`` reworded to name the file being written (not its temporary name), keeping
    its type (PermissionError, ...) where it is a built-in one."""
    reason = error.strerror or str(error) or type(error).__name__
    message = f"cannot write {os.fspath(path)!r}: {reason}"
    if error.errno is None:
        return OSError(message)
    kind = type(error) if type(error).__module__ == "builtins" else OSError
    return kind(error.errno, message)


def check_writable_image_suffix(path) -> str:
    """The Pillow format that the suffix of ``path`` names, or a ValueError saying the suffix
    is not an image format that can be written."""
    suffix = Path(path).suffix
    file_format = Image.registered_extensions().get(suffix.lower())
    if file_format is None or file_format not in Image.SAVE:
        raise ValueError(f"{os.fspath(path)!r}: unknown image file suffix {suffix!r}; use .png")
    return file_format


def atomic_save(image: Image.Image, path, *, inputs=(), **save_options) -> None:
    """Save a Pillow image to ``path`` atomically (:func:`atomic_write`); the format follows
    the suffix of ``path``.

    Raises
    ------
    ValueError
        ``path`` is one of ``inputs`` or has an unknown image suffix.
    FileNotFoundError
        the destination folder does not exist.
    """
    file_format = check_writable_image_suffix(path)
    atomic_write(path, lambda handle: image.save(handle, format=file_format, **save_options),
                 inputs=inputs)


def as_mask(mask, name: str = "mask") -> np.ndarray:
    """``mask`` as a bool NumPy (H, W) array (CuPy arrays are copied to the host).

    Raises
    ------
    ValueError
        ``mask`` is not 2-D; the message names ``name``.
    """
    mask = mask.get() if hasattr(mask, "get") else np.asarray(mask)
    if mask.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (H, W) array, got shape {mask.shape}")
    return mask.astype(bool)


def check_lossless_suffix(path, what: str = "mask") -> None:
    """Refuse a file name whose suffix is not a lossless format (:data:`LOSSLESS_SUFFIXES`).

    Masks and label images must keep their exact values: JPEG or WebP would blur 0/255 into
    every value between.

    Raises
    ------
    ValueError
        the suffix is missing or names another format; the message says which.
    """
    suffix = Path(path).suffix
    if suffix.lower() in LOSSLESS_SUFFIXES:
        return
    file_format = Image.registered_extensions().get(suffix.lower())
    if not suffix:
        found = "the file name has no suffix"
    elif file_format is None:
        found = f"the suffix {suffix!r} is not an image format"
    elif file_format in _LOSSY_FORMATS:
        found = f"the suffix {suffix!r} means {file_format}, which is lossy"
    else:
        found = f"the suffix {suffix!r} means {file_format}, which is not one of them"
    raise ValueError(f"{os.fspath(path)!r}: a {what} is written losslessly, as PNG or TIFF, but "
                     f"{found}; use a .png, .tif or .tiff name")


def write_mask(path, mask, *, inputs=()) -> None:
    """Write a mask as an 8-bit grey image, 0 = background, 255 = object (nonzero),
    atomically; the format follows the suffix, which must be lossless (.png, .tif, .tiff).

    ``inputs``: paths that must not be overwritten (the image and seed files).

    Raises
    ------
    ValueError
        a lossy or unknown suffix (:func:`check_lossless_suffix`), or ``path`` is
        one of ``inputs``.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import read_image, write_mask
    >>> mask = np.array([[False, True], [True, True]])
    >>> write_mask("mask.png", mask)
    >>> read_image("mask.png")
    array([[  0, 255],
           [255, 255]], dtype=uint8)
    >>> write_mask("mask.jpg", mask)
    Traceback (most recent call last):
        ...
    ValueError: ...
    """
    check_lossless_suffix(path, "mask")
    mask = as_mask(mask)
    atomic_save(Image.fromarray(np.where(mask, 255, 0).astype(np.uint8)), path, inputs=inputs)


__all__ = ["LOSSLESS_SUFFIXES", "as_mask", "atomic_save", "atomic_write",
           "check_lossless_suffix", "check_writable_image_suffix", "write_mask"]
