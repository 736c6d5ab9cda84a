"""Real stereo pairs with ground truth for bench/bench_stereo.py: Middlebury 2001 and 2003.

Four pairs of the Middlebury stereo data sets (https://vision.middlebury.edu/stereo/data/),
as redistributed in the ``Examples`` folder of the GitHub repository epiception/SGM-Census
(pinned commit below; every file is checked against its SHA-256):

- 2003 (Scharstein and Szeliski, CVPR 2003), quarter size 450 x 375: "teddy" and "cones";
  views 2 (left) and 6 (right), ground truth of view 2 stored as disparity x 4 (0 = unknown),
  disparities 0..59 (Middlebury's 60 levels).
- 2001 (Scharstein and Szeliski, IJCV 2002), 434 x 383 and 433 x 381: "venus" and "bull";
  views 2 and 6, ground truth x 8 (dense), disparities 0..19 (20 levels).

Licence: the Middlebury data sets are free for research use, with the request to cite the
papers above (their page); they are not part of this project and are not committed: they are
kept in an ignored cache folder, ``bench/.stereo-data`` (or ``$GRAPHCUT_STEREO_DATA``).

    python bench/stereo_data.py                      # download into the cache (needs network)
    python bench/stereo_data.py --from CHECKOUT      # copy from a local SGM-Census checkout
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import urllib.request
from pathlib import Path

import numpy as np

SOURCE = "epiception/SGM-Census"
COMMIT = "3bc8dda035d80e8a385a02642b09c31bb2beb582"
URL = f"https://raw.githubusercontent.com/{SOURCE}/{COMMIT}/Examples"
CACHE = Path(os.environ.get("GRAPHCUT_STEREO_DATA",
                            Path(__file__).resolve().parent / ".stereo-data"))

# name -> (ground-truth scale, max disparity, {file: SHA-256})
PAIRS = {
    "teddy": (4, 59, {
        "left.png": "092142723fd63f1f4867daaf66d85e8228a4fe2c704becd0091b7b599e618f00",
        "right.png": "b13366171eaa15cbb30c1cfb6bb0d18bec7a3977c92c49a641245dc40f75ec9b",
        "ground.png": "695e92dd08819e82e22a0001cd5a34e67859246475db5df38a0ab55e66d1f412"}),
    "cones": (4, 59, {
        "left.png": "e9875cec273b9c7a36ab8a0556b5c8451dd90cf50b5c8f30f4ab3bc8f201da92",
        "right.png": "a3795d564445b1e041a88fec490d4140efec87c9a4c64c1b56f7240c3a4fc727",
        "ground.png": "d082b192d7893ef597dfaa9af5c7fea9cb0196808be42d40b80fbf47bb96f561"}),
    "venus": (8, 19, {
        "left.png": "a3c38e75ed3e92a24fb5df5e8c9d8e4f2b1f5f212da5049fb64bea7da5404a54",
        "right.png": "7ef96222340fc1aaf4b29c4700350ccf249268916166a1250ffae961c6b4b55d",
        "ground.png": "b87bbab926ba297ec259b2f17d7ed984834cb002f38d138f033d57751bce0a0e"}),
    "bull": (8, 19, {
        "left.png": "c0f5a15efc2619f0d00ad777d8c72af620b2d43b753521dd73126a5054bac366",
        "right.png": "96cbb9b16a65e95bb88d2902bbdab2d7b2203de0e631a067162e72cecc900947",
        "ground.png": "da1f6cca6f56d94b50db5f2c7b82c384e02e2ecb30d9194b780fb0a2960d4545"}),
}


class MissingData(RuntimeError):
    """A pair's files are not in the cache (or do not match their checksums)."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _check(path: Path, expected: str) -> None:
    if not path.is_file():
        raise MissingData(f"{path} is missing; run python bench/stereo_data.py (see its "
                          f"docstring) to put the Middlebury pairs into {CACHE}")
    if _sha256(path) != expected:
        raise MissingData(f"{path} does not match its SHA-256 {expected}; delete it and run "
                          f"python bench/stereo_data.py again")


def load_pair(name: str, downscale: int = 1):
    """``(left, right, truth, max_disparity)`` of a cached pair at 1/``downscale`` size.

    Images are uint8 RGB; ``truth`` float64 disparities in pixels (NaN where unknown);
    ``max_disparity`` is ceil(Middlebury's range / ``downscale``). Raises MissingData when the
    files are not in the cache.
    """
    from graphcut.stereo.io import downscale_pair
    from skimage.io import imread

    scale, max_disparity, files = PAIRS[name]
    folder = CACHE / name
    for file, digest in files.items():
        _check(folder / file, digest)
    left, right = (imread(folder / f)[..., :3] for f in ("left.png", "right.png"))
    stored = imread(folder / "ground.png").astype(np.float64)
    truth = np.where(stored > 0, stored / scale, np.nan)
    left, right, truth = downscale_pair(left, right, truth, downscale)
    return left, right, truth, -(-max_disparity // downscale)


def fetch(source: Path | None = None) -> None:
    """Put every pair into the cache: copy from ``source`` (a checkout of SGM-Census, or its
    ``Examples`` folder) or download the pinned commit's files; check each SHA-256."""
    for name, (_, _, files) in PAIRS.items():
        folder = CACHE / name
        folder.mkdir(parents=True, exist_ok=True)
        for file, digest in files.items():
            target = folder / file
            if target.is_file() and _sha256(target) == digest:
                continue
            partial = target.with_suffix(".part")
            if source is not None:
                examples = source / "Examples" if (source / "Examples").is_dir() else source
                shutil.copyfile(examples / name / file, partial)
            else:
                with urllib.request.urlopen(f"{URL}/{name}/{file}", timeout=60) as response:
                    partial.write_bytes(response.read(10_000_000))
            if _sha256(partial) != digest:
                partial.unlink()
                raise MissingData(f"{name}/{file} from {source or URL} does not match its "
                                  f"SHA-256 {digest}")
            partial.replace(target)
        print(f"{name}: ok in {folder}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", type=Path, default=None,
                        help="a local checkout of SGM-Census to copy from instead of "
                             "downloading")
    args = parser.parse_args(argv)
    try:
        fetch(args.source)
    except (MissingData, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
