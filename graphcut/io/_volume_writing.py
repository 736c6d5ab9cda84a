"""Writing volumes: masks (with batch's record), seed labels and overlays as multi-page 8-bit
TIFFs (zlib-compressed) or ``.npy``, atomically (:func:`graphcut.io.atomic_write`), never over
an input.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from graphcut._arrays import to_host
from graphcut._safety import check_regular_file

from ._seeds import check_seeds
from ._tiff import open_tiff
from ._volumes import TIFF_SUFFIXES
from ._writing import atomic_write

__all__ = ["RECORD_KEY", "read_volume_record", "write_volume_mask", "write_volume_overlay",
           "write_volume_seeds"]


def write_volume_mask(path, mask, *, inputs=(), record: dict | None = None) -> None:
    """Write a (D, H, W) mask as 0 / 255 uint8: a multi-page TIFF or a ``.npy`` by suffix.

    ``record``: a JSON-serialisable dict kept in a TIFF's metadata under
    :data:`RECORD_KEY` (how the mask was made, for batch; see :func:`read_volume_record`);
    ignored for ``.npy``.
    """
    mask = to_host(mask)
    if mask.ndim != 3:
        raise ValueError(f"a volume mask must be (D, H, W), got shape {mask.shape}")
    _write_volume(path, np.where(mask.astype(bool), 255, 0).astype(np.uint8), inputs, record)


RECORD_KEY = "graphcut-batch"


def read_volume_record(path) -> dict | None:
    """The record a volume mask TIFF written by :func:`write_volume_mask` carries (None when
    it has none, is not a regular file or cannot be read); reads the first page's header."""
    import json
    try:
        check_regular_file(path)
        with open_tiff(os.fspath(path), os.fspath(path)) as tif:
            metadata = tif.shaped_metadata
            text = metadata[0].get(RECORD_KEY) if metadata else None
        record = json.loads(text) if isinstance(text, str) else None
    except Exception:  # any unreadable file simply has no record
        return None
    return record if isinstance(record, dict) else None




def write_volume_seeds(path, labels, *, inputs=()) -> None:
    """Write (D, H, W) seed labels 0 / 1 / 2 as uint8: a multi-page TIFF or a ``.npy``."""
    labels = check_seeds(to_host(labels), name="labels", require_both=False)
    if labels.ndim != 3:
        raise ValueError(f"volume seeds must be (D, H, W), got shape {labels.shape}")
    _write_volume(path, labels.astype(np.uint8), inputs)


def write_volume_overlay(path, volume, mask, *, inputs=()) -> None:
    """Write a multi-page RGB TIFF of the slices of ``volume`` with the object (``mask``)
    tinted and outlined, atomically, never over one of ``inputs``."""
    from ._overlay import overlay
    rgb = np.stack([overlay(volume[z], mask[z]) for z in range(volume.shape[0])])
    atomic_write(path, lambda handle: handle.write(_tiff_bytes(rgb, photometric="rgb")),
                 inputs=inputs)


def _write_volume(path, data: np.ndarray, inputs, record: dict | None = None) -> None:
    import json
    suffix = Path(path).suffix.lower()
    metadata = {"axes": "ZYX"}
    if record is not None:
        metadata[RECORD_KEY] = json.dumps(record, sort_keys=True)
    if suffix in TIFF_SUFFIXES:
        def write(handle):
            handle.write(_tiff_bytes(data, photometric="minisblack", metadata=metadata))
    elif suffix == ".npy":
        def write(handle):
            np.save(handle, data, allow_pickle=False)
    else:
        raise ValueError(f"{os.fspath(path)!r}: unknown volume file suffix {suffix!r}; use .tif, "
                         ".tiff or .npy")
    atomic_write(path, write, inputs=inputs)


def _tiff_bytes(data: np.ndarray, **options) -> bytes:
    """``data`` as a zlib-compressed (multi-page) TIFF file, in memory."""
    import io

    import tifffile
    buffer = io.BytesIO()
    tifffile.imwrite(buffer, data, compression="zlib", **options)
    return buffer.getvalue()
