"""Live scribbling: the stroke-to-screen path of the desktop app, measured the way it runs.

For the astronaut sample upscaled to each size, two scripted stroke sequences
(bench/stroke_scripts.py, both deterministic) are replayed, each reported apart:

- confirming: from the bundled seeds, alternately object and background, each a short thick
  line in a region the mask already gives that label (every stroke changes the colour model,
  but the mask barely moves: close to the best case for a re-solve);
- correcting: a robot user fixing the session's own mistakes: from the bundled seeds of the
  left half only, each stroke on the largest error region of the current mask (errors against
  the mask of all the bundled seeds), with the label the mask should have there.

Each is replayed through three layers:

1. session: ``graphcut.Segmenter.update`` in this process, per stroke: its energy part (colour
   model and capacities) and solve part; next to it the same network solved from scratch
   (GPU: ``grid_min_cut``; CPU: PyMaxflow's ``maxflow()`` alone, graph built beforehand),
   which says how much of the previous preflow the incremental re-solve keeps; then three
   lambda changes (``set_lam`` and the update after it: on the GPU the flow is kept,
   ``GridState.change_nlinks``, and the line says so per change; on the CPU PyMaxflow's graph
   starts over), against the same network from scratch: "click" is one step of the app's
   lambda box (x1.1, back, x0.9, back), "x2" lambda doubled, quartered and back.
2. pipeline: the app's own segmentation controller and solver processes (``gui/controller.py``;
   image in shared memory, seeds and masks as rectangles), without Qt: per stroke the time from
   the edit to the exact mask in this process, split into the solver's energy / solve / mask
   diff, the transfer (pickling, pipes, queueing), applying the mask here, and a rendering of
   the result for a 1100x780 view (``overlay.render_result``, what the window draws); the
   first preview (CPU); undo, redo and lambda changes; and a burst of strokes faster than the
   solver (time from the last stroke to its exact mask). The controller asks for the window's
   default clean-up (``--clean-up app``; ``off``: the bare cut).
3. window (where PyQt6 is installed, ``--gui``): the app's window offscreen, strokes made with
   real mouse events (QTest), per stroke the time from the mouse release to the exact mask
   handed to the view, the paint times of the result layer, and the largest gap of the event
   loop (a 1 ms timer) while it waits for results, with the CPU time the GUI thread itself
   used in that gap (on a loaded machine most of a long gap is waiting for a core).

    python bench/bench_interactive.py --device cpu [--sizes 1024x1024,2048x2048,3000x4000]
        [--strokes 10] [--parts session,pipeline,window] [--gui auto] [--spare no]
        [--stroke-kinds confirming,correcting]

``--spare auto`` gives the pipeline the controller's spare exact CPU solver (a second solver
process that takes strokes made while the first is busy; see ``gui/controller.py``).

Timings are medians (and maxima) over the strokes after the first; the first stroke after
opening an image and the session build are reported apart.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from skimage.transform import resize

import graphcut
from graphcut.gui.controller import Listener, PostQueue, SegmentationController
from graphcut.gui.model_choice import model_holds
from graphcut.gui.options import APP_DEFAULTS
from graphcut.gui.overlay import ResultStyle, render_result, sample_grid
from graphcut.gui.strokes import SeedCanvas
from graphcut.solver import min_cut

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interactive_window import bench_window  # noqa: E402
from stroke_scripts import STROKE_KINDS, script_for, stroke_script  # noqa: E402,F401

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
VIEW = (780, 1100)  # (height, width) of the view rendered for the drawing time


def parse_size(text: str) -> tuple[int, int]:
    """"ROWSxCOLS", or megapixels (2**20 pixels) as a square."""
    if "x" in text:
        rows, cols = text.split("x")
        return int(rows), int(cols)
    side = round((float(text) * 2**20) ** 0.5)
    return side, side


def scaled_inputs(shape, name: str = "astronaut"):
    image = graphcut.read_image(SAMPLES / "images" / f"{name}.png")
    seeds = graphcut.read_seeds(SAMPLES / "seeds" / f"{name}.png", shape=image.shape[:2])
    big = resize(image, shape + image.shape[2:], order=1, preserve_range=True,
                 anti_aliasing=False).astype(image.dtype)
    big_seeds = resize(seeds, shape, order=0, preserve_range=True,
                       anti_aliasing=False).astype(np.uint8)
    return big, big_seeds


def paint(canvas: SeedCanvas, stroke):
    """Paint one stroke as the window does; returns the (rows, cols) slices it changed."""
    label, points, radius = stroke
    canvas.begin_edit()
    region = None
    for start, end in zip(points, points[1:]):
        part = canvas.paint(start, end, label, radius)
        if part is not None:
            region = part if region is None else (
                slice(min(region[0].start, part[0].start), max(region[0].stop, part[0].stop)),
                slice(min(region[1].start, part[1].start), max(region[1].stop, part[1].stop)))
    canvas.end_edit()
    return region


def sync_device(device: str):
    if device == "cuda":
        import cupy
        return cupy.cuda.Device().synchronize
    return lambda: None


def median_max(values):
    values = [v for v in values if v == v]
    if not values:
        return float("nan"), float("nan")
    return statistics.median(values), max(values)


def ms(pair) -> str:
    median, largest = pair
    return f"{median * 1e3:.1f} / {largest * 1e3:.1f}"


# ----- 1. the session in this process ----------------------------------------------------------
def bench_session(image, seeds, strokes, device):
    """The histogram's Segmenter: each update checked against a fresh solve of
    ``graphcut.build_network`` (the histogram's energy), hence that model whatever --model."""
    sync = sync_device(device)
    started = time.perf_counter()
    session = graphcut.Segmenter(image, device=device, model="histogram")
    session.prepare()
    sync()
    build = time.perf_counter() - started
    canvas = SeedCanvas(seeds.shape)
    canvas.begin_edit()
    canvas.replace(seeds)
    canvas.end_edit()
    mask = session.update(canvas.labels)
    rows = []
    for stroke in strokes:
        before_labels = canvas.labels.copy()
        region = paint(canvas, stroke)
        painted = canvas.labels != before_labels
        wanted = stroke[0] == graphcut.FOREGROUND
        on_errors = float(np.mean(mask[painted] != wanted)) if painted.any() else 0.0
        before = mask
        sync()
        started = time.perf_counter()
        mask = session.update(canvas.labels, region=region)
        sync()
        total = time.perf_counter() - started
        stats = session.last_result.stats
        network = graphcut.build_network(image, canvas.labels) if device == "cpu" else \
            graphcut.build_network(*_to_gpu(image, canvas.labels))
        fresh = min_cut(network, device=device)
        fresh_mask = fresh.source_side.get() if device == "cuda" else fresh.source_side
        assert fresh.flow == session.last_result.flow and np.array_equal(fresh_mask, mask), \
            "the incremental re-solve differs from a fresh solve"
        fresh_solve = fresh.stats["seconds"]["solve"]
        # the max-flow part alone: PyMaxflow's maxflow() (without the t-link edits and the
        # cut), or the GPU's phase I (with its t-link update), against the same from scratch
        maxflow = stats.get("maxflow_seconds", stats["seconds"]["solve"])
        rows.append({"update": total, "energy": stats["seconds"]["energy"],
                     "on_errors": on_errors, "changed": int(np.count_nonzero(mask != before)),
                     "solve": stats["seconds"]["solve"], "maxflow": maxflow,
                     "fresh_solve": fresh_solve})
    return build, rows, {name: bench_lam_changes(session, image, canvas.labels, device, factors)
                         for name, factors in LAM_CHANGES.items()}


# lam changes measured: one click of the app's lambda box (its adaptive step is a tenth of the
# value's order of magnitude: 10 -> 11 or 9), up and down; and lam doubled, quartered, back
LAM_CHANGES = {"click": (1.1, 1.0, 0.9, 1.0), "x2": (2.0, 0.5, 1.0)}


def bench_lam_changes(session, image, labels, device, factors):
    """lam set to each of ``factors`` x the session's lam in turn: per change, set_lam and the
    update after it (same seeds), what the solver did with its flow, and the same network
    from scratch."""
    sync = sync_device(device)
    rows = []
    base = session.lam
    for lam in (base * f for f in factors):
        sync()
        started = time.perf_counter()
        session.set_lam(lam)
        sync()
        changed = time.perf_counter()
        mask = session.update(labels, region=(slice(0, 0), slice(0, 0)))
        sync()
        done = time.perf_counter()
        stats = session.last_result.stats
        inputs = (image, labels) if device == "cpu" else _to_gpu(image, labels)
        fresh = min_cut(graphcut.build_network(*inputs, lam=lam), device=device)
        fresh_mask = fresh.source_side.get() if device == "cuda" else fresh.source_side
        assert fresh.flow == session.last_result.flow and np.array_equal(fresh_mask, mask), \
            "the re-solve after a lam change differs from a fresh solve"
        rows.append({"total": done - started, "set_lam": changed - started,
                     "energy": stats["seconds"]["energy"], "solve": stats["seconds"]["solve"],
                     "fresh_solve": fresh.stats["seconds"]["solve"],
                     # GPU: "kept" (change_nlinks) or "restarted"; CPU: PyMaxflow starts over
                     "flow": stats.get("nlink_change") or "restarted"})
    return rows


def _to_gpu(*arrays):
    import cupy
    return [cupy.asarray(a) for a in arrays]


# ----- 2. the pipeline: controller and solver processes ----------------------------------------
class Recorder(Listener):
    def __init__(self):
        self.outcomes, self.errors, self.opened = [], [], []

    def on_outcome(self, outcome):
        self.outcomes.append((time.perf_counter(), outcome))

    def on_error(self, message, details=""):
        self.errors.append(message)

    def on_backend(self, backend, device_name):
        self.opened.append((time.perf_counter(), backend, device_name))


class Owner:
    """The owner's thread without Qt: runs posted replies, timing how long each takes."""

    def __init__(self):
        self.queue = PostQueue()
        self.handling: list[float] = []

    def __call__(self, function):
        def timed():
            started = time.perf_counter()
            function()
            self.handling.append(time.perf_counter() - started)
        self.queue(timed)

    def wait(self, condition, timeout=600.0):
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from the solver")
            self.queue.run_pending(0.01)


def render_time(mask: np.ndarray, factor: int = 1) -> float:
    """Seconds to render the result for a VIEW-sized window showing the whole image."""
    h, w = mask.shape[0] * factor, mask.shape[1] * factor
    scale = min(VIEW[0] / h, VIEW[1] / w)
    style = ResultStyle()
    width = style.outline_width
    started = time.perf_counter()
    rows = sample_grid(-width / scale, 1 / scale, int(h * scale) + 2 * width, factor,
                       mask.shape[0])
    cols = sample_grid(-width / scale, 1 / scale, int(w * scale) + 2 * width, factor,
                       mask.shape[1])
    render_result(mask, rows, cols, style)
    return time.perf_counter() - started


def bench_pipeline(image, seeds, strokes, device, burst, spare="auto", clean_up=True,
                   model="auto"):
    recorder, owner = Recorder(), Owner()
    controller = SegmentationController(recorder, post=owner, device=device, spare=spare)
    # what the window asks for by default (Segment > Clean up result), with the chosen model
    options = APP_DEFAULTS if clean_up else APP_DEFAULTS.with_cleanup(False)
    controller.set_options(dataclasses.replace(options, model=model))
    try:
        return _run_pipeline(controller, recorder, owner, image, seeds, strokes, burst)
    finally:
        controller.close()


def _clean_up_options(controller) -> dict:
    """segment()'s options that give what the app shows: its model, lambda and clean-up."""
    return {"keep": controller.options.keep, "fill_holes": controller.options.fill_holes,
            "model": controller.options.model, "lam": controller.lam}


def _request_and_wait(controller, recorder, owner, labels, region):
    """One edit: returns (seconds to the exact mask, seconds to the first preview or nan,
    the exact outcome)."""
    first = len(recorder.outcomes)
    started = time.perf_counter()
    controller.set_seeds(labels, region)
    number = controller.request()
    owner.wait(lambda: not controller.is_busy())
    if recorder.errors:
        raise RuntimeError(recorder.errors[-1])
    answers = [(t, o) for t, o in recorder.outcomes[first:] if o.number == number]
    exact_at, exact = answers[-1]
    previews = [t for t, o in answers if o.factor > 1]
    return exact_at - started, (previews[0] - started) if previews else float("nan"), exact


def _run_pipeline(controller, recorder, owner, image, seeds, strokes, burst):
    started = time.perf_counter()
    controller.open_image(image)
    owner.wait(lambda: recorder.opened)
    opened = recorder.opened[0][0] - started
    canvas = SeedCanvas(seeds.shape)
    canvas.begin_edit()
    canvas.replace(seeds)
    canvas.end_edit()
    first, first_preview, outcome = _request_and_wait(controller, recorder, owner,
                                                      canvas.labels, None)
    rows = []
    shown = None  # the seeds and the mask the user saw when the last stroke was made
    for stroke in strokes:
        shown = (canvas.labels.copy(), outcome.mask.copy())
        region = paint(canvas, stroke)
        owner.handling.clear()
        latency, preview, outcome = _request_and_wait(controller, recorder, owner,
                                                      canvas.labels, region)
        seconds = outcome.seconds
        rows.append({"latency": latency, "preview": preview, "energy": seconds["energy"],
                     "solve": seconds["solve"], "mask": seconds["mask"],
                     "transfer": seconds["waited"] - seconds["total"],
                     "apply": seconds["apply"], "handle": max(owner.handling, default=0.0),
                     "draw": render_time(outcome.mask), "incremental": outcome.incremental})
    # the app sends the update the user saw to a model with a hold (gui/previous_update.py)
    holds = model_holds(controller.options.model, image) and shown is not None
    expected = graphcut.segment(image, canvas.labels, device=controller.device,
                                previous=shown if holds else None,
                                **_clean_up_options(controller))
    assert np.array_equal(outcome.mask, expected), "the app's mask differs from segment()"
    edits = {"undo": [], "redo": [], "lam": [], "lam_click": []}
    for _ in range(2):
        edits["undo"].append(_request_and_wait(controller, recorder, owner, canvas.labels,
                                               canvas.undo())[0])
    for _ in range(2):
        edits["redo"].append(_request_and_wait(controller, recorder, owner, canvas.labels,
                                               canvas.redo())[0])
    for key, name in (("lam_click", "click"), ("lam", "x2")):
        for factor in LAM_CHANGES[name]:
            controller.set_lam(graphcut.DEFAULT_LAM * factor)
            edits[key].append(_request_and_wait(controller, recorder, owner, canvas.labels,
                                                (slice(0, 0), slice(0, 0)))[0])
    # a burst: strokes arriving faster than the solver answers
    one = statistics.median(r["latency"] for r in rows)
    for stroke in burst:
        controller.set_seeds(canvas.labels, paint(canvas, stroke))
        controller.request()
        held = controller._previous.shown  # the mask shown when this stroke was made
        last = time.perf_counter()
        owner.queue.run_pending(0)
        time.sleep(one / 4)
    owner.wait(lambda: not controller.is_busy())
    burst_final = recorder.outcomes[-1][0] - last
    holds = model_holds(controller.options.model, image) and held is not None
    expected = graphcut.segment(image, canvas.labels, device=controller.device,
                                previous=(held.seeds, held.mask) if holds else None,
                                **_clean_up_options(controller))
    assert np.array_equal(controller.mask(), expected), "the burst's mask differs"
    return {"opened": opened, "first": first, "first_preview": first_preview, "rows": rows,
            "edits": edits, "burst_final": burst_final, "one": one,
            "backend": recorder.opened[0][1], "device_name": recorder.opened[0][2]}


# ----- report ---------------------------------------------------------------------------------
def report(shape, session, pipeline, window, device, kind="confirming") -> str:
    lines = []
    h, w = shape
    label = f"{h * w / 1e6:.1f} MP ({h}x{w}), {kind} strokes"
    if session is not None:
        build, rows, lam_changes = session
        lines.append(f"session ({device}) {label}: stroke pixels on errors of the mask before "
                     f"it, median {statistics.median(r['on_errors'] for r in rows):.0%}; "
                     f"pixels the mask changed per stroke, median "
                     f"{statistics.median(r['changed'] for r in rows):.0f} / max "
                     f"{max(r['changed'] for r in rows)}")
        lines.append(f"session ({device}) {label}: build {build:.2f} s; Segmenter.update "
                     f"median / max {ms(median_max([r['update'] for r in rows]))} ms, energy "
                     f"{ms(median_max([r['energy'] for r in rows]))} ms, solve "
                     f"{ms(median_max([r['solve'] for r in rows]))} ms (of which max-flow "
                     f"{ms(median_max([r['maxflow'] for r in rows]))} ms); the same network "
                     f"from scratch: max-flow {ms(median_max([r['fresh_solve'] for r in rows]))}"
                     f" ms (incremental / scratch = "
                     f"{statistics.median(r['maxflow'] / r['fresh_solve'] for r in rows):.2f})")
        for name, lam_rows in lam_changes.items():
            lines.append(
                f"lambda change {name} ({device}) {label}: set_lam + update median / max "
                f"{ms(median_max([r['total'] for r in lam_rows]))} ms (set_lam "
                f"{ms(median_max([r['set_lam'] for r in lam_rows]))} ms, energy "
                f"{ms(median_max([r['energy'] for r in lam_rows]))} ms, solve "
                f"{ms(median_max([r['solve'] for r in lam_rows]))} ms); the solver's flow: "
                f"{', '.join(r['flow'] for r in lam_rows)}; the same network from scratch: "
                f"max-flow {ms(median_max([r['fresh_solve'] for r in lam_rows]))} ms")
    if pipeline is not None:
        rows = pipeline["rows"]
        col = {k: median_max([r[k] for r in rows]) for k in rows[0] if k != "incremental"}
        edits = pipeline["edits"]
        lines.append(
            f"| {label} | {pipeline['backend']} | {pipeline['opened']:.2f} | "
            f"{pipeline['first']:.2f} | **{ms(col['latency'])}** | {ms(col['preview'])} | "
            f"{ms(col['energy'])} | {ms(col['solve'])} | {ms(col['mask'])} | "
            f"{ms(col['transfer'])} | {ms(col['apply'])} | {ms(col['handle'])} | "
            f"{ms(col['draw'])} | {ms(median_max(edits['undo'] + edits['redo']))} | "
            f"{ms(median_max(edits['lam_click']))} | {ms(median_max(edits['lam']))} | "
            f"{pipeline['burst_final'] * 1e3:.0f} "
            f"({pipeline['one'] * 1e3:.0f}) |")
    if session is not None and pipeline is not None:
        exact = statistics.median(r["latency"] for r in pipeline["rows"])
        alone = statistics.median(r["fresh_solve"] for r in session[1])
        what = "PyMaxflow's maxflow() alone" if device == "cpu" else "the GPU solve alone"
        lines.append(f"ratio ({device}) {label}: stroke -> exact mask in this process "
                     f"{exact * 1e3:.0f} ms / {what} from scratch {alone * 1e3:.0f} ms = "
                     f"{exact / alone:.2f}")
    if window is not None:
        lines.append(
            f"window ({device}) {label}: open -> session ready {window['opened']:.2f} s; first "
            f"stroke {ms(median_max(window['first']))} ms; mouse release -> exact mask shown "
            f"median / max {ms(median_max(window['latencies']))} ms, -> preview shown "
            f"{ms(median_max(window['previews']))} ms; handling a result "
            f"{ms(median_max(window['handling']))} ms; result layer paint "
            f"{ms(median_max(window['paint']))} ms; largest event-loop gap while waiting "
            f"{window['max_gap'] * 1e3:.1f} ms (of which the GUI thread ran at most "
            f"{window['max_busy'] * 1e3:.1f} ms: the rest is waiting for a CPU core or the "
            f"GIL); a whole stroke's mouse events (press, moves, "
            f"release) {ms(median_max(window['mouse']))} ms; errors: "
            f"{window['errors'] or 'none'}")
    return "\n".join(lines)


PIPELINE_HEADER = (
    "| image | backend | open s | first stroke s | stroke -> exact mask ms (median / max) | "
    "-> preview ms | energy ms | solve ms | mask diff ms | transfer ms | apply ms | "
    "handling ms | draw ms | undo/redo ms | lambda click ms | lambda x2 ms | burst: last "
    "stroke -> mask ms (one stroke) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    "---|---|---|")


def _run_size(args, parts, image, start, script, strokes, burst, kind, out, details):
    """Run the parts for one size and stroke kind. The session and the pipeline start from the
    starting seeds with the script's first stroke painted (the window draws that one itself)."""
    canvas = SeedCanvas(start.shape)
    canvas.begin_edit()
    canvas.replace(start)
    canvas.end_edit()
    paint(canvas, script[0])
    seeds = canvas.labels.copy()
    session = bench_session(image, seeds, strokes, args.device) \
        if "session" in parts else None
    if session is not None:
        print(report(image.shape[:2], session, None, None, args.device, kind), flush=True)
    pipeline = bench_pipeline(image, seeds, strokes, args.device, burst,
                              "auto" if args.spare == "auto" else False,
                              clean_up=args.clean_up == "app", model=args.model) \
        if "pipeline" in parts else None
    if pipeline is not None:
        print(report(image.shape[:2], None, pipeline, None, args.device, kind), flush=True)
    window = None
    if "window" in parts:
        import tempfile
        with tempfile.TemporaryDirectory() as folder:
            from PIL import Image
            path, seeds_path = Path(folder) / "image.png", Path(folder) / "seeds.png"
            Image.fromarray(image).save(path)
            graphcut.write_seeds(seeds_path, start)
            window = bench_window(path, seeds_path, script[:len(strokes) + 1], args.device)
    text = report(image.shape[:2], session, pipeline, window, args.device, kind)
    for line in text.splitlines():
        (out if line.startswith("|") else details).append(line)
    if window is not None:
        print(report(image.shape[:2], None, None, window, args.device, kind), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--sizes", default="1024x1024,2048x2048,3000x4000",
                        help="ROWSxCOLS or megapixels (2**20 pixels, square), comma-separated")
    parser.add_argument("--strokes", type=int, default=10)
    parser.add_argument("--burst", type=int, default=3, help="strokes in the burst")
    parser.add_argument("--parts", default="session,pipeline,window",
                        help="which of session, pipeline, window to run")
    parser.add_argument("--gui", default="auto", choices=("auto", "yes", "no"),
                        help="run the window part (auto: where PyQt6 is installed)")
    parser.add_argument("--spare", default="auto", choices=("auto", "no"),
                        help="the controller's spare exact solver (CPU; see controller.py)")
    parser.add_argument("--clean-up", default="app", choices=("app", "off"),
                        help="pipeline: the window's default clean-up (keep the parts touching "
                             "an object seed, fill holes under 100 pixels), or none")
    parser.add_argument("--stroke-kinds", default=",".join(STROKE_KINDS),
                        help="comma-separated, of: confirming, correcting (default: both)")
    parser.add_argument("--model", default="auto",
                        help="the appearance model the app pipeline segments with (default "
                             "auto, the library's and the app's default; the histogram before "
                             "the tenth session). The session part is the histogram's always")
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    has_qt = importlib.util.find_spec("PyQt6") is not None
    if args.gui == "no" or (args.gui == "auto" and not has_qt):
        parts.discard("window")
    out = [f"{datetime.date.today()} bench_interactive --device {args.device} "
           f"--strokes {args.strokes}; astronaut upscaled; medians / maxima over the strokes "
           "after the first", PIPELINE_HEADER]
    details = []
    kinds = [k for k in args.stroke_kinds.split(",") if k]
    if not kinds or set(kinds) - set(STROKE_KINDS):
        parser.error(f"--stroke-kinds takes {', '.join(STROKE_KINDS)}, got {args.stroke_kinds!r}")
    pipeline = None
    for size in args.sizes.split(","):
        image, bundled = scaled_inputs(parse_size(size))
        for kind in kinds:
            seeds, script = script_for(kind, image, bundled, args.strokes + 1 + args.burst,
                                       args.device)
            if len(script) < 2 + args.burst:
                details.append(f"{kind} strokes at {size}: the mask reached its target after "
                               f"{len(script)} strokes; skipped")
                continue
            strokes = script[1:len(script) - args.burst]
            burst = script[len(script) - args.burst:]
            _run_size(args, parts, image, seeds, script, strokes, burst, kind, out, details)
    if "pipeline" in parts:
        out.append(f"\nbackend: {args.device}")
    text = "\n".join(out + [""] + details) + "\n"
    print("\n" + text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
