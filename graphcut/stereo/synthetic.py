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

That is the "office" kind, the scene the stereo defaults were tuned on. Other kinds
(``SCENE_KINDS``) render other geometry with the same machinery, so that parameters can be
chosen on some scenes and scored on others (held-out data):

- "stairs": a far wall with a low-texture poster, and six steps rising toward the camera down
  the image, each slightly slanted (disparities 8 to 40); the step edges are horizontal
  depth discontinuities.
- "pillars": a textured far wall (disparity 6) behind five thin vertical pillars (8 to 20
  pixels wide, disparities 20 to 42) and a slanted board; many narrow occlusions.
- "ramp": a strongly slanted textured ramp (disparity 4 at the left edge to 44 at the right),
  a textureless triangle standing on it and a floating square at disparity 30.

``python samples/stereo/make_synthetic_scene.py`` writes the pair and its ground truth as
files.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

__all__ = ["SCENE_KINDS", "SyntheticScene", "synthetic_scene"]

SCENE_KINDS = ("office", "stairs", "pillars", "ramp")


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


def _office(height, width, rng, paint=None):
    """(name, disparity plane (a, b, c), outline(x, y) -> bool, texture or flat colour).

    Disparities are those of the 400-pixel-wide scene scaled by width / 400, so that smaller
    renderings are reduced versions of the same scene."""
    paint = paint or _texture
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
         paint(rng, (height + 2 * pad, width + 2 * pad), 1.5, 40, (150, 120, 100))),
        ("floor", (0.0, floor_b, k * 12.0 - floor_b * floor_top),
         lambda x, y: y >= floor_top,
         paint(rng, (height + 2 * pad, width + 2 * pad), 0.8, 35, (110, 110, 115))),
        ("box", (0.0, 0.0, k * 22.0),
         lambda x, y: (x >= width * 0.08) & (x < width * 0.36) & (y >= height * 0.25)
         & (y < height * 0.72),
         None),
        ("panel", plane_from(width * 0.45, k * 18.0, width * 0.8, k * 32.0),
         lambda x, y: (x >= width * 0.45) & (x < width * 0.8) & (y >= height * 0.12)
         & (y < height * 0.62),
         paint(rng, (height + 2 * pad, width + 2 * pad), 2.5, 45, (90, 140, 90))),
        ("disc", (0.0, 0.0, k * 38.0),
         lambda x, y: (x - width * 0.42) ** 2 + (y - height * 0.6) ** 2 < (height * 0.15) ** 2,
         paint(rng, (height + 2 * pad, width + 2 * pad), 1.0, 50, (170, 80, 70))),
    ]
    return layers, pad


PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry", "retina")


def _photo_painter(rng):
    """A painter like ``_texture`` that covers each layer with one of scikit-image's photographs
    (``PHOTOS``, in an order drawn from ``rng``), resized to cover the layer and cropped at a
    random place: natural textures, with colour edges inside surfaces and large low-texture
    areas, unlike the noise textures."""
    from skimage import data
    from skimage.transform import resize

    order = list(rng.permutation(len(PHOTOS)))

    def paint(rng, shape, smoothness, contrast, base):
        name = PHOTOS[order.pop(0) if order else int(rng.integers(len(PHOTOS)))]
        photo = getattr(data, name)()[..., :3].astype(np.float64)
        scale = max(shape[0] / photo.shape[0], shape[1] / photo.shape[1]) * 1.2
        size = (int(np.ceil(photo.shape[0] * scale)), int(np.ceil(photo.shape[1] * scale)))
        big = resize(photo, size + (3,), order=1, preserve_range=True, anti_aliasing=True)
        top = int(rng.integers(size[0] - shape[0] + 1))
        left = int(rng.integers(size[1] - shape[1] + 1))
        return big[top:top + shape[0], left:left + shape[1]]

    return paint


def _plane_from(x0, d0, x1, d1):
    """Disparity plane (a, 0, c) through (x0, d0) and (x1, d1) (constant down the image)."""
    a = (d1 - d0) / (x1 - x0)
    return a, 0.0, d0 - a * x0


def _stairs(height, width, rng, paint=None):
    """A far wall with a low-texture poster, and six steps rising toward the camera."""
    paint = paint or _texture
    pad = 64
    k = width / 400
    big = (height + 2 * pad, width + 2 * pad)
    layers = [
        ("wall", (0.0, 0.0, k * 8.0), lambda x, y: np.ones_like(x, dtype=bool),
         paint(rng, big, 2.0, 35, (140, 130, 150))),
        ("poster", (0.0, 0.0, k * 9.0),
         lambda x, y: (x >= width * 0.55) & (x < width * 0.85) & (y >= height * 0.08)
         & (y < height * 0.3),
         paint(rng, big, 6.0, 6, (200, 190, 120))),
    ]
    top = height * 0.35
    step = (height - top) / 6
    for i in range(6):
        y0, y1 = top + i * step, top + (i + 1) * step
        near = k * (12.0 + 5.0 * i)
        a, _, c = _plane_from(0, near, width - 1, near + k * 3.0)
        layers.append((f"step{i}", (a, 0.0, c),
                       lambda x, y, y0=y0, y1=y1: (y >= y0) & (y < y1),
                       paint(rng, big, 1.0 + 0.4 * i, 30, (100 + 15 * i, 110, 95))))
    return layers, pad


def _pillars(height, width, rng, paint=None):
    """A textured far wall behind thin pillars and a slanted board (many narrow occlusions)."""
    paint = paint or _texture
    pad = 64
    k = width / 400
    big = (height + 2 * pad, width + 2 * pad)
    layers = [
        ("wall", (0.0, 0.0, k * 6.0), lambda x, y: np.ones_like(x, dtype=bool),
         paint(rng, big, 1.2, 40, (120, 120, 140))),
        ("board", _plane_from(width * 0.1, k * 14.0, width * 0.9, k * 24.0),
         lambda x, y: (x >= width * 0.1) & (x < width * 0.9) & (y >= height * 0.78)
         & (y < height * 0.9),
         paint(rng, big, 1.5, 35, (150, 110, 80))),
    ]
    for i, (centre, half_width, d) in enumerate(((0.12, 4, 20.0), (0.3, 7, 34.0),
                                                  (0.5, 5, 26.0), (0.68, 10, 42.0),
                                                  (0.86, 6, 30.0))):
        x0, x1 = width * centre - k * half_width, width * centre + k * half_width
        layers.append((f"pillar{i}", (0.0, 0.0, k * d),
                       lambda x, y, x0=x0, x1=x1: (x >= x0) & (x < x1) & (y >= height * 0.05),
                       paint(rng, big, 0.8, 45, (90 + 25 * i, 150 - 15 * i, 100))))
    return layers, pad


def _ramp(height, width, rng, paint=None):
    """A strongly slanted ramp, a textureless triangle on it and a floating square."""
    paint = paint or _texture
    pad = 64
    k = width / 400
    big = (height + 2 * pad, width + 2 * pad)
    triangle_base = height * 0.85

    def triangle(x, y):
        centre, half = width * 0.3, width * 0.12
        rise = (triangle_base - y) / (height * 0.5)
        return (y < triangle_base) & (rise >= 0) & (np.abs(x - centre) <= half * (1 - rise))

    return [
        ("ramp", _plane_from(0, k * 4.0, width - 1, k * 44.0),
         lambda x, y: np.ones_like(x, dtype=bool),
         paint(rng, big, 1.0, 40, (130, 120, 110))),
        ("triangle", (0.0, 0.0, k * 20.0), triangle, None),
        ("square", (0.0, 0.0, k * 30.0),
         lambda x, y: (x >= width * 0.55) & (x < width * 0.72) & (y >= height * 0.15)
         & (y < height * 0.45),
         paint(rng, big, 3.0, 30, (80, 100, 160))),
    ], pad


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
                    seed: int = 0, kind: str = "office",
                    textures: str = "noise") -> SyntheticScene:
    """Render a scene of ``kind`` at ``shape`` (H, W) with Gaussian noise.

    Parameters
    ----------
    shape : (int, int)
        (height, width) in pixels, at least 60 x 120. Disparities scale with width / 400.
    noise : float
        Standard deviation of the Gaussian noise added to each view, in grey levels (0..255).
    seed : int
        Seed of the textures and the noise; the rendering is deterministic for a given seed.
    kind : str
        One of ``SCENE_KINDS``: "office" (the default scene), "stairs", "pillars", "ramp"
        (see the module's description).
    textures : str
        "noise" (smooth random colour textures, each layer its own colour) or "photo" (each
        textured layer covered by a crop of one of scikit-image's bundled photographs,
        ``PHOTOS``: natural textures whose colour edges need not be depth edges).

    Returns
    -------
    SyntheticScene
        The two uint8 views, the exact float disparities of the left view, the visibility mask
        and an integer bound on the disparities.

    Raises
    ------
    ValueError
        When ``shape`` is below 60 x 120, or ``kind`` or ``textures`` is unknown.

    Examples
    --------
    >>> scene = synthetic_scene(shape=(60, 120), kind="pillars")
    >>> scene.left.shape, scene.left.dtype
    ((60, 120, 3), dtype('uint8'))
    """
    height, width = shape
    if height < 60 or width < 120:
        raise ValueError(f"the synthetic scene needs at least 60 x 120 pixels, got {shape}")
    if kind not in SCENE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(SCENE_KINDS)}, got {kind!r}")
    if textures not in ("noise", "photo"):
        raise ValueError(f"textures must be 'noise' or 'photo', got {textures!r}")
    rng = np.random.default_rng(seed)
    paint = (_photo_painter(np.random.default_rng([seed, 1, SCENE_KINDS.index(kind)]))
             if textures == "photo" else None)
    layers, pad = _LAYERS[kind](height, width, rng, paint)
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


_LAYERS = {"office": _office, "stairs": _stairs, "pillars": _pillars, "ramp": _ramp}
