"""One-parameter sweep of graphcut.stereo.disparity's settings on the development pairs.

Each setting is the defaults with one keyword changed (a field of ``CensusParameters`` or a
keyword of ``disparity``); every run is scored by the bad-pixel rate (|d - d_true| > 1 on the
pixels with ground truth) on the development pairs of bench/bench_stereo.py (by default the
real Middlebury teddy and venus, cached by bench/stereo_data.py; the synthetic development
pairs may be named too). This is how the census and colour lambdas (15, on the synthetic
pairs), the border extrapolation and the depth-edge refinement (on teddy and venus, checked
on the synthetic development pairs) were chosen (docs/stereo.md, issue 25). The held-out pairs and the motorcycle are
refused unless ``--allow-scored`` is given: settings are chosen on the development pairs only,
then scored once with bench/bench_stereo.py. Beside the fields of ``CensusParameters`` and
the keywords of ``disparity``: ``border_FIELD`` / ``refine_FIELD`` (fields of
``BorderExtrapolation`` / ``EdgeRefinement``) and ``border``, ``refine``, ``median_fill``
``=on,off``.

    python bench/stereo_sweep.py                                  # the default grid, CPU
    python bench/stereo_sweep.py --set refine=off --set border_fit_width=20,40
    python bench/stereo_sweep.py --set aggregation_radius=1,3 --set smoothness=4,12
    python bench/stereo_sweep.py --scenes office-photo,stairs-photo --downscale 2
    python bench/stereo_sweep.py --base lambdas=20 --set lambdas=5,10,15,40 --set window=7x5

Prints one Markdown table: setting, bad pixels per pair, mean; the defaults first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from graphcut.stereo import (BorderExtrapolation, CensusParameters, EdgeRefinement, MedianFill,
                             bad_pixel_rate, disparity)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stereo import (DEVELOPMENT, SCENES, SYNTHETIC_DEVELOPMENT,  # noqa: E402
                          load_scene)

def _window(text: str) -> tuple[int, int]:
    width, _, height = text.partition("x")
    return int(width), int(height)


# "lambdas" sets census_lambda and colour_lambda together; "window" is WIDTHxHEIGHT.
CENSUS_FIELDS = {"census_lambda": float, "colour_lambda": float, "aggregation_radius": int,
                 "lambdas": float, "window": _window, "aggregation": str,
                 "cross_threshold": int, "cross_length": int,
                 "cross_minimum": int}
DISPARITY_FIELDS = {"smoothness": int, "flat_factor": int, "edge_threshold": float,
                    "smoothness_truncation": int, "consistency_tolerance": int,
                    "max_cycles": int}
# fields of BorderExtrapolation as border_NAME; "border" and "median_fill" take on / off.
BORDER_FIELDS = {f"border_{name}": type(value)
                 for name, value in BorderExtrapolation()._asdict().items()}
REFINE_FIELDS = {f"refine_{name}": type(value)
                 for name, value in EdgeRefinement()._asdict().items()}
SWITCHES = {"border": lambda text: text == "on", "median_fill": lambda text: text == "on",
            "refine": lambda text: text == "on"}
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
    kind = (CENSUS_FIELDS.get(name) or DISPARITY_FIELDS.get(name) or BORDER_FIELDS.get(name)
            or REFINE_FIELDS.get(name) or SWITCHES.get(name))
    if kind is None or not values:
        raise ValueError(f"--set {text!r}: expected NAME=V1,V2,... with NAME one of "
                         f"{', '.join([*CENSUS_FIELDS, *DISPARITY_FIELDS, *BORDER_FIELDS])}"
                         f", {', '.join(REFINE_FIELDS)} or border / median_fill / refine"
                         f"=on,off")
    return [(name, kind(value)) for value in values.split(",")]


def keywords(name: str | None, value, base: dict | None = None) -> dict:
    """disparity() keywords of ``base`` (default: the defaults) with ``name`` set to ``value``
    (``name`` None: ``base`` itself)."""
    options = dict(base or {})
    if name is None:
        return options
    if name in CENSUS_FIELDS:
        fields = ({"census_lambda": value, "colour_lambda": value} if name == "lambdas"
                  else {name: value})
        options["census"] = options.get("census", CensusParameters())._replace(**fields)
    elif name in BORDER_FIELDS:
        border = options.get("border_extrapolation") or BorderExtrapolation()
        options["border_extrapolation"] = border._replace(**{name[len("border_"):]: value})
    elif name in REFINE_FIELDS:
        refine = options.get("edge_refinement") or EdgeRefinement()
        options["edge_refinement"] = refine._replace(**{name[len("refine_"):]: value})
    elif name == "refine":
        options["edge_refinement"] = EdgeRefinement() if value else None
    elif name == "border":
        options["border_extrapolation"] = BorderExtrapolation() if value else None
    elif name == "median_fill":
        options["median_fill"] = MedianFill() if value else None
    else:
        options[name] = value
    return options


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
    parser.add_argument("--base", action="append", default=[], metavar="NAME=V",
                        help="repeatable; settings every run starts from instead of the "
                             "defaults (e.g. lambdas=20, the defaults before issue 25)")
    parser.add_argument("--downscale", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--allow-scored", action="store_true",
                        help="also allow the held-out pairs and the motorcycle")
    args = parser.parse_args()
    names = [n for n in args.scenes.split(",") if n]
    allowed = SCENES if args.allow_scored else DEVELOPMENT + SYNTHETIC_DEVELOPMENT
    if not names or sorted(set(names) - set(allowed)):
        parser.error(f"--scenes takes {', '.join(allowed)} (held-out and final pairs only "
                     f"with --allow-scored), got {args.scenes!r}")
    try:
        base: dict = {}
        for text in args.base:
            (name, value), = parse_setting(text)
            base = keywords(name, value, base)
        settings = [(None, None)] + [s for text in (args.set or DEFAULT_GRID)
                                     for s in parse_setting(text)]
    except ValueError as error:  # also a --base with several values
        parser.error(str(error))
    scenes = {name: load_scene(name, args.downscale) for name in names}
    print(f"| setting | {' | '.join(names)} | mean |")
    print("|---" * (len(names) + 2) + "|")
    for name, value in settings:
        rates = [score(scene, keywords(name, value, base), args.device) for scene in scenes.values()]
        label = ("base" if args.base else "defaults") if name is None else f"{name}={value}"
        cells = " | ".join(f"{100 * r:.2f}%" for r in rates)
        print(f"| {label} | {cells} | {100 * statistics.mean(rates):.2f}% |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
