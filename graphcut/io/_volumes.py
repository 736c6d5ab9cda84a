"""Volumes on disk: reading image stacks and seed volumes (writing them:
:mod:`graphcut.io._volume_writing`; listing a folder of slices: :mod:`graphcut.io._slices`).

A volume is read from

- a multi-page TIFF (tifffile; ImageJ and OME hyperstacks included): the page axis (Z, or
  tifffile's generic I / Q) is the depth, a channel or sample axis (C, S) goes last, other
  axes of length 1 are dropped, and a time axis longer than 1 is an error;
- a ``.npy`` file holding a (D, H, W) grey or (D, H, W, C) colour array;
- a folder of 2-D slices (PNG, TIFF, JPEG, BMP, read like any image), stacked in natural name
  order (``slice_2`` before ``slice_10``); every slice must have the size and type of the first.

Arrays come back as (D, H, W) or (D, H, W, C), axis order (Z, Y, X), with the file's dtype.
Seed volumes use the same forms with labels 0 (none), 1 (object), 2 (background); a folder of
seed slices may be in label or stroke form (see :mod:`graphcut.io`). Masks and seeds are
written as multi-page 8-bit TIFFs (zlib-compressed; masks 0 / 255) or ``.npy``, atomically,
never over an input.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from graphcut._safety import (NotARegularFileError, NpyReadError, check_regular_file,
                              npy_header, open_regular_file)
from graphcut.solver.memory import HostMemoryError, require_host_memory

from ._images import (ImageMemoryError, ImageTooLargeError, default_max_pixels, image_info,
                      open_image, read_image)
from ._seeds import LABEL_MODES, _refuse_inexact, check_seeds, read_seeds, strokes_to_labels
from ._slices import VolumeReadError
from ._slices import slice_files as _slice_files
from ._tiff import open_tiff

TIFF_SUFFIXES = (".tif", ".tiff")
# Files that may hold a volume; a folder of slices is a volume too.
VOLUME_SUFFIXES = TIFF_SUFFIXES + (".npy",)
MASK_SUFFIXES = VOLUME_SUFFIXES
_STACK_AXES = "ZIQ"      # tifffile's axes that stack pages: depth
_CHANNEL_AXES = "CS"     # channels (hyperstacks) and samples (RGB pages)


def is_volume(path) -> bool:
    """Whether ``path`` holds a volume rather than a 2-D image: a folder, a ``.npy`` file of 3
    or more dimensions, or a TIFF whose pages stack along a depth axis longer than 1."""
    path = Path(path)
    if path.is_dir():
        return True
    try:  # never open a FIFO or a device (it would block): the readers refuse it by name
        check_regular_file(path)
    except OSError:
        return False
    suffix = path.suffix.lower()
    if suffix == ".npy":  # one that cannot be read is a volume, for read_volume's message
        try:
            return len(_npy_header(path)[0]) >= 3
        except VolumeReadError:
            return True
    if suffix in TIFF_SUFFIXES:
        try:
            axes, shape = _tiff_layout(path)
        except VolumeReadError:
            return False
        return any(a in _STACK_AXES and n > 1 for a, n in zip(axes, shape))
    return False


def segments_as_volume(image_path, seeds_path) -> bool:
    """Whether ``graphcut segment`` / ``batch`` treat this pair as a volume: the image is a
    volume (:func:`is_volume`) and, for a multi-page TIFF, so are the seeds (a multi-page TIFF
    with a 2-D seed image is segmented as its first page, with a warning, as before)."""
    if not is_volume(image_path):
        return False
    if Path(image_path).suffix.lower() in TIFF_SUFFIXES:
        return seeds_path is not None and is_volume(seeds_path)
    return True


def read_volume(path, *, max_pixels: int | None = None) -> np.ndarray:
    """Read a volume (module docstring): (D, H, W) grey or (D, H, W, C) colour, (Z, Y, X) order.

    Before anything is decoded, the shape and type the file declares are checked as an
    image's are: each slice against the pixel limit ``max_pixels`` (None: Pillow's, about 89
    million; 0: none), the whole volume against the memory available
    (``GRAPHCUT_MEMORY_LIMIT``), for compressed TIFF pages and sparse ``.npy`` files too.
    FIFOs, devices and sockets are refused by name, never opened.

    Raises
    ------
    VolumeReadError
        missing or unreadable file, not a regular file, a 2-D image, a time series, slices
        of different sizes, a truncated ``.npy``, a slice above the pixel limit; the message
        names the file (and the slice).
    ImageMemoryError
        decoding would need more memory than is available (a MemoryError).

    Examples
    --------
    A (D, H, W) volume as a ``.npy`` file (a multi-page TIFF reads the same way):

    >>> import numpy as np
    >>> from graphcut import read_volume, segment, write_volume_mask
    >>> volume = np.zeros((3, 4, 4), np.uint8)
    >>> volume[:, 1:3, 1:3] = 200                 # a bright bar through the slices
    >>> np.save("volume.npy", volume)
    >>> read_volume("volume.npy").shape
    (3, 4, 4)
    >>> seeds = np.zeros((3, 4, 4), np.uint8)
    >>> seeds[1, 1, 1], seeds[0, 0, 0] = 1, 2
    >>> mask = segment(read_volume("volume.npy"), seeds, channel_axis=None, model="histogram",
    ...                device="cpu")
    >>> int(mask.sum())                            # 3 slices of 2 x 2 voxels
    12
    >>> write_volume_mask("mask.tif", mask)
    >>> int(read_volume("mask.tif").max())
    255
    """
    path = Path(path)
    name = os.fspath(path)
    if path.is_dir():
        return _read_slices(path, max_pixels)
    if not os.path.lexists(path):
        raise VolumeReadError(f"{name}: no such file or folder")
    try:
        check_regular_file(path)
    except (NotARegularFileError, OSError) as error:
        raise VolumeReadError(str(error) if isinstance(error, NotARegularFileError)
                              else f"{name}: cannot read it ({error.strerror or error})") \
            from None
    suffix = path.suffix.lower()
    if suffix == ".npy":
        volume = _read_npy(path, max_pixels)
    elif suffix in TIFF_SUFFIXES:
        volume = _read_tiff(path, max_pixels)
    else:
        raise VolumeReadError(f"{name}: not a volume file; expected a multi-page TIFF "
                              "(.tif, .tiff), a .npy array or a folder of slices")
    if volume.ndim not in (3, 4) or 0 in volume.shape:
        raise VolumeReadError(f"{name}: holds an array of shape {volume.shape}; a volume is "
                              "(D, H, W) grey or (D, H, W, C) colour")
    return volume


def read_volume_seeds(path, shape=None, *, require_both: bool = True,
                      max_pixels: int | None = None) -> np.ndarray:
    """Read seed labels of a volume: uint8 (D, H, W), 0 none, 1 object, 2 background.

    ``path`` is a multi-page TIFF or ``.npy`` of labels, or a folder of seed slices (label or
    stroke form, one per slice, natural name order). ``shape``: the volume's (D, H, W) (or
    (D, H, W, C)); the seeds must match it. ``max_pixels``: as :func:`read_volume`.

    Raises
    ------
    VolumeReadError
        unreadable file or folder, not a regular file.
    ImageMemoryError
        decoding would need more memory than is available.
    ValueError
        not integer labels, wrong size, labels other than 0 / 1 / 2, or (with
        ``require_both``) no object or no background seed; the message names the file.
    """
    path = Path(path)
    name = f"seeds {os.fspath(path)!r}"
    if path.is_dir():
        files = _slice_files(path)
        expected = None if shape is None else tuple(shape[1:3])
        if shape is not None and len(files) != shape[0]:
            raise ValueError(f"{name} hold {len(files)} slices but the volume has {shape[0]}")
        labels = np.stack([_read_seed_slice(f, expected, max_pixels) for f in files])
    else:
        labels = read_volume(path, max_pixels=max_pixels)
        if labels.ndim == 4 and labels.shape[-1] == 1:
            labels = labels[..., 0]
        if labels.dtype == bool:
            labels = labels.astype(np.uint8)
    check_seeds(labels, None if shape is None else tuple(shape[:3]), name=name,
                require_both=require_both)
    return labels.astype(np.uint8, copy=False)


def _read_seed_slice(path: Path, shape, max_pixels=None) -> np.ndarray:
    """One seed slice, label or stroke form; unlike a 2-D seed file, a slice may hold one
    label or none (a stroke-form slice without any pure red or blue pixel is unseeded)."""
    with open_image(path, max_pixels=max_pixels) as image:
        _refuse_inexact(image, f"seeds {os.fspath(path)!r}")
        stroke_form = image.mode not in LABEL_MODES + ("LA", "La")
        rgba = np.asarray(image.convert("RGBA")) if stroke_form else None
    if not stroke_form:
        return read_seeds(path, shape, require_both=False, max_pixels=max_pixels)
    labels = strokes_to_labels(rgba)
    return check_seeds(labels, shape, name=f"seeds {os.fspath(path)!r}", require_both=False)


def volume_layout(path, *, max_pixels: int | None = None) -> tuple[tuple[int, ...], np.dtype]:
    """The shape ((D, H, W) or (D, H, W, C)) and dtype :func:`read_volume` would return, from
    the headers alone (a ``.npy`` header, a TIFF's series, a folder's first slice and number
    of slices): nothing is decoded.

    Raises:
        VolumeReadError: as :func:`read_volume`; ImageReadError: a first slice that cannot
            be read.
    """
    path = Path(path)
    name = os.fspath(path)
    if path.is_dir():
        files = _slice_files(path)
        info = image_info(files[0], max_pixels=max_pixels)
        channels = () if info.channels == 1 else (info.channels,)
        return (len(files), info.height, info.width) + channels, info.dtype
    try:
        check_regular_file(path)
    except OSError as error:
        raise VolumeReadError(f"{name}: cannot read it ({error})") from None
    if path.suffix.lower() == ".npy":
        shape, dtype = _npy_header(path)
        return tuple(shape), dtype
    if path.suffix.lower() not in TIFF_SUFFIXES:
        raise VolumeReadError(f"{name}: not a volume file")
    try:
        with open_tiff(name, name) as tif:
            series = tif.series[0]
            axes, shape, dtype = series.axes, tuple(series.shape), np.dtype(series.dtype)
    except Exception as error:  # tifffile raises many types for bad files
        raise VolumeReadError(f"{name}: cannot read the TIFF ({error})") from None
    empty = np.broadcast_to(np.zeros((), dtype), shape)  # no memory: only the shape matters
    return _as_zyxc(empty, axes, name).shape, dtype


def _check_decoding(name: str, shape, dtype, max_pixels, copies: int = 2) -> None:
    """The pixel guard per slice and the memory check for decoding a volume of ``shape``
    (axes in the file's order, the last two or three are a slice) and ``dtype``, before
    anything is decoded; ``copies``: arrays of that size held at once while reading."""
    limit = default_max_pixels() if max_pixels is None else int(max_pixels)
    shape = tuple(int(n) for n in shape)
    voxels = int(np.prod(shape, dtype=object)) if shape else 0
    if len(shape) >= 2:
        height, width = (shape[-3], shape[-2]) if len(shape) >= 4 else shape[-2:]
        if limit and height * width > limit:
            raise ImageTooLargeError(
                f"{name}: slices of {width}x{height} = {height * width} pixels are more than "
                f"the limit of {limit} pixels; refusing to decode it (decompression bomb "
                "guard; raise the limit with --max-pixels or max_pixels=)",
                pixels=height * width, limit=limit)
    need = copies * voxels * np.dtype(dtype).itemsize
    try:
        require_host_memory(need, f"decoding the volume {name} (shape {shape}, {dtype})")
    except HostMemoryError as error:
        raise ImageMemoryError(str(error), error.need, error.available) from None


def _npy_header(path: Path):
    """(shape, dtype) of a ``.npy`` file from its header (:func:`graphcut._safety.npy_header`)."""
    try:
        shape, dtype, _ = npy_header(path)
    except NpyReadError as error:
        raise VolumeReadError(str(error)) from None
    return shape, dtype


def _read_npy(path: Path, max_pixels=None) -> np.ndarray:
    name = os.fspath(path)
    shape, dtype = _npy_header(path)
    if dtype.kind not in "biuf":
        raise VolumeReadError(f"{name}: holds {dtype} values; expected bool, integer or float "
                              "voxels")
    _check_decoding(name, shape, dtype, max_pixels)
    try:
        handle, _ = open_regular_file(path)
        with handle:
            volume = np.lib.format.read_array(handle, allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        raise VolumeReadError(f"{name}: cannot read the .npy array ({error})") from None
    return volume


def _tiff_layout(path: Path) -> tuple[str, tuple[int, ...]]:
    try:
        check_regular_file(path)
        with open_tiff(os.fspath(path), os.fspath(path)) as tif:
            series = tif.series[0]
            return series.axes, tuple(series.shape)
    except Exception as error:  # tifffile raises many types for bad files
        raise VolumeReadError(f"{os.fspath(path)}: cannot read the TIFF ({error})") from None


def _read_tiff(path: Path, max_pixels=None) -> np.ndarray:
    name = os.fspath(path)
    try:
        handle, _ = open_regular_file(path)
    except OSError as error:
        raise VolumeReadError(f"{name}: cannot read the TIFF ({error})") from None
    with handle:
        try:
            tif = open_tiff(handle, name)
        except Exception as error:  # tifffile raises many types for bad files
            raise VolumeReadError(f"{name}: cannot read the TIFF ({error})") from None
        with tif:
            try:
                series = tif.series[0]
                axes, shape, dtype = series.axes, tuple(series.shape), series.dtype
            except Exception as error:
                raise VolumeReadError(f"{name}: cannot read the TIFF ({error})") from None
            if dtype is None or "Y" not in axes or "X" not in axes:
                raise VolumeReadError(f"{name}: a TIFF of shape {shape} (axes {axes!r}) and "
                                      f"type {dtype} is not a volume that can be read")
            sizes = dict(zip(axes, shape))
            slice_shape = (sizes["Y"], sizes["X"], 1)
            _check_decoding(name, (int(np.prod(shape, dtype=object)) // (sizes["Y"] * sizes["X"]),)
                            + slice_shape, dtype, max_pixels)
            try:
                data = series.asarray()
            except MemoryError:
                raise
            except Exception as error:  # tifffile raises many types for bad files
                raise VolumeReadError(f"{name}: cannot read the TIFF ({error})") from None
    return _as_zyxc(data, axes, name)


def _as_zyxc(data: np.ndarray, axes: str, name: str) -> np.ndarray:
    """``data`` with tifffile axes ``axes`` as (D, H, W) or (D, H, W, C)."""
    if "T" in axes and data.shape[axes.index("T")] > 1:
        raise VolumeReadError(f"{name}: is a time series ({data.shape[axes.index('T')]} time "
                              "points); save one time point as a volume")
    keep = [i for i, a in enumerate(axes) if data.shape[i] > 1 or a in "YX"]
    data = data.reshape([data.shape[i] for i in keep])
    axes = "".join(axes[i] for i in keep)
    stacks = [a for a in axes if a in _STACK_AXES]
    channels = [a for a in axes if a in _CHANNEL_AXES]
    others = [a for a in axes if a not in _STACK_AXES + _CHANNEL_AXES + "YX"]
    if len(stacks) > 1 or len(channels) > 1 or others:
        raise VolumeReadError(f"{name}: has axes {axes!r} (shape {data.shape}); expected one "
                              "depth axis (Z), Y, X and at most one channel axis")
    order = [axes.index(a) for a in stacks] + [axes.index("Y"), axes.index("X")] \
        + [axes.index(a) for a in channels]
    data = np.transpose(data, order)
    return data if stacks else data[None]


def _read_slices(folder: Path, max_pixels=None) -> np.ndarray:
    files = _slice_files(folder)
    first = read_image(files[0], max_pixels=max_pixels)
    _check_decoding(os.fspath(folder), (len(files),) + first.shape, first.dtype,
                    max_pixels, copies=1)
    volume = np.empty((len(files),) + first.shape, dtype=first.dtype)
    volume[0] = first
    for z, file in enumerate(files[1:], start=1):
        image = read_image(file, max_pixels=max_pixels)
        if image.shape != first.shape or image.dtype != first.dtype:
            raise VolumeReadError(
                f"{os.fspath(file)}: slice {z} is {image.shape} {image.dtype} but the first "
                f"slice {files[0].name} is {first.shape} {first.dtype}; all slices of a volume "
                "must have one size and type")
        volume[z] = image
    return volume


__all__ = ["MASK_SUFFIXES", "TIFF_SUFFIXES", "VOLUME_SUFFIXES", "VolumeReadError", "is_volume",
           "read_volume", "read_volume_seeds", "segments_as_volume", "volume_layout"]
