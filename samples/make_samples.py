"""Regenerate the sample images and their seed files (run from anywhere; deterministic).

    python samples/make_samples.py

Images come from scikit-image's bundled data (no network needed) and are saved as PNG in
samples/images/. Seeds are hand-placed strokes (lines and disks, coordinates below, chosen by
looking at each image) written in both on-disk forms:

- samples/seeds/<stem>.png: label form (0 none, 1 foreground, 2 background);
- samples/seeds_strokes/<stem>.png: stroke form (RGBA, red = foreground, blue = background,
  transparent elsewhere).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image
from skimage import data, draw
from scipy.ndimage import binary_dilation
from skimage.morphology import disk

HERE = Path(__file__).resolve().parent
FG, BG = 1, 2

# Strokes per image: (label, kind, coordinates, radius). Coordinates are (row, column):
# "line": (r0, c0, r1, c1) thickened to the radius; "disk": (r, c).
SEEDS = {
    # the cameraman (coat, head, gloves and the camera) against sky, buildings and grass;
    # the tripod is left to the solver
    "camera": [
        (FG, "line", (250, 60, 480, 100), 6),
        (FG, "line", (300, 40, 200, 130), 6),
        (FG, "line", (130, 150, 250, 150), 5),
        (FG, "line", (400, 20, 500, 120), 6),
        (FG, "line", (90, 200, 100, 230), 4),
        (FG, "line", (130, 215, 180, 225), 3),
        (FG, "line", (150, 215, 175, 245), 3),
        (FG, "line", (155, 240, 168, 250), 2),
        (FG, "line", (130, 228, 136, 240), 2),
        (FG, "line", (130, 185, 148, 190), 2),
        (FG, "line", (215, 195, 225, 230), 3),
        (FG, "line", (150, 275, 150, 310), 3),
        (BG, "line", (30, 10, 30, 500), 6),
        (BG, "line", (70, 300, 70, 500), 5),
        (BG, "line", (100, 10, 100, 100), 5),
        (BG, "line", (120, 330, 120, 400), 4),
        (BG, "line", (200, 340, 200, 500), 4),
        (BG, "line", (130, 420, 180, 420), 3),
        (BG, "line", (270, 400, 270, 500), 5),
        (BG, "line", (300, 340, 480, 480), 6),
        (BG, "line", (350, 190, 490, 190), 5),
        (BG, "line", (228, 330, 228, 500), 3),
        (BG, "line", (200, 4, 236, 4), 3),
        (BG, "disk", (195, 256), 3),
    ],
    # the astronaut (hair, face, suit, neck ring) against the flag, wall, shuttle and helmet
    "astronaut": [
        (FG, "line", (40, 200, 40, 260), 5),
        (FG, "line", (110, 200, 130, 250), 4),
        (FG, "line", (180, 180, 180, 260), 4),
        (FG, "line", (300, 80, 450, 100), 8),
        (FG, "line", (300, 280, 330, 320), 6),
        (FG, "line", (420, 180, 480, 200), 6),
        (FG, "line", (60, 280, 110, 290), 3),
        (FG, "line", (170, 125, 260, 140), 4),
        (FG, "line", (200, 295, 250, 290), 4),
        (FG, "line", (280, 170, 285, 260), 3),
        (BG, "line", (10, 410, 80, 410), 4),
        (BG, "line", (365, 400, 380, 460), 4),
        (BG, "line", (400, 480, 480, 500), 4),
        (BG, "disk", (440, 358), 6),
        (BG, "line", (10, 10, 200, 70), 5),
        (BG, "line", (10, 100, 10, 400), 5),
        (BG, "line", (100, 320, 100, 360), 4),
        (BG, "line", (100, 410, 250, 410), 5),
        (BG, "line", (300, 380, 320, 500), 5),
        (BG, "line", (400, 350, 450, 420), 6),
    ],
    # some of the coins (the others are left to the colour model) against the dark tray
    "coins": [
        (FG, "disk", (50, 45), 6),
        (FG, "disk", (50, 155), 6),
        (FG, "disk", (55, 330), 8),
        (FG, "disk", (125, 100), 6),
        (FG, "disk", (120, 265), 6),
        (FG, "disk", (190, 152), 6),
        (FG, "disk", (190, 345), 8),
        (FG, "disk", (260, 175), 6),
        (FG, "disk", (260, 300), 6),
        (BG, "line", (5, 5, 5, 380), 3),
        (BG, "line", (88, 5, 88, 380), 3),
        (BG, "line", (158, 5, 158, 380), 3),
        (BG, "line", (225, 5, 225, 290), 3),
        (BG, "line", (298, 5, 298, 380), 3),
    ],
    # a hard colour case: red cup, saucer and spoon on reddish-brown wood
    "coffee": [
        (FG, "line", (140, 220, 150, 340), 5),
        (FG, "line", (60, 200, 50, 380), 4),
        (FG, "line", (210, 200, 240, 320), 5),
        (FG, "line", (270, 120, 330, 250), 5),
        (FG, "line", (230, 430, 290, 440), 5),
        (FG, "line", (150, 100, 230, 95), 4),
        (FG, "disk", (290, 350), 6),
        (FG, "line", (260, 200, 300, 280), 5),
        (FG, "line", (80, 410, 230, 375), 2),
        (BG, "line", (20, 20, 20, 150), 5),
        (BG, "line", (10, 450, 10, 590), 5),
        (BG, "line", (5, 200, 5, 400), 3),
        (BG, "line", (200, 520, 380, 560), 5),
        (BG, "line", (390, 50, 390, 550), 5),
        (BG, "line", (250, 20, 380, 30), 5),
        (BG, "line", (100, 470, 100, 590), 5),
    ],
}

# Which seed files are also written in stroke form.
STROKE_FORM = ("camera", "astronaut", "coins", "coffee")


def seed_labels(shape, strokes) -> np.ndarray:
    """Rasterise strokes into a uint8 label image (later strokes win where they overlap)."""
    labels = np.zeros(shape, dtype=np.uint8)
    for label, kind, coords, radius in strokes:
        stroke = np.zeros(shape, dtype=bool)
        if kind == "line":
            rows, cols = draw.line(*coords)
            stroke[rows, cols] = True
            stroke = binary_dilation(stroke, structure=disk(radius))
        else:
            rows, cols = draw.disk(coords, radius, shape=shape)
            stroke[rows, cols] = True
        labels[stroke] = label
    return labels


def stroke_image(labels) -> np.ndarray:
    """RGBA stroke form of a label image: red foreground, blue background, transparent rest."""
    rgba = np.zeros(labels.shape + (4,), dtype=np.uint8)
    rgba[labels == FG] = (255, 0, 0, 255)
    rgba[labels == BG] = (0, 0, 255, 255)
    return rgba


def main() -> None:
    for folder in ("images", "seeds", "seeds_strokes"):
        (HERE / folder).mkdir(exist_ok=True)
    for stem, strokes in SEEDS.items():
        image = getattr(data, stem)()
        Image.fromarray(image).save(HERE / "images" / f"{stem}.png", optimize=True)
        labels = seed_labels(image.shape[:2], strokes)
        Image.fromarray(labels).save(HERE / "seeds" / f"{stem}.png", optimize=True)
        if stem in STROKE_FORM:
            Image.fromarray(stroke_image(labels)).save(HERE / "seeds_strokes" / f"{stem}.png",
                                                       optimize=True)
        print(f"{stem}: {image.shape} {image.dtype}, {int((labels == FG).sum())} foreground and "
              f"{int((labels == BG).sum())} background seed pixels")


if __name__ == "__main__":
    main()
