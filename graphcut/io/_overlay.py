"""Showing images: display RGB of any supported image, a mask tinted over it, written to a
file atomically."""

from __future__ import annotations

import numpy as np
from PIL import Image

from graphcut._arrays import image_as_float

from ._writing import as_mask, atomic_save


def display_rgb(image, *, channel_axis=-1) -> np.ndarray:
    """uint8 (H, W, 3) RGB for showing ``image``: grey replicated, alpha dropped, integer types
    scaled from their full range, float images shown as [0, 1] (or stretched from their own
    range when they leave [0, 1])."""
    if isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.size and (
            image.ndim == 2 or (image.ndim == 3 and channel_axis in (-1, 2)
                                and image.shape[2] in (1, 2, 3, 4))):
        # what the float path below gives, without it: rint(v / 255 * 255) == v for uint8
        channels = image[..., None] if image.ndim == 2 else image
        rgb = channels[..., :1] if channels.shape[2] in (1, 2) else channels[..., :3]
        return np.ascontiguousarray(np.broadcast_to(rgb, rgb.shape[:2] + (3,)))
    values = image_as_float(image, channel_axis=channel_axis)
    values = values.get() if hasattr(values, "get") else values
    low, high = float(values.min()), float(values.max())
    if low < 0.0 or high > 1.0:
        values = (values - low) / (high - low) if high > low else np.zeros_like(values)
    if values.shape[-1] == 1:
        values = np.repeat(values, 3, axis=-1)
    return np.clip(np.rint(values * 255.0), 0, 255).astype(np.uint8)


def _inner_boundary(mask) -> np.ndarray:
    """Object pixels with a 4-neighbour outside the object (the image border does not count)."""
    padded = np.pad(mask, 1, mode="edge")
    interior = (padded[:-2, 1:-1] & padded[2:, 1:-1] & padded[1:-1, :-2] & padded[1:-1, 2:])
    return mask & ~interior


def overlay(image, mask, *, channel_axis=-1, color=(255, 40, 0), opacity=0.45,
            outline=(255, 255, 0)) -> np.ndarray:
    """uint8 (H, W, 3) RGB: ``image`` with the object (``mask`` True) tinted with ``color`` at
    ``opacity`` (0..1) and its boundary pixels painted ``outline`` (``None``: no outline)."""
    rgb = display_rgb(image, channel_axis=channel_axis)
    mask = as_mask(mask)
    if mask.shape != rgb.shape[:2]:
        raise ValueError(f"mask shape {mask.shape} differs from the image's {rgb.shape[:2]}")
    if not 0.0 <= opacity <= 1.0:
        raise ValueError(f"opacity must be in [0, 1], got {opacity}")
    # the tint of every uint8 level per channel (the blend's float formula, tabulated once)
    levels = np.arange(256, dtype=np.float64)[:, None]
    tint = np.clip(np.rint((1.0 - opacity) * levels + opacity * np.asarray(color, dtype=np.float64)),
                   0, 255).astype(np.uint8)
    out = rgb.copy()
    for channel in range(3):
        np.copyto(out[..., channel], np.take(tint[:, channel], rgb[..., channel]), where=mask)
    if outline is not None:
        out[_inner_boundary(mask)] = np.clip(np.rint(np.asarray(outline, dtype=np.float64)), 0, 255)
    return out


def write_overlay(path, image, mask, *, channel_axis=-1, inputs=(), **style) -> None:
    """Write :func:`overlay` of ``image`` and ``mask`` to ``path`` (PNG), atomically.

    ``style``: ``color``, ``opacity``, ``outline`` as in :func:`overlay`.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import read_image, write_overlay
    >>> image = np.full((4, 4), 100, np.uint8)
    >>> mask = np.zeros((4, 4), bool)
    >>> mask[1:3, 1:3] = True
    >>> write_overlay("overlay.png", image, mask)
    >>> overlay = read_image("overlay.png")
    >>> overlay.shape, bool((overlay[0, 0] == 100).all()), bool((overlay[1, 1] != 100).any())
    ((4, 4, 3), True, True)
    """
    atomic_save(Image.fromarray(overlay(image, mask, channel_axis=channel_axis, **style)), path,
                inputs=inputs)


__all__ = ["display_rgb", "overlay", "write_overlay"]
