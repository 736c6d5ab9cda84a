"""The desktop app, driven headless (Qt's offscreen platform) with real mouse and key events.

Skipped when PyQt6 or pytest-qt is not installed. Every segmentation runs on the CPU backend.
"""

import os
import re
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("PyQt6.QtWidgets", reason="the desktop app needs PyQt6 (graphcut[gui])")
pytest.importorskip("pytestqt", reason="GUI tests need pytest-qt")

from PIL import Image  # noqa: E402
from PyQt6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl  # noqa: E402
from PyQt6.QtGui import QDragEnterEvent, QDropEvent, QWheelEvent  # noqa: E402
from PyQt6.QtWidgets import QApplication  # noqa: E402

import graphcut  # noqa: E402
from graphcut.gui import MainWindow  # noqa: E402
from graphcut.gui.display import to_display_rgba  # noqa: E402
from graphcut.gui.strokes import BACKGROUND, FOREGROUND, NONE, SeedCanvas  # noqa: E402

HEIGHT, WIDTH = 90, 120
CENTRE, RADII = (45, 60), (26, 34)  # the object: an ellipse (rows, cols)


def synthetic_image():
    """A noisy RGB image: a warm ellipse on a cool background, and its true mask."""
    rows, cols = np.indices((HEIGHT, WIDTH))
    truth = ((rows - CENTRE[0]) / RADII[0]) ** 2 + ((cols - CENTRE[1]) / RADII[1]) ** 2 <= 1
    rng = np.random.default_rng(5)
    image = np.where(truth[..., None], [200, 120, 60], [50, 90, 160]).astype(float)
    image += rng.normal(0, 18, image.shape)
    return np.clip(image, 0, 255).astype(np.uint8), truth


def iou(a, b):
    return np.count_nonzero(a & b) / np.count_nonzero(a | b)


def disk(centre, radius, shape=(HEIGHT, WIDTH)):
    rows, cols = np.indices(shape)
    return (rows - centre[0]) ** 2 + (cols - centre[1]) ** 2 <= radius ** 2


@pytest.fixture
def image_file(tmp_path):
    image, truth = synthetic_image()
    path = tmp_path / "ellipse.png"
    Image.fromarray(image).save(path)
    return path, image, truth


def make_window(qtbot, monkeypatch, *, solver_process):
    """A shown MainWindow whose message boxes are recorded instead of shown."""
    w = MainWindow(device="cpu", solver_process=solver_process)
    w.errors, w.questions = [], []
    monkeypatch.setattr(w, "show_error", lambda title, text: w.errors.append((title, text)))
    monkeypatch.setattr(w, "show_message", lambda title, text: None)
    monkeypatch.setattr(w, "confirm_discard", lambda: w.questions.append(1) or True)
    qtbot.addWidget(w)
    w.resize(900, 700)
    w.show()
    qtbot.waitExposed(w)
    return w


@pytest.fixture
def window(qtbot, monkeypatch):
    """The app segmenting on its worker thread (quick to start)."""
    return make_window(qtbot, monkeypatch, solver_process=False)


@pytest.fixture
def process_window(qtbot, monkeypatch):
    """The app as users get it: segmenting in a solver process."""
    return make_window(qtbot, monkeypatch, solver_process=True)


def drag(qtbot, view, pixels, button):
    """Press at the first (row, col), move through the rest, release: real mouse events."""
    viewport = view.viewport()
    points = [view.viewport_pos_of_pixel(r, c) for r, c in pixels]
    for point in points:
        assert viewport.rect().contains(point), "stroke point not visible"
    qtbot.mousePress(viewport, button, pos=points[0])
    for point in points[1:]:
        qtbot.mouseMove(viewport, point)
    qtbot.mouseRelease(viewport, button, pos=points[-1])


def paint_both(w):
    """A foreground stroke inside the ellipse and a background frame around it."""
    w.paint_stroke([(45, 40), (45, 80)], FOREGROUND, 3)
    w.paint_stroke([(5, 5), (5, 114), (84, 114), (84, 5), (5, 5)], BACKGROUND, 2)


# ----- live segmentation through real mouse events ---------------------------------------------
def test_mouse_strokes_segment_the_object(qtbot, process_window, image_file):
    window = process_window
    path, image, truth = image_file
    assert window.open_image(path)
    drag(qtbot, window.view, [(45, 40), (40, 60), (45, 80)], Qt.MouseButton.LeftButton)
    seeds = window.seeds()
    assert seeds[45, 40] == seeds[40, 60] == seeds[45, 80] == FOREGROUND
    assert window.mask() is None  # no background seed yet: nothing to segment
    drag(qtbot, window.view, [(4, 4), (4, 115), (85, 115)], Qt.MouseButton.RightButton)
    seeds = window.seeds()
    assert seeds[4, 60] == seeds[60, 115] == BACKGROUND
    assert not (seeds[truth] == BACKGROUND).any()
    window.wait_until_idle(timeout=30)
    mask = window.mask()
    assert mask is not None and mask.dtype == bool and mask.shape == truth.shape
    assert iou(mask, truth) >= 0.95
    assert window.errors == []
    assert "CPU" in window._backend_label.text()
    assert re.fullmatch(r"result in [\d.]+ m?s", window._time_label.text())
    assert "120×90" in window._size_label.text()


def test_tools_select_what_the_left_button_paints(qtbot, window, image_file):
    window.open_image(image_file[0])
    qtbot.keyClick(window.view, Qt.Key.Key_B)
    drag(qtbot, window.view, [(10, 10), (10, 30)], Qt.MouseButton.LeftButton)
    assert window.seeds()[10, 20] == BACKGROUND
    qtbot.keyClick(window.view, Qt.Key.Key_E)
    drag(qtbot, window.view, [(10, 15), (10, 25)], Qt.MouseButton.LeftButton)
    assert window.seeds()[10, 20] == NONE and window.seeds()[10, 10] == BACKGROUND


# ----- undo / redo ------------------------------------------------------------------------------
def test_undo_returns_the_previous_mask(qtbot, process_window, image_file):
    window = process_window
    window.open_image(image_file[0])
    paint_both(window)
    window.wait_until_idle()
    before = window.mask()
    # a background stroke through the object's right half changes the result
    drag(qtbot, window.view, [(10, 85), (80, 85)], Qt.MouseButton.RightButton)
    window.wait_until_idle()
    after = window.mask()
    assert not np.array_equal(before, after)
    qtbot.keyClick(window.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    window.wait_until_idle()
    np.testing.assert_array_equal(window.mask(), before)
    qtbot.keyClick(window.view, Qt.Key.Key_Z,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    window.wait_until_idle()
    np.testing.assert_array_equal(window.mask(), after)


def test_clear_seeds_removes_the_result(window, image_file):
    window.open_image(image_file[0])
    paint_both(window)
    window.wait_until_idle()
    window.clear_action.trigger()
    window.wait_until_idle()
    assert not window.seeds().any() and window.mask() is None


# ----- files ------------------------------------------------------------------------------------
def test_seeds_save_and_reload(window, image_file, tmp_path):
    window.open_image(image_file[0])
    paint_both(window)
    window.wait_until_idle()
    painted, mask = window.seeds(), window.mask()
    assert window.isWindowModified()
    seeds_path = tmp_path / "seeds.png"
    assert window.save_seeds(seeds_path)
    assert not window.isWindowModified()
    np.testing.assert_array_equal(graphcut.read_seeds(seeds_path), painted)

    window.clear_action.trigger()
    assert not window.seeds().any()
    assert window.load_seeds(seeds_path)
    np.testing.assert_array_equal(window.seeds(), painted)
    window.wait_until_idle()
    np.testing.assert_array_equal(window.mask(), mask)
    assert window.errors == []


def test_save_mask_writes_0_255_png(window, image_file, tmp_path):
    path, image, truth = image_file
    window.open_image(path)
    assert not window.save_mask(tmp_path / "early.png")  # nothing segmented yet
    assert window.errors and not (tmp_path / "early.png").exists()
    paint_both(window)
    window.wait_until_idle()
    assert window.save_mask(tmp_path / "mask.png")
    written = np.asarray(Image.open(tmp_path / "mask.png"))
    assert set(np.unique(written)) <= {0, 255}
    np.testing.assert_array_equal(written == 255, window.mask())
    assert window.save_overlay(tmp_path / "overlay.png")
    assert np.asarray(Image.open(tmp_path / "overlay.png")).shape == image.shape
    # the opened image is never overwritten
    errors = len(window.errors)
    assert not window.save_mask(path)
    assert len(window.errors) == errors + 1
    np.testing.assert_array_equal(np.asarray(Image.open(path)), image)


def test_bad_files_show_errors_instead_of_raising(window, image_file, tmp_path):
    path, image, _ = image_file
    assert window.open_image(path)
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n this is not really a PNG")
    assert window.open_image(broken) is False
    assert len(window.errors) == 1 and "broken.png" in window.errors[0][1]
    assert window.image() is image or np.array_equal(window.image(), image)  # kept

    small = tmp_path / "small_seeds.png"
    Image.fromarray(np.ones((10, 10), np.uint8)).save(small)
    assert window.load_seeds(small) is False
    assert len(window.errors) == 2 and "small_seeds.png" in window.errors[1][1]
    assert window.open_image(tmp_path / "missing.png") is False
    assert len(window.errors) == 3


def test_drop_opens_the_file(window, image_file):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(image_file[0]))])
    enter = QDragEnterEvent(QPoint(100, 100), Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)  # as in a real drag, the window is entered first
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(100, 100), Qt.DropAction.CopyAction, mime,
                      Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, drop)
    assert window.image() is not None and window.image().shape == image_file[1].shape


def test_close_with_unsaved_seeds_asks_first(window, image_file, monkeypatch):
    window.open_image(image_file[0])
    assert window.close() and window.questions == []  # nothing painted: no question
    window.show()
    window.paint_stroke([(45, 60)], FOREGROUND, 3)
    monkeypatch.setattr(window, "confirm_discard", lambda: False)
    assert not window.close() and window.isVisible()
    monkeypatch.setattr(window, "confirm_discard", lambda: True)
    assert window.close()


# ----- brush and view ---------------------------------------------------------------------------
def test_bracket_keys_change_the_brush(qtbot, window, image_file):
    window.open_image(image_file[0])
    window.set_brush_radius(10)
    qtbot.keyClick(window.view, Qt.Key.Key_BracketRight)
    assert window.brush_radius() > 10
    bigger = window.brush_radius()
    qtbot.keyClick(window.view, Qt.Key.Key_BracketLeft)
    qtbot.keyClick(window.view, Qt.Key.Key_BracketLeft)
    assert window.brush_radius() < bigger
    for _ in range(30):
        qtbot.keyClick(window.view, Qt.Key.Key_BracketLeft)
    assert window.brush_radius() == 1


def wheel(view, pos: QPoint, notches: int):
    event = QWheelEvent(QPointF(pos), QPointF(view.viewport().mapToGlobal(pos)), QPoint(0, 0),
                        QPoint(0, 120 * notches), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), event)


def test_zoom_keeps_strokes_on_the_right_pixels(qtbot, window, image_file):
    window.open_image(image_file[0])
    view = window.view
    scale = view.scale_factor()
    anchor = view.viewport_pos_of_pixel(30, 70)
    wheel(view, anchor, 6)  # zoom in 1.25**6 = 3.8 times around pixel (30, 70)
    assert view.scale_factor() == pytest.approx(scale * 1.25 ** 6)
    row, col = view.scene_to_pixel(view.mapToScene(anchor))
    assert abs(row - 30) < 0.5 and abs(col - 70) < 0.5  # the pixel under the cursor stayed
    window.set_brush_radius(3)
    for target in [(30, 70), (27, 66)]:
        position = view.viewport_pos_of_pixel(*target)
        qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=position)
        qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=position)
        painted = window.seeds() == FOREGROUND
        # mouse positions are whole screen pixels, a fraction of an image pixel at this zoom:
        # only pixels almost exactly 3 away from the target may go either way
        assert painted[disk(target, 2.8)].all() and not painted[~disk(target, 3.2)].any()
        assert np.argwhere(painted).mean(axis=0) == pytest.approx(target, abs=0.2)
        window.undo_action.trigger()
    window.fit_action.trigger()
    assert view.scale_factor() == pytest.approx(scale, rel=0.02)


def test_middle_button_pans(qtbot, window, image_file):
    window.open_image(image_file[0])
    view = window.view
    wheel(view, view.viewport().rect().center(), 8)
    before = view.mapToScene(view.viewport().rect().center())
    start = view.viewport().rect().center()
    qtbot.mousePress(view.viewport(), Qt.MouseButton.MiddleButton, pos=start)
    qtbot.mouseMove(view.viewport(), start + QPoint(60, 40))
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.MiddleButton, pos=start + QPoint(60, 40))
    after = view.mapToScene(view.viewport().rect().center())
    scale = view.scale_factor()
    assert after.x() == pytest.approx(before.x() - 60 / scale, abs=1 / scale)
    assert after.y() == pytest.approx(before.y() - 40 / scale, abs=1 / scale)
    assert not window.seeds().any()  # panning paints nothing


# ----- the worker ------------------------------------------------------------------------------
def test_newer_strokes_supersede_running_segmentations(process_window, image_file,
                                                        monkeypatch):
    window = process_window
    path, image, _ = image_file
    window.open_image(path)
    shown = []
    on_outcome = window._on_outcome
    monkeypatch.setattr(window, "_on_outcome", lambda outcome: (
        shown.append((outcome.number, window._controller.latest)), on_outcome(outcome)))
    paint_both(window)
    for col in range(20, 100, 10):  # eight more strokes while the first solve runs
        window.paint_stroke([(30, col)], FOREGROUND, 2)
    window.wait_until_idle()
    # only outcomes of the newest request were shown (the solver skips the jobs in between:
    # tests/gui/test_interactive.py)
    assert shown and all(number == latest for number, latest in shown)
    expected = graphcut.segment(image, window.seeds(), **window.segment_options(),
                           device="cpu")
    np.testing.assert_array_equal(window.mask(), expected)


def test_opening_another_image_drops_the_running_segmentation(window, image_file, tmp_path):
    window.open_image(image_file[0])
    paint_both(window)  # a segmentation of this image starts
    other = tmp_path / "other.png"
    Image.fromarray(np.zeros((30, 40), np.uint8)).save(other)
    assert window.open_image(other)
    window.wait_until_idle()
    assert window.mask() is None and window.errors == []
    assert window.view.result_layer.mask is None


def test_a_crashed_solver_process_is_reported_and_restarted(process_window, image_file):
    window = process_window
    window.open_image(image_file[0])
    paint_both(window)
    window.wait_until_idle()
    good = window.mask()
    solver = window._controller._exact.client
    # a solver that dies in the middle of its next request, as one killed for memory would
    solver.command = [sys.executable, "-c", "import sys; sys.stdin.buffer.read(1); sys.exit(9)"]
    solver.kill()
    window.paint_stroke([(30, 60)], FOREGROUND, 2)
    window.wait_until_idle()
    assert window.mask() is None
    assert len(window.errors) == 1
    assert "solver process stopped" in window.errors[0][1] and "9" in window.errors[0][1]
    solver.command = list(solver.COMMAND)
    window.undo_action.trigger()  # the next request starts a real solver again
    window.wait_until_idle()
    np.testing.assert_array_equal(window.mask(), good)
    assert len(window.errors) == 1


def test_lambda_control_resegments(window, image_file):
    path, image, _ = image_file
    window.open_image(path)
    paint_both(window)
    window.wait_until_idle()
    requests = []
    request = window._controller.request
    window._controller.request = lambda: requests.append(window._controller.lam) or request()
    window.set_lam(40.0)
    window.wait_until_idle()
    assert requests == [40.0]
    expected = graphcut.segment(image, window.seeds(), **window.segment_options(), device="cpu")
    assert window.segment_options()["lam"] == 40.0
    np.testing.assert_array_equal(window.mask(), expected)


def test_overlay_toggle_and_opacity(window, image_file):
    window.open_image(image_file[0])
    paint_both(window)
    window.wait_until_idle()
    view = window.view
    assert view.result_layer.isVisible()
    window.overlay_action.trigger()
    assert not view.result_layer.isVisible()
    window.overlay_action.trigger()
    assert view.result_layer.isVisible()
    window._opacity_slider.setValue(80)
    assert window.result_style().opacity == pytest.approx(0.8)


# ----- what is shown ----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["grey16", "rgba", "grey_alpha", "grey8"])
def test_image_kinds_open_and_display(window, tmp_path, kind):
    rng = np.random.default_rng(1)
    arrays = {
        "grey16": (rng.integers(0, 4096, (40, 50))).astype(np.uint16),  # 12 bits in 16
        "rgba": rng.integers(0, 256, (40, 50, 4)).astype(np.uint8),
        "grey_alpha": rng.integers(0, 256, (40, 50, 2)).astype(np.uint8),
        "grey8": rng.integers(0, 256, (40, 50)).astype(np.uint8),
    }
    path = tmp_path / f"{kind}.png"
    Image.fromarray(arrays[kind]).save(path)
    assert window.open_image(path), window.errors
    shown = window.view.image_layer.array
    assert shown.shape == (40, 50, 4) and shown.dtype == np.uint8
    assert (shown[..., 3] == 255).all()
    window.paint_stroke([(5, 5)], FOREGROUND, 2)
    window.paint_stroke([(35, 45)], BACKGROUND, 2)
    window.wait_until_idle()
    assert window.mask() is not None and window.errors == []


def test_display_conversion():
    grey16 = np.array([[1000, 2000], [3000, 1000]], np.uint16)
    np.testing.assert_array_equal(to_display_rgba(grey16)[..., 0], [[0, 128], [255, 0]])
    rgba = np.zeros((2, 2, 4), np.uint8)
    rgba[..., 0] = 255
    rgba[0, 0, 3] = 255  # opaque red
    rgba[0, 1, 3] = 0  # fully transparent: the checkerboard shows
    shown = to_display_rgba(rgba)
    np.testing.assert_array_equal(shown[0, 0], [255, 0, 0, 255])
    np.testing.assert_array_equal(shown[0, 1], [204, 204, 204, 255])
    grey = np.array([[0, 255]], np.uint8)
    np.testing.assert_array_equal(to_display_rgba(grey)[0, 1], [255, 255, 255, 255])
    with pytest.raises(ValueError):
        to_display_rgba(np.zeros((2, 2, 5)))


def test_seed_canvas_paints_capsules_and_undoes_by_region():
    canvas = SeedCanvas((20, 30))
    canvas.begin_edit()
    canvas.paint((10, 5), (10, 20), FOREGROUND, 2)
    assert canvas.end_edit()
    rows, cols = np.indices((20, 30))
    nearest_col = np.clip(cols, 5, 20)
    capsule = (rows - 10) ** 2 + (cols - nearest_col) ** 2 <= 4
    np.testing.assert_array_equal(canvas.labels == FOREGROUND, capsule)
    canvas.begin_edit()
    canvas.paint((10, 12), (10, 12), NONE, 1)
    canvas.end_edit()
    assert canvas.labels[10, 12] == NONE
    assert canvas.undo() and canvas.labels[10, 12] == FOREGROUND
    assert canvas.undo() and not canvas.labels.any()
    assert not canvas.undo()
    assert canvas.redo() and (canvas.labels == FOREGROUND).sum() == capsule.sum()
    canvas.begin_edit()
    assert not canvas.end_edit()  # no change, no undo step
    with pytest.raises(ValueError):
        canvas.paint((0, 0), (1, 1), 255, 1)  # 3..254 are further objects


def test_cli_gui_command_options():
    from click.testing import CliRunner

    from graphcut.cli import main
    runner = CliRunner()
    result = runner.invoke(main, ["gui", "--help"])
    assert result.exit_code == 0 and "--seeds" in result.output and "--device" in result.output
    result = runner.invoke(main, ["gui", "missing-image.png"])
    assert result.exit_code == 2


def test_partial_seeds_saved_mid_work_load_again(window, tmp_path):
    """Seeds with only foreground strokes (saved before any background stroke) reload."""
    image_path = tmp_path / "image.png"
    Image.fromarray((np.random.default_rng(2).random((40, 50)) * 255).astype(np.uint8)).save(image_path)
    window.open_image(image_path)
    labels = np.zeros((40, 50), dtype=np.uint8)
    labels[10:15, 10:20] = 1
    seeds_path = tmp_path / "partial.png"
    graphcut.write_seeds(seeds_path, labels)
    assert window.load_seeds(seeds_path)
