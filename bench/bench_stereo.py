"""Benchmark: stereo disparity by alpha-expansion against a fair OpenCV StereoSGBM, per backend.

Scenes, in four roles:
- development pairs (parameters may be chosen on them; SGBM's sweep picks its setting here):
  the real Middlebury pairs "teddy" (2003, 450 x 375, disparities 0..59) and "venus" (2001,
  434 x 383, 0..19), cached by bench/stereo_data.py (run it once; licence there);
- synthetic development pairs, rendered by graphcut.stereo.synthetic with exact disparities
  (the development pairs before the real ones; nothing is chosen on them any more):
  "office" (400 x 300: slanted wall and floor, a textureless box, a tilted panel, an
  occluding disc), "stairs" (a wall and six slanted steps), and their "-photo" variants;
- held-out pairs (never used to choose anything): the real Middlebury "cones" (2003) and
  "bull" (2001), and the synthetic "pillars" (thin pillars, many narrow occlusions) and "ramp"
  (a strongly slanted ramp, a textureless triangle, a floating square) with their "-photo"
  variants;
- the final report: "motorcycle", scikit-image's Middlebury 2014 pair
  (``skimage.data.stereo_motorcycle()``, 741 x 500, ground truth 7..60 px on 92.7 % of the
  pixels), 64 disparities (32 at half size).

For every device in ``--devices`` (cpu = NumPy cost volume + PyMaxflow's Boykov-Kolmogorov,
cuda = CuPy cost volume + the GPU grid solver) ``graphcut.stereo.disparity`` runs end to end
in this process with its default parameters, after a warm-up on a small crop (CUDA modules
compiled, memory pools filled): cost volume, every expansion move, left-right check,
occlusion filling and foreground trimming. "end to end" is the wall time of that call from the
two uint8 images in host memory to the int32 disparity map in host memory; the stages are its
parts. Reported per device: the median over ``--repeats`` runs (the CPU runs once unless
``--cpu-repeats`` says otherwise), moves, energy and the bad-pixel rate (|d - d_true| > 1 on
pixels with ground truth). The backends must make the same moves and maps; the script checks that.

OpenCV StereoSGBM (``pip install opencv-python-headless``, in the ``bench`` extra) is run
fairly (bench/sgbm_baseline.py): both images padded on the left by numDisparities and the map
cropped back; scored raw (invalid pixels bad) and filled with our background filling; its
setting chosen by a stated sweep (numDisparities covering 0..D - 1 or 0..D, mode HH / SGBM /
3-way, block 3 / 5 / 7, P1 / P2 = 8 / 32 or 4 / 64 x channels x block area, uniqueness 0 / 10
with or without speckle filtering, disp12MaxDiff 1) on the development pairs, and for
reference also its best sweep setting on each pair itself (oracle). Since our maps get the
foreground trimming by default (``graphcut.stereo.trim_foreground``; ``--no-foreground-trim``
turns it off), SGBM also gets a third oracle, its filled maps trimmed the same way (after its
other post-processing), so that a step that would help SGBM as much is not counted as ours
alone. The goal ratio is ours over the best of the raw, filled and trimmed oracles. SGBM
times are medians of ``--repeats`` runs of compute() on the host CPU, padding included,
filling not included.

    python bench/bench_stereo.py                           # every scene, cpu and cuda
    python bench/bench_stereo.py --devices cuda --scenes motorcycle
    python bench/bench_stereo.py --devices cpu --downscale 2   # a quicker look
    python bench/bench_stereo.py --append-results          # also add the tables to RESULTS.md
    python bench/bench_stereo.py --devices cpu --planes    # the slanted-plane prototype
"""

from __future__ import annotations

import argparse
import datetime
import math
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from graphcut.solver import cuda_status
from graphcut.stereo import (BorderExtrapolation, CensusParameters, EdgeRefinement,
                             LocalExpansion, MedianFill, PlaneFill, bad_pixel_rate, disparity,
                             plane_disparity)
from graphcut.stereo.io import motorcycle_pair
from graphcut.stereo.synthetic import synthetic_scene

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sgbm_baseline  # noqa: E402
import stereo_data  # noqa: E402
from stereo_sgbm_trim import TRIMMED_ORACLE, sgbm_trimmed_row  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
FULL_MAX_DISPARITY = 64
GOAL_RATIO = 2 / 3       # our bad-pixel rate over the fair SGBM's
GOAL_SECONDS = 1.5       # end to end on the GPU, full motorcycle pair
DEVELOPMENT = ("teddy", "venus")
SYNTHETIC_DEVELOPMENT = ("office", "stairs", "office-photo", "stairs-photo")
HELD_OUT = ("cones", "bull", "pillars", "ramp", "pillars-photo", "ramp-photo")
FINAL = ("motorcycle",)
SCENES = DEVELOPMENT + SYNTHETIC_DEVELOPMENT + HELD_OUT + FINAL


def role(name: str) -> str:
    return ("development" if name in DEVELOPMENT
            else "synthetic development" if name in SYNTHETIC_DEVELOPMENT
            else "held-out" if name in HELD_OUT else "final report")


def device_name(device: str) -> str:
    if device == "cuda":
        return cuda_status()[1]
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name} (PyMaxflow BK, 1 thread)"


def load_scene(name: str, downscale: int):
    """(left, right, truth, max_disparity, visible or None) of one scene."""
    if name == "motorcycle":
        left, right, truth = motorcycle_pair(downscale=downscale)
        return left, right, truth, math.ceil(FULL_MAX_DISPARITY / downscale), None
    if name in stereo_data.PAIRS:
        return (*stereo_data.load_pair(name, downscale), None)
    h, w = 300 // downscale, 400 // downscale
    kind, _, textures = name.partition("-")
    scene = synthetic_scene(shape=(h, w), kind=kind, textures=textures or "noise")
    return scene.left, scene.right, scene.truth, scene.max_disparity, scene.visible


def run_ours(device: str, scene, repeats: int, max_cycles: int, options=None) -> dict:
    left, right, truth, max_disparity, visible = scene
    options = options or {}
    disparity(left[:64, :128], right[:64, :128], max_disparity=min(16, max_disparity),
              channel_axis=-1, device=device, **options)  # warm-up
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = disparity(left, right, max_disparity=max_disparity, channel_axis=-1,
                           device=device, max_cycles=max_cycles, **options)
        runs.append((time.perf_counter() - started, result))
    seconds = statistics.median(s for s, _ in runs)
    result = runs[-1][1]
    stages = {key: statistics.median(r.stage_seconds[key] for _, r in runs)
              for key in ("costs", "expansion", "post")}
    row = {"method": "graphcut", "device": device, "name": device_name(device),
           "result": result, "seconds": seconds, "stages": stages, "repeats": repeats,
           "maxflow": statistics.median(sum(r.maxflow_seconds.values()) for _, r in runs),
           "build": statistics.median(r.build_seconds for _, r in runs),
           "bad": bad_pixel_rate(result.disparity, truth),
           "bad_raw": bad_pixel_rate(result.expansion.labels, truth)}
    if visible is not None:
        row["bad_visible"] = bad_pixel_rate(result.disparity, truth, valid=visible)
    return row


def run_planes(scene, max_cycles: int, settings: LocalExpansion) -> dict:
    """Our slanted-plane prototype (``plane_disparity``, CPU only, one run): a row like
    :func:`run_ours`'s, the integer pipeline's moves and energy beside the planes' map."""
    left, right, truth, max_disparity, visible = scene
    started = time.perf_counter()
    result = plane_disparity(left, right, max_disparity=max_disparity, channel_axis=-1,
                             settings=settings, max_cycles=max_cycles)
    seconds = time.perf_counter() - started
    initial = result.initial
    stages = {"costs": initial.stage_seconds["costs"] + result.seconds["costs"],
              "expansion": initial.stage_seconds["expansion"] + result.seconds["planes"],
              "post": result.seconds["post"]}
    row = {"method": "graphcut", "device": "cpu", "name": device_name("cpu") + ", planes",
           "result": initial, "seconds": seconds, "stages": stages, "repeats": 1,
           "maxflow": sum(initial.maxflow_seconds.values()), "build": initial.build_seconds,
           "bad": bad_pixel_rate(result.disparity, truth),
           "bad_raw": bad_pixel_rate(result.planes.disparity, truth)}
    if visible is not None:
        row["bad_visible"] = bad_pixel_rate(result.disparity, truth, valid=visible)
    return row


def table(name: str, scene, rows, args) -> str:
    _, _, truth, max_disparity, visible = scene
    h, w = truth.shape
    lines = [f"**{name}** ({role(name)}) {w}x{h}, disparities 0..{max_disparity}, ground "
             f"truth on {np.isfinite(truth).mean():.1%} of pixels",
             "",
             "| method | device | end-to-end s | costs s | expansion s (min-cut s) | post s | "
             "moves (accepted) | bad pixels | " + ("bad, visible pixels | " if visible
                                                   is not None else "") + "setting |",
             "|---|---|---|---|---|---|---|---|" + ("---|" if visible is not None else "")
             + "---|"]
    for row in rows:
        if row["method"] == "graphcut":
            r, st = row["result"], row["stages"]
            cells = [f"graphcut ({row['repeats']} run{'s' * (row['repeats'] > 1)})",
                     row["name"], f"{row['seconds']:.3f}", f"{st['costs']:.3f}",
                     f"{st['expansion']:.3f} ({row['maxflow']:.3f})", f"{st['post']:.3f}",
                     f"{r.num_moves} ({r.accepted_moves})", f"{row['bad']:.2%}"]
            setting = (f"{r.cycles} cycles, energy {r.energy}; before the left-right check "
                       f"{row['bad_raw']:.2%}")
        else:
            cells = [row["method"], row["name"], f"{row['seconds']:.3f}", "-", "-", "-", "-",
                     f"{row['bad']:.2%}"]
            setting = sgbm_baseline.describe(row["setting"], max_disparity)
        if visible is not None:
            cells.append(f"{row['bad_visible']:.2%}")
        lines.append("| " + " | ".join(cells + [setting]) + " |")
    ours = [row for row in rows if row["method"] == "graphcut"]
    oracles = [row for row in rows if row.get("oracle")]
    if ours and oracles:
        fair = min(oracles, key=lambda row: row["bad"])
        ratio = ours[0]["bad"] / max(fair["bad"], 1e-12)
        lines += ["", f"Bad pixels, graphcut / fair SGBM ({fair['method']}, {fair['bad']:.2%}):"
                      f" {ratio:.3f} (goal <= {GOAL_RATIO:.3f}: "
                      f"{'met' if ratio <= GOAL_RATIO else 'NOT met'})"]
        tuned = [row for row in rows if "dev pairs" in row["method"]]
        if tuned:
            best_tuned = min(tuned, key=lambda row: row["bad"])
            lines.append(f"Against SGBM tuned on the development pairs ({best_tuned['method']},"
                         f" {best_tuned['bad']:.2%}): "
                         f"{ours[0]['bad'] / max(best_tuned['bad'], 1e-12):.3f}")
    for row in ours:
        moves = row["result"].moves
        if moves:
            def median_ms(field):
                return 1e3 * statistics.median(getattr(m, field) for m in moves)
            lines.append(f"{row['device']}: per move, median min-cut "
                         f"{median_ms('maxflow_seconds'):.2f} ms (max-flow stage "
                         f"{median_ms('solve_seconds'):.2f} ms), network build "
                         f"{median_ms('build_seconds'):.2f} ms")
    by_device = {row["device"]: row for row in ours}
    if "cuda" in by_device and name == "motorcycle" and args.downscale == 1:
        seconds = by_device["cuda"]["seconds"]
        lines.append(f"GPU end to end: {seconds:.3f} s (goal <= {GOAL_SECONDS} s: "
                     f"{'met' if seconds <= GOAL_SECONDS else 'NOT met'})")
    if len(ours) > 1:
        first = ours[0]["result"]
        same = all(np.array_equal(first.disparity, row["result"].disparity)
                   and [(m.alpha, m.flow, m.accepted) for m in first.moves]
                   == [(m.alpha, m.flow, m.accepted) for m in row["result"].moves]
                   for row in ours[1:])
        lines.append(f"Identical moves and disparity maps across devices: "
                     f"{'yes' if same else 'NO'}")
        if "cpu" in by_device and "cuda" in by_device:
            cpu, gpu = by_device["cpu"], by_device["cuda"]
            lines.append(f"Speed-up cuda vs cpu: end to end {cpu['seconds'] / gpu['seconds']:.1f}x"
                         f", min-cuts {cpu['maxflow'] / max(gpu['maxflow'], 1e-9):.1f}x")
    return "\n".join(lines)


def summary(results, args) -> str:
    """One line per scene: ours, SGBM (dev-tuned and oracle, raw and filled), the goal ratio."""
    lines = [f"Summary (`python bench/bench_stereo.py {' '.join(sys.argv[1:])}`; bad pixels "
             f"> 1 px; fair SGBM = the best of its raw, filled (and trimmed) oracles):", "",
             "| pair | role | graphcut | SGBM raw, dev-tuned | SGBM filled, dev-tuned | SGBM raw, "
             "oracle | SGBM filled, oracle | SGBM filled + trim, oracle | graphcut / fair SGBM "
             "(goal <= 0.667) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, rows in results:
        ours = [row for row in rows if row["method"] == "graphcut"]
        by_label = {row["method"]: row["bad"] for row in rows}
        cells = [f"{by_label[label]:.2%}" if label in by_label else "-" for label in (
            "SGBM raw, tuned on dev pairs", "SGBM filled, tuned on dev pairs",
            "SGBM raw, best on this pair (oracle)", "SGBM filled, best on this pair (oracle)",
            TRIMMED_ORACLE)]
        oracles = [row["bad"] for row in rows if row.get("oracle")]
        if ours and oracles:
            ratio = ours[0]["bad"] / max(min(oracles), 1e-12)
            verdict = f"{ratio:.3f} ({'met' if ratio <= GOAL_RATIO else 'NOT met'})"
        else:
            verdict = "-"
        ours_cell = f"{ours[0]['bad']:.2%}" if ours else "-"
        lines.append(f"| {name} | {role(name)} | {ours_cell} | " + " | ".join(cells)
                     + f" | {verdict} |")
    return "\n".join(lines)


def append_results(text: str, title: str) -> None:
    """Insert a section at the top of RESULTS.md (newest first), below the file's title."""
    section = f"## {title}\n\n{text}\n\n"
    if RESULTS.exists():
        old = RESULTS.read_text()
        lines = old.splitlines(keepends=True)
        head = 0
        if lines and lines[0].startswith("# "):
            head = 1
            while head < len(lines) and not lines[head].startswith("## "):
                head += 1
        new = "".join(lines[:head]) + section + "".join(lines[head:])
    else:
        new = "# Benchmark results\n\nNewest first.\n\n" + section
    temporary = RESULTS.with_name(f".{RESULTS.name}.tmp")
    temporary.write_text(new)
    temporary.replace(RESULTS)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", default="cpu,cuda",
                        help="comma-separated backends to time (cpu, cuda); cuda is skipped "
                             "with a note when no GPU backend is available (default: cpu,cuda)")
    parser.add_argument("--scenes", default=",".join(SCENES),
                        help=f"comma-separated, of {', '.join(SCENES)} (default: all; "
                             f"'synthetic' means office)")
    parser.add_argument("--downscale", type=int, default=1,
                        help="integer reduction of the scenes (default 1: full size)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed runs per GPU and SGBM measurement (median; default 3)")
    parser.add_argument("--cpu-repeats", type=int, default=1,
                        help="timed runs of our CPU backend (default 1: it takes a minute)")
    parser.add_argument("--max-cycles", type=int, default=2)
    parser.add_argument("--no-sgbm", action="store_true", help="skip OpenCV")
    parser.add_argument("--census-lambdas", default=None, metavar="CENSUS,COLOUR",
                        help="ours with CensusParameters(census_lambda=CENSUS, "
                             "colour_lambda=COLOUR) instead of the defaults")
    parser.add_argument("--aggregation", choices=("box", "cross"), default=None,
                        help="ours with CensusParameters(aggregation=...) instead of the "
                             "default (box: the 5 x 5 mean; cross: cross-based regions)")
    parser.add_argument("--flat-factor", type=int, default=None,
                        help="ours with this flat_factor instead of the default (4)")
    parser.add_argument("--post-refinements", action="store_true",
                        help="ours with the border extrapolation and the depth-edge "
                             "refinement (both off by default), and SGBM's filled maps with "
                             "them too")
    parser.add_argument("--no-foreground-trim", action="store_true",
                        help="ours with foreground_trim=None (the foreground trimming, on by "
                             "default, off), and SGBM without its trimmed oracle")
    parser.add_argument("--plane-fill", action="store_true",
                        help="ours with plane_fill=PlaneFill() (the segment plane fill, off "
                             "by default), and SGBM's filled maps with it too")
    parser.add_argument("--median-fill", action="store_true",
                        help="ours with median_fill=MedianFill() (the weighted-median "
                             "occlusion fill, off by default)")
    parser.add_argument("--planes", action="store_true",
                        help="ours by the slanted-plane prototype (plane_disparity with "
                             "LocalExpansion(); CPU only, one run; the left-right check and "
                             "the plane fill): docs/stereo.md, local expansion moves")
    parser.add_argument("--append-results", action="store_true",
                        help=f"insert the tables at the top of {RESULTS}")
    args = parser.parse_args(argv)
    if args.downscale < 1 or args.repeats < 1 or args.cpu_repeats < 1:
        parser.error("--downscale, --repeats and --cpu-repeats must be >= 1")
    devices = [d.strip() for d in args.devices.split(",") if d.strip()]
    if sorted(set(devices) - {"cpu", "cuda"}) or not devices:
        parser.error(f"--devices takes cpu and/or cuda, got {args.devices!r}")
    scene_names = [s.strip().replace("synthetic", "office") for s in args.scenes.split(",")
                   if s.strip()]
    if sorted(set(scene_names) - set(SCENES)) or not scene_names:
        parser.error(f"--scenes takes {', '.join(SCENES)}, got {args.scenes!r}")
    if "cuda" in devices:
        ok, why = cuda_status()
        if not ok:
            print(f"skipping cuda: {why}", file=sys.stderr)
            devices.remove("cuda")
    sgbm = not args.no_sgbm
    if sgbm:
        try:
            import cv2  # noqa: F401
        except ImportError:
            print("skipping OpenCV SGBM: pip install opencv-python-headless", file=sys.stderr)
            sgbm = False
    if not devices and not sgbm:
        parser.error("nothing to run here")

    try:
        scenes = {name: load_scene(name, args.downscale) for name in scene_names}
    except stereo_data.MissingData as error:
        parser.error(str(error))
    chosen = None
    if sgbm:
        try:
            for name in DEVELOPMENT:
                stereo_data.load_pair(name)
        except stereo_data.MissingData as error:
            print(f"skipping SGBM's development-tuned setting (oracles only): {error}",
                  file=sys.stderr)
            sgbm_development = False
        else:
            sgbm_development = True
    if sgbm and sgbm_development:
        import cv2
        development = list(DEVELOPMENT)
        print(f"OpenCV SGBM sweep on the development pairs {', '.join(development)} ...",
              file=sys.stderr, flush=True)
        sweeps = [sgbm_baseline.score_sweep(cv2, scenes.get(name)
                                            or load_scene(name, args.downscale),
                                            args.post_refinements, args.plane_fill)
                  for name in development]
        chosen = sgbm_baseline.choose_on_development(sweeps)
        text = "SGBM settings chosen on the development pairs (" + ", ".join(development) \
            + f", downscale {args.downscale}; lowest mean bad-pixel rate):"
        for scoring, (setting, mean) in chosen.items():
            text += (f"\n- {scoring}: {sgbm_baseline.describe(setting, None)}; mean "
                     f"{mean:.2%}")
        print(text + "\n", flush=True)
    if sgbm:
        import cv2
    texts = [text] if sgbm and sgbm_development else []
    results = []
    for name, scene in scenes.items():
        rows = []
        for device in sorted(devices, key=lambda d: d != "cuda"):  # the GPU first
            print(f"{name}: running {device} ...", file=sys.stderr, flush=True)
            repeats = args.repeats if device == "cuda" else args.cpu_repeats
            options = {"median_fill": MedianFill()} if args.median_fill else {}
            if args.census_lambdas:
                census, colour = (float(v) for v in args.census_lambdas.split(","))
                options["census"] = CensusParameters(census_lambda=census,
                                                     colour_lambda=colour)
            if args.flat_factor is not None:
                options["flat_factor"] = args.flat_factor
            if args.post_refinements:
                options.update(border_extrapolation=BorderExtrapolation(),
                               edge_refinement=EdgeRefinement())
            if args.plane_fill:
                options["plane_fill"] = PlaneFill()
            if args.no_foreground_trim:
                options["foreground_trim"] = None
            if args.aggregation:
                options["census"] = options.get("census", CensusParameters())._replace(
                    aggregation=args.aggregation)
            if args.planes:
                if device != "cpu":
                    print("skipping cuda: --planes is a CPU prototype", file=sys.stderr)
                    continue
                rows.append(run_planes(scene, args.max_cycles, LocalExpansion()))
                continue
            rows.append(run_ours(device, scene, repeats, args.max_cycles, options))
        if sgbm:
            print(f"{name}: OpenCV SGBM ...", file=sys.stderr, flush=True)
            rows += sgbm_baseline.sgbm_rows(cv2, scene, chosen, args.repeats,
                                            args.post_refinements, args.plane_fill)
            if not args.no_foreground_trim:
                rows.append(sgbm_trimmed_row(cv2, scene, args.repeats, args.post_refinements,
                                             args.plane_fill))
        texts.append(table(name, scene, rows, args))
        results.append((name, rows))
        print(texts[-1] + "\n", flush=True)
    texts.append(summary(results, args))
    print(texts[-1] + "\n", flush=True)
    if args.append_results:
        names = ", ".join(device_name(d) for d in devices)
        append_results("\n\n".join(texts),
                       f"{datetime.date.today().isoformat()} - stereo vs a fair OpenCV SGBM "
                       f"(bench/bench_stereo.py, downscale {args.downscale}) on {names}")
        print(f"appended to {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
