"""A first object stroke of few pixels on a noisy image: does the object survive? The noisy
two-colour disc of the tests (``tests/support/synthetic.py``'s ``colour_image``: noise of 30
grey levels), one square object stroke of a given side at the disc's centre and a background
band along the top; ``graphcut.segment`` with auto's colour model, with and without
``GMM(component_rows=N)``; prints the accuracy (share of pixels right) for three noise seeds.

    python bench/small_stroke_collapse.py                 # component_rows 20 and 0 (auto's)
    python bench/small_stroke_collapse.py --rows 10,20,40
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "support"))

import graphcut  # noqa: E402
from graphcut.models import GMM  # noqa: E402
from graphcut.models._auto import COLOUR_MODEL  # noqa: E402
from synthetic import colour_image  # noqa: E402

SHAPES = ((90, 130), (360, 520), (720, 1040))
SIDES = (5, 11, 21)


def accuracy(shape, side, seed, model) -> float:
    """Share of pixels right after one ``side`` x ``side`` object stroke at the disc's centre
    and a background band of four rows."""
    image, truth = colour_image(np.random.default_rng(12 + seed), shape)
    seeds = np.zeros(truth.shape, np.uint8)
    r, c = shape[0] // 2, shape[1] // 2
    seeds[r - side // 2:r + side // 2 + 1, c - side // 2:c + side // 2 + 1] = 1
    seeds[:4, :] = 2
    mask = graphcut.segment(image, seeds, model=model, device="cpu")
    return float((mask == truth).mean())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="20,0",
                        help="comma-separated component_rows values (0: auto's model)")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    print("| component_rows | image | stroke side | accuracy per noise seed |")
    print("|---|---|---|---|")
    for rows in (int(v) for v in args.rows.split(",")):
        model = GMM(**{**COLOUR_MODEL, "component_rows": rows})
        for shape in SHAPES:
            for side in SIDES:
                values = [accuracy(shape, side, seed, model) for seed in range(args.seeds)]
                print(f"| {rows} | {shape[0]} x {shape[1]} | {side} px | "
                      + " / ".join(f"{v:.3f}" for v in values) + " |", flush=True)


if __name__ == "__main__":
    main()
