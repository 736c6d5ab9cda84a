"""Screen layers drawn over the image: seed colours, the object fill and its outline.

Each function returns a new (H, W, 4) uint8 RGBA array (transparent where nothing is drawn);
the caller sets the layer's opacity on screen, so these arrays stay fully opaque where drawn.
"""

from __future__ import annotations

import numpy as np
from skimage.segmentation import find_boundaries

# Seed colours match the stroke form of seed files (DESIGN.md): red = foreground, blue = background.
SEED_COLOURS = np.array([[0, 0, 0, 0], [255, 0, 0, 255], [0, 64, 255, 255]], np.uint8)
FILL_COLOUR = (0, 200, 120)
OUTLINE_COLOUR = (255, 230, 0)


def seed_layer(labels: np.ndarray) -> np.ndarray:
    """RGBA colours of seed labels (0 transparent, 1 red, 2 blue)."""
    return SEED_COLOURS[np.asarray(labels)]


def fill_layer(mask: np.ndarray, colour=FILL_COLOUR) -> np.ndarray:
    """The object pixels of ``mask`` (bool) in ``colour``, the rest transparent."""
    mask = np.asarray(mask, bool)
    layer = np.zeros(mask.shape + (4,), np.uint8)
    layer[mask] = (*colour, 255)
    return layer


def outline_layer(boundary: np.ndarray, colour=OUTLINE_COLOUR) -> np.ndarray:
    """The ``boundary`` pixels (bool; see :func:`object_boundary`) in ``colour``."""
    boundary = np.asarray(boundary, bool)
    layer = np.zeros(boundary.shape + (4,), np.uint8)
    layer[boundary] = (*colour, 255)
    return layer


def object_boundary(mask: np.ndarray) -> np.ndarray:
    """The object's boundary pixels: inside the object, 1 pixel thick (bool)."""
    return find_boundaries(np.asarray(mask, bool), mode="inner")
