"""The app's new-user defects of issue #22, each driven as a user would (real mouse and key
events through QTest where practical), headless (Qt's offscreen platform), CPU backend."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import json  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("PyQt6.QtWidgets", reason="the desktop app needs PyQt6 (graphcut[gui])")
pytest.importorskip("pytestqt", reason="GUI tests need pytest-qt")

from PIL import Image  # noqa: E402
from PyQt6.QtCore import QPoint, Qt  # noqa: E402
from PyQt6.QtWidgets import QDialogButtonBox, QTextBrowser  # noqa: E402

from graphcut import BACKGROUND, FOREGROUND  # noqa: E402
from graphcut.gui.actions import controls_help  # noqa: E402
from graphcut.gui.boxes import help_dialog  # noqa: E402
from test_gui import drag, image_file, paint_both, window  # noqa: E402,F401


def _seed_rgba(window, row, col):
    return tuple(int(v) for v in window.view.seed_layer.array[row, col])


def test_seeds_of_a_newly_added_label_show_at_once(qtbot, window, image_file):
    window.open_image(image_file[0])
    qtbot.mouseClick(window.label_panel.add_button, Qt.MouseButton.LeftButton)
    value = window.document.labels.current
    colour = window.document.labels.get(value).colour
    assert value == 3
    drag(qtbot, window.view, [(45, 30), (45, 90)], Qt.MouseButton.LeftButton)
    assert window.seeds()[45, 60] == value
    assert _seed_rgba(window, 45, 60) == (*colour, 255)


def test_the_object_swatch_shows_the_selected_labels_colour(qtbot, window, image_file):
    def swatch_colour():
        icon = window._tool_actions[FOREGROUND].icon()
        colour = icon.pixmap(16, 16).toImage().pixelColor(8, 8)
        return colour.red(), colour.green(), colour.blue()

    window.open_image(image_file[0])
    assert swatch_colour() == window.document.labels.get(FOREGROUND).colour
    value = window.label_panel.add_label()
    window.label_panel.set_colour(value, (10, 200, 30))
    assert swatch_colour() == (10, 200, 30)
    window.label_panel.select(FOREGROUND)
    assert swatch_colour() == window.document.labels.get(FOREGROUND).colour


def test_a_box_alone_is_unsaved_work(qtbot, window, image_file, tmp_path):
    window.open_image(image_file[0])
    assert not window.is_modified()
    window.set_tool("box")
    drag(qtbot, window.view, [(20, 30), (70, 90)], Qt.MouseButton.LeftButton)
    assert window.region()[0] is not None and not window.seeds().any()
    assert window.is_modified() and window.isWindowModified()
    assert window.open_image(image_file[0])  # asks first
    assert window.questions == [1]
    window.set_region(lasso=[(10, 10), (10, 80), (70, 50)])
    window.close()
    assert window.questions == [1, 1]


def test_stroke_and_undo_back_to_the_saved_seeds_is_not_a_change(window, image_file, tmp_path):
    window.open_image(image_file[0])
    paint_both(window)
    assert window.save_seeds(tmp_path / "seeds.png")
    assert not window.is_modified() and not window.isWindowModified()
    window.paint_stroke([(45, 50), (45, 70)], BACKGROUND, 2)
    assert window.is_modified() and window.isWindowModified()
    window.undo_action.trigger()
    assert not window.is_modified() and not window.isWindowModified()
    window.redo_action.trigger()
    assert window.is_modified()
    assert window.load_seeds(tmp_path / "seeds.png")
    assert not window.is_modified()
    window.paint_stroke([(30, 60)], FOREGROUND, 1)
    window.undo_action.trigger()
    assert not window.is_modified()
    window.close()
    assert window.questions == []  # nothing unsaved: no question


def test_the_label_list_resets_for_the_next_image(window, image_file, tmp_path):
    window.open_image(image_file[0])
    value = window.label_panel.add_label("cell")
    window.paint_stroke([(45, 50)], value, 3)
    assert len(window.document.labels) == 2 and window.label_panel.list.count() == 2
    window.open_image(image_file[0])
    assert [label.value for label in window.document.labels.labels] == [FOREGROUND]
    assert window.label_panel.list.count() == 1 and window.document.labels.current == FOREGROUND
    paint_both(window)
    assert window.save_seeds(tmp_path / "next.png")
    saved = json.loads((tmp_path / "next.json").read_text())
    assert [entry["value"] for entry in saved["labels"]] == [FOREGROUND]


def test_lambda_arrows_multiply_by_1_1_and_0_9_at_every_value(qtbot, window):
    box = window._lam_box
    for start in (0.5, 10.0, 50.0, 900.0):
        box.setValue(start)
        box.setFocus()
        qtbot.keyClick(box, Qt.Key.Key_Up)
        assert box.value() == pytest.approx(round(start * 1.1, 2))
        box.setValue(start)
        qtbot.keyClick(box, Qt.Key.Key_Down)
        assert box.value() == pytest.approx(round(start * 0.9, 2))
    box.setValue(0.01)
    box.stepBy(1)
    assert box.value() > 0.01  # the smallest step still moves it


def test_enter_and_escape_give_the_keys_back_to_the_canvas(qtbot, window, image_file):
    window.open_image(image_file[0])
    paint_both(window)
    window.activateWindow()
    box = window._lam_box
    box.setFocus()
    qtbot.waitUntil(box.hasFocus, timeout=2000)
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "25")
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    assert window.lam() == 25.0
    qtbot.waitUntil(window.view.hasFocus, timeout=2000)
    qtbot.keyClick(window.view, Qt.Key.Key_B)  # a tool key reaches the tools, not the box
    assert window._tool == BACKGROUND and window.lam() == 25.0
    qtbot.keyClick(window.view, Qt.Key.Key_Delete, Qt.KeyboardModifier.ControlModifier)
    assert not window.seeds().any() and window.lam() == 25.0  # Ctrl+Del cleared the seeds
    brush = window._brush_box
    before = brush.value()
    brush.setFocus()
    qtbot.waitUntil(brush.hasFocus, timeout=2000)
    brush.lineEdit().selectAll()
    qtbot.keyClicks(brush.lineEdit(), "17")
    qtbot.keyClick(brush.lineEdit(), Qt.Key.Key_Escape)
    assert brush.value() == before
    qtbot.waitUntil(window.view.hasFocus, timeout=2000)
    window._lam_box.setFocus()
    qtbot.waitUntil(window._lam_box.hasFocus, timeout=2000)
    qtbot.mouseClick(window.view.viewport(), Qt.MouseButton.MiddleButton,
                     pos=window.view.viewport_pos_of_pixel(45, 60))
    qtbot.waitUntil(window.view.hasFocus, timeout=2000)  # a click on the image takes the keys
    window.wait_until_idle()


def test_controls_help_fits_the_screen_with_ok_visible(qtbot, window):
    dialog = help_dialog(window, "Controls", controls_help(window))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    screen = dialog.screen().availableGeometry()
    assert dialog.height() <= screen.height() and dialog.width() <= screen.width()
    ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    assert ok.isVisible()
    assert dialog.rect().contains(ok.mapTo(dialog, QPoint(ok.width() - 1, ok.height() - 1)))
    browser = dialog.findChild(QTextBrowser)
    # the text is taller than the dialog here: it scrolls instead of growing the dialog
    assert browser.document().size().height() > browser.viewport().height()
    assert browser.verticalScrollBar().maximum() > 0
    assert "Ctrl+Shift+S" in controls_help(window)


def test_a_lasso_along_a_line_says_it_encloses_no_area(qtbot, window, image_file):
    window.open_image(image_file[0])
    paint_both(window)
    window.wait_until_idle()
    window.set_tool("lasso")
    drag(qtbot, window.view, [(45, 20), (45, 40), (45, 60), (45, 80)], Qt.MouseButton.LeftButton)
    assert window.region() == (None, None)
    assert "no area" in window.statusBar().currentMessage()
    with pytest.raises(ValueError, match="no area"):
        window.set_region(lasso=[(10, 10), (20, 20), (30, 30)])


@pytest.mark.slow
def test_the_default_brush_is_visible_at_the_fitted_view_of_a_12_mp_image(window, tmp_path):
    path = tmp_path / "big.png"
    rng = np.random.default_rng(3)
    Image.fromarray(rng.integers(0, 255, (3000, 4000), dtype=np.uint8)).save(path)
    assert window.open_image(path)
    screen_radius = window.brush_radius() * window.view.scale_factor()
    assert screen_radius >= 3.0
    small = tmp_path / "small.png"
    Image.fromarray(rng.integers(0, 255, (90, 120), dtype=np.uint8)).save(small)
    assert window.open_image(small)
    assert window.brush_radius() == 4  # a small image keeps the default brush

