"""Making an opened image ready to show, before anything on screen changes. No widgets.

The app needs, for an image of H x W pixels, its screen layers (the image and the seeds as
RGBA pyramids, about 5.4 bytes per pixel each), the seed canvas with its undo copy, the
segmentation controller's copy of the seeds, the result mask, and a copy of the image in
shared memory for the solvers; converting an image that is not 8-bit for the screen needs
float64 temporaries on top. :func:`prepare_image` checks that much memory is available
(:func:`graphcut.solver.memory.require_host_memory`, which honours ``GRAPHCUT_MEMORY_LIMIT``)
*before* it builds anything, then builds it all, so that the window swaps documents only once
the new one is complete: a refusal or a ``MemoryError`` leaves the open document untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphcut.solver.memory import require_host_memory

from .display import describe, to_display_rgba
from .layers import ArrayLayer
from .strokes import SeedCanvas

# Bytes per pixel the app holds for an open image besides the image itself: two RGBA
# pyramids (4 * 4/3 each), the seed canvas and its undo copy (2), the controller's seeds (1),
# masks (2), a seed-layer redraw (4), rounded up.
VIEW_BYTES_PER_PIXEL = 24
# Float64 temporaries per pixel and channel while an image that is not uint8 is converted
# for the screen (the values, their scaled copy, a rounded copy).
CONVERSION_BYTES_PER_VALUE = 24


@dataclass(frozen=True)
class PreparedImage:
    """An image read from ``path`` with everything the window needs to show it."""

    image: np.ndarray
    path: Path
    levels: list          # the image's RGBA pyramid (ArrayLayer.pyramid)
    seed_levels: list     # the empty seed layer's pyramid
    canvas: SeedCanvas    # its empty seed canvas


def open_bytes(image: np.ndarray) -> int:
    """Bytes of memory the app needs to open ``image`` (an (H, W) or (H, W, C) array that is
    already in memory): screen layers, seeds, masks, the solvers' shared copy of the image,
    and the screen conversion's temporaries.

    Examples
    --------
    >>> open_bytes(np.zeros((1000, 1000, 3), np.uint8))
    27000000
    """
    pixels = int(image.shape[0]) * int(image.shape[1])
    need = VIEW_BYTES_PER_PIXEL * pixels + image.nbytes
    if image.dtype != np.uint8:
        channels = image.shape[2] if image.ndim == 3 else 1
        need += CONVERSION_BYTES_PER_VALUE * channels * pixels
    return need


def prepare_image(image: np.ndarray, path) -> PreparedImage:
    """Check memory for ``image`` (read from ``path``), then build its screen layers and
    seed canvas.

    Raises
    ------
    ValueError
        ``image`` is not a 2-D grey or colour image.
    MemoryError
        Less memory is available than :func:`open_bytes` (a
        ``graphcut.solver.memory.HostMemoryError`` naming both amounts), or an allocation
        failed while building.
    """
    path = Path(path)
    if image.ndim not in (2, 3):
        raise ValueError(f"unsupported image shape {image.shape}: the app opens 2-D images")
    require_host_memory(open_bytes(image), f"showing {path.name} ({describe(image)})")
    rgba = to_display_rgba(image)
    levels = ArrayLayer.pyramid(rgba)
    del rgba
    seed_levels = ArrayLayer.pyramid(np.zeros(image.shape[:2] + (4,), np.uint8))
    return PreparedImage(image, path, levels, seed_levels, SeedCanvas(image.shape[:2]))
