"""The app as a new user meets it: saving while segmenting, large and multi-page images, lossless
masks, the time shown, opening broken files, zooming from the fitted view, the toolbar, the
empty canvas, the Controls help and lost mouse releases.

Headless (Qt's offscreen platform) with real mouse and key events, like ``test_gui.py``, whose
helpers and fixtures this module uses. Every segmentation runs on the CPU backend.
"""

import os
import re
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("PyQt6.QtWidgets", reason="the desktop app needs PyQt6 (graphcut[gui])")
pytest.importorskip("pytestqt", reason="GUI tests need pytest-qt")

from PIL import Image  # noqa: E402
from PyQt6.QtCore import QEvent, QPoint, QPointF, Qt  # noqa: E402
from PyQt6.QtGui import QKeySequence, QMouseEvent  # noqa: E402
from PyQt6.QtWidgets import QApplication, QProgressDialog, QToolBar  # noqa: E402

import graphcut  # noqa: E402
from graphcut.gui import MainWindow  # noqa: E402
from graphcut.gui.strokes import BACKGROUND, FOREGROUND  # noqa: E402
from test_gui import (image_file, make_window, paint_both, process_window, wheel,  # noqa: E402,F401
                      window)


def expected_mask(window):
    """A fresh segmentation of the seeds on screen, as the CLI would compute it."""
    return graphcut.segment(window.image(), window.seeds(), **window.segment_options(),
                           device="cpu")


def read_mask(path):
    return np.asarray(Image.open(path)) == 255


@pytest.fixture
def slow_session(monkeypatch):
    """Every new segmentation session (a new image or λ) takes 0.4 s more to build."""
    build = graphcut.Segmenter.__init__

    def slow_build(self, *args, **kwargs):
        time.sleep(0.4)
        build(self, *args, **kwargs)

    monkeypatch.setattr(graphcut.Segmenter, "__init__", slow_build)
    return 0.4


# ----- 1. saving while "Segmenting..." saves the result of the seeds on screen ------------------
def test_save_while_segmenting_writes_the_current_seeds_result(process_window, image_file,
                                                                tmp_path):
    window = process_window
    window.open_image(image_file[0])
    paint_both(window)  # the first segmentation starts; nothing is shown yet
    assert window.is_busy() and window.mask() is None
    assert window.save_mask_action.isEnabled()
    assert window.save_mask(tmp_path / "first.png")
    np.testing.assert_array_equal(read_mask(tmp_path / "first.png"), expected_mask(window))

    before = window.mask()
    window.paint_stroke([(10, 85), (80, 85)], BACKGROUND, 3)  # cuts the object's right side
    assert window.is_busy()
    assert window.save_mask(tmp_path / "second.png")
    saved = read_mask(tmp_path / "second.png")
    np.testing.assert_array_equal(saved, expected_mask(window))
    assert not np.array_equal(saved, before)
    assert not saved[window.seeds() == BACKGROUND].any()
    assert window.save_overlay(tmp_path / "overlay.png")
    assert window.errors == []


def test_save_after_a_lam_change_waits_for_the_new_lam(window, tmp_path):
    # a weak-contrast noisy disc, where λ changes the result
    rows, cols = np.indices((90, 120))
    inside = ((rows - 45) / 26) ** 2 + ((cols - 60) / 34) ** 2 <= 1
    noise = np.random.default_rng(5).normal(0, 30, inside.shape)
    image = np.clip(np.where(inside, 140, 100) + noise, 0, 255).astype(np.uint8)
    Image.fromarray(image).save(tmp_path / "disc.png")
    window.open_image(tmp_path / "disc.png")
    window.paint_stroke([(45, 40), (45, 80)], FOREGROUND, 1)
    window.paint_stroke([(5, 0), (5, 119), (84, 119), (84, 0)], BACKGROUND, 1)
    window.wait_until_idle()
    at_own_lam = window.mask()  # the default model's own lam (auto: the learned model's 4)
    window.set_lam(60.0)  # re-segmenting is only scheduled (debounced) yet
    assert window.save_mask(tmp_path / "mask.png")
    saved = read_mask(tmp_path / "mask.png")
    np.testing.assert_array_equal(saved, graphcut.segment(image, window.seeds(),
                                                          **window.segment_options(),
                                                          device="cpu"))
    assert np.count_nonzero(saved != at_own_lam) > 50


class RecordingProgress(QProgressDialog):
    """A QProgressDialog that records being shown, and may press its Cancel button."""

    shown: list = []
    cancel_on_show = False

    def showEvent(self, event):
        super().showEvent(event)
        RecordingProgress.shown.append(self.labelText())
        if RecordingProgress.cancel_on_show:
            self.cancel()


@pytest.mark.parametrize("cancel", [False, True])
def test_a_long_wait_before_saving_shows_progress_and_can_be_cancelled(
        window, image_file, tmp_path, monkeypatch, slow_session, cancel):
    from graphcut.gui import file_actions as files
    monkeypatch.setattr(files, "QProgressDialog", RecordingProgress)
    monkeypatch.setattr(files, "SAVE_PROGRESS_DELAY_MS", 50)
    monkeypatch.setattr(RecordingProgress, "shown", [])
    monkeypatch.setattr(RecordingProgress, "cancel_on_show", cancel)
    window.open_image(image_file[0])
    paint_both(window)  # the session takes 0.4 s to build
    saved = window.save_mask(tmp_path / "mask.png")
    assert len(RecordingProgress.shown) == 1 and "Segmenting" in RecordingProgress.shown[0]
    if cancel:
        assert not saved and not (tmp_path / "mask.png").exists()
        assert "not saved" in window.statusBar().currentMessage()
    else:
        assert saved
        np.testing.assert_array_equal(read_mask(tmp_path / "mask.png"), expected_mask(window))
    window.wait_until_idle()
    assert window.errors == []


# ----- 4. an image size limit, for images above Pillow's decompression-bomb guard ---------------
def test_images_above_the_limit_open_after_raising_it_in_the_app(window, tmp_path,
                                                                 monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # a 60x60 image is "too large"
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (60, 60), dtype=np.uint8)
    Image.fromarray(image).save(tmp_path / "big.png")
    seeds = np.zeros((60, 60), np.uint8)
    seeds[30, 20:40], seeds[2, :] = FOREGROUND, BACKGROUND
    graphcut.write_seeds(tmp_path / "seeds.png", seeds)

    assert not window.open_image(tmp_path / "big.png")
    title, text = window.errors[-1]
    assert "too large" in title and "File > Image size limit" in text and "big.png" in text
    from PyQt6.QtWidgets import QInputDialog
    asked = []
    monkeypatch.setattr(QInputDialog, "getDouble",
                        lambda *args: asked.append(args[3]) or (0.004, True))
    window.max_pixels_action.trigger()
    assert asked == [pytest.approx(0.001)]  # the dialog started from the limit in force
    assert window.max_pixels() == 4000
    assert window.open_image(tmp_path / "big.png")
    np.testing.assert_array_equal(window.image(), image)
    assert window.load_seeds(tmp_path / "seeds.png")  # seeds of the image's size are fine too
    window.wait_until_idle()
    assert window.mask() is not None and len(window.errors) == 1


def test_max_pixels_reaches_the_window_from_the_command_line(monkeypatch):
    from click.testing import CliRunner

    from graphcut.cli import main
    from graphcut.gui import app, window as window_module
    runs = []
    monkeypatch.setattr(app, "run", lambda *args, **kwargs: runs.append(kwargs) or 0)
    result = CliRunner().invoke(main, ["gui", "--max-pixels", "123456789", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert runs[0]["max_pixels"] == 123456789
    monkeypatch.undo()

    windows = []

    class FakeWindow:
        def __init__(self, **kwargs):
            windows.append(kwargs)

        def show(self):
            pass

    monkeypatch.setattr(window_module, "MainWindow", FakeWindow)
    monkeypatch.setattr(QApplication, "exec", lambda self: 0)
    assert app.run(max_pixels=5) == 0 and windows[0]["max_pixels"] == 5


# ----- 5. a multi-page file says that only its first page was opened -----------------------------
def test_a_multi_page_tiff_says_only_the_first_page_was_opened(window, tmp_path, monkeypatch):
    pages = [np.full((30, 40), value, np.uint8) for value in (10, 120, 240)]
    pages[0][10:20, 10:30] = 200
    Image.fromarray(pages[0]).save(tmp_path / "stack.tif", save_all=True,
                                   append_images=[Image.fromarray(p) for p in pages[1:]])
    messages = []
    monkeypatch.setattr(window, "show_message", lambda title, text: messages.append(text))
    assert window.open_image(tmp_path / "stack.tif")
    np.testing.assert_array_equal(window.image(), pages[0])
    assert len(messages) == 1 and "3 pages" in messages[0] and "first page" in messages[0]
    assert "first page only" in window._size_label.text()
    assert "first page" in window.statusBar().currentMessage()
    Image.fromarray(pages[0]).save(tmp_path / "single.tif")
    assert window.open_image(tmp_path / "single.tif")
    assert len(messages) == 1 and "first page" not in window._size_label.text()


# ----- 6. masks and seed label images are written losslessly ------------------------------------
@pytest.mark.parametrize("name", ["mask.jpg", "mask.JPEG", "mask.webp", "mask.gif", "mask"])
def test_masks_and_seeds_refuse_lossy_file_names(window, image_file, tmp_path, name):
    window.open_image(image_file[0])
    paint_both(window)
    window.wait_until_idle()
    assert not window.save_mask(tmp_path / name)
    assert "lossless" in window.errors[-1][1] and "PNG or TIFF" in window.errors[-1][1]
    assert not window.save_seeds(tmp_path / f"seeds_{name}")
    assert "lossless" in window.errors[-1][1]
    assert list(tmp_path.iterdir()) == [image_file[0]]
    assert window.save_mask(tmp_path / "mask.tif")
    np.testing.assert_array_equal(read_mask(tmp_path / "mask.tif"), window.mask())


# ----- 7. the status bar shows the time the user waited ----------------------------------------
def _seconds(text: str) -> float:
    number, unit = re.search(r"([\d.]+)\s*(ms|s)\b", text).groups()
    return float(number) / (1000.0 if unit == "ms" else 1.0)


def test_the_time_shown_is_what_the_user_waited_session_build_included(window, image_file,
                                                                         slow_session):
    window.open_image(image_file[0])
    started = time.perf_counter()
    paint_both(window)
    window.wait_until_idle()
    waited = time.perf_counter() - started
    shown = _seconds(window._time_label.text())
    assert slow_session <= shown <= waited + 0.01
    tip = window._time_label.toolTip()
    assert "from the end of the stroke to the result on screen" in tip
    assert "session" in tip and "max-flow" in tip


# ----- 8. a broken file is checked before unsaved seeds are asked about -------------------------
def test_opening_a_broken_file_does_not_ask_about_unsaved_seeds(window, image_file, tmp_path):
    window.open_image(image_file[0])
    window.paint_stroke([(45, 60)], FOREGROUND, 3)
    assert window.isWindowModified()
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n not a PNG after all")
    assert not window.open_image(broken)
    assert window.questions == [] and len(window.errors) == 1
    assert window.seeds()[45, 60] == FOREGROUND and window.isWindowModified()
    assert window.open_image(image_file[0])  # a good file still asks first
    assert window.questions == [1]


# ----- 9. zooming from the fitted view keeps the pixel under the cursor -------------------------
@pytest.mark.parametrize("pixel", [(5, 5), (20, 100), (80, 10), (60, 90), (45, 60)])
def test_wheel_zoom_from_the_fitted_view_stays_under_the_cursor(window, tmp_path, pixel):
    # a wide image: fitted, it leaves bands above and below it
    Image.fromarray(np.zeros((90, 240), np.uint8)).save(tmp_path / "wide.png")
    window.open_image(tmp_path / "wide.png")
    view = window.view
    window.fit_action.trigger()
    cursor = view.viewport_pos_of_pixel(*pixel)
    under = view.mapToScene(cursor)
    for notches in (1, 1, 2, -1, -3, 4):
        wheel(view, cursor, notches)
        drift = view.mapFromScene(under) - cursor
        assert abs(drift.x()) <= 1 and abs(drift.y()) <= 1, (notches, drift)


def test_actual_size_and_resizing_keep_the_centre(window, image_file):
    window.open_image(image_file[0])
    view = window.view
    centre = QPoint(view.viewport().width() // 2, view.viewport().height() // 2)
    wheel(view, view.viewport_pos_of_pixel(20, 30), 3)
    at_centre = view.mapToScene(centre)
    window.actual_size_action.trigger()
    assert view.scale_factor() == 1.0
    assert (view.mapToScene(centre) - at_centre).manhattanLength() <= 2
    window.resize(window.width() - 120, window.height() - 80)
    QApplication.processEvents()
    centre = QPoint(view.viewport().width() // 2, view.viewport().height() // 2)
    assert (view.mapToScene(centre) - at_centre).manhattanLength() <= 2
    # a fitted image stays fitted when the window changes size
    window.fit_action.trigger()
    fitted = view.scale_factor()
    window.resize(window.width() + 300, window.height() + 200)
    QApplication.processEvents()
    assert view.scale_factor() > fitted * 1.2
    corners = [view.viewport_pos_of_pixel(r, c) for r, c in ((0, 0), (89, 119))]
    assert all(view.viewport().rect().contains(corner) for corner in corners)


# ----- 10. toolbar, empty canvas, Controls help -------------------------------------------------
def test_the_toolbar_fits_the_default_window(qtbot):
    window = MainWindow(device="cpu", solver_process=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    bar = window.findChild(QToolBar)
    hidden = [action.text() for action in bar.actions() if not action.isSeparator()
              and not bar.widgetForAction(action).isVisible()]
    assert hidden == []
    # with room to spare for wider fonts
    assert bar.sizeHint().width() <= 0.85 * window.width()


def test_the_empty_canvas_says_how_to_open_an_image(window, image_file):
    def lit_pixels():
        grabbed = window.view.viewport().grab().toImage()
        size = grabbed.width() * grabbed.height()
        pixels = np.frombuffer(grabbed.constBits().asstring(grabbed.sizeInBytes()), np.uint8)
        rgb = pixels.reshape(grabbed.height(), -1)[:, :grabbed.width() * 4]
        rgb = rgb.reshape(grabbed.height(), grabbed.width(), 4)[..., :3]
        return np.count_nonzero((rgb.astype(int) - 48).max(axis=-1) > 60) / size

    assert lit_pixels() > 0.001  # text drawn on the dark empty canvas
    from graphcut.gui.view import EMPTY_HINT
    assert "Ctrl+O" in EMPTY_HINT and "drop" in EMPTY_HINT


def test_controls_help_lists_every_key_of_every_action(window, monkeypatch):
    shown = []
    monkeypatch.setattr(window, "show_help", lambda title, text: shown.append(text))
    window.help_action.trigger()
    text = shown[0]
    keyed = [action for action in window.actions()
             if any(not key.isEmpty() for key in action.shortcuts())]
    assert len(keyed) >= 20
    for action in keyed:
        for key in action.shortcuts():
            assert key.toString(QKeySequence.SequenceFormat.NativeText) in text, action.text()
        assert action.text().replace("&", "").rstrip("…") in text
    for key in ("S", "Ctrl+L", "Ctrl+Alt+S", "Ctrl+Y", "Ctrl+-", "Ctrl++", "Space", "Wheel"):
        assert key in text


# ----- 11. a lost mouse release ends the stroke -------------------------------------------------
def _move_without_buttons(view, pixel):
    position = QPointF(view.viewport_pos_of_pixel(*pixel))
    event = QMouseEvent(QEvent.Type.MouseMove, position,
                        QPointF(view.viewport().mapToGlobal(position.toPoint())),
                        Qt.MouseButton.NoButton, Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(view.viewport(), event)


def test_a_lost_release_ends_the_stroke(qtbot, window, image_file):
    window.open_image(image_file[0])
    view = window.view
    window.set_brush_radius(2)
    qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton,
                     pos=view.viewport_pos_of_pixel(20, 20))
    # the release went elsewhere (a dialog, another window); the mouse moves on, unpressed
    _move_without_buttons(view, (20, 60))
    _move_without_buttons(view, (60, 60))
    seeds = window.seeds()
    assert seeds[20, 20] == FOREGROUND
    assert seeds[20, 40] == 0 and seeds[20, 60] == 0 and seeds[60, 60] == 0
    assert not view.is_stroking()
    window.undo_action.trigger()  # undo works again: the stroke is one step
    assert not window.seeds().any()
    # the next press starts a new stroke as usual
    qtbot.mousePress(view.viewport(), Qt.MouseButton.RightButton,
                     pos=view.viewport_pos_of_pixel(50, 50))
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.RightButton,
                       pos=view.viewport_pos_of_pixel(50, 50))
    assert window.seeds()[50, 50] == BACKGROUND
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton,
                       pos=view.viewport_pos_of_pixel(50, 50))  # the late release: nothing
    assert window.seeds()[50, 50] == BACKGROUND and not view.is_stroking()
