"""The napari plugin: its Qt-free solver side (scribbles -> mask, the one-job-at-a-time rule),
the npe2 manifest as napari's plugin manager finds it, and the dock widget driven headless
(Qt's offscreen platform) on napari's ViewerModel, with real Labels-layer painting.

napari's own Viewer needs an OpenGL context for its canvas, which Qt's offscreen platform does
not give; the test through napari's `make_napari_viewer` fixture therefore skips, saying so,
where no OpenGL is available (as on CI), and the widget tests use `ViewerModel` (napari's
viewer without the canvas), which exercises the same layers, events and widget code.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import graphcut  # noqa: E402
from graphcut.gui.napari._controller import (Coalescer, MissingScribbles,  # noqa: E402
                                             ScribbleSegmenter, run_here,
                                             seeds_from_scribbles)


def disc(shape=(40, 50), rgb=False, seed=0):
    rng = np.random.default_rng(seed)
    grid = np.indices(shape)
    centre = [n / 2 for n in shape]
    inside = sum(((g - c) / (n / 3)) ** 2 for g, c, n in zip(grid, centre, shape)) < 1
    image = np.clip(np.where(inside, 170, 80) + rng.normal(0, 20, shape), 0, 255)
    image = image.astype(np.uint8)
    if rgb:
        image = np.stack([image, 255 - image, image // 2], axis=-1)
    scribbles = np.zeros(shape, np.uint8)
    scribbles[tuple(n // 2 for n in shape)] = 1
    scribbles[(0,) * len(shape)] = 2
    scribbles[tuple(n - 1 for n in shape)] = 2
    return image, scribbles, inside


# ---- Qt-free solver side ------------------------------------------------------------------------

def test_scribble_labels_become_seeds():
    labels = np.array([[0, 1, 2, 3, 7]], dtype=np.int32)
    np.testing.assert_array_equal(seeds_from_scribbles(labels), [[0, 1, 2, 0, 0]])


@pytest.mark.parametrize("shape,rgb", [((40, 50), False), ((40, 50), True), ((12, 20, 24), False)])
def test_scribble_segmenter_equals_segment(shape, rgb):
    image, scribbles, inside = disc(shape, rgb)
    segmenter = ScribbleSegmenter()
    result = segmenter.segment(image, scribbles, rgb=rgb, device="cpu")
    expected = graphcut.segment(image, seeds_from_scribbles(scribbles), device="cpu",
                                channel_axis=-1 if rgb else None)
    np.testing.assert_array_equal(result.mask, expected)
    assert (result.mask == inside).mean() > 0.9
    assert result.backend == "cpu" and not result.incremental
    assert ("voxels" if len(shape) == 3 else "px") in result.summary()
    scribbles[0, 1] = 2
    again = segmenter.segment(image, scribbles, rgb=rgb, device="cpu", image_key=None)
    assert again.incremental
    np.testing.assert_array_equal(again.mask, graphcut.segment(
        image, seeds_from_scribbles(scribbles), device="cpu", channel_axis=-1 if rgb else None))
    third = segmenter.segment(image, scribbles, rgb=rgb, device="cpu", lam=3)
    assert not third.incremental  # another lambda: a new session


def test_scribble_segmenter_errors():
    image, scribbles, _ = disc()
    segmenter = ScribbleSegmenter()
    with pytest.raises(MissingScribbles, match="object scribble"):
        segmenter.segment(image, np.where(scribbles == 1, 0, scribbles), device="cpu")
    with pytest.raises(MissingScribbles, match="background scribble"):
        segmenter.segment(image, np.where(scribbles == 2, 0, scribbles), device="cpu")
    with pytest.raises(ValueError, match=r"\(40, 49\) but the image's is \(40, 50\)"):
        segmenter.segment(image, scribbles[:, 1:], device="cpu")
    with pytest.raises(ValueError, match="2-D image, an RGB image or a 3-D volume"):
        segmenter.segment(np.zeros((2, 3, 4, 5)), np.zeros((2, 3, 4, 5)), device="cpu")


def test_coalescer_runs_one_job_and_only_the_newest_request():
    started, done = [], []
    queued = []  # jobs handed to a "worker" that the test finishes by hand

    def submit(job, on_done, on_error, on_finished):
        queued.append((job, on_done, on_finished))

    counter = iter(range(100))

    def make_job():
        number = next(counter)
        started.append(number)
        return lambda: number

    coalescer = Coalescer(make_job, submit, done.append, pytest.fail)
    coalescer.request()
    for _ in range(3):      # three strokes while the first job runs
        coalescer.request()
    assert started == [0] and coalescer.pending
    job, on_done, on_finished = queued.pop(0)
    on_done(job())
    on_finished()
    assert started == [0, 1] and not coalescer.pending   # one catch-up job, not three
    job, on_done, on_finished = queued.pop(0)
    on_done(job())
    on_finished()
    assert done == [0, 1] and not coalescer.running and not queued


def test_coalescer_reports_errors_and_recovers():
    errors, done = [], []

    def failing():
        raise MissingScribbles("paint an object scribble (label 1)")

    jobs = iter([failing, lambda: 5])
    coalescer = Coalescer(lambda: next(jobs), run_here, done.append, errors.append)
    coalescer.request()
    coalescer.request()
    assert [str(e) for e in errors] == ["paint an object scribble (label 1)"] and done == [5]


# ---- manifest -----------------------------------------------------------------------------------

def test_manifest_is_discovered_by_napari_plugin_manager():
    npe2 = pytest.importorskip("npe2")
    manager = npe2.PluginManager.instance()
    manager.discover()
    manifest = manager.get_manifest("graphcut")
    assert [w.display_name for w in manifest.contributions.widgets] == ["Graph cut"]
    assert {s.key for s in manifest.contributions.sample_data} == {"cells", "coins"}
    widget_command = manifest.contributions.widgets[0].command
    command = next(c for c in manifest.contributions.commands if c.id == widget_command)
    assert command.python_name == "graphcut.gui.napari._widget:GraphCutWidget"


def test_sample_data_commands():
    from graphcut.gui.napari import _samples
    (volume, _, kind), (seeds, _, labels_kind) = _samples.cells_volume()
    assert (kind, labels_kind) == ("image", "labels") and volume.shape == seeds.shape
    (image, _, _), (seeds, _, _) = _samples.coins_image()
    assert image.shape[:2] == seeds.shape


# ---- the dock widget ----------------------------------------------------------------------------

@pytest.fixture
def model_viewer(qtbot):
    pytest.importorskip("napari")
    from napari.components import ViewerModel
    return ViewerModel()


def make_widget(viewer, qtbot, **kwargs):
    from graphcut.gui.napari._widget import GraphCutWidget
    widget = GraphCutWidget(viewer, **kwargs)
    qtbot.addWidget(widget.native)
    widget.device_combo.value = "cpu"
    return widget


def mask_layer(viewer):
    from graphcut.gui.napari._widget import MASK_LAYER
    return viewer.layers[MASK_LAYER]


@pytest.mark.parametrize("shape,rgb", [((40, 50), False), ((40, 50), True), ((12, 20, 24), False)])
def test_widget_segments_2d_rgb_and_volume(model_viewer, qtbot, shape, rgb):
    image, scribbles, _ = disc(shape, rgb)
    model_viewer.add_image(image, name="image", rgb=rgb)
    model_viewer.add_labels(scribbles, name="my scribbles")
    widget = make_widget(model_viewer, qtbot, submit=run_here)
    assert widget.image_combo.value.name == "image"
    assert widget.scribbles_combo.value.name == "my scribbles"
    widget.segment_button.clicked.emit()
    expected = graphcut.segment(image, seeds_from_scribbles(scribbles), device="cpu",
                                channel_axis=-1 if rgb else None)
    np.testing.assert_array_equal(mask_layer(model_viewer).data, expected.astype(np.uint8))
    assert widget.status.value.startswith("cpu (CPU")


def stroke(layer, coord, label):
    """Paint through napari's API (which emits the Labels layer's `paint` event), then let
    Qt deliver what the widget scheduled."""
    from qtpy.QtWidgets import QApplication
    layer.paint(coord, label)
    QApplication.processEvents()


def test_widget_live_follows_painting(model_viewer, qtbot):
    image, _, _ = disc((12, 20, 24))
    model_viewer.add_image(image, name="volume")
    widget = make_widget(model_viewer, qtbot, submit=run_here)
    layer = widget.add_scribbles_layer()
    assert layer.data.shape == image.shape and widget.scribbles_combo.value is layer
    widget.live_box.value = True
    layer.brush_size = 3
    stroke(layer, (6, 10, 12), 1)
    assert "background scribble" in widget.status.value
    stroke(layer, (0, 2, 2), 2)
    first = mask_layer(model_viewer).data.copy()
    assert first.any() and not widget.last.incremental
    stroke(layer, (6, 3, 3), 2)
    assert widget.last.incremental
    np.testing.assert_array_equal(
        mask_layer(model_viewer).data,
        graphcut.segment(image, seeds_from_scribbles(layer.data), device="cpu"))
    widget.live_box.value = False
    stroke(layer, (6, 17, 20), 2)
    assert widget.last.incremental and "0 px" not in widget.status.value
    np.testing.assert_array_equal(mask_layer(model_viewer).data.astype(bool),
                                  widget.last.mask)   # unchanged: live is off


def test_widget_thread_worker(model_viewer, qtbot):
    """The default path: the segmentation runs in a napari thread_worker."""
    image, scribbles, _ = disc()
    model_viewer.add_image(image, name="image")
    model_viewer.add_labels(scribbles, name="scribbles")
    widget = make_widget(model_viewer, qtbot)
    widget.segment()
    qtbot.waitUntil(lambda: widget.last is not None, timeout=30000)
    qtbot.waitUntil(lambda: not widget._coalescer.running, timeout=30000)
    np.testing.assert_array_equal(
        mask_layer(model_viewer).data,
        graphcut.segment(image, seeds_from_scribbles(scribbles), device="cpu"))


def test_widget_reports_missing_layers(model_viewer, qtbot):
    widget = make_widget(model_viewer, qtbot, submit=run_here)
    widget.segment()
    assert "choose an image layer" in widget.status.value
    assert widget.add_scribbles_layer() is None and "open an image" in widget.status.value


def test_widget_in_napari_viewer(make_napari_viewer, qtbot):
    """The widget docked through napari's plugin manager in a real napari Viewer (needs an
    OpenGL context for the canvas; skipped, with the reason, where there is none)."""
    image, scribbles, _ = disc()
    viewer = make_napari_viewer()
    try:  # the query napari's image layers make first; it fails without an OpenGL context
        from napari._vispy.utils.gl import get_gl_extensions
        get_gl_extensions()
    except Exception as error:
        pytest.skip(f"napari's canvas has no OpenGL context here ({error})")
    viewer.add_image(image, name="image")
    viewer.add_labels(scribbles, name="scribbles")
    _, widget = viewer.window.add_plugin_dock_widget("graphcut", "Graph cut")
    widget.device_combo.value = "cpu"
    widget.segment()
    qtbot.waitUntil(lambda: widget.last is not None, timeout=30000)
    assert "graphcut mask" in viewer.layers
