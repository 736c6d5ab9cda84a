"""One-parameter sweep of graphcut.stereo.disparity's settings on the development pairs.

Each setting is the defaults with one keyword changed (a field of ``CensusParameters`` or a
keyword of ``disparity``); every run is scored by the bad-pixel rate (|d - d_true| > 1 on the
pixels with ground truth) on the development pairs of bench/bench_stereo.py. This is how the
census and colour lambdas (15) were chosen (bench/RESULTS.md, issue 25). The held-out pairs
and the motorcycle are refused unless ``--allow-scored`` is given: settings are chosen on the
development pairs only, then scored once with bench/bench_stereo.py.

    python bench/stereo_sweep.py                                  # the default grid, CPU
    python bench/stereo_sweep.py --set aggregation_radius=1,3 --set smoothness=4,12
    python bench/stereo_sweep.py --scenes office-photo,stairs-photo --downscale 2

Prints one Markdown table: setting, bad pixels per pair, mean; the defaults first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from graphcut.stereo import CensusParameters, bad_pixel_rate, disparity

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stereo import DEVELOPMENT, SCENES, load_scene  # noqa: E402

CENSUS_FIELDS = {"census_lambda": float, "colour_lambda": float, "aggregation_radius": int}
DISPARITY_FIELDS = {"smoothness": int, "flat_factor": int, "edge_threshold": float,
                    "smoothness_truncation": int, "consistency_tolerance": int}
DEFAULT_GRID = ("aggregation_radius=1,3", "smoothness=6,10", "flat_factor=3,5",
                "edge_threshold=6,12", "smoothness_truncation=2,4",
                "census_lambda=10,20", "colour_lambda=10,20")


def parse_setting(text: str) -> list[tuple[str, object]]:
    """``NAME=V1,V2`` -> [(NAME, V1), (NAME, V2)], values converted to the field's type.

    Raises
    ------
    ValueError
        unknown name or a value that does not convert.
    """
    name, _, values = text.partition("=")
    kind = CENSUS_FIELDS.get(name) or DISPARITY_FIELDS.get(name)
    if kind is None or not values:
        raise ValueError(f"--set {text!r}: expected NAME=V1,V2,... with NAME one of "
                         f"{', '.join([*CENSUS_FIELDS, *DISPARITY_FIELDS])}")
    return [(name, kind(value)) for value in values.split(",")]


def keywords(name: str | None, value) -> dict:
    """disparity() keywords of the defaults with ``name`` set to ``value`` (none: defaults)."""
    if name is None:
        return {}
    if name in CENSUS_FIELDS:
        return {"census": CensusParameters()._replace(**{name: value})}
    return {name: value}


def score(scene, options: dict, device: str) -> float:
    left, right, truth, max_disparity, _ = scene
    result = disparity(left, right, max_disparity=max_disparity, channel_axis=-1,
                       device=device, **options)
    return bad_pixel_rate(result.disparity, truth)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenes", default=",".join(DEVELOPMENT))
    parser.add_argument("--set", action="append", default=None, metavar="NAME=V1,V2",
                        help=f"repeatable; default: {' '.join(DEFAULT_GRID)}")
    parser.add_argument("--downscale", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--allow-scored", action="store_true",
                        help="also allow the held-out pairs and the motorcycle")
    args = parser.parse_args()
    names = [n for n in args.scenes.split(",") if n]
    allowed = SCENES if args.allow_scored else DEVELOPMENT
    if not names or sorted(set(names) - set(allowed)):
        parser.error(f"--scenes takes {', '.join(allowed)} (held-out and final pairs only "
                     f"with --allow-scored), got {args.scenes!r}")
    try:
        settings = [(None, None)] + [s for text in (args.set or DEFAULT_GRID)
                                     for s in parse_setting(text)]
    except ValueError as error:
        parser.error(str(error))
    scenes = {name: load_scene(name, args.downscale) for name in names}
    print(f"| setting | {' | '.join(names)} | mean |")
    print("|---" * (len(names) + 2) + "|")
    for name, value in settings:
        rates = [score(scene, keywords(name, value), args.device) for scene in scenes.values()]
        label = "defaults" if name is None else f"{name}={value}"
        cells = " | ".join(f"{100 * r:.2f}%" for r in rates)
        print(f"| {label} | {cells} | {100 * statistics.mean(rates):.2f}% |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
