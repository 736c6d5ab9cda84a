"""``segment``: image + seeds -> object mask, through the Boykov-Jolly energy and a min cut."""

from __future__ import annotations

import logging

import numpy as np

from .energy import DEFAULT_LAM, DEFAULT_SCALE, array_module, build_network
from .memory import array_segmentation_backend
from .solver import min_cut, resolve_device

log = logging.getLogger("graphcut")


def segment(image, seeds, *, lam=DEFAULT_LAM, sigma=None, bins=None, channel_axis=-1,
            scale=DEFAULT_SCALE, device="auto", return_result=False, spacing=None):
    """Segment the object marked by ``seeds`` in ``image``.

    Args:
        image: grey (H, W) or colour (H, W, C) image, uint8 / uint16 / bool / float, RGB or
            RGBA (alpha ignored); or a volume, grey (D, H, W) or colour (D, H, W, C), segmented
            on the 6-connected voxel grid. NumPy or CuPy. Not modified.
        seeds: (H, W) (or (D, H, W)) integer labels: 0 no seed, 1 object (foreground), 2
            background; at least one of each. Not modified.
        lam: weight of the boundary term against the colour term (see
            :func:`graphcut.energy.build_network`); default 10.
        sigma: colour-difference scale of the boundary weights; ``None`` estimates it from
            the image (:func:`graphcut.energy.estimate_sigma`).
        bins: colour-histogram bins per channel (``None``: 64 grey, 16 colour).
        channel_axis: the channel axis of a 3-D image (scikit-image convention); an image
            with as many dimensions as the seeds has none (a grey image or volume).
        scale: float capacities are multiplied by this and rounded to integers.
        device: "auto", "cpu" or "cuda" (see :func:`graphcut.solver.min_cut`). With "cuda"
            (or "auto" choosing it) a NumPy image is copied to the GPU and the network is built
            there.
        return_result: also return the solver's :class:`CutResult`.
        spacing: ``(dy, dx)`` or ``(dz, dy, dx)``: pixel (voxel) size per axis; n-links along
            an axis are weighed by ``min(spacing) / spacing[axis]``. ``None``: isotropic.

    Returns:
        A bool NumPy mask shaped like the seeds, True = object (the minimum cut's source side); with
        ``return_result``, the tuple ``(mask, result)``.

    Raises:
        ValueError / TypeError: bad image, seeds or options (the message says which).
        graphcut.solver.BackendUnavailableError: ``device="cuda"`` without a usable GPU.
        MemoryError: ``device="cuda"`` and the GPU ran out of memory (with ``device="auto"``
            the image is segmented on the CPU instead, with a logged warning);
            ``HostMemoryError`` when the segmentation would not fit in the memory available,
            raised before it starts (:mod:`graphcut.memory`).
    """
    options = dict(lam=lam, sigma=sigma, bins=bins, channel_axis=channel_axis, scale=scale,
                   spacing=spacing)
    if array_segmentation_backend(image, seeds, device) == "cpu" and device == "auto":
        image, seeds, device = _to_host(image), _to_host(seeds), "cpu"  # too large for the GPU
    if resolve_device(device) == "cuda":
        try:
            return _segment_on_gpu(image, seeds, options, device, return_result)
        except MemoryError as error:  # GPUMemoryError, or CuPy's OutOfMemoryError while building
            if device != "auto":
                raise
            log.warning("the GPU ran out of memory (%s); segmenting on the CPU instead", error)
            image, seeds = _to_host(image), _to_host(seeds)
            device = "cpu"
    result = min_cut(build_network(image, seeds, **options), device=device)
    mask = np.asarray(result.source_side, dtype=bool)
    return (mask, result) if return_result else mask


def _segment_on_gpu(image, seeds, options, device, return_result):
    import cupy
    if array_module(image) is np:
        image = cupy.asarray(np.asarray(image))
    if array_module(seeds) is np:
        seeds = cupy.asarray(np.asarray(seeds))
    result = min_cut(build_network(image, seeds, **options), device=device)
    side = result.source_side
    mask = side.get() if hasattr(side, "get") else np.asarray(side, dtype=bool)
    return (mask, result) if return_result else mask


def _to_host(array):
    return array.get() if hasattr(array, "get") else array


__all__ = ["segment"]
