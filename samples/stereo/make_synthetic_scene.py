"""Write the synthetic stereo scene of graphcut.stereo.synthetic as files.

    python samples/stereo/make_synthetic_scene.py [OUT_DIR] [--width 400] [--seed 0]

OUT_DIR (default: synthetic_scene) receives
    left.png, right.png      RGB, uint8
    disparity_gt.png         the exact disparities of the left view, 16-bit PNG holding
                             disparity x 256 (KITTI convention)
    visible.png              255 where the left pixel is seen in the right view, 0 where it is
                             occluded or its match falls outside the right image
and prints the graphcut stereo command that scores a disparity map against them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image

from graphcut.stereo.io import atomic_path, write_disparity
from graphcut.stereo.synthetic import synthetic_scene


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", nargs="?", type=Path, default=Path("synthetic_scene"))
    parser.add_argument("--width", type=int, default=400, help="(height = 3/4 of it)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    scene = synthetic_scene(shape=(args.width * 3 // 4, args.width), seed=args.seed)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, image in (("left.png", scene.left), ("right.png", scene.right),
                        ("visible.png", np.where(scene.visible, 255, 0).astype(np.uint8))):
        with atomic_path(args.out_dir / name) as temporary:
            Image.fromarray(image).save(temporary, format="PNG")
    write_disparity(args.out_dir / "disparity_gt.png", scene.truth)
    h, w = scene.truth.shape
    print(f"wrote {args.out_dir}: {w}x{h}, disparities {scene.truth.min():.1f}.."
          f"{scene.truth.max():.1f}, {scene.visible.mean():.1%} of pixels visible in both views")
    print(f"graphcut stereo {args.out_dir}/left.png {args.out_dir}/right.png -d "
          f"{scene.max_disparity} -o disparity.png --preview preview.png --ground-truth "
          f"{args.out_dir}/disparity_gt.png")


if __name__ == "__main__":
    main()
