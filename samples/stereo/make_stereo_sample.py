"""Make the reduced Middlebury motorcycle pair in samples/stereo/ from scikit-image's copy.

scikit-image ships the pair (500 x 741, already 4x smaller than Middlebury 2014's full size)
with its ground-truth disparity. This script crops it to 500 x 740 and reduces it another 4x
by block means, to 125 x 185:

    left.png, right.png     RGB, uint8
    disparity_gt.png        ground truth, 16-bit PNG holding disparity x 256 (KITTI
                            convention, 0 = no ground truth); disparities are divided by 4.
                            A block's value is the mean over its pixels that have ground
                            truth, kept only when at least 3/4 of its 16 pixels have one.

Run from the repository root:  python samples/stereo/make_stereo_sample.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from graphcut.stereo.io import atomic_path, motorcycle_pair, write_disparity

FACTOR = 4


def main() -> None:
    folder = Path(__file__).resolve().parent
    left, right, truth = motorcycle_pair(downscale=FACTOR)
    for name, image in (("left.png", left), ("right.png", right)):
        with atomic_path(folder / name) as temporary:
            Image.fromarray(image).save(temporary, format="PNG", optimize=True)
    write_disparity(folder / "disparity_gt.png", truth)
    valid = np.isfinite(truth)
    print(f"wrote {folder}: {left.shape[1]}x{left.shape[0]}, ground truth on "
          f"{valid.mean():.1%} of pixels, disparities {np.nanmin(truth):.2f}.."
          f"{np.nanmax(truth):.2f}")


if __name__ == "__main__":
    main()
