"""Composites with known masks for bench/bench_quality.py (generated, never stored).

Each item is an object shape filled with a crop of one photograph, soft-blended onto a crop of
another (or, when hard, of the same one) - all photographs from scikit-image's bundled data -
with its true mask. Items cycle through three sizes, three difficulty levels and seven
shapes, so every set mixes them evenly:

- sizes: small 150x200, medium 240x320, large 360x480 pixels;
- difficulty: "easy" (object and background from different photographs, as they are);
  "medium" (the object's colour mean and spread moved half-way to the background's, a little
  noise); "hard" (colours matched at 75 %, more noise, a softer edge);
- shapes: ellipse, star, horse (scikit-image's silhouette), blob (smoothed noise), ring (a
  hole shows the background), dumbbell (two discs joined by a thin bar), gear (a disc with
  thin teeth);
- a quarter of the items are turned grey after blending.

The object's edge is blended with a Gaussian-blurred shape (alpha), and the truth is
``alpha >= 0.5``. ``make_set("dev")``, ``make_set("test")`` and ``make_set("extra")`` use
different random seeds: options are chosen on "dev", results are reported on "test", and
"extra" (generated the same way, never used for choosing) confirms that a gain found on "dev"
is not fitted to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage
from skimage import data, draw, transform
from skimage.color import rgb2gray

SIZES = {"small": (150, 200), "medium": (240, 320), "large": (360, 480)}
LEVELS = ("easy", "medium", "hard")
SHAPES = ("ellipse", "star", "horse", "blob", "ring", "dumbbell", "gear")
SEEDS = {"dev": 11, "test": 29, "extra": 47, "dev-soft": 61}
SET_SIZES = {"dev": 12, "test": 24, "extra": 24, "dev-soft": 12}
# "dev-soft" (development only, no test twin): as "dev" with wider soft edges, closer to the
# composites of issue 24 (objects cut from other photographs, soft edges): alpha blurred
# with these sigmas (pixels) instead of 0.8 / 1.2 / 1.6.
SOFT_BLURS = {"easy": 2.5, "medium": 3.0, "hard": 3.5}


@dataclass(frozen=True)
class Item:
    name: str
    image: np.ndarray     # uint8 (H, W, 3) or (H, W)
    truth: np.ndarray     # bool (H, W)
    size: str
    level: str
    shape: str


def _photos():
    moto = data.stereo_motorcycle()[0]
    return {"astronaut": data.astronaut(), "chelsea": data.chelsea(), "coffee": data.coffee(),
            "rocket": data.rocket(), "retina": data.retina(),
            "ihc": data.immunohistochemistry(), "hubble": data.hubble_deep_field(),
            "motorcycle": moto}


def _crop(photo, shape, rng):
    """A random crop of ``photo`` with the aspect of ``shape``, resized to it, float [0, 1]."""
    h, w = shape
    ph, pw = photo.shape[:2]
    scale = rng.uniform(0.6, 1.0) * min(ph / h, pw / w)
    ch, cw = int(h * scale), int(w * scale)
    y = int(rng.integers(0, ph - ch + 1))
    x = int(rng.integers(0, pw - cw + 1))
    crop = photo[y:y + ch, x:x + cw].astype(np.float64) / 255.0
    return transform.resize(crop, (h, w, 3), anti_aliasing=True, order=1)


def _shape(kind, shape, rng):
    h, w = shape
    area = rng.uniform(0.08, 0.30) * h * w
    cy, cx = h * rng.uniform(0.35, 0.65), w * rng.uniform(0.35, 0.65)
    mask = np.zeros(shape, dtype=bool)
    if kind == "ellipse":
        ratio = rng.uniform(0.5, 1.0)
        a = np.sqrt(area / (np.pi * ratio))
        rr, cc = draw.ellipse(cy, cx, a * ratio, a, shape=shape, rotation=rng.uniform(0, np.pi))
        mask[rr, cc] = True
    elif kind == "star":
        points = int(rng.integers(5, 9))
        inner = rng.uniform(0.4, 0.65)
        outer = np.sqrt(area / (points * inner * np.sin(np.pi / points)))
        angles = np.arange(2 * points) * np.pi / points + rng.uniform(0, np.pi)
        radii = np.where(np.arange(2 * points) % 2 == 0, outer, outer * inner)
        rr, cc = draw.polygon(cy + radii * np.sin(angles), cx + radii * np.cos(angles), shape)
        mask[rr, cc] = True
    elif kind == "gear":
        teeth = int(rng.integers(8, 15))
        radius = np.sqrt(area / np.pi) * 0.9
        angles = np.linspace(0, 2 * np.pi, 720, endpoint=False)
        phase = (angles * teeth / (2 * np.pi) + rng.uniform(0, 1)) % 1.0
        radii = radius * np.where(phase < 0.3, 1.35, 1.0)
        rr, cc = draw.polygon(cy + radii * np.sin(angles), cx + radii * np.cos(angles), shape)
        mask[rr, cc] = True
    elif kind == "horse":
        silhouette = ~data.horse()
        rows, cols = np.nonzero(silhouette)
        silhouette = silhouette[rows.min():rows.max() + 1, cols.min():cols.max() + 1]
        if rng.random() < 0.5:
            silhouette = silhouette[:, ::-1]
        factor = np.sqrt(area / silhouette.sum())
        sh = min(int(silhouette.shape[0] * factor), h - 4)
        sw = min(int(silhouette.shape[1] * factor), w - 4)
        small = transform.resize(silhouette.astype(float), (sh, sw), order=1) > 0.5
        y0 = int(np.clip(cy - sh / 2, 2, h - sh - 2))
        x0 = int(np.clip(cx - sw / 2, 2, w - sw - 2))
        mask[y0:y0 + sh, x0:x0 + sw] = small
    elif kind == "blob":
        noise = ndimage.gaussian_filter(rng.normal(size=shape), min(h, w) / 12)
        yy, xx = np.mgrid[:h, :w]
        bump = -((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * (0.25 * min(h, w)) ** 2)
        field = noise / noise.std() + 2.5 * bump
        threshold = np.quantile(field, 1 - area / (h * w))
        parts, _ = ndimage.label(field > threshold)
        sizes = np.bincount(parts.ravel())
        sizes[0] = 0
        mask = parts == np.argmax(sizes)
    elif kind == "ring":
        outer = np.sqrt(area / (np.pi * 0.75))
        rr, cc = draw.disk((cy, cx), outer, shape=shape)
        mask[rr, cc] = True
        rr, cc = draw.disk((cy + rng.uniform(-3, 3), cx + rng.uniform(-3, 3)), outer * 0.5,
                           shape=shape)
        mask[rr, cc] = False
    elif kind == "dumbbell":
        radius = np.sqrt(area / (2 * np.pi)) * 0.9
        angle = rng.uniform(0, np.pi)
        half = min(radius * 1.8, 0.45 * min(h, w) - radius)
        dy, dx = half * np.sin(angle), half * np.cos(angle)
        for sign in (-1, 1):
            rr, cc = draw.disk((cy + sign * dy, cx + sign * dx), radius, shape=shape)
            mask[rr, cc] = True
        rr, cc = draw.line(int(cy - dy), int(cx - dx), int(cy + dy), int(cx + dx))
        bar = np.zeros(shape, dtype=bool)
        bar[np.clip(rr, 0, h - 1), np.clip(cc, 0, w - 1)] = True
        mask |= ndimage.binary_dilation(bar, iterations=max(2, int(radius * 0.12)))
    else:
        raise ValueError(kind)
    return mask


def _match(colours, target, amount, region=None):
    """Move the per-channel mean and spread of ``colours`` toward ``target``'s by
    ``amount`` (0..1), statistics taken over ``region`` of each."""
    sel = np.ones(colours.shape[:2], bool) if region is None else region
    mean, std = colours[sel].mean(0), colours[sel].std(0) + 1e-6
    tmean, tstd = target[~sel].mean(0), target[~sel].std(0) + 1e-6
    new_mean = (1 - amount) * mean + amount * tmean
    new_std = (1 - amount) * std + amount * tstd
    return (colours - mean) / std * new_std + new_mean


def make_item(index: int, rng, photos, *, soft: bool = False) -> Item:
    size = list(SIZES)[index % 3]
    level = LEVELS[(index // 3) % 3]
    kind = SHAPES[index % len(SHAPES)]
    shape = SIZES[size]
    names = sorted(photos)
    bg_name = names[int(rng.integers(len(names)))]
    fg_name = names[int(rng.integers(len(names) - 1))]
    fg_name = fg_name if fg_name != bg_name else names[-1]
    background = _crop(photos[bg_name], shape, rng)
    foreground = _crop(photos[fg_name], shape, rng)
    mask = _shape(kind, shape, rng)
    blur = (SOFT_BLURS if soft else {"easy": 0.8, "medium": 1.2, "hard": 1.6})[level]
    alpha = ndimage.gaussian_filter(mask.astype(np.float64), blur)
    if level != "easy":
        foreground = _match(foreground, background, 0.5 if level == "medium" else 0.75,
                            region=alpha >= 0.5)
    image = alpha[..., None] * foreground + (1 - alpha[..., None]) * background
    noise = {"easy": 0.0, "medium": 0.01, "hard": 0.02}[level]
    image = image + rng.normal(0, noise, image.shape) if noise else image
    grey = index % 4 == 3
    if grey:
        image = rgb2gray(np.clip(image, 0, 1))
    image = np.clip(np.rint(np.clip(image, 0, 1) * 255), 0, 255).astype(np.uint8)
    name = f"{index:02d}-{size}-{level}-{kind}-{fg_name}-on-{bg_name}{'-grey' if grey else ''}"
    return Item(name, image, alpha >= 0.5, size, level, kind)


def make_set(which: str = "test", count: int | None = None) -> list[Item]:
    """The evaluation set ``"dev"``, ``"test"``, ``"extra"`` or ``"dev-soft"``
    (deterministic)."""
    rng = np.random.default_rng(SEEDS[which])
    photos = _photos()
    count = SET_SIZES[which] if count is None else count
    return [make_item(i, rng, photos, soft=which == "dev-soft") for i in range(count)]


def scaled_item(megapixels: float, seed: int = 5) -> Item:
    """One colour composite of about ``megapixels`` (for speed runs): a medium item drawn at
    a 4:3 size, blended as above."""
    h = int(round(np.sqrt(megapixels * 1e6 * 3 / 4)))
    w = int(round(h * 4 / 3))
    SIZES["custom"] = (h, w)
    try:
        rng = np.random.default_rng(seed)
        photos = _photos()
        names = sorted(photos)
        background = _crop(photos["coffee"], (h, w), rng)
        foreground = _crop(photos["astronaut"], (h, w), rng)
        mask = _shape("horse", (h, w), rng)
        alpha = ndimage.gaussian_filter(mask.astype(np.float64), 1.2 * h / 300)
        image = alpha[..., None] * foreground + (1 - alpha[..., None]) * background
        image = np.clip(np.rint(image * 255), 0, 255).astype(np.uint8)
        del names
        return Item(f"speed-{w}x{h}", image, alpha >= 0.5, "custom", "medium", "horse")
    finally:
        SIZES.pop("custom")
