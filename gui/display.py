"""Turn any image the project reads into 8-bit RGBA pixels for the screen.

Only for display: the segmentation always receives the image as it was read. Conventions:
channels last; grey (H, W), grey + alpha (H, W, 2), RGB (H, W, 3) and RGBA (H, W, 4);
uint8 is shown as is; any other dtype (uint16, int, float, bool) is stretched linearly from its
minimum to its maximum, so that a 12-bit image stored in 16 bits is not shown nearly black;
transparent pixels are composited over a grey checkerboard, as image viewers do.
"""

from __future__ import annotations

import numpy as np

CHECKER_SQUARE = 8  # pixels per checkerboard square behind transparent pixels
CHECKER_LEVELS = (204, 153)  # the two greys of the checkerboard


def to_display_rgba(image: np.ndarray) -> np.ndarray:
    """An opaque (H, W, 4) uint8 RGBA array showing ``image``; ``image`` is not modified.

    Raises:
        ValueError: for a shape that is not an image with channels last (see module doc).
    """
    image = np.asarray(image)
    if image.ndim == 2:
        colour, alpha = image[..., None], None
    elif image.ndim == 3 and image.shape[2] in (1, 2, 3, 4):
        channels = image.shape[2]
        has_alpha = channels in (2, 4)
        colour = image[..., : channels - 1] if has_alpha else image
        alpha = image[..., channels - 1] if has_alpha else None
    else:
        raise ValueError(f"cannot display an array of shape {image.shape}: expected (H, W) or "
                         f"(H, W, C) with C in 1..4 channels last")
    rgb = _to_uint8(colour)
    if rgb.shape[2] == 1:
        rgb = np.repeat(rgb, 3, axis=2)
    if alpha is not None:
        rgb = _over_checkerboard(rgb, _alpha_fraction(alpha))
    rgba = np.empty(rgb.shape[:2] + (4,), np.uint8)
    rgba[..., :3] = rgb
    rgba[..., 3] = 255
    return rgba


def describe(image: np.ndarray) -> str:
    """A short human description such as ``"512×384 RGB uint16"``."""
    image = np.asarray(image)
    channels = image.shape[2] if image.ndim == 3 else 1
    kind = {1: "grey", 2: "grey+alpha", 3: "RGB", 4: "RGBA"}.get(channels, f"{channels}-channel")
    return f"{image.shape[1]}×{image.shape[0]} {kind} {image.dtype}"


def _to_uint8(values: np.ndarray) -> np.ndarray:
    if values.dtype == np.uint8:
        return values
    values = values.astype(np.float64)
    finite = np.isfinite(values)
    if not finite.any():
        return np.zeros(values.shape, np.uint8)
    low, high = values[finite].min(), values[finite].max()
    scale = 255.0 / (high - low) if high > low else 0.0
    scaled = np.where(finite, (values - low) * scale, 0.0)
    return np.clip(np.rint(scaled), 0, 255).astype(np.uint8)


def _alpha_fraction(alpha: np.ndarray) -> np.ndarray:
    """Alpha as floats in [0, 1]: integers over their dtype's maximum, floats taken as [0, 1]."""
    if np.issubdtype(alpha.dtype, np.integer):
        return alpha.astype(np.float64) / np.iinfo(alpha.dtype).max
    if alpha.dtype == bool:
        return alpha.astype(np.float64)
    return np.clip(np.nan_to_num(alpha.astype(np.float64)), 0.0, 1.0)


def _over_checkerboard(rgb: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    rows, cols = np.indices(rgb.shape[:2])
    odd = ((rows // CHECKER_SQUARE) + (cols // CHECKER_SQUARE)) % 2 == 1
    background = np.where(odd, CHECKER_LEVELS[1], CHECKER_LEVELS[0])[..., None]
    blended = rgb * alpha[..., None] + background * (1.0 - alpha[..., None])
    return np.clip(np.rint(blended), 0, 255).astype(np.uint8)
