"""Writing results: the 0 / 255 mask of one object, the label image of several, overlays."""

from __future__ import annotations

import numpy as np
from PIL import Image

from ._overlay import display_rgb, write_overlay
from ._writing import atomic_save, write_mask

# Tints of object labels in overlays, by order of the label (1, 3, 4, ...); repeats after 10.
PALETTE = np.array([(255, 40, 0), (0, 120, 255), (255, 200, 0), (200, 0, 255), (0, 200, 80),
                    (255, 0, 140), (0, 220, 220), (140, 90, 0), (120, 120, 255), (180, 255, 0)],
                   dtype=np.float64)


def is_mask(output) -> bool:
    """Whether ``output`` of :func:`graphcut.segment` is a mask (bool) or a label image."""
    return np.asarray(output).dtype == bool


def write_result(path, output, *, inputs=()) -> None:
    """Write a mask as 0 / 255 (:func:`graphcut.write_mask`) or a label image as 8-bit grey
    PNG values (0 background, each object its label), atomically."""
    output = np.asarray(output)
    if output.dtype == bool:
        write_mask(path, output, inputs=inputs)
    else:
        atomic_save(Image.fromarray(output.astype(np.uint8)), path, inputs=inputs)


def label_overlay(image, labels, *, opacity=0.45, outline=(255, 255, 255)) -> np.ndarray:
    """uint8 RGB: ``image`` with each object label tinted (:data:`PALETTE`) and the
    boundaries between labels outlined."""
    from skimage.segmentation import find_boundaries

    rgb = display_rgb(image).astype(np.float64)
    labels = np.asarray(labels)
    for order, label in enumerate(v for v in np.unique(labels) if v != 0):
        chosen = labels == label
        rgb[chosen] = (1 - opacity) * rgb[chosen] + opacity * PALETTE[order % len(PALETTE)]
    if outline is not None:
        rgb[find_boundaries(labels, mode="inner") & (labels != 0)] = outline
    return np.clip(np.rint(rgb), 0, 255).astype(np.uint8)


def write_result_overlay(path, image, output, *, inputs=()) -> None:
    """:func:`graphcut.write_overlay` for a mask, :func:`label_overlay` for labels."""
    output = np.asarray(output)
    if output.dtype == bool:
        write_overlay(path, image, output, inputs=inputs)
    else:
        atomic_save(Image.fromarray(label_overlay(image, output)), path, inputs=inputs)
