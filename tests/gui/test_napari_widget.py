"""The napari dock widget (pytest-qt, Qt's offscreen platform) with the solver processes the
plugin uses, the npe2 manifest as napari finds it, and the sample data.

napari's own Viewer needs an OpenGL context for its canvas, which the offscreen platform does
not give; the test through napari's ``make_napari_viewer`` therefore skips, saying so, where
there is none (run it under Xvfb to include it), and the other tests use ``ViewerModel``."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("napari")
pytest.importorskip("pytestqt")

import graphcut  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def disc(shape=(40, 50)):
    rng = np.random.default_rng(0)
    grid = np.indices(shape)
    inside = sum(((g - n / 2) / (n / 3)) ** 2 for g, n in zip(grid, shape)) < 1
    return np.clip(np.where(inside, 170, 80) + rng.normal(0, 20, shape), 0, 255).astype(np.uint8)


@pytest.fixture
def model_viewer(qtbot):
    from napari.components import ViewerModel
    return ViewerModel()


def make_widget(viewer, qtbot, **kwargs):
    from graphcut.gui.napari._widget import GraphCutWidget
    widget = GraphCutWidget(viewer, **kwargs)
    qtbot.addWidget(widget.native)
    widget.device_combo.value = "cpu"
    return widget


def expected_of(widget, image, scribbles, **kwargs):
    options = widget.session.options.segment_kwargs(widget.session.lam)
    return graphcut.segment(image, np.asarray(scribbles), device="cpu", **options, **kwargs)


def wait_exact(widget, qtbot):
    qtbot.waitUntil(lambda: widget.session.last_outcome is not None
                    and widget.session.last_outcome.factor == 1
                    and not widget.session.is_busy(), timeout=60000)


def test_widget_live_in_solver_processes(model_viewer, qtbot):
    """Live painting in the app's solver processes: each stroke is answered, the viewer's
    selection stays on the scribbles, a changed lambda re-segments."""
    image = disc()
    model_viewer.add_image(image, name="image")
    widget = make_widget(model_viewer, qtbot)
    layer = widget.add_scribbles_layer()
    assert layer.data.shape == image.shape and widget.scribbles_combo.value is layer
    assert model_viewer.layers.selection.active is layer
    widget.live_box.value = True
    layer.brush_size = 3
    layer.paint((20, 25), 1)
    qtbot.waitUntil(lambda: "background (label 2)" in widget.status.value, timeout=10000)
    layer.paint((2, 2), 2)
    wait_exact(widget, qtbot)
    output = widget.session.output_layer
    np.testing.assert_array_equal(output.data, expected_of(widget, image, layer.data)
                                  .astype(np.uint8))
    assert model_viewer.layers.selection.active is layer
    assert not any(choice is output for choice in widget.scribbles_combo.choices)
    number = widget.session.controller.latest
    widget.lam_box.value = 90.0
    wait_exact(widget, qtbot)
    assert widget.session.controller.latest > number
    np.testing.assert_array_equal(output.data, expected_of(widget, image, layer.data)
                                  .astype(np.uint8))
    controller = widget.session.controller
    process = controller._exact.client._process
    assert process is not None and process.poll() is None
    model_viewer.layers.remove(layer)  # the session's memory goes with its layers
    assert widget.session.controller is None
    assert process.wait(10) is not None


def test_long_status_text_does_not_widen_the_dock(model_viewer, qtbot):
    widget = make_widget(model_viewer, qtbot)
    widget.native.show()
    width = widget.native.sizeHint().width()
    widget._show_status("a very long status line " * 20, False)
    assert widget.native.sizeHint().width() <= width


def test_widget_reports_missing_layers(model_viewer, qtbot):
    widget = make_widget(model_viewer, qtbot)
    widget.segment()
    assert "choose an image layer" in widget.status.value
    assert widget.add_scribbles_layer() is None and "open an image" in widget.status.value


def test_channel_choice_shows_for_ambiguous_images(model_viewer, qtbot):
    widget = make_widget(model_viewer, qtbot)
    widget.native.show()
    model_viewer.add_image(np.zeros((20, 30), np.uint8), name="flat")
    assert not widget.channels_combo.visible
    model_viewer.add_image(np.zeros((3, 20, 30), np.uint8), name="cyx")
    widget.image_combo.value = model_viewer.layers["cyx"]
    assert widget.channels_combo.visible and widget.channels_combo.value == "ask"
    widget.channels_combo.value = "first"
    assert widget.add_scribbles_layer().data.shape == (20, 30)


def test_box_from_a_shapes_layer():
    from napari.layers import Shapes

    from graphcut.gui.napari._widget import box_of
    layer = Shapes([np.array([[4.2, 5.0], [4.2, 20.0], [15.0, 20.0], [15.0, 5.0]])],
                   shape_type="rectangle")
    assert box_of(layer) == (4, 5, 16, 21)
    assert box_of(None) is None


def test_manifest_is_discovered_and_the_docs_name_its_menu():
    npe2 = pytest.importorskip("npe2")
    manager = npe2.PluginManager.instance()
    manager.discover()
    manifest = manager.get_manifest("graphcut")
    widgets = [w.display_name for w in manifest.contributions.widgets]
    assert widgets == ["Graph cut segmentation"]
    assert {s.key for s in manifest.contributions.sample_data} == {"cells", "coins"}
    command = next(c for c in manifest.contributions.commands
                   if c.id == manifest.contributions.widgets[0].command)
    assert command.python_name == "graphcut.gui.napari._widget:GraphCutWidget"
    # napari's Plugins menu shows "<widget> (<plugin display name>)"
    menu = f"{widgets[0]} ({manifest.display_name})"
    assert menu in (ROOT / "docs" / "napari.md").read_text(encoding="utf-8")


def test_read_only_sample_scribbles_can_be_painted(monkeypatch):
    from napari.components import ViewerModel

    from graphcut.gui.napari import _samples
    original = graphcut.read_seeds

    def read_only(*args, **kwargs):
        seeds = np.asarray(original(*args, **kwargs))
        seeds.flags.writeable = False  # as a reader handing back a read-only view does
        return seeds

    monkeypatch.setattr(graphcut, "read_seeds", read_only)
    viewer = ViewerModel()
    for data, meta, kind in _samples.coins_image():
        getattr(viewer, f"add_{kind}")(data, **meta)
    scribbles = viewer.layers["scribbles"]
    scribbles.brush_size = 3
    scribbles.paint((10, 10), 2)
    assert scribbles.data[10, 10] == 2
    (volume, _, kind), (seeds, _, _) = _samples.cells_volume()
    assert kind == "image" and volume.shape == seeds.shape and seeds.flags.writeable


def test_widget_in_napari_viewer(make_napari_viewer, qtbot):
    """The widget docked through napari's plugin manager in a real napari Viewer (needs an
    OpenGL context for the canvas; skipped, with the reason, where there is none)."""
    image = disc()
    viewer = make_napari_viewer()
    try:  # the query napari's image layers make first; it fails without an OpenGL context
        from napari._vispy.utils.gl import get_gl_extensions
        get_gl_extensions()
    except Exception as error:
        pytest.skip(f"napari's canvas has no OpenGL context here ({error})")
    viewer.add_image(image, name="image")
    scribbles = viewer.add_labels(np.zeros(image.shape, np.uint8), name="scribbles")
    scribbles.data[20, 25], scribbles.data[0, 0] = 1, 2
    _, widget = viewer.window.add_plugin_dock_widget("graphcut", "Graph cut segmentation")
    widget.device_combo.value = "cpu"
    viewer.layers.selection.active = scribbles
    widget.segment()
    wait_exact(widget, qtbot)
    np.testing.assert_array_equal(widget.session.output_layer.data,
                                  expected_of(widget, image, scribbles.data).astype(np.uint8))
    assert viewer.layers.selection.active is scribbles


def test_errors_notify_without_traceback_and_status_lines_do_not(model_viewer, qtbot,
                                                                 monkeypatch):
    import napari.utils.notifications as notifications
    shown = []
    monkeypatch.setattr(notifications, "show_error", shown.append)
    image = disc()
    model_viewer.add_image(image, name="image")
    widget = make_widget(model_viewer, qtbot, use_process=False)
    layer = widget.add_scribbles_layer()
    layer.data[20, 25] = 1  # an object, no background yet: the normal first step
    widget.segment()
    assert "background (label 2)" in widget.status.value and shown == []
    wrong = model_viewer.add_labels(np.zeros((5, 5), np.uint8), name="wrong")
    widget.scribbles_combo.value = wrong
    widget.segment()
    assert len(shown) == 1 and "has shape (5, 5)" in shown[0]
    assert isinstance(shown[0], str)  # a message: napari shows no "View Traceback" for it


def test_closing_the_dock_widget_ends_its_solvers_and_handlers(model_viewer, qtbot):
    """A closed dock widget (deleted by Qt later, as napari does) closes its session and
    disconnects from the viewer, without crashing however late the deletion comes."""
    from graphcut.gui.napari._widget import GraphCutWidget
    image = disc()
    model_viewer.add_image(image, name="image")
    widget = GraphCutWidget(model_viewer, use_process=False)
    widget.device_combo.value = "cpu"
    layer = widget.add_scribbles_layer()
    layer.data[20, 25], layer.data[0, 0] = 1, 2
    widget.segment()
    wait_exact(widget, qtbot)
    session, native = widget.session, widget.native
    refreshed = []
    widget._refresh_choices = lambda *args: refreshed.append(args)  # a marker
    assert session.controller is not None
    native.deleteLater()
    del widget, native
    qtbot.waitUntil(lambda: session.controller is None, timeout=10000)
    model_viewer.add_image(image, name="later")  # no handler of the closed widget runs
    qtbot.wait(50)
    assert session.controller is None and refreshed == []
