"""``segment``: image + seeds -> object mask, through the Boykov-Jolly energy and a min cut."""

from __future__ import annotations

import numpy as np

from .energy import DEFAULT_LAM, DEFAULT_SCALE, array_module, build_network
from .solver import min_cut, resolve_device


def segment(image, seeds, *, lam=DEFAULT_LAM, sigma=None, bins=None, channel_axis=-1,
            scale=DEFAULT_SCALE, device="auto", return_result=False):
    """Segment the object marked by ``seeds`` in ``image``.

    Args:
        image: grey (H, W) or colour (H, W, C) image, uint8 / uint16 / bool / float, RGB or
            RGBA (alpha ignored); NumPy or CuPy. Not modified.
        seeds: (H, W) integer labels: 0 no seed, 1 object (foreground), 2 background; at least
            one of each. Not modified.
        lam: weight of the boundary term against the colour term (see
            :func:`graphcut.energy.build_network`); default 10.
        sigma: colour-difference scale of the boundary weights; ``None`` estimates it from
            the image (:func:`graphcut.energy.estimate_sigma`).
        bins: colour-histogram bins per channel (``None``: 64 grey, 16 colour).
        channel_axis: the channel axis of a 3-D image (scikit-image convention).
        scale: float capacities are multiplied by this and rounded to integers.
        device: "auto", "cpu" or "cuda" (see :func:`graphcut.solver.min_cut`). With "cuda"
            (or "auto" choosing it) a NumPy image is copied to the GPU and the network is built
            there.
        return_result: also return the solver's :class:`CutResult`.

    Returns:
        A bool NumPy (H, W) mask, True = object (the minimum cut's source side); with
        ``return_result``, the tuple ``(mask, result)``.

    Raises:
        ValueError / TypeError: bad image, seeds or options (the message says which).
        graphcut.solver.BackendUnavailableError: ``device="cuda"`` without a usable GPU.
    """
    if resolve_device(device) == "cuda" and array_module(image) is np:
        import cupy
        image = cupy.asarray(np.asarray(image))
        seeds = cupy.asarray(np.asarray(seeds))
    network = build_network(image, seeds, lam=lam, sigma=sigma, bins=bins,
                            channel_axis=channel_axis, scale=scale)
    result = min_cut(network, device=device)
    side = result.source_side
    mask = side.get() if hasattr(side, "get") else np.asarray(side, dtype=bool)
    return (mask, result) if return_result else mask


__all__ = ["segment"]
