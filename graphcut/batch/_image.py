"""One image of a batch: read, segment, write, and the summary record of what was done.

The work has three stages, timed separately (:data:`graphcut.batch.STAGE_FIELDS`):

- read: decode the image and the seed file (Pillow and zlib release the GIL, so reader threads
  run in parallel);
- solve: the energy and the minimum cut (:func:`graphcut.segment`). On the GPU this stage,
  uploads and the mask's download included, runs under a lock held per process, so a card
  solves one image at a time while other threads read and write around it (and no CUDA call
  of another thread can meet a CUDA-graph capture of the solver); ``wait_seconds`` is the time
  spent waiting for that lock;
- write: the overlay (if asked), then the mask, each PNG written atomically with
  :data:`PNG_OPTIONS`.

Each mask records how it was made in a PNG text chunk (:data:`METADATA_KEY`, JSON): ``lam``
(null: the settings file's or the model's default), ``sigma`` (null: estimated), the further
segmentation options given (``options``: model, iterations, clean-up), the size and
modification time of the image and seed files and of the settings file next to the seeds
(``settings``, null when there is none), the flow, the size and the :data:`ENERGY_REVISION`
it was made under. A re-run skips an image only when its mask says it was made from the same
inputs with the same parameters under the same revision (:func:`stale_reason`).

The settings file next to a seed file (``<stem>.json``: model, lam, box, ...; see
:mod:`graphcut.segmentation`) is used when present; options given to the batch win over it.
Seeds may mark several objects (labels 1, 3, 4, ...): the output is then a label image (0
background, each object its label) instead of the 0 / 255 mask.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import logging
import os
import threading
import time
import zlib
from pathlib import Path

import numpy as np
from PIL import Image, PngImagePlugin

from ..io import (atomic_save, check_lossless_suffix, overlay, read_image, read_volume_record,
                  segments_as_volume)
from ..segmentation import check_image_file, segment_volume_paths
from ..segmentation import (label_overlay, read_request, segment, settings_path)
from ..solver import resolve_device
from ._records import FAILED, OK, SKIPPED, display, make_record

log = logging.getLogger("graphcut.batch")

# PNG encoding of masks and overlays. zlib level 1 with run-length matching (Z_RLE) after
# PNG's per-row filters: on 4-megapixel masks 3x faster than Pillow's default (level 6) and
# smaller; on RGB overlays 4-5x faster at the same size (bench/bench_batch.py --png-sweep).
PNG_OPTIONS = {"compress_level": 1, "compress_type": zlib.Z_RLE}
METADATA_KEY = "graphcut-batch"
METADATA_VERSION = 1
#: raised whenever a release changes the mask that the same inputs and options give (a new
#: default model, sigma or lam rule): a mask recorded under another revision (or none, as
#: before the fifteenth session, when a box of the learned model took its own contrast sigma)
#: is out of date, and a re-run redoes it
ENERGY_REVISION = 15
ALREADY_DONE = "already done (outputs exist; use --overwrite to redo)"
UNRECORDED = "it has no record of how it was made"
KEPT_UNRECORDED = ("kept: the mask exists but has no record of how it was made (an older "
                   "graphcut or another program wrote it); use --overwrite to redo it")

# One image at a time on the GPU of this process (see the module notes).
GPU_LOCK = threading.Lock()


def _float_or_none(value):
    return None if value is None else float(value)


def input_signature(path) -> list[int]:
    """[size in bytes, modification time in ns] of an input file: a changed file has another."""
    stat = os.stat(path)
    return [stat.st_size, stat.st_mtime_ns]


def _settings_signature(seeds_path) -> list[int] | None:
    """:func:`input_signature` of the settings file next to the seeds (None: there is none)."""
    if seeds_path is None:
        return None
    path = settings_path(seeds_path)
    try:
        return input_signature(path) if not path.is_dir() else None
    except OSError as error:
        # absent, or a name too long to exist (the seeds' name is at the limit)
        if error.errno in (errno.ENOENT, errno.ENAMETOOLONG, errno.ENOTDIR):
            return None
        raise


def input_signatures(image_path, seeds_path) -> dict:
    """The :func:`input_signature` of the image, the seed file and the settings file next to
    it, taken *before* they are read: a file changed while the image is being segmented then
    differs from its record, and the next run redoes the image. A file that cannot be
    examined gets None (the reader reports it)."""
    def signature(get, path):
        try:
            return get(path)
        except OSError:
            return None
    return {"image": signature(input_signature, image_path),
            "seeds": None if seeds_path is None else signature(input_signature, seeds_path),
            "settings": signature(_settings_signature, seeds_path)}


def mask_metadata(*, lam, sigma, image_path, seeds_path, flow, width, height,
                  options=None, signatures: dict | None = None) -> dict:
    """What a mask records about how it was made (see the module notes). ``signatures``: the
    inputs' :func:`input_signatures` taken when they were read (default: now)."""
    if signatures is None:
        signatures = input_signatures(image_path, seeds_path)
    return {"version": METADATA_VERSION, "energy": ENERGY_REVISION, "lam": _float_or_none(lam),
            "sigma": _float_or_none(sigma), "options": dict(options or {}), **signatures,
            "flow": int(flow), "width": int(width), "height": int(height)}


def read_mask_metadata(mask_path) -> dict | None:
    """The record a mask written by graphcut carries, or None (absent, unreadable, another
    program's PNG). Reads only the header (a PNG's text chunks, a volume TIFF's metadata),
    not the pixels."""
    if Path(mask_path).suffix.lower() in (".tif", ".tiff"):
        metadata = read_volume_record(mask_path)
        if metadata is not None and metadata.get("version") == METADATA_VERSION:
            return metadata
    with contextlib.suppress(Exception):  # any unreadable file simply has no record
        with Image.open(mask_path) as image:
            metadata = json.loads(image.info[METADATA_KEY])
        if isinstance(metadata, dict) and metadata.get("version") == METADATA_VERSION:
            return metadata
    return None


def stale_reason(mask_path, *, lam, sigma, image_path, seeds_path,
                 options=None) -> str | None:
    """Why the mask at ``mask_path`` does not answer this request (None: it does, it is up
    to date): made with other parameters, from inputs changed since, or without a record."""
    metadata = read_mask_metadata(mask_path)
    if metadata is None:
        return UNRECORDED
    changes = []
    if metadata.get("energy") != ENERGY_REVISION:
        changes.append(f"made by an earlier graphcut whose defaults may give another mask "
                       f"(energy revision {metadata.get('energy') or 'unrecorded'} -> "
                       f"{ENERGY_REVISION})")
    if metadata.get("lam") != _float_or_none(lam):
        changes.append(f"lam {metadata.get('lam') or 'default'} -> "
                       f"{'default' if lam is None else float(lam)}")
    if metadata.get("sigma") != _float_or_none(sigma):
        changes.append(f"sigma {metadata.get('sigma') or 'estimated'} -> "
                       f"{'estimated' if sigma is None else float(sigma)}")
    if metadata.get("options", {}) != dict(options or {}):
        changes.append(f"options {metadata.get('options', {})} -> {dict(options or {})}")
    for key, path in (("image", image_path), ("seeds", seeds_path)):
        try:
            if metadata.get(key) != input_signature(path):
                changes.append(f"the {'seed' if key == 'seeds' else 'image'} file changed")
        except OSError:
            changes.append(f"the {key} file cannot be read")
    try:
        if metadata.get("settings") != _settings_signature(seeds_path):
            changes.append("the settings file next to the seeds changed")
    except OSError:
        changes.append("the settings file cannot be read")
    return ", ".join(changes) or None


def _solve(image, seeds, *, device, backend, stages, **options):
    started = time.perf_counter()
    lock = GPU_LOCK if backend == "cuda" else contextlib.nullcontext()
    with lock:
        locked = time.perf_counter()
        mask, result = segment(image, seeds, device=device, return_result=True, **options)
        # the host mask for the cut: a GPU copy is released here, under the lock
        result = dataclasses.replace(result, source_side=mask)
        stages["solve_seconds"] = time.perf_counter() - locked
    stages["wait_seconds"] = locked - started
    return mask, result


def mask_png(mask) -> Image.Image:
    """The mask as an 8-bit grey Pillow image, 0 = background, 255 = object (a label image of
    several objects: its labels as they are)."""
    mask = np.asarray(mask)
    if mask.dtype != bool:
        return Image.fromarray(mask.astype(np.uint8))
    return Image.fromarray(mask.astype(np.uint8) * np.uint8(255))


def segment_paths(image_path, seeds_path, mask_path, *, overlay_path=None, lam=None,
                  sigma=None, device="auto", max_pixels=None, timings: dict | None = None,
                  segment_options: dict | None = None):
    """Read an image and its seed file, segment, write the overlay (if asked) and then the mask.

    Both outputs are written atomically and never replace an input; PNG masks record their
    parameters and inputs (:func:`read_mask_metadata`), PNGs are encoded with
    :data:`PNG_OPTIONS`. Before anything is decoded, the image's header is checked against
    the memory the segmentation needs (on the CPU, :func:`graphcut.segmentation.check_image_file`;
    on the GPU path, decoding is checked by :func:`graphcut.read_image` and the GPU's need by
    :func:`graphcut.segment`, which with ``device="auto"`` sends an image too large for the
    GPU to the CPU).

    Parameters
    ----------
    lam
        None: the settings file's, else the colour model's default.
    max_pixels
        the largest image accepted (see :func:`graphcut.read_image`).
    timings
        a dict that receives the seconds per stage (:data:`STAGE_FIELDS`).
    segment_options
        further :func:`graphcut.segment` options (``model``,
        ``iterations``, ``box``, ``lasso``, ``keep``, ``fill_holes``); they and ``lam``,
        ``sigma`` win over the settings file next to the seeds.

    Returns
    -------
    tuple
        ``(mask, result)``: the bool mask (or the label image of several objects) and the
        solver's :class:`graphcut.CutResult`.

    Raises
    ------
    OSError or ValueError or MemoryError
        What :func:`graphcut.read_image`, :func:`graphcut.read_seeds`,
        :func:`graphcut.segment`, :func:`graphcut.segmentation.check_image_file` (a MemoryError
        when the image cannot fit) and the writers raise.
    """
    stages = {} if timings is None else timings
    started = time.perf_counter()
    # what the inputs are as they are read (a file changed during the solve is redone later)
    signatures = input_signatures(image_path, seeds_path)
    if segments_as_volume(image_path, seeds_path):  # a volume: multi-page mask (and overlay)
        record = {"version": METADATA_VERSION, "energy": ENERGY_REVISION,
                  "lam": _float_or_none(lam), "sigma": _float_or_none(sigma),
                  "options": dict(segment_options or {}), **signatures}
        mask, result = segment_volume_paths(image_path, seeds_path, mask_path,
                                            overlay_path=overlay_path, lam=lam, sigma=sigma,
                                            device=device, max_pixels=max_pixels,
                                            record=record, segment_options=segment_options)
        stages["solve_seconds"] = time.perf_counter() - started
        return mask, result
    check_lossless_suffix(mask_path, "mask")  # before the solve, not after it
    backend = resolve_device(device)
    if backend == "cpu":  # the whole need, from the header, before anything is decoded
        options = segment_options or {}
        check_image_file(image_path, "cpu", max_pixels=max_pixels, model=options.get("model"),
                         region=options.get("box") is not None)
    # (on the GPU path read_image checks the memory to decode, and segment() the GPU's need
    # under the GPU lock: no CUDA call of this thread can then meet the solver's graph capture)
    image = read_image(image_path, max_pixels=max_pixels)
    seeds, chosen = read_request(seeds_path, image.shape[:2], lam=lam, sigma=sigma,
                                 max_pixels=max_pixels, **(segment_options or {}))
    stages["read_seconds"] = time.perf_counter() - started
    mask, result = _solve(image, seeds, device=device, backend=backend, stages=stages,
                          **chosen)
    started = time.perf_counter()
    inputs = (image_path,) if seeds_path is None else (image_path, seeds_path)
    if overlay_path is not None:
        tinted = overlay(image, mask) if mask.dtype == bool else label_overlay(image, mask)
        atomic_save(Image.fromarray(tinted), overlay_path, inputs=inputs,
                    **_png_options(overlay_path))
    options = _png_options(mask_path)
    if options:
        options["pnginfo"] = PngImagePlugin.PngInfo()
        options["pnginfo"].add_text(METADATA_KEY, json.dumps(mask_metadata(
            lam=lam, sigma=sigma, image_path=image_path, seeds_path=seeds_path,
            flow=result.flow, width=mask.shape[1], height=mask.shape[0],
            options=segment_options, signatures=signatures), sort_keys=True))
    atomic_save(mask_png(mask), mask_path, inputs=inputs, **options)
    stages["write_seconds"] = time.perf_counter() - started
    return mask, result


def _png_options(path) -> dict:
    """:data:`PNG_OPTIONS` for a .png file, none for other formats (.tif masks)."""
    return dict(PNG_OPTIONS) if Path(path).suffix.lower() == ".png" else {}


def _outputs_present(out_path: Path, overlay_path: Path | None) -> bool:
    return out_path.is_file() and (overlay_path is None or overlay_path.is_file())


def segment_file(image_path, seeds_path, out_path, *, overlay_path=None, lam=None,
                 sigma=None, device="auto", overwrite=False, max_pixels=None,
                 segment_options: dict | None = None) -> dict:
    """Segment one image file with its seed file and write the mask (and overlay).

    Never raises for bad input: an unreadable image, bad seeds, an image too large for the
    memory left or above ``max_pixels``, an output that would replace an input, an unwritable destination... give a
    record with status "failed" and the reason. Without ``overwrite``, an image whose mask
    (and overlay, if asked for) exist and whose mask was made from the same inputs with the
    same ``lam`` and ``sigma`` is not redone, nor is a mask without that record (another
    program's): status "skipped"; a mask made otherwise is redone. The mask is written last,
    atomically, so its presence means the image is done.

    Returns
    -------
    dict
        A dict with the keys :data:`SUMMARY_FIELDS`: status "ok" / "failed" / "skipped",
        reason ("" when ok), width and height (pixels), flow (the maximum flow), seconds (wall
        time for this image: read, solve, write), backend ("cpu" / "cuda"), the paths, lam
        and sigma; and the seconds per stage (:data:`STAGE_FIELDS`).

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import read_image, write_mask, write_seeds
    >>> from graphcut.batch import segment_file
    >>> image = np.zeros((6, 6), bool)
    >>> image[1:4, 1:4] = True
    >>> write_mask("cells.png", image)
    >>> seeds = np.zeros((6, 6), np.uint8)
    >>> seeds[2, 2], seeds[5, 5] = 1, 2
    >>> write_seeds("cells_seeds.png", seeds)
    >>> record = segment_file("cells.png", "cells_seeds.png", "cells_mask.png", device="cpu")
    >>> record["status"], record["backend"], record["width"], record["height"]
    ('ok', 'cpu', 6, 6)
    >>> int((read_image("cells_mask.png") == 255).sum())
    9

    Bad input gives a failed record, not an exception:

    >>> failed = segment_file("nothing.png", "cells_seeds.png", "out.png", device="cpu")
    >>> failed["status"], "nothing.png" in failed["reason"]
    ('failed', True)
    """
    started = time.perf_counter()
    image_path, out_path = Path(image_path), Path(out_path)
    seeds_path = None if seeds_path is None else Path(seeds_path)
    overlay_path = None if overlay_path is None else Path(overlay_path)
    parameters = dict(lam="" if lam is None else float(lam),
                      sigma="" if sigma is None else float(sigma))

    def failed(reason):
        return make_record(image_path, seeds_path, out_path, FAILED, reason,
                           seconds=round(time.perf_counter() - started, 4), **parameters)

    if seeds_path is None:
        return failed("no seed file")
    outputs = [out_path] + ([overlay_path] if overlay_path is not None else [])
    for output in outputs:
        for source in (image_path, seeds_path):
            if output.exists() and source.exists() and os.path.samefile(output, source):
                return failed(f"refusing to overwrite the input file {display(source)!r}")
    if not overwrite and _outputs_present(out_path, overlay_path):
        stale = stale_reason(out_path, lam=lam, sigma=sigma, image_path=image_path,
                             seeds_path=seeds_path, options=segment_options)
        if stale is None:
            return skipped_record(image_path, seeds_path, out_path, **parameters)
        if stale == UNRECORDED:  # another program's mask: never replaced without overwrite
            return skipped_record(image_path, seeds_path, out_path, KEPT_UNRECORDED)
    stages: dict = {}
    try:
        mask, result = segment_paths(image_path, seeds_path, out_path, overlay_path=overlay_path,
                                     lam=lam, sigma=sigma, device=device, max_pixels=max_pixels,
                                     timings=stages, segment_options=segment_options)
    except (OSError, ValueError, TypeError) as error:
        return failed(str(error))
    except MemoryError as error:  # GPUMemoryError (device "cuda") or the host's memory
        where = "the GPU" if "GPU" in type(error).__name__ else "memory"
        return failed(f"out of {where}: {error or type(error).__name__}")
    except Exception as error:  # one image's unexpected failure must not stop a batch
        log.debug("unexpected error on %s", display(image_path), exc_info=True)
        return failed(f"{type(error).__name__}: {error}")
    record = make_record(image_path, seeds_path, out_path, OK, height=mask.shape[-2],
                         width=mask.shape[-1], flow=result.flow, backend=result.backend,
                         seconds=round(time.perf_counter() - started, 4), **parameters)
    record.update({key: round(value, 5) for key, value in stages.items()})
    return record


def skipped_record(image_path, seeds_path, out_path, reason: str = ALREADY_DONE,
                   **values) -> dict:
    """The record of an image whose up-to-date mask is kept: size and flow from the mask's own
    record (:func:`read_mask_metadata`) when it has one."""
    metadata = read_mask_metadata(out_path) or {}
    known = {key: metadata[key] for key in ("width", "height", "flow") if key in metadata}
    return make_record(image_path, seeds_path, out_path, SKIPPED, reason, **{**known, **values})
