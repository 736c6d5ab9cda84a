"""A synthetic rectified pair with exact disparities: slanted planes, textureless areas and
occlusions.

The scene is a stack of planar layers, each with a disparity plane ``d(x, y) = a x + b y + c``
in left-image coordinates, an outline (left-image coordinates) and a texture painted on the
surface. The left view shows at each pixel the covering layer with the largest disparity (the
nearest). Right pixel ``(y, x_r)`` sees layer ``k`` at left ``x = (x_r + b y + c) / (1 - a)``
(where ``x - d(x, y) = x_r``), so the right view is rendered exactly by sampling every layer's
texture there and keeping the nearest covering layer. Textures are sampled with bilinear
interpolation, then both views get independent Gaussian noise.

Layers, back to front (disparities of the default 400 x 300 rendering; other sizes scale them
by width / 400):
- wall: a textured plane receding to the right (disparity 10 at the left edge to 6 at the right);
- floor: the lower third, slanted in depth (disparity 12 at its far edge to 40 at the bottom);
- a textureless box face (one flat grey with soft shading) at disparity 22;
- a textured panel tilted about a vertical axis (disparity 18 on its left to 32 on its right);
- a textured disc near the camera at disparity 38, occluding the panel and the box.

``python samples/stereo/make_synthetic_scene.py`` writes the pair and its ground truth as
files.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

__all__ = ["SyntheticScene", "synthetic_scene"]


@dataclass(frozen=True)
class SyntheticScene:
    """A rendered pair: ``left``, ``right`` uint8 (H, W, 3); ``truth`` float64 (H, W)
    disparities of the left view; ``visible`` bool (H, W), False where the left pixel is hidden
    in the right view or its match falls outside it; ``max_disparity`` an int bound on
    ``truth``."""

    left: np.ndarray
    right: np.ndarray
    truth: np.ndarray
    visible: np.ndarray
    max_disparity: int


def _texture(rng, shape, smoothness, contrast, base):
    """A random RGB texture (H, W, 3) float, smooth at the scale ``smoothness`` pixels."""
    noise = rng.normal(size=(*shape, 3))
    texture = np.stack([ndimage.gaussian_filter(noise[..., c], smoothness) for c in range(3)],
                       axis=-1)
    texture /= texture.std() + 1e-12
    fine = rng.normal(size=(*shape, 3)) * 0.35
    return np.asarray(base, dtype=np.float64) + contrast * (texture + fine)


def _layers(height, width, rng):
    """(name, disparity plane (a, b, c), outline(x, y) -> bool, texture or flat colour).

    Disparities are those of the 400-pixel-wide scene scaled by width / 400, so that smaller
    renderings are reduced versions of the same scene."""
    pad = 64  # textures extend beyond the image so that right-view samples stay inside
    k = width / 400

    def plane_from(x0, d0, x1, d1, y0=0.0, dy=0.0):
        a = (d1 - d0) / (x1 - x0)
        return a, dy, d0 - a * x0 - dy * y0

    floor_top = height * 2 / 3
    floor_b = k * (40.0 - 12.0) / (height - 1 - floor_top)
    layers = [
        ("wall", plane_from(0, k * 10.0, width - 1, k * 6.0),
         lambda x, y: np.ones_like(x, dtype=bool),
         _texture(rng, (height + 2 * pad, width + 2 * pad), 1.5, 40, (150, 120, 100))),
        ("floor", (0.0, floor_b, k * 12.0 - floor_b * floor_top),
         lambda x, y: y >= floor_top,
         _texture(rng, (height + 2 * pad, width + 2 * pad), 0.8, 35, (110, 110, 115))),
        ("box", (0.0, 0.0, k * 22.0),
         lambda x, y: (x >= width * 0.08) & (x < width * 0.36) & (y >= height * 0.25)
         & (y < height * 0.72),
         None),
        ("panel", plane_from(width * 0.45, k * 18.0, width * 0.8, k * 32.0),
         lambda x, y: (x >= width * 0.45) & (x < width * 0.8) & (y >= height * 0.12)
         & (y < height * 0.62),
         _texture(rng, (height + 2 * pad, width + 2 * pad), 2.5, 45, (90, 140, 90))),
        ("disc", (0.0, 0.0, k * 38.0),
         lambda x, y: (x - width * 0.42) ** 2 + (y - height * 0.6) ** 2 < (height * 0.15) ** 2,
         _texture(rng, (height + 2 * pad, width + 2 * pad), 1.0, 50, (170, 80, 70))),
    ]
    return layers, pad


def _sample(layer, pad, height, xs, ys):
    """Colour (N, 3) of ``layer`` at continuous left coordinates (xs, ys)."""
    _, _, _, texture = layer
    if texture is None:  # the textureless box: one colour, shading varying over 100 pixels
        shade = 150.0 + 6.0 * np.sin(ys / 100.0) + 4.0 * np.cos(xs / 120.0)
        return np.stack([shade, shade * 0.95, shade * 0.85], axis=-1)
    coordinates = [ys + pad, xs + pad]
    return np.stack([ndimage.map_coordinates(texture[..., c], coordinates, order=1,
                                             mode="nearest") for c in range(3)], axis=-1)


def synthetic_scene(*, shape: tuple[int, int] = (300, 400), noise: float = 1.5,
                    seed: int = 0) -> SyntheticScene:
    """Render the scene at ``shape`` (H, W) with Gaussian noise of ``noise`` grey levels.

    Deterministic for a given ``seed`` (textures and noise).
    """
    height, width = shape
    if height < 60 or width < 120:
        raise ValueError(f"the synthetic scene needs at least 60 x 120 pixels, got {shape}")
    rng = np.random.default_rng(seed)
    layers, pad = _layers(height, width, rng)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)

    # left view: the covering layer with the largest disparity
    left = np.zeros((height, width, 3))
    truth = np.full((height, width), -np.inf)
    layer_left = np.zeros((height, width), dtype=int)
    for k, layer in enumerate(layers):
        a, b, c = layer[1]
        d = a * xs + b * ys + c
        nearer = layer[2](xs, ys) & (d > truth)
        truth[nearer] = d[nearer]
        layer_left[nearer] = k
        left[nearer] = _sample(layer, pad, height, xs[nearer], ys[nearer])

    # right view: each layer seen at left x = (x_r + b y + c) / (1 - a)
    right = np.zeros((height, width, 3))
    depth_right = np.full((height, width), -np.inf)
    layer_right = np.zeros((height, width), dtype=int)
    for k, layer in enumerate(layers):
        a, b, c = layer[1]
        x_left = (xs + b * ys + c) / (1 - a)
        d = a * x_left + b * ys + c
        nearer = layer[2](x_left, ys) & (d > depth_right)
        depth_right[nearer] = d[nearer]
        layer_right[nearer] = k
        right[nearer] = _sample(layer, pad, height, x_left[nearer], ys[nearer])

    for image in (left, right):
        image += rng.normal(scale=noise, size=image.shape)
    matched = np.rint(xs - truth).astype(int)
    inside = matched >= 0
    same_layer = layer_right[np.arange(height)[:, None], np.clip(matched, 0, width - 1)] \
        == layer_left
    visible = inside & same_layer
    to_uint8 = lambda image: np.clip(np.rint(image), 0, 255).astype(np.uint8)  # noqa: E731
    return SyntheticScene(to_uint8(left), to_uint8(right), truth, visible,
                          int(np.ceil(truth.max())) + 2)
