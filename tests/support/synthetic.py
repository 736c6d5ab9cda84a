"""Synthetic test images shared by the test groups: a noisy disc with its seeds and truth,
two coloured objects, and the IoU."""

from __future__ import annotations

from pathlib import Path

import numpy as np

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

H, W = 60, 80


def disc_truth(h=H, w=W):
    yy, xx = np.mgrid[:h, :w]
    return (yy - h / 2) ** 2 + (xx - w / 2) ** 2 < (0.3 * min(h, w)) ** 2


def disc_seeds(h=H, w=W):
    """A small object square at the centre and a background frame at the border."""
    seeds = np.zeros((h, w), dtype=np.uint8)
    seeds[h // 2 - 3:h // 2 + 3, w // 2 - 3:w // 2 + 3] = 1
    seeds[:3, :] = seeds[-3:, :] = seeds[:, :3] = seeds[:, -3:] = 2
    return seeds


def disc_image(kind="grey", dtype=np.uint8, *, noise=0.08, seed=0, h=H, w=W):
    """A disc on a background, plus Gaussian noise, as ``dtype`` (values in [0, 1] for float).

    kind: "grey" (bright disc on dark), "colour" (the disc differs only in hue: same grey
    level as the background), "rgba" (colour plus an alpha channel of noise).
    """
    rng = np.random.default_rng(seed)
    truth = disc_truth(h, w)
    if kind == "grey":
        values = np.where(truth, 0.7, 0.3) + rng.normal(0, noise, (h, w))
    else:
        object_rgb, background_rgb = np.array([0.7, 0.3, 0.5]), np.array([0.3, 0.7, 0.5])
        values = np.where(truth[..., None], object_rgb, background_rgb)
        values = values + rng.normal(0, noise, values.shape)
        if kind == "rgba":
            values = np.concatenate([values, rng.uniform(0, 1, (h, w, 1))], axis=-1)
    values = np.clip(values, 0.0, 1.0)
    if dtype == bool:
        return values > 0.5
    if np.dtype(dtype).kind == "f":
        return values.astype(dtype)
    return np.rint(values * np.iinfo(dtype).max).astype(dtype)


def iou(a, b) -> float:
    return float((a & b).sum() / (a | b).sum())


def colour_image(rng, shape=(60, 80)):
    """A noisy two-colour image (uint8, noise of 30 grey levels) with a disc of radius a third
    of the smaller side, and the disc."""
    h, w = shape
    yy, xx = np.mgrid[:h, :w]
    disc = (yy - h / 2) ** 2 + (xx - w / 2) ** 2 < (min(h, w) / 3) ** 2
    image = np.where(disc[..., None], [190, 110, 70], [60, 100, 150]).astype(float)
    image += rng.normal(0, 30, image.shape)
    return np.clip(image, 0, 255).astype(np.uint8), disc


def two_objects(h=60, w=90, seed=0, noise=0.05):
    """A red disc (truth label 1) and a blue square (label 3) on a green background."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:h, :w]
    truth = np.zeros((h, w), np.uint8)
    truth[(yy - 30) ** 2 + (xx - 22) ** 2 < 14 ** 2] = 1
    truth[15:45, 55:80] = 3
    colours = {0: [0.3, 0.7, 0.3], 1: [0.8, 0.2, 0.2], 3: [0.2, 0.3, 0.8]}
    image = np.zeros((h, w, 3))
    for label, colour in colours.items():
        image[truth == label] = colour
    image += rng.normal(0, noise, image.shape)
    seeds = np.zeros((h, w), np.uint8)
    seeds[28:32, 20:24] = 1
    seeds[28:32, 65:69] = 3
    seeds[:2] = 2
    return (np.clip(image, 0, 1) * 255).astype(np.uint8), truth, seeds


def sample_folder(folder, copies: int) -> tuple[Path, Path]:
    """``copies`` copies of the bundled samples at half size (0.1 to 0.2 s each on one CPU)."""
    from PIL import Image

    folder = Path(folder)
    images, seeds = folder / "images", folder / "seeds"
    images.mkdir()
    seeds.mkdir()
    for sample in sorted((SAMPLES / "images").glob("*.png")):
        with Image.open(sample) as image, Image.open(SAMPLES / "seeds" / sample.name) as labels:
            size = (image.width // 2, image.height // 2)
            small = image.resize(size, Image.Resampling.BILINEAR)
            small_labels = labels.resize(size, Image.Resampling.NEAREST)
            for i in range(copies):
                small.save(images / f"{i:02d}_{sample.name}")
                small_labels.save(seeds / f"{i:02d}_{sample.name}")
    return images, seeds


def ellipse_with_arm(seed=1, noise=25):
    """A noisy RGB ellipse (90 x 120) with a thin arm, in colours close to the background's,
    and its true mask: the appearance models and the lambdas give different masks here,
    unlike on an easy image. Seeds: :func:`ellipse_with_arm_seeds`."""
    rng = np.random.default_rng(seed)
    rows, cols = np.indices((90, 120))
    truth = ((rows - 45) / 26) ** 2 + ((cols - 60) / 34) ** 2 <= 1
    truth |= (abs(rows - 45) <= 1) & (cols > 60) & (cols < 112)
    image = np.where(truth[..., None], [150, 110, 90], [110, 100, 120]).astype(float)
    image = np.clip(image + rng.normal(0, noise, image.shape), 0, 255).astype(np.uint8)
    return image, truth


def ellipse_with_arm_seeds():
    """Seeds for :func:`ellipse_with_arm`: an object stroke in the ellipse (rows 44..46,
    columns 40..60), a background frame one pixel wide at 3 pixels from the border."""
    seeds = np.zeros((90, 120), np.uint8)
    seeds[44:47, 40:61] = 1
    seeds[3, 3:117] = seeds[86, 3:117] = seeds[3:87, 3] = seeds[3:87, 116] = 2
    return seeds


def textured_disc(seed=0, shape=(80, 96), *, colour=False):
    """A rough disc on a smooth background of the same mean intensity and overlapping
    intensities (the texture tells them apart, not the intensity), uint8, and its true mask;
    ``colour``: three channels made from the grey one."""
    from scipy import ndimage
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    truth = (yy - 40) ** 2 + (xx - 44) ** 2 < 22 ** 2
    rough = 0.5 + 0.2 * rng.standard_normal(shape)
    smooth = 0.5 + 1.5 * ndimage.gaussian_filter(rng.standard_normal(shape), 4)
    image = np.clip(np.where(truth, rough, smooth), 0, 1)
    if colour:
        image = np.stack([image, image * 0.8 + 0.1, 1 - image], axis=-1)
    return (image * 255).astype(np.uint8), truth
