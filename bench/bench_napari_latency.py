"""Latency in napari: from a scribble to the mask layer updated, and how long the viewer's
thread is blocked meanwhile.

Inputs: a 2-D image (``--image``: the astronaut sample upscaled to ROWSxCOLS or to N
megapixels, with its bundled seeds) or a volume (``--side N``: the synthetic cell volume
scaled to N^3, with its scribbles). The plugin segments once (solver process started, image
opened), then each round paints one stroke into the scribbles Labels layer through napari
(``Labels.paint`` along a line, then the layer's ``paint`` event as a mouse stroke emits it)
and waits for the exact mask. Per stroke:

- preview: stroke -> the output layer shows the CPU preview (2-D images from 1 MP on the CPU);
- exact: stroke -> the output layer holds the exact mask;
- stall: the longest time the viewer's thread was busy in one go from the stroke to the
  exact mask. In ``widget`` mode this is the largest gap between the ticks of a 1 ms Qt timer
  (the event loop's longest stall, everything included); in both modes also the longest
  plugin handler that ran on the viewer's thread (scribble sync, showing a result).

Modes (--mode):
- ``widget`` (default): the dock widget (Live on) on napari's ViewerModel, in Qt's event loop
  (QT_QPA_PLATFORM=offscreen is fine); ``--viewer`` uses a full ``napari.Viewer`` (needs
  OpenGL, e.g. under Xvfb; its canvas then also redraws).
- ``api``: no Qt: napari's ViewerModel and layers with the plugin's Qt-free
  ``LayerSegmentation`` and a plain queue for the solvers' answers. Runs where napari is
  installed without a Qt binding (a GPU server; bench/device_napari_env.sh).

``--compare-app`` also runs the same strokes through the desktop app's controller alone (no
napari), whose exact-mask latency the plugin's is compared with.

    python bench/bench_napari_latency.py --image 4 --strokes 6 --device cpu --compare-app
    python bench/bench_napari_latency.py --side 256 --strokes 10 --device cuda --mode api
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "samples" / "volume"))


class Clock:
    """Times what runs on the viewer's thread: the plugin's posted handlers, and (Qt) the
    event loop's ticks."""

    def __init__(self):
        self.ticks: list[tuple[float, float]] = []     # (time, this thread's CPU time)
        self.handlers: list[tuple[float, float]] = []  # (start, seconds)
        self.shown: list[tuple[float, int]] = []       # (time, factor) of outcomes shown
        self.updates: list[tuple[float, int, float, float]] = []  # (time, factor, seconds
        #                                    writing it into the layer, solver's own seconds)

    def wrap_post(self, post):
        def timed_post(function):
            def run():
                started = time.perf_counter()
                function()
                self.handlers.append((started, time.perf_counter() - started))
            post(run)
        return timed_post

    def longest_handler(self, since: float) -> float:
        return max((s for t, s in self.handlers if t >= since), default=0.0)

    def tick(self) -> None:
        self.ticks.append((time.perf_counter(), time.thread_time()))

    def longest_gap(self, since: float, until: float) -> tuple[float, float, float]:
        """The longest gap between ticks in [since, until], the CPU time this thread used in
        it (the rest of the gap it waited for a core or Python's GIL), and when it began
        (seconds after ``since``)."""
        ticks = [(t, c) for t, c in self.ticks if since <= t <= until]
        if len(ticks) < 2:
            return until - since, float("nan"), 0.0
        (a, ca), (b, cb) = max(zip(ticks, ticks[1:]), key=lambda p: p[1][0] - p[0][0])
        return b - a, cb - ca, a - since


def image_inputs(args):
    if args.side:
        from make_volume_sample import make
        volume, seeds = make((args.side,) * 3)
        return volume, seeds, "none"
    from bench_interactive import parse_size, scaled_inputs
    image, seeds = scaled_inputs(parse_size(args.image))
    return image, seeds, "ask"


def stroke_points(seeds, mask, count):
    """(label, points, brush size) per stroke: alternately object and background on 2-D
    images (where the first mask says so), background strokes in slices of a volume."""
    if seeds.ndim == 2:
        from bench_interactive import stroke_script
        script = stroke_script(mask, count)
        out = []
        for label, (start, end), radius in script:
            steps = max(2, int(np.hypot(end[0] - start[0], end[1] - start[1]) // radius))
            points = [(start[0] + (end[0] - start[0]) * t, start[1] + (end[1] - start[1]) * t)
                      for t in np.linspace(0, 1, steps)]
            out.append((int(label), points, max(3, int(2 * radius))))
        return out
    side = seeds.shape[0]
    rng = np.random.default_rng(1)
    out = []
    for _ in range(count):
        z = int(rng.integers(side // 8, side // 4))
        y = int(rng.integers(side // 16, side // 8))
        x0 = int(rng.integers(side // 8, side // 2))
        out.append((2, [(z, y, x) for x in range(x0, x0 + side // 8, 2)], 3))
    return out


class Plugin:
    """The plugin on a ViewerModel (or Viewer) in ``widget`` or ``api`` mode."""

    def __init__(self, image, seeds, channels, args, clock):
        self.args, self.clock = args, clock
        if args.mode == "widget":
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
            from qtpy.QtCore import QTimer
            from qtpy.QtWidgets import QApplication
            self.app = QApplication.instance() or QApplication([])
            self.timer = QTimer()
            self.timer.setInterval(1)
            self.timer.timeout.connect(clock.tick)
            self.timer.start()
        if args.viewer:
            import napari
            self.viewer = napari.Viewer(show=False)
            try:  # napari's image layers query OpenGL first; Qt's offscreen platform has none
                from napari._vispy.utils.gl import get_gl_extensions
                get_gl_extensions()
            except Exception as error:
                raise SystemExit(f"--viewer needs OpenGL for napari's canvas ({error}); run "
                                 "under a display, e.g. xvfb-run, or leave --viewer out")
        else:
            from napari.components import ViewerModel
            self.viewer = ViewerModel()
        layer = self.viewer.add_image(image, name="image", rgb=image.ndim == 3 and
                                      channels == "ask" and image.shape[-1] in (3, 4))
        self.scribbles = self.viewer.add_labels(seeds, name="scribbles")
        self.viewer.dims.ndisplay = args.ndisplay if image.ndim == 3 and channels == "none" \
            else 2
        if args.mode == "widget":
            from graphcut.gui.napari._widget import GraphCutWidget
            self.widget = GraphCutWidget(self.viewer)
            self.session = self.widget.session
            self.widget.device_combo.value = args.device
            self.widget.cleanup_box.value = args.clean_up == "app"
            self.widget.image_combo.value = layer
            self.widget.channels_combo.value = channels
            self.widget.scribbles_combo.value = self.scribbles
        else:
            from graphcut.gui.controller import PostQueue
            from graphcut.gui.napari._session import LayerSegmentation
            from graphcut.gui.options import APP_DEFAULTS, SegmentOptions
            self.queue = PostQueue()
            self.session = LayerSegmentation(self.viewer, post=self.queue)
            self.session.set_device(args.device)
            self.session.set_options(APP_DEFAULTS if args.clean_up == "app"
                                     else SegmentOptions())
            self.session.set_layers(layer, self.scribbles, channels)
        self.session._post = clock.wrap_post(self.session._post)
        shown = self.session.on_outcome

        def on_outcome(outcome):
            started = time.perf_counter()
            shown(outcome)
            now = time.perf_counter()
            clock.shown.append((now, outcome.factor))
            clock.updates.append((now, outcome.factor, now - started,
                                  outcome.seconds.get("total", float("nan"))))
        self.session.on_outcome = on_outcome
        if self.session.controller is not None:
            self.session.controller.listener = self.session

    def pump(self, timeout=0.01) -> None:
        if self.args.mode == "widget":
            # wait in Qt's event loop as napari does (the 1 ms timer wakes it), no busy polling
            from qtpy.QtCore import QEventLoop
            self.app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
        else:
            self.queue.run_pending(timeout)

    def wait_exact(self, since, timeout=600.0) -> float:
        deadline = time.perf_counter() + timeout
        while True:
            self.pump()
            done = [t for t, factor in self.clock.shown if t >= since and factor == 1]
            if done and not self.session.is_busy():
                return done[0]
            if self.session.last_error:
                raise RuntimeError(f"segmentation failed: {self.session.last_error}")
            if time.perf_counter() > deadline:
                raise TimeoutError(f"no exact mask within {timeout} s")

    def first(self) -> float:
        started = time.perf_counter()
        self.session.segment()
        self.fix_listener()
        return self.wait_exact(started) - started

    def fix_listener(self) -> None:
        """The controller is made at the first segmentation: route it through the timing."""
        self.session.controller.listener = self.session

    def stroke(self, label, points, brush) -> float:
        layer = self.scribbles
        layer.brush_size = brush
        for point in points[:-1]:
            layer.paint(point, label, refresh=False)
        layer.paint(points[-1], label)
        return time.perf_counter()


def run_plugin(image, seeds, channels, args):
    clock = Clock()
    plugin = Plugin(image, seeds.copy(), channels, args, clock)  # napari paints in place
    plugin.session.set_live(True)
    first = plugin.first()
    print(f"first segmentation (process start, image opened, solved): {first:.2f} s",
          flush=True)
    strokes = stroke_points(seeds, plugin.session.output_layer.data != 0, args.strokes)
    rows = []
    for label, points, brush in strokes:
        started = plugin.stroke(label, points, brush)
        finished = plugin.wait_exact(started)
        previews = [t for t, factor in clock.shown if started <= t <= finished and factor > 1]
        for _ in range(5):  # the ticks just after the answer close the last gap
            plugin.pump(0.001)
        stall, busy, at = clock.longest_gap(started, time.perf_counter()) \
            if args.mode == "widget" else (float("nan"), float("nan"), float("nan"))
        exact = [(seconds, solver) for t, factor, seconds, solver in clock.updates
                 if t == finished and factor == 1]
        rows.append(dict(exact=finished - started,
                         preview=previews[0] - started if previews else float("nan"),
                         stall=stall, busy=busy, handler=clock.longest_handler(started),
                         update=exact[0][0] if exact else float("nan"),
                         solver=exact[0][1] if exact else float("nan")))
        if args.verbose:
            shown = ", ".join(f"{'exact' if f == 1 else 'preview'} at {t - started:.3f} s "
                              f"(layer update {1000 * u:.1f} ms)"
                              for t, f, u, _ in clock.updates if started <= t <= finished)
            print(f"  stroke: longest stall {1000 * stall:.0f} ms from {at:.3f} s "
                  f"(CPU {1000 * busy:.0f} ms); {shown}", flush=True)
        for _ in range(50):  # settle: let a catch-up job or a late preview land
            plugin.pump(0.002)
    outcome = plugin.session.last_outcome
    plugin.session.close()
    return rows, outcome


def run_app(image, seeds, channels, args):
    """The same strokes through the app's controller alone (exact-mask latency)."""
    from graphcut.gui.controller import Listener, PostQueue, SegmentationController
    from graphcut.gui.options import APP_DEFAULTS, SegmentOptions

    class Times(Listener):
        def __init__(self):
            self.exact = []

        def on_outcome(self, outcome):
            if outcome.factor == 1:
                self.exact.append(time.perf_counter())
                solver.append(outcome.seconds.get("total", float("nan")))

    times, queue = Times(), PostQueue()
    solver = []
    controller = SegmentationController(times, post=queue, device=args.device)
    controller.set_options(APP_DEFAULTS if args.clean_up == "app" else SegmentOptions())
    controller.open_image(image, channel_axis=None if channels == "none" else -1)
    controller.set_seeds(seeds)

    def wait(since):
        while not (times.exact and times.exact[-1] >= since and not controller.is_busy()):
            queue.run_pending(0.05)
        return times.exact[-1]

    started = time.perf_counter()
    controller.request()
    wait(started)
    labels = seeds.copy()
    strokes = stroke_points(seeds, controller.mask(), args.strokes)
    latencies = []
    from napari.layers import Labels
    painter = Labels(labels)  # the same brush as the plugin's strokes
    for label, points, brush in strokes:
        painter.brush_size = brush
        before = painter.data.copy()
        for point in points:
            painter.paint(point, label, refresh=False)
        started = time.perf_counter()
        region = tuple(slice(int(w.min()), int(w.max()) + 1)
                       for w in np.nonzero(before != painter.data))
        controller.set_seeds(painter.data, region if region[0].stop else None)
        controller.request()
        latencies.append(wait(started) - started)
    controller.close()
    return latencies, solver[-len(latencies):]


def summary(values) -> str:
    values = [v for v in values if v == v]
    if not values:
        return "n/a"
    return f"median {1000 * statistics.median(values):.0f} ms, max {1000 * max(values):.0f} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--image", help="2-D image: ROWSxCOLS or megapixels (default 4)")
    what.add_argument("--side", type=int, help="a volume of side^3 voxels instead")
    parser.add_argument("--strokes", type=int, default=6)
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--mode", default="widget", choices=("widget", "api"))
    parser.add_argument("--viewer", action="store_true",
                        help="widget mode in a full napari.Viewer (needs OpenGL)")
    parser.add_argument("--clean-up", default="app", choices=("app", "off"))
    parser.add_argument("--compare-app", action="store_true",
                        help="also time the app's controller alone on the same strokes")
    parser.add_argument("--ndisplay", type=int, default=2, choices=(2, 3),
                        help="a volume shown in napari's 2-D (a slice) or 3-D view")
    parser.add_argument("--verbose", action="store_true",
                        help="per stroke: when the longest stall began, the results shown")
    args = parser.parse_args()
    if not args.side and not args.image:
        args.image = "4"
    import napari
    started = time.perf_counter()
    image, seeds, channels = image_inputs(args)
    what = f"{args.side}^3 volume" if args.side else f"{image.shape[0]}x{image.shape[1]} image"
    print(f"{what} made in {time.perf_counter() - started:.1f} s; napari {napari.__version__}, "
          f"mode {args.mode}{' (napari.Viewer)' if args.viewer else ''}, device {args.device}, "
          f"clean-up {args.clean_up}", flush=True)
    rows, outcome = run_plugin(image, seeds, channels, args)
    print(f"plugin ({outcome.backend}, {outcome.device_name}), {len(rows)} strokes:")
    print(f"  stroke -> preview shown:     {summary([r['preview'] for r in rows])}")
    print(f"  stroke -> exact mask shown:  {summary([r['exact'] for r in rows])}")
    print(f"  event loop's longest stall:  {summary([r['stall'] for r in rows])}; CPU time "
          f"the viewer's thread used in it: {summary([r['busy'] for r in rows])}")
    print(f"  longest plugin handler:      {summary([r['handler'] for r in rows])}")
    print(f"  exact mask -> output layer:  {summary([r['update'] for r in rows])} (writing "
          "and refreshing the layer, in the exact mask's time)")
    print(f"  solver's own time:           {summary([r['solver'] for r in rows])}; exact "
          f"minus it: {summary([r['exact'] - r['solver'] for r in rows])}", flush=True)
    if args.compare_app:
        app, solver = run_app(image, seeds, channels, args)
        ratio = statistics.median([r["exact"] for r in rows]) / statistics.median(app)
        print(f"app controller alone: stroke -> exact mask {summary(app)}; plugin / app "
              f"(medians) {ratio:.2f}; solver's own time {summary(solver)}, exact minus it "
              f"{summary([a - b for a, b in zip(app, solver)])}", flush=True)


if __name__ == "__main__":
    main()
