"""Segmenting a volume file with its seed file into a mask file (the CLI's and batch's volume
path)."""

from __future__ import annotations

import os
from pathlib import Path

from graphcut.io import (MASK_SUFFIXES, TIFF_SUFFIXES, read_volume, read_volume_seeds,
                         write_volume_mask, write_volume_overlay)

from ._memory import check_volume_file
from ._segment import segment


def segment_volume_paths(volume_path, seeds_path, mask_path, *, overlay_path=None,
                         lam=None, sigma=None, device="auto", spacing=None, max_pixels=None,
                         record: dict | None = None, segment_options=None):
    """Read a volume and its seeds, segment them, write the overlay (if asked) and then the
    mask; the volume counterpart of :func:`graphcut.batch.segment_paths`.

    ``overlay_path``: a multi-page RGB TIFF of the slices with the object tinted and outlined.
    Both outputs are written atomically and never replace an input (nor a file inside an
    input folder). ``max_pixels``: as :func:`read_volume`. ``record``: what the mask records
    about how it was made (:func:`write_volume_mask`); the flow and the size are added.
    ``segment_options``: further keyword arguments of :func:`graphcut.segment` (``model``,
    ``box`` as ``(z0, y0, x0, z1, y1, x1)``, ``iterations``, ``keep``, ``fill_holes``, ...);
    ``lam`` None is the model's default (:func:`graphcut.segment`'s: the default model's own
    lam).
    Returns ``(mask, result)``; raises what the readers, :func:`graphcut.segment` and the
    writers raise.
    """
    options = dict(segment_options or {})
    check_volume_file(volume_path, device, max_pixels=max_pixels,  # from the headers
                      model=options.get("model"), region=options.get("box") is not None)
    volume = read_volume(volume_path, max_pixels=max_pixels)
    seeds = read_volume_seeds(seeds_path, volume.shape, max_pixels=max_pixels)
    for option, path in (("mask", mask_path), ("overlay", overlay_path)):
        if path is not None and Path(path).suffix.lower() not in (
                MASK_SUFFIXES if option == "mask" else TIFF_SUFFIXES):
            allowed = MASK_SUFFIXES if option == "mask" else TIFF_SUFFIXES
            raise ValueError(f"{os.fspath(path)!r}: a volume's {option} is written as "
                             f"{' or '.join(allowed)}, not {Path(path).suffix or 'no suffix'}")
    mask, result = segment(volume, seeds, lam=lam, sigma=sigma, device=device, spacing=spacing,
                           return_result=True, **options)
    inputs = (volume_path, seeds_path)
    if overlay_path is not None:
        write_volume_overlay(overlay_path, volume, mask, inputs=inputs)
    if record is not None:
        record = dict(record, flow=int(result.flow), depth=int(mask.shape[0]),
                      height=int(mask.shape[1]), width=int(mask.shape[2]))
    write_volume_mask(mask_path, mask, inputs=inputs, record=record)
    return mask, result


__all__ = ["segment_volume_paths"]
