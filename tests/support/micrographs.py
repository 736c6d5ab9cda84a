"""Synthetic colour micrographs for the tests of ``model="auto"``'s rule: a brightfield section
made by the Beer-Lambert law (haematoxylin nuclei, optional eosin) and fluorescence stored as
RGB (one dye per channel on black)."""

import numpy as np

# haematoxylin's and eosin's optical densities per unit of stain (R, G, B)
HAEMATOXYLIN = np.array([0.65, 0.70, 0.29])
EOSIN = np.array([0.07, 0.99, 0.11])


def _nuclei(h=96, w=128, seed=0, count=14, radius=6):
    """A boolean map of ``count`` random discs."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:h, :w]
    out = np.zeros((h, w), bool)
    for y, x in zip(rng.integers(radius, h - radius, count), rng.integers(radius, w - radius,
                                                                          count)):
        out |= (yy - y) ** 2 + (xx - x) ** 2 <= radius ** 2
    return out


def stained_section(seed=0, eosin=0.0, h=96, w=128):
    """A brightfield section by the Beer-Lambert law: haematoxylin nuclei (and ``eosin``
    everywhere) on a bright, slightly yellow illumination, with noise; uint8 RGB."""
    rng = np.random.default_rng(seed)
    nuclei = _nuclei(h, w, seed)
    amount = np.where(nuclei, 1.2, 0.05) + rng.normal(0, 0.05, (h, w))
    density = amount[..., None] * HAEMATOXYLIN + eosin * EOSIN
    light = np.array([0.96, 0.95, 0.88])
    rgb = light * np.exp(-density) + rng.normal(0, 0.01, (h, w, 3))
    return np.rint(np.clip(rgb, 0, 1) * 255).astype(np.uint8), nuclei


def fluorescence(channels=(2,), seed=0, h=96, w=128):
    """Bright nuclei of one dye per listed channel on a black background, uint8 RGB."""
    rng = np.random.default_rng(seed)
    rgb = np.zeros((h, w, 3))
    for k, channel in enumerate(channels):
        rgb[..., channel] = 0.8 * _nuclei(h, w, seed + k) + rng.uniform(0, 0.03, (h, w))
    return np.rint(np.clip(rgb, 0, 1) * 255).astype(np.uint8)
