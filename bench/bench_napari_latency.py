"""Latency in napari: from a scribble on a volume's Labels layer to the mask layer updated.

The volume is the synthetic sample scaled to N^3 (samples/volume/make_volume_sample.py), with
its scribbles as a napari Labels layer. After a first segmentation (the Segmenter is built and
warmed up), each round paints one background stroke through napari's API
(``Labels.paint`` along a short line in a slice, which emits the layer's ``paint`` event as a
mouse stroke does) and measures the time until the "graphcut mask" Labels layer holds the new
mask. Median and maximum over --strokes rounds.

Modes (--mode):
- ``widget`` (default): the plugin's dock widget with Live on, on napari's ViewerModel; the
  stroke's event schedules the segmentation, which runs in a napari thread_worker, and the
  answer is written into the mask layer on the GUI thread. Needs Qt (qtpy + PyQt6 or another
  binding, offscreen is fine: QT_QPA_PLATFORM=offscreen) but no OpenGL. Add ``--viewer`` to
  use a full ``napari.Viewer`` (needs OpenGL; its canvas then also redraws).
- ``api``: no Qt at all: napari's ViewerModel and layers, the stroke's ``paint`` event calls
  the plugin's :class:`ScribbleSegmenter` directly and the mask layer is updated the way the
  widget updates it. Runs where napari is installed without a Qt binding (a GPU server):
  bench/napari_latency_requirements.txt lists the wheels that needs (about 29 MB).

    python bench/bench_napari_latency.py [--side 256] [--strokes 10] [--device auto]
        [--mode widget|api] [--viewer]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples" / "volume"))
from make_volume_sample import make  # noqa: E402

MASK_LAYER = "graphcut mask"


def strokes(side: int, count: int, seed: int = 1):
    """Background strokes: short lines of brush points in slices near the volume's top."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        z = int(rng.integers(side // 8, side // 4))
        y = int(rng.integers(side // 16, side // 8))
        x0 = int(rng.integers(side // 8, side // 2))
        yield [(z, y, x) for x in range(x0, x0 + side // 8, 2)]


def run_api(volume, seeds, args):
    from napari.components import ViewerModel

    from graphcut.gui.napari._controller import ScribbleSegmenter
    viewer = ViewerModel()
    image = viewer.add_image(volume, name="volume")
    scribbles = viewer.add_labels(seeds, name="scribbles")
    scribbles.brush_size = 3
    segmenter = ScribbleSegmenter()
    state = {"pending": False}

    def update_mask():
        result = segmenter.segment(image.data, scribbles.data, device=args.device,
                                   image_key=id(image))
        mask = result.mask.astype(np.uint8)
        if MASK_LAYER in viewer.layers:
            layer = viewer.layers[MASK_LAYER]
            layer.data[...] = mask
            layer.refresh()
        else:
            viewer.add_labels(mask, name=MASK_LAYER)
        return result

    def on_paint(event=None):
        state["pending"] = True  # paint() emits before it writes: run after it returns

    scribbles.events.paint.connect(on_paint)
    first = update_mask()
    print(f"first segmentation: {first.summary()}", flush=True)
    latencies, solves = [], []
    for line in strokes(volume.shape[0], args.strokes):
        for point in line[:-1]:
            scribbles.paint(point, 2, refresh=False)
        started = time.perf_counter()
        scribbles.paint(line[-1], 2)
        if state["pending"]:
            state["pending"] = False
            result = update_mask()
        latencies.append(time.perf_counter() - started)
        solves.append(result.wall_seconds)
    return latencies, solves, result


def run_widget(volume, seeds, args):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from qtpy.QtWidgets import QApplication

    from graphcut.gui.napari._widget import GraphCutWidget
    app = QApplication.instance() or QApplication([])
    if args.viewer:
        import napari
        viewer = napari.Viewer(show=False)
    else:
        from napari.components import ViewerModel
        viewer = ViewerModel()
    viewer.add_image(volume, name="volume")
    scribbles = viewer.add_labels(seeds, name="scribbles")
    scribbles.brush_size = 3
    widget = GraphCutWidget(viewer)
    widget.device_combo.value = args.device

    def wait_for_answer(previous, timeout=120.0):
        deadline = time.perf_counter() + timeout
        while widget.last is previous or widget._coalescer.running:
            app.processEvents()
            if time.perf_counter() > deadline:
                raise TimeoutError(f"no answer within {timeout} s: {widget.status.value}")
        return time.perf_counter()

    widget.segment()
    wait_for_answer(None)
    print(f"first segmentation: {widget.last.summary()}", flush=True)
    widget.live_box.value = True
    app.processEvents()
    wait_for_answer(widget.last)
    latencies, solves = [], []
    for line in strokes(volume.shape[0], args.strokes):
        for point in line[:-1]:
            scribbles.paint(point, 2, refresh=False)
            app.processEvents()
        if widget._coalescer.running:  # (no answer is expected for partial strokes)
            wait_for_answer(widget.last)
        previous = widget.last
        started = time.perf_counter()
        scribbles.paint(line[-1], 2)
        finished = wait_for_answer(previous)
        latencies.append(finished - started)
        solves.append(widget.last.wall_seconds)
    return latencies, solves, widget.last


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=256, help="volume side (voxels)")
    parser.add_argument("--strokes", type=int, default=10)
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--mode", default="widget", choices=("widget", "api"))
    parser.add_argument("--viewer", action="store_true",
                        help="widget mode in a full napari.Viewer (needs OpenGL)")
    args = parser.parse_args()
    import napari
    started = time.perf_counter()
    volume, seeds = make((args.side,) * 3)
    print(f"{args.side}^3 volume made in {time.perf_counter() - started:.1f} s; napari "
          f"{napari.__version__}, mode {args.mode}", flush=True)
    run = run_api if args.mode == "api" else run_widget
    latencies, solves, last = run(volume, seeds, args)
    print(f"{args.side}^3, {args.strokes} strokes, mode {args.mode}"
          f"{' (napari.Viewer)' if args.viewer else ''}, {last.backend} ({last.device_name}): "
          f"scribble -> mask layer updated: median {statistics.median(latencies):.3f} s, max "
          f"{max(latencies):.3f} s; of which graphcut (scribbles -> mask) median "
          f"{statistics.median(solves):.3f} s; all incremental: {last.incremental}", flush=True)


if __name__ == "__main__":
    main()
