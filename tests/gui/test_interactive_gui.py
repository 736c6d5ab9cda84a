"""The app's result drawing, previews and saved overlays, headless (Qt's offscreen platform).

Skipped without PyQt6 or pytest-qt. Segmentations run on the CPU, on threads of the test
process (quick to start) unless a test needs the solver processes.
"""

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("PyQt6.QtWidgets", reason="the desktop app needs PyQt6 (graphcut[gui])")
pytest.importorskip("pytestqt", reason="GUI tests need pytest-qt")

from PIL import Image  # noqa: E402
from PyQt6.QtCore import QPointF  # noqa: E402
from PyQt6.QtGui import QColor  # noqa: E402
from PyQt6.QtWidgets import QColorDialog  # noqa: E402

import graphcut  # noqa: E402
from graphcut.gui import MainWindow  # noqa: E402
from graphcut.gui.model_choice import model_holds  # noqa: E402
from graphcut.gui.overlay import (ResultStyle, composite_result, render_result,  # noqa: E402
                                  seed_layer)
from graphcut.gui.strokes import BACKGROUND, FOREGROUND  # noqa: E402


def block_image(shape=(240, 320)):
    """A grey image with a lighter rectangle in the middle (the object), and that rectangle."""
    h, w = shape
    truth = np.zeros(shape, bool)
    truth[h // 4:3 * h // 4, w // 4:3 * w // 4] = True
    rng = np.random.default_rng(3)
    image = np.where(truth, 170, 80) + rng.normal(0, 6, shape)
    return np.clip(image, 0, 255).astype(np.uint8), truth


@pytest.fixture
def window(qtbot, monkeypatch):
    w = MainWindow(device="cpu", solver_process=False)
    w.errors = []
    monkeypatch.setattr(w, "show_error", lambda title, text: w.errors.append((title, text)))
    monkeypatch.setattr(w, "show_message", lambda title, text: None)
    monkeypatch.setattr(w, "confirm_discard", lambda: True)
    qtbot.addWidget(w)
    w.resize(900, 700)
    w.show()
    qtbot.waitExposed(w)
    return w


def open_and_segment(window, tmp_path, shape=(240, 320)):
    image, truth = block_image(shape)
    path = tmp_path / "block.png"
    Image.fromarray(image).save(path)
    assert window.open_image(path)
    h, w = shape
    window.paint_stroke([(h // 2, w // 3), (h // 2, 2 * w // 3)], FOREGROUND, 3)
    window.paint_stroke([(3, 3), (3, w - 4), (h - 4, w - 4), (h - 4, 3), (3, 3)], BACKGROUND, 2)
    window.wait_until_idle(timeout=60)
    assert window.mask() is not None and window.errors == []
    return image, truth


def screen_rgb(window):
    """What the view's viewport shows, as (H, W, 3) uint8."""
    shot = window.view.viewport().grab().toImage().convertToFormat(
        window.view.viewport().grab().toImage().Format.Format_RGB888)
    bits = shot.constBits()
    bits.setsize(shot.sizeInBytes())
    array = np.frombuffer(bits, np.uint8).reshape(shot.height(), shot.bytesPerLine())
    return array[:, :shot.width() * 3].reshape(shot.height(), shot.width(), 3).copy()


def screen_pos(window, row, col):
    """(y, x) of the screen pixel whose centre is nearest the centre of image pixel (row, col)."""
    point = window.view.viewportTransform().map(QPointF(col + 0.5, row + 0.5))
    return int(np.floor(point.y())), int(np.floor(point.x()))


def screen_pixel(window, screen, row, col):
    return screen[screen_pos(window, row, col)].astype(int)


# ----- saved overlay = what the screen shows ----------------------------------------------------
def test_saved_overlay_is_what_the_screen_shows(window, tmp_path):
    image, truth = open_and_segment(window, tmp_path)
    window._opacity_slider.setValue(70)
    window.seeds_visible_action.trigger()  # hide the seeds: compare the result alone
    window.view.actual_size()
    window.view.centerOn(160, 120)
    path = tmp_path / "overlay.png"
    assert window.save_overlay(path)
    saved = np.asarray(Image.open(path))
    assert saved.shape == image.shape + (3,)
    style = window.result_style()
    assert style.fill == (0, 200, 120) and style.opacity == pytest.approx(0.7)
    # inside the object, away from the outline: the image tinted green at 70 %
    expected = np.rint(0.3 * image[120, 160] + 0.7 * np.array(style.fill))
    np.testing.assert_allclose(saved[120, 160], expected, atol=1)
    # outside: the image untouched
    np.testing.assert_array_equal(saved[10, 10], [image[10, 10]] * 3)
    # the outline, as wide as on screen at 100 %
    edge_col = np.flatnonzero(window.mask()[120])[0]
    for col in range(edge_col, edge_col + style.outline_width):
        np.testing.assert_array_equal(saved[120, col], style.outline)
    assert not np.array_equal(saved[120, edge_col + style.outline_width], style.outline)
    # and the screen at 100 % shows the same colours (within rounding)
    window.repaint()
    screen = screen_rgb(window)
    for row, col in [(120, 160), (10, 10), (120, edge_col), (120, edge_col + 1),
                     (120, edge_col + 3), (100, 150)]:
        assert np.abs(screen_pixel(window, screen, row, col) - saved[row, col]).max() <= 2, \
            (row, col)


def test_composite_matches_render_at_full_resolution():
    rng = np.random.default_rng(4)
    rgba = np.dstack([rng.integers(0, 256, (30, 40, 3), dtype=np.uint8),
                      np.full((30, 40), 255, np.uint8)])
    mask = np.zeros((30, 40), bool)
    mask[5:20, 8:30] = True
    style = ResultStyle(fill=(10, 20, 250), opacity=0.5, outline=(250, 0, 0), outline_width=1)
    out = composite_result(rgba, mask, style)
    boundary = mask & ~np.pad(mask, 1, mode="edge")[:-2, 1:-1] | mask & ~np.pad(
        mask, 1, mode="edge")[2:, 1:-1] | mask & ~np.pad(mask, 1, mode="edge")[1:-1, :-2] | \
        mask & ~np.pad(mask, 1, mode="edge")[1:-1, 2:]
    assert (out[boundary] == [250, 0, 0]).all()
    inside = mask & ~boundary
    expected = np.rint(0.5 * rgba[..., :3][inside] + 0.5 * np.array([10, 20, 250]))
    assert np.abs(out[inside] - expected).max() <= 1
    np.testing.assert_array_equal(out[~mask], rgba[..., :3][~mask])


# ----- outline at a screen width ---------------------------------------------------------------
def test_outline_keeps_its_screen_width_when_zoomed_out(window, tmp_path):
    image, truth = open_and_segment(window, tmp_path, shape=(1200, 1600))
    window.seeds_visible_action.trigger()
    view = window.view
    view.zoom_by(0.25 / view.scale_factor())
    assert view.scale_factor() == pytest.approx(0.25)
    window.repaint()
    screen = screen_rgb(window)
    outline = np.array(window.result_style().outline)
    row = screen[screen_pos(window, 600, 800)[0]]
    is_outline = (np.abs(row.astype(int) - outline).max(axis=1) <= 2)
    runs = np.diff(np.flatnonzero(np.diff(np.r_[0, is_outline.astype(int), 0])))[::2]
    # the object's left and right edges: two runs of exactly the outline's width in pixels
    assert list(runs) == [window.result_style().outline_width] * 2
    # a 4x zoom in keeps the width on screen
    view.zoom_by(16.0)
    edge_col = np.flatnonzero(window.mask()[600])[0]
    view.centerOn(edge_col + 0.5, 600.5)
    window.repaint()
    screen = screen_rgb(window)
    y, x = screen_pos(window, 600, edge_col)
    row = screen[y, max(x - 10, 0):x + 20]
    is_outline = (np.abs(row.astype(int) - outline).max(axis=1) <= 2)
    assert is_outline.sum() == window.result_style().outline_width


def test_render_result_outline_width_in_screen_pixels():
    mask = np.zeros((20, 20), bool)
    mask[5:15, 5:15] = True
    style = ResultStyle(outline_width=3)
    rows = cols = np.clip(np.arange(-3, 23), 0, 19)
    rgba = render_result(mask, rows, cols, style)
    is_outline = (rgba[..., :3] == style.outline).all(axis=-1) & (rgba[..., 3] == 255)
    np.testing.assert_array_equal(np.flatnonzero(is_outline[10]), [5, 6, 7, 12, 13, 14])
    # a mask on a grid reduced 4 times, drawn 8 screen pixels per mask pixel: still 3 wide
    rows = cols = np.clip((np.arange(-3, 163) + 0.5) / 8, 0, 19).astype(int)
    rgba = render_result(mask, rows, cols, style)
    is_outline = (rgba[..., :3] == style.outline).all(axis=-1)
    assert is_outline[80].sum() == 6


# ----- colour choice ----------------------------------------------------------------------------
def test_fill_and_outline_colours_can_be_chosen(window, tmp_path, monkeypatch):
    open_and_segment(window, tmp_path)
    monkeypatch.setattr(QColorDialog, "getColor", lambda *args: QColor(200, 0, 200))
    window.fill_colour_action.trigger()
    monkeypatch.setattr(QColorDialog, "getColor", lambda *args: QColor(0, 255, 255))
    window.outline_colour_action.trigger()
    monkeypatch.setattr(QColorDialog, "getColor", lambda *args: QColor())  # cancelled
    window.outline_colour_action.trigger()
    style = window.result_style()
    assert style.fill == (200, 0, 200) and style.outline == (0, 255, 255)
    window._opacity_slider.setValue(100)
    window.seeds_visible_action.trigger()
    window.view.actual_size()
    window.view.centerOn(160, 120)
    window.repaint()
    screen = screen_rgb(window)
    np.testing.assert_allclose(screen_pixel(window, screen, 120, 160), (200, 0, 200), atol=2)
    edge_col = np.flatnonzero(window.mask()[120])[0]
    np.testing.assert_allclose(screen_pixel(window, screen, 120, edge_col), (0, 255, 255),
                               atol=2)
    assert window.save_overlay(tmp_path / "magenta.png")
    saved = np.asarray(Image.open(tmp_path / "magenta.png"))
    np.testing.assert_array_equal(saved[120, 160], (200, 0, 200))


# ----- previews, undo, seed layer ---------------------------------------------------------------
def test_preview_shows_first_and_the_exact_mask_replaces_it(window, tmp_path, qtbot):
    controller = window._controller
    controller._preview_mode, controller._preview_pixels = True, 3000
    factors = []
    on_outcome = window._on_outcome
    window._on_outcome = lambda outcome: (factors.append(outcome.factor), on_outcome(outcome))
    deliver = controller._exact.client._deliver
    controller._exact.client._deliver = lambda reply: (time.sleep(0.3), deliver(reply))
    image, truth = open_and_segment(window, tmp_path)
    assert factors[-1] == 1 and any(f > 1 for f in factors)
    assert factors.index(1) > [i for i, f in enumerate(factors) if f > 1][0]
    assert window.view.result_layer.factor == 1
    np.testing.assert_array_equal(window.view.result_layer.mask, window.mask())
    np.testing.assert_array_equal(window.mask(), graphcut.segment(
        image, window.seeds(), **window.segment_options(), device="cpu"))


def test_undo_redo_redraw_the_seed_layer_where_it_changed(window, tmp_path):
    open_and_segment(window, tmp_path)
    window.paint_stroke([(60, 60), (60, 200)], BACKGROUND, 4)
    window.undo_action.trigger()
    np.testing.assert_array_equal(window.view.seed_layer.array, seed_layer(window.seeds()))
    window.redo_action.trigger()
    held = window._controller._previous.shown  # the mask shown when the redo was made
    np.testing.assert_array_equal(window.view.seed_layer.array, seed_layer(window.seeds()))
    window.wait_until_idle()
    # the app sends a model with a hold (auto's learned model here) the update shown
    holds = held is not None and model_holds(window._controller.options.model, window.image())
    np.testing.assert_array_equal(window.mask(), graphcut.segment(
        window.image(), window.seeds(), **window.segment_options(), device="cpu",
        previous=(held.seeds, held.mask) if holds else None))
