"""The app's Box and Lasso tools, label list, clean-up and the settings saved with the seeds,
driven headless with real mouse and key events; every result is compared with
``graphcut.segment`` on the same seeds and options (CPU backend, small images)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import json  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("PyQt6.QtWidgets", reason="the desktop app needs PyQt6 (graphcut[gui])")
pytest.importorskip("pytestqt", reason="GUI tests need pytest-qt")

from PIL import Image  # noqa: E402
from PyQt6.QtCore import Qt  # noqa: E402
from skimage.draw import polygon2mask  # noqa: E402

import graphcut  # noqa: E402
from graphcut.gui.strokes import BACKGROUND, FOREGROUND, SeedCanvas  # noqa: E402
from graphcut.gui.tools import box_from_corners, lasso_vertices  # noqa: E402
from test_gui import (drag, image_file, make_window, process_window,  # noqa: E402,F401
                      window)

LEFT, RIGHT = Qt.MouseButton.LeftButton, Qt.MouseButton.RightButton


def expected(window, **changes):
    """``graphcut.segment`` of the window's seeds with the options the window uses."""
    options = {**window.segment_options(), **changes}
    return graphcut.segment(window.image(), window.seeds(), **options, device="cpu")


def segment_with_cli(image_path, seeds_path, out_path) -> np.ndarray:
    """``graphcut segment IMAGE --seeds SEEDS -o OUT`` (its settings JSON is read too)."""
    from click.testing import CliRunner

    from graphcut.cli import main
    result = CliRunner().invoke(main, ["segment", str(image_path), "--seeds", str(seeds_path),
                                       "-o", str(out_path), "--device", "cpu"])
    assert result.exit_code == 0, result.output
    return np.asarray(Image.open(out_path))


def two_objects_file(tmp_path):
    """A warm disc (left), a green square (right) on a blue background, and a speck of the
    disc's colour far from both (an island the clean-up removes)."""
    rng = np.random.default_rng(3)
    rows, cols = np.indices((80, 120))
    image = np.empty((80, 120, 3))
    image[...] = (50, 90, 170)
    disc = (rows - 40) ** 2 + (cols - 32) ** 2 <= 18 ** 2
    square = (rows >= 25) & (rows < 55) & (cols >= 75) & (cols < 105)
    image[disc] = (210, 110, 50)
    image[square] = (60, 200, 70)
    image[70:75, 110:115] = (210, 110, 50)
    image = np.clip(image + rng.normal(0, 12, image.shape), 0, 255).astype(np.uint8)
    path = tmp_path / "two.png"
    Image.fromarray(image).save(path)
    return path, image, disc, square


# ----- Box ---------------------------------------------------------------------------------------
def test_box_drag_gives_the_box_constrained_segmentation(qtbot, window, image_file):
    path, image, truth = image_file
    window.open_image(path)
    qtbot.keyClick(window.view, Qt.Key.Key_R)
    drag(qtbot, window.view, [(14, 20), (50, 60), (76, 100)], LEFT)
    assert window.region() == ((14, 20, 77, 101), None)
    assert not window.seeds().any()  # the box tool paints no seeds
    window.wait_until_idle()
    mask = window.mask()
    np.testing.assert_array_equal(mask, expected(window))
    assert window.segment_options()["box"] == (14, 20, 77, 101)
    outside = np.ones(mask.shape, bool)
    outside[14:77, 20:101] = False
    assert mask.any() and not mask[outside].any()  # nothing outside the box is object
    # strokes after the box refine it; the right button still paints background
    drag(qtbot, window.view, [(45, 50), (45, 70)], RIGHT)
    window.wait_until_idle()
    np.testing.assert_array_equal(window.mask(), expected(window))
    assert not window.mask()[45, 50:71].any() and window.errors == []


def test_box_undo_redo_replace_and_clear(qtbot, window, image_file):
    window.open_image(image_file[0])
    window.set_tool("box")
    drag(qtbot, window.view, [(10, 10), (80, 110)], LEFT)
    drag(qtbot, window.view, [(20, 30), (70, 90)], LEFT)  # a new box replaces the first
    assert window.region() == ((20, 30, 71, 91), None)
    window.undo_action.trigger()
    assert window.region() == ((10, 10, 81, 111), None)
    window.wait_until_idle()
    np.testing.assert_array_equal(window.mask(), expected(window, box=(10, 10, 81, 111)))
    window.undo_action.trigger()
    assert window.region() == (None, None)
    window.wait_until_idle()
    assert window.mask() is None  # no seeds and no box: nothing to segment
    window.redo_action.trigger()
    assert window.region() == ((10, 10, 81, 111), None)
    qtbot.keyClick(window.view, Qt.Key.Key_Delete, Qt.KeyboardModifier.ShiftModifier)
    assert window.region() == (None, None)
    window.undo_action.trigger()
    assert window.region() == ((10, 10, 81, 111), None)
    window.wait_until_idle()
    np.testing.assert_array_equal(window.mask(), expected(window))


def test_box_and_lasso_geometry():
    assert box_from_corners((5.4, 9.6), (2, 3), (20, 20)) == (2, 3, 6, 11)
    assert box_from_corners((-5, -5), (30, 40), (20, 25)) == (0, 0, 20, 25)
    assert box_from_corners((-5, -5), (-2, -1), (20, 25)) is None
    assert lasso_vertices([(0, 0), (0.2, 0.1), (0, 5), (5, 5)]) == ((0, 0), (0, 5), (5, 5))
    assert lasso_vertices([(0, 0), (0, 5)]) is None


def test_canvas_undo_covers_the_constraint():
    canvas = SeedCanvas((10, 10))
    canvas.begin_edit()
    canvas.set_constraint(("box", 1))
    assert canvas.end_edit()
    canvas.begin_edit()
    canvas.paint((5, 5), (5, 5), FOREGROUND, 1)
    canvas.set_constraint(("box", 2))
    assert canvas.end_edit()
    canvas.begin_edit()
    assert not canvas.end_edit()  # nothing changed
    assert canvas.undo() and canvas.constraint == ("box", 1) and not canvas.labels.any()
    region = canvas.undo()
    assert region == (slice(0, 0), slice(0, 0)) and canvas.constraint is None
    assert canvas.redo() and canvas.constraint == ("box", 1)


# ----- Lasso -------------------------------------------------------------------------------------
def test_lasso_drag_gives_the_lasso_constrained_segmentation(qtbot, window, image_file):
    path, image, truth = image_file
    window.open_image(path)
    qtbot.keyClick(window.view, Qt.Key.Key_L)
    outline = [(10, 60), (20, 95), (45, 105), (75, 95), (82, 60), (75, 25), (45, 15), (20, 25)]
    drag(qtbot, window.view, outline, LEFT)
    box, lasso = window.region()
    assert box is None and len(lasso) == len(outline)
    np.testing.assert_allclose(lasso, outline, atol=0.5)  # screen pixels round a little
    window.wait_until_idle()
    mask = window.mask()
    np.testing.assert_array_equal(mask, expected(window))
    inside = polygon2mask(mask.shape, np.asarray(lasso))
    assert mask.any() and not mask[~inside].any()  # nothing outside the lasso is object
    assert np.count_nonzero(mask & truth) > 0.9 * np.count_nonzero(truth & inside)
    window.undo_action.trigger()
    assert window.region() == (None, None)


# ----- labels ------------------------------------------------------------------------------------
def test_label_list_add_rename_colour_hide(qtbot, window, tmp_path):
    path, image, disc, square = two_objects_file(tmp_path)
    window.open_image(path)
    panel = window.label_panel
    qtbot.keyClick(window.view, Qt.Key.Key_N)  # Add object label
    assert [label.value for label in panel.labels.labels] == [1, 3]
    assert panel.labels.current == 3 and panel.list.currentRow() == 1
    item = panel.list.item(1)
    item.setText("Square")  # what a double-click edit does
    assert panel.labels.get(3).name == "Square"
    drag(qtbot, window.view, [(40, 85), (40, 95)], LEFT)  # paints the selected label
    assert window.seeds()[40, 90] == 3
    panel.list.setCurrentRow(0)
    drag(qtbot, window.view, [(40, 25), (40, 40)], LEFT)
    assert window.seeds()[40, 30] == FOREGROUND
    drag(qtbot, window.view, [(5, 5), (5, 114), (75, 114)], RIGHT)
    window.wait_until_idle()
    labels = window.result_labels()
    assert set(np.unique(labels)) == {0, 1, 3}
    layer = window.view.result_layer
    np.testing.assert_array_equal(layer._labels, labels)
    panel.set_colour(3, (10, 20, 30))
    assert tuple(window.view.seed_layer.array[40, 90]) == (10, 20, 30, 255)
    assert tuple(layer._colours[3]) == (10, 20, 30, 255)
    item.setCheckState(Qt.CheckState.Unchecked)  # hide
    assert not panel.labels.get(3).visible
    assert window.view.seed_layer.array[40, 90, 3] == 0 and layer._colours[3, 3] == 0
    assert window.view.seed_layer.array[40, 30, 3] == 255  # the other label stays drawn


def test_several_objects_equal_segment_and_clean_up_toggles(qtbot, process_window, tmp_path):
    window = process_window
    path, image, disc, square = two_objects_file(tmp_path)
    window.open_image(path)
    window.model_actions["histogram"].trigger()  # the speck has the object's colour
    window.paint_stroke([(40, 25), (40, 40)], FOREGROUND, 3)
    value = window.label_panel.add_label("square")
    window.paint_stroke([(40, 85), (40, 95)], value, 3)
    window.paint_stroke([(3, 3), (3, 116), (76, 116)], BACKGROUND, 2)
    window.wait_until_idle(timeout=60)
    labels = window.result_labels()
    np.testing.assert_array_equal(labels, expected(window))
    assert np.count_nonzero((labels == 1) == disc) > 0.97 * disc.size
    assert np.count_nonzero((labels == value) == square) > 0.97 * square.size
    assert window.segment_options()["keep"] == "connected"
    assert not labels[70:75, 110:115].any()  # the speck: removed by the clean-up
    window.cleanup_action.trigger()  # off
    window.wait_until_idle(timeout=60)
    np.testing.assert_array_equal(window.result_labels(),
                                  expected(window, keep="all", fill_holes=0))
    assert window.result_labels()[70:75, 110:115].any()
    assert window.errors == []


def test_one_object_clean_up_and_gmm(window, tmp_path):
    path, image, disc, square = two_objects_file(tmp_path)
    window.open_image(path)
    window.model_actions["histogram"].trigger()  # the speck has the object's colour
    window.paint_stroke([(40, 25), (40, 40)], FOREGROUND, 3)
    window.paint_stroke([(3, 3), (3, 116), (76, 116), (76, 3)], BACKGROUND, 2)
    window.paint_stroke([(40, 80), (40, 100)], BACKGROUND, 2)
    window.wait_until_idle()
    cleaned = window.mask()
    np.testing.assert_array_equal(cleaned, expected(window))
    assert not cleaned[70:75, 110:115].any()
    window.set_cleanup(False)
    window.wait_until_idle()
    np.testing.assert_array_equal(window.mask(), expected(window))
    assert window.mask()[70:75, 110:115].any()  # the speck has the object's colour
    window.model_actions["gmm"].trigger()
    assert window.segment_options()["model"] == "gmm"
    window.wait_until_idle(timeout=60)
    np.testing.assert_array_equal(window.mask(), expected(window))


# ----- settings that travel ----------------------------------------------------------------------
def test_saved_seeds_and_settings_reproduce_the_app_in_the_cli(window, tmp_path):
    path, image, disc, square = two_objects_file(tmp_path)
    window.open_image(path)
    window.set_lam(12.0)
    window.set_region(box=(2, 2, 78, 118))
    window.paint_stroke([(40, 25), (40, 40)], FOREGROUND, 3)
    value = window.label_panel.add_label("square")
    window.paint_stroke([(40, 85), (40, 95)], value, 3)
    window.paint_stroke([(10, 60), (70, 60)], BACKGROUND, 2)
    window.wait_until_idle()
    seeds_path, labels_path = tmp_path / "seeds.png", tmp_path / "app_labels.png"
    assert window.save_seeds(seeds_path) and window.save_labels(labels_path)
    settings = json.loads((tmp_path / "seeds.json").read_text())
    assert settings["box"] == [2, 2, 78, 118] and settings["lam"] == 12.0
    assert settings["keep"] == "connected" and settings["model"] == "auto"
    assert [entry["name"] for entry in settings["labels"]] == ["Object 1", "square"]
    app = np.asarray(Image.open(labels_path))
    np.testing.assert_array_equal(segment_with_cli(path, seeds_path, tmp_path / "cli.png"), app)
    np.testing.assert_array_equal(app, window.result_labels())
    assert set(np.unique(app)) == {0, 1, value}

    # load round trip: seeds, box, lambda, clean-up and label names come back
    window.set_region()
    window.set_cleanup(False)
    window.set_lam(3.0)
    window.label_panel.rename(value, "renamed")
    window.clear_action.trigger()
    assert window.load_seeds(seeds_path)
    assert window.region() == ((2, 2, 78, 118), None) and window.lam() == 12.0
    assert window.cleanup_action.isChecked()
    assert window.label_panel.labels.get(value).name == "square"
    np.testing.assert_array_equal(window.seeds(), graphcut.read_seeds(seeds_path, multi=True))
    window.wait_until_idle()
    np.testing.assert_array_equal(window.result_labels(), app)
    assert window.errors == []


def test_one_object_with_a_lasso_travels_to_the_cli(window, image_file, tmp_path):
    path, image, truth = image_file
    window.open_image(path)
    window.set_region(lasso=[(8, 60), (45, 108), (84, 60), (45, 12)])
    window.paint_stroke([(45, 50), (45, 70)], FOREGROUND, 2)
    window.wait_until_idle()
    assert window.save_seeds(tmp_path / "s.png") and window.save_mask(tmp_path / "app.png")
    np.testing.assert_array_equal(segment_with_cli(path, tmp_path / "s.png", tmp_path / "c.png"),
                                  np.asarray(Image.open(tmp_path / "app.png")))


def test_controls_help_lists_the_new_tools(window, monkeypatch):
    shown = []
    monkeypatch.setattr(window, "show_help", lambda title, text: shown.append(text))
    window.help_action.trigger()
    text = shown[0]
    for entry in ("Box", "Lasso", "Clean up result", "Next appearance model",
                  "Reset λ to the model default", "Add object label", "Clear box and lasso",
                  "Save labels"):
        assert entry in text
    assert "<b>R</b>" in text and "<b>L</b>" in text
    models = text.index("<i>Segment &gt; Appearance model</i>")  # the submenu's keys
    assert "<i>" not in text[models + 3:text.index("<b>M</b>", models)]  # under its title
