"""The main window: files, tools, the canvas, the live segmentation and the status bar.

The window holds no energy or solver logic: segmentation is ``graphcut``'s, run on a worker
thread (``worker.py``). Every seed edit asks for a new segmentation; while one runs, only the
newest request waits, and the outcome of any request older than the newest is dropped, so the
overlay always matches the seeds on screen and the window never waits for the solver.

Scripting (also used by the tests): ``open_image``, ``load_seeds``, ``paint_stroke``,
``wait_until_idle``, ``mask``, ``save_mask``, ``save_overlay``, ``save_seeds``, ``set_lam``;
``grab()`` is Qt's screenshot. Message boxes go through :meth:`MainWindow.show_error`,
:meth:`MainWindow.show_message` and :meth:`MainWindow.confirm_discard`, which scripts and tests
may replace.
"""

from __future__ import annotations

import atexit
import logging
import sys
import time
import weakref
from pathlib import Path

import numpy as np
from PyQt6.QtCore import QEventLoop, QThread, QTimer, Qt, pyqtSignal
from PyQt6.QtGui import QAction, QActionGroup, QColor, QIcon, QKeySequence, QPixmap
from PyQt6.QtWidgets import (QApplication, QCheckBox, QDoubleSpinBox, QFileDialog, QHBoxLayout,
                             QLabel, QMainWindow, QMessageBox, QSizePolicy, QSlider, QSpinBox,
                             QToolBar, QWidget)

import graphcut
from graphcut.imageio import IMAGE_SUFFIXES

from .display import describe, to_display_rgba
from .overlay import SEED_COLOURS, fill_layer, outline_layer, seed_layer
from .strokes import BACKGROUND, FOREGROUND, NONE, SeedCanvas
from .view import ImageView
from .solve import Job, Outcome
from .worker import SegmentationWorker

log = logging.getLogger("graphcut.gui")

MAX_BRUSH_RADIUS = 200
DEFAULT_BRUSH_RADIUS = 4
DEFAULT_OPACITY = 45  # percent
LAM_DEBOUNCE_MS = 300  # wait this long after the last lambda change before re-segmenting

TOOL_NAMES = {FOREGROUND: "Foreground", BACKGROUND: "Background", NONE: "Eraser"}

CONTROLS_HELP = """\
<h3>Painting seeds</h3>
<ul>
<li><b>Left button</b>: paint with the selected tool: <b>Foreground</b> brush (key <b>F</b>,
red), <b>Background</b> brush (key <b>B</b>, blue) or <b>Eraser</b> (key <b>E</b>).</li>
<li><b>Right button</b>: always paints background, whatever the tool.</li>
<li><b>[</b> and <b>]</b>: smaller / larger brush (also the <i>Brush</i> box; radius in image
pixels).</li>
<li><b>Ctrl+Z</b> undo, <b>Ctrl+Shift+Z</b> redo, <b>Ctrl+Delete</b> clear all seeds.</li>
</ul>
<h3>Result</h3>
<p>After every stroke the object is segmented again in the background (green fill, yellow
outline). It needs at least one foreground and one background seed. <b>O</b> shows or hides
the result; <i>Opacity</i> sets the fill's strength; <i>&lambda;</i> (smoothness) trades
boundary length against colour fit.</p>
<h3>Viewing</h3>
<ul>
<li><b>Wheel</b>: zoom around the cursor; <b>Ctrl+0</b> fit to window, <b>Ctrl+1</b> 100 %.</li>
<li><b>Middle button</b> drag, or <b>Space</b> + left drag: pan.</li>
</ul>
<h3>Files</h3>
<p>Open an image with <b>Ctrl+O</b> or by dropping it on the window. Save the mask (0/255 PNG,
<b>Ctrl+S</b>), the overlay, or the seeds (label PNG: 0 none, 1 foreground, 2 background,
<b>Ctrl+Shift+S</b>); load seeds saved earlier or made by another tool (label or red/blue stroke
PNG).</p>
"""

_windows: "weakref.WeakSet[MainWindow]" = weakref.WeakSet()
_application = None  # a QApplication made by MainWindow for scripts, kept alive here


def _ensure_application() -> QApplication:
    global _application
    app = QApplication.instance()
    if app is None:
        app = _application = QApplication(sys.argv[:1] or ["graphcut"])
    return app


@atexit.register
def _stop_workers() -> None:
    """A script may end without closing its windows: stop their threads before Qt unloads."""
    for window in list(_windows):
        window.shutdown()


def _swatch(rgb) -> QIcon:
    pixmap = QPixmap(16, 16)
    pixmap.fill(QColor(*rgb))
    return QIcon(pixmap)


class MainWindow(QMainWindow):
    """The graphcut desktop app. ``MainWindow()`` creates the QApplication if none exists.

    Args:
        device: "auto", "cpu" or "cuda", passed to ``graphcut`` for every segmentation.
        lam: the initial smoothness weight (``graphcut.DEFAULT_LAM`` by default).
        solver_process: segment in a child process (see ``solver_process.py``: the window
            stays responsive even while PyMaxflow holds the GIL); False segments on a thread
            of this process.
    """

    _submit = pyqtSignal(object)  # Job -> worker thread
    _warm_up = pyqtSignal()

    def __init__(self, *, device: str = "auto", lam: float | None = None,
                 solver_process: bool = True, parent=None):
        _ensure_application()
        super().__init__(parent)
        self.device = device
        self.last_error: str | None = None
        self._image: np.ndarray | None = None
        self._image_path: Path | None = None
        self._image_token = 0
        self._canvas: SeedCanvas | None = None
        self._mask: np.ndarray | None = None
        self._seeds_path: Path | None = None
        self._seeds_dirty = False
        self._tool = FOREGROUND
        self._stroke_label: int | None = None
        self._stroke_last: tuple[float, float] | None = None
        self._latest_request = 0
        self._running: int | None = None
        self._pending: Job | None = None
        self._stopped = False

        self.setWindowTitle("graphcut[*]")
        self.setAcceptDrops(True)
        self.view = ImageView(self)
        self.setCentralWidget(self.view)
        self._build_actions()
        self._build_menus()
        self._build_toolbar(graphcut.DEFAULT_LAM if lam is None else lam)
        self._build_status_bar()
        self._lam_timer = QTimer(self)
        self._lam_timer.setSingleShot(True)
        self._lam_timer.setInterval(LAM_DEBOUNCE_MS)
        self._lam_timer.timeout.connect(self._request_segmentation)
        self._connect_view()
        self._start_worker(solver_process)
        self._update_actions()
        self.resize(1100, 780)
        _windows.add(self)

    # ===== scripting surface ==================================================================
    def open_image(self, path) -> bool:
        """Open an image file; on failure show an error and keep the current image.

        Returns whether the image was opened.
        """
        if not self._may_discard_seeds():
            return False
        path = Path(path)
        try:
            image = graphcut.read_image(path)
            rgba = to_display_rgba(image)
            if image.ndim not in (2, 3):
                raise ValueError(f"unsupported image shape {image.shape}")
        except (OSError, ValueError, TypeError, MemoryError) as error:
            self.show_error("Cannot open image", f"Cannot open {path}:\n{error}")
            return False
        self._image_token += 1
        self._latest_request += 1  # anything still running belongs to the old image
        self._pending = None
        self._image, self._image_path = image, path
        self._canvas = SeedCanvas(image.shape[:2])
        self._seeds_path = None
        self._set_seeds_dirty(False)
        self.view.set_image(rgba)
        self.view.seed_layer.set_array(seed_layer(self._canvas.labels))
        self._show_mask(None)
        self.setWindowTitle(f"graphcut — {path.name}[*]")
        self._size_label.setText(describe(image))
        self._time_label.setText("")
        self.statusBar().showMessage(
            "Paint foreground (left button) and background (right button) seeds", 8000)
        self._update_actions()
        return True

    def load_seeds(self, path) -> bool:
        """Replace the seeds with those of a label or stroke PNG (undoable).

        On failure (unreadable file, size differs from the image, ...) show an error and keep
        the current seeds. Returns whether the seeds were loaded.
        """
        if self._image is None:
            self.show_error("Cannot load seeds", "Open an image first, then load its seeds.")
            return False
        path = Path(path)
        try:
            labels = graphcut.read_seeds(path, shape=self._image.shape[:2], require_both=False)
        except (OSError, ValueError, TypeError) as error:
            self.show_error("Cannot load seeds", f"Cannot load seeds from {path}:\n{error}")
            return False
        self._canvas.begin_edit()
        self._canvas.replace(labels)
        changed = self._canvas.end_edit()
        self._seeds_path = path
        self._after_seed_edit(changed, dirty=False)
        return True

    def paint_stroke(self, points, label: int, radius: float) -> None:
        """Paint one undoable stroke through ``points`` ((row, col) pixel coordinates).

        Args:
            points: a sequence of (row, col); consecutive points are joined by straight lines.
            label: 1 = foreground, 2 = background, 0 = erase.
            radius: brush radius in image pixels (pixels whose centres are within it are
                painted).
        """
        if self._canvas is None:
            raise RuntimeError("no image is open; call open_image first")
        points = np.asarray(points, dtype=float).reshape(-1, 2)
        if len(points) == 0:
            raise ValueError("a stroke needs at least one (row, col) point")
        if label not in TOOL_NAMES:
            raise ValueError(f"label must be 1 (foreground), 2 (background) or 0 (erase), "
                             f"got {label!r}")
        self._canvas.begin_edit()
        try:
            for start, end in zip(points, points[1:] if len(points) > 1 else points):
                self._canvas.paint(start, end, label, radius)
        finally:
            changed = self._canvas.end_edit()
        self._after_seed_edit(changed)

    def wait_until_idle(self, timeout: float = 30.0) -> None:
        """Process Qt events until no segmentation is running or waiting.

        Raises:
            TimeoutError: still busy after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        app = QApplication.instance()
        while self.is_busy():
            if time.monotonic() > deadline:
                raise TimeoutError(f"segmentation still running after {timeout} s")
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
            time.sleep(0.002)
        app.processEvents()

    def is_busy(self) -> bool:
        """Whether a segmentation is running, waiting, or about to be asked for."""
        return self._running is not None or self._pending is not None \
            or self._lam_timer.isActive()

    def mask(self) -> np.ndarray | None:
        """A copy of the current object mask (bool, True = object), or None before the first
        segmentation of the current seeds."""
        return None if self._mask is None else self._mask.copy()

    def seeds(self) -> np.ndarray | None:
        """A copy of the current seed labels (uint8: 0 none, 1 foreground, 2 background)."""
        return None if self._canvas is None else self._canvas.labels.copy()

    def image(self) -> np.ndarray | None:
        """The open image as read (not a copy: do not modify it)."""
        return self._image

    def lam(self) -> float:
        return self._lam_box.value()

    def set_lam(self, value: float) -> None:
        """Set the smoothness weight; the image is segmented again shortly after."""
        self._lam_box.setValue(value)

    def brush_radius(self) -> int:
        return self._brush_box.value()

    def set_brush_radius(self, radius: int) -> None:
        self._brush_box.setValue(int(radius))

    def set_tool(self, label: int) -> None:
        """Select the left button's tool: 1 foreground, 2 background, 0 eraser."""
        self._tool_actions[label].setChecked(True)
        self._tool = label

    def save_mask(self, path) -> bool:
        """Write the mask as a 0/255 PNG; on failure show an error. Returns success."""
        if self._mask is None:
            self.show_error("Nothing to save", "There is no segmentation yet: paint foreground "
                            "and background seeds first.")
            return False
        return self._write("mask", lambda: graphcut.write_mask(path, self._mask,
                                                               inputs=self._inputs()))

    def save_overlay(self, path) -> bool:
        """Write the image with the object tinted and outlined (PNG). Returns success."""
        if self._mask is None:
            self.show_error("Nothing to save", "There is no segmentation yet.")
            return False
        return self._write("overlay", lambda: graphcut.write_overlay(
            path, self._image, self._mask, inputs=self._inputs()))

    def save_seeds(self, path) -> bool:
        """Write the seeds as a label PNG (0 none, 1 foreground, 2 background). Returns success."""
        if self._canvas is None:
            self.show_error("Nothing to save", "Open an image and paint seeds first.")
            return False
        inputs = tuple(p for p in (self._image_path,) if p is not None)
        if self._write("seeds", lambda: graphcut.write_seeds(path, self._canvas.labels,
                                                            inputs=inputs)):
            self._seeds_path = Path(path)
            self._set_seeds_dirty(False)
            return True
        return False

    # ===== messages (replaceable by scripts and tests) =========================================
    def show_error(self, title: str, text: str) -> None:
        """Tell the user something failed (a modal message box)."""
        self.last_error = text
        log.warning("%s: %s", title, text)
        QMessageBox.critical(self, title, text)

    def show_message(self, title: str, text: str) -> None:
        """Show information (a modal message box)."""
        QMessageBox.information(self, title, text)

    def confirm_discard(self) -> bool:
        """Ask whether unsaved seeds may be lost: True = go on (after saving if asked)."""
        answer = QMessageBox.question(
            self, "Unsaved seeds", "The seeds have changed since they were last saved. "
            "Save them first?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self._save_seeds_dialog()
        return answer == QMessageBox.StandardButton.Discard

    # ===== segmentation =========================================================================
    def _start_worker(self, solver_process: bool) -> None:
        self._thread = QThread(self)
        self._worker = SegmentationWorker(use_process=solver_process)
        self._worker.moveToThread(self._thread)
        self._submit.connect(self._worker.submit)
        self._warm_up.connect(self._worker.warm_up)
        self._worker.done.connect(self._on_segmentation_done)
        self._thread.start()
        self._warm_up.emit()

    def shutdown(self) -> None:
        """Stop the segmentation (a running solve is abandoned) and the worker. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self._pending = None
        self._lam_timer.stop()
        self._worker.abort()
        self._thread.quit()
        self._thread.wait()
        self._worker.close()
        self._running = None

    def _request_segmentation(self) -> None:
        if self._image is None or self._stopped:
            return
        self._lam_timer.stop()
        self._latest_request += 1  # from now on, any earlier outcome is stale
        foreground, background = self._canvas.counts()
        if not foreground or not background:
            self._pending = None
            self._show_mask(None)
            self.statusBar().showMessage("Paint at least one foreground and one background "
                                         "seed to segment")
            return
        job = Job(self._latest_request, self._image_token, self._image,
                  self._canvas.labels.copy(), float(self._lam_box.value()), self.device)
        if self._running is None:
            self._dispatch(job)
        else:
            self._pending = job  # replaces an older waiting job, which is never run

    def _dispatch(self, job: Job) -> None:
        self._running = job.number
        self.statusBar().showMessage("Segmenting…")
        self._submit.emit(job)

    def _on_segmentation_done(self, outcome: Outcome) -> None:
        self._running = None
        if self._pending is not None:
            job, self._pending = self._pending, None
            self._dispatch(job)
        if outcome.number != self._latest_request:
            return  # superseded by a newer request
        if outcome.error:
            self._show_mask(None)
            self.statusBar().showMessage("Segmentation failed")
            self.show_error("Segmentation failed", outcome.error)
            return
        self._show_mask(outcome.mask, outcome.boundary)
        self._backend_label.setText(_backend_text(outcome.backend, outcome.device_name))
        self._time_label.setText(f"solve {outcome.solve_seconds * 1e3:.1f} ms")
        kind = "incremental re-solve" if outcome.incremental else "solve from scratch"
        self._time_label.setToolTip(
            f"{kind}: {outcome.solve_seconds * 1e3:.1f} ms in graphcut; "
            f"{outcome.wall_seconds * 1e3:.1f} ms with the outline")
        coverage = 100.0 * np.count_nonzero(outcome.mask) / outcome.mask.size
        self.statusBar().showMessage(f"Object covers {coverage:.1f} % of the image", 5000)

    def _show_mask(self, mask: np.ndarray | None, boundary: np.ndarray | None = None) -> None:
        self._mask = mask
        if mask is None:
            self.view.result_fill_layer.set_array(None)
            self.view.outline_layer.set_array(None)
        else:
            self.view.result_fill_layer.set_array(fill_layer(mask))
            self.view.outline_layer.set_array(outline_layer(boundary))
        self._update_actions()

    # ===== seeds ==============================================================================
    def _after_seed_edit(self, changed: bool, *, redraw: bool = True, dirty: bool = True) -> None:
        """Redraw the seed layer (unless already drawn as painted), then re-segment."""
        if redraw:
            self.view.seed_layer.set_array(seed_layer(self._canvas.labels))
        if changed:
            self._set_seeds_dirty(dirty)
            self._request_segmentation()
        self._update_actions()

    def _set_seeds_dirty(self, dirty: bool) -> None:
        self._seeds_dirty = dirty
        self.setWindowModified(dirty)

    def _may_discard_seeds(self) -> bool:
        if self._canvas is None or not self._seeds_dirty or not any(self._canvas.counts()):
            return True
        return self.confirm_discard()

    def _on_stroke_started(self, row: float, col: float, button_label: int) -> None:
        if self._canvas is None:
            return
        self._stroke_label = self._tool if button_label == ImageView.CURRENT_TOOL \
            else button_label
        self._stroke_last = (row, col)
        self._canvas.begin_edit()
        self._paint_segment((row, col), (row, col))

    def _on_stroke_moved(self, row: float, col: float) -> None:
        if self._stroke_label is None:
            return
        self._paint_segment(self._stroke_last, (row, col))
        self._stroke_last = (row, col)

    def _on_stroke_finished(self) -> None:
        if self._stroke_label is None:
            return
        self._stroke_label = self._stroke_last = None
        self._after_seed_edit(self._canvas.end_edit(), redraw=False)

    def _paint_segment(self, start, end) -> None:
        region = self._canvas.paint(start, end, self._stroke_label, self.brush_radius())
        if region is not None:
            self.view.seed_layer.update_region(region, SEED_COLOURS[self._canvas.labels[region]])

    def _undo(self) -> None:
        if self._stroke_label is None and self._canvas is not None and self._canvas.undo():
            self._after_seed_edit(True)

    def _redo(self) -> None:
        if self._stroke_label is None and self._canvas is not None and self._canvas.redo():
            self._after_seed_edit(True)

    def _clear_seeds(self) -> None:
        if self._stroke_label is not None or self._canvas is None:
            return
        self._canvas.begin_edit()
        self._canvas.clear()
        self._after_seed_edit(self._canvas.end_edit())

    def _change_brush(self, direction: int) -> None:
        radius = self.brush_radius()
        step = max(1, round(radius * 0.2))
        self.set_brush_radius(min(max(radius + direction * step, 1), MAX_BRUSH_RADIUS))

    # ===== files ==============================================================================
    def _inputs(self) -> tuple:
        return tuple(p for p in (self._image_path, self._seeds_path) if p is not None)

    def _write(self, what: str, write) -> bool:
        try:
            write()
        except (OSError, ValueError, TypeError) as error:
            self.show_error(f"Cannot save the {what}", str(error))
            return False
        self.statusBar().showMessage(f"Saved the {what}", 5000)
        return True

    def _default_path(self, suffix: str) -> str:
        if self._image_path is None:
            return ""
        return str(self._image_path.with_name(f"{self._image_path.stem}_{suffix}.png"))

    def _default_seeds_path(self) -> str:
        if self._seeds_path is not None:
            return str(self._seeds_path)
        if self._image_path is None:
            return ""
        sibling = self._image_path.parent.parent / "seeds"
        if sibling.is_dir():
            return str(sibling / f"{self._image_path.stem}.png")
        return self._default_path("seeds")

    def _open_image_dialog(self) -> None:
        patterns = " ".join(f"*{suffix}" for suffix in IMAGE_SUFFIXES)
        path, _ = QFileDialog.getOpenFileName(
            self, "Open image", str(self._image_path.parent) if self._image_path else "",
            f"Images ({patterns});;All files (*)")
        if path:
            self.open_image(path)

    def _load_seeds_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load seeds", self._default_seeds_path(),
                                              "PNG images (*.png);;All files (*)")
        if path:
            self.load_seeds(path)

    def _save_dialog(self, title: str, default: str) -> str:
        path, _ = QFileDialog.getSaveFileName(self, title, default, "PNG images (*.png)")
        if path and not Path(path).suffix:
            path += ".png"
        return path

    def _save_mask_dialog(self) -> None:
        path = self._save_dialog("Save mask", self._default_path("mask"))
        if path:
            self.save_mask(path)

    def _save_overlay_dialog(self) -> None:
        path = self._save_dialog("Save overlay", self._default_path("overlay"))
        if path:
            self.save_overlay(path)

    def _save_seeds_dialog(self) -> bool:
        path = self._save_dialog("Save seeds", self._default_seeds_path())
        return bool(path) and self.save_seeds(path)

    # ===== Qt events ==========================================================================
    def closeEvent(self, event) -> None:
        if not self._may_discard_seeds():
            event.ignore()
            return
        self.shutdown()
        event.accept()

    def dragEnterEvent(self, event) -> None:
        if _local_files(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        self.dragEnterEvent(event)

    def dropEvent(self, event) -> None:
        files = _local_files(event.mimeData())
        if not files:
            event.ignore()
            return
        event.acceptProposedAction()
        self.open_image(files[0])

    # ===== construction =======================================================================
    def _action(self, text: str, slot, shortcut=None, *, checkable=False, tip=None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            shortcuts = shortcut if isinstance(shortcut, list) else [shortcut]
            action.setShortcuts([QKeySequence(s) for s in shortcuts])
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.setCheckable(checkable)
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(slot)
        self.addAction(action)  # shortcuts work with the menu bar hidden, too
        return action

    def _build_actions(self) -> None:
        a = self._action
        self.open_action = a("&Open image…", self._open_image_dialog, QKeySequence.StandardKey.Open)
        self.load_seeds_action = a("&Load seeds…", self._load_seeds_dialog, "Ctrl+L")
        self.save_mask_action = a("&Save mask…", self._save_mask_dialog, "Ctrl+S")
        self.save_overlay_action = a("Save &overlay…", self._save_overlay_dialog, "Ctrl+Alt+S")
        self.save_seeds_action = a("Save s&eeds…", self._save_seeds_dialog, "Ctrl+Shift+S")
        self.quit_action = a("&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.undo_action = a("&Undo", self._undo, "Ctrl+Z")
        self.redo_action = a("&Redo", self._redo, ["Ctrl+Shift+Z", "Ctrl+Y"])
        self.clear_action = a("&Clear seeds", self._clear_seeds, "Ctrl+Delete")
        self.zoom_in_action = a("Zoom &in", lambda: self.view.zoom_by(1.25), ["Ctrl++", "Ctrl+="])
        self.zoom_out_action = a("Zoom &out", lambda: self.view.zoom_by(0.8), "Ctrl+-")
        self.fit_action = a("&Fit to window", self.view.fit, "Ctrl+0")
        self.actual_size_action = a("&Actual size", self.view.actual_size, "Ctrl+1")
        self.overlay_action = a("Show &result", self._toggle_overlay, "O", checkable=True)
        self.overlay_action.setChecked(True)
        self.seeds_visible_action = a("Show &seeds", self._toggle_seeds, "S", checkable=True)
        self.seeds_visible_action.setChecked(True)
        self.smaller_action = a("S&maller brush", lambda: self._change_brush(-1), "[")
        self.larger_action = a("&Larger brush", lambda: self._change_brush(+1), "]")
        self.help_action = a("&Controls", self._show_controls, QKeySequence.StandardKey.HelpContents)
        self.about_action = a("&About", self._show_about)
        group = QActionGroup(self)
        self._tool_actions = {}
        for label, key, colour in ((FOREGROUND, "F", SEED_COLOURS[1][:3]),
                                   (BACKGROUND, "B", SEED_COLOURS[2][:3]),
                                   (NONE, "E", (230, 230, 230))):
            action = a(TOOL_NAMES[label],
                       lambda _=False, lab=label: self.set_tool(lab), key, checkable=True)
            action.setIcon(_swatch(tuple(int(c) for c in colour)))
            action.setToolTip(f"{action.text()} {'brush' if label else ''} ({key}); the right "
                              "button always paints background")
            group.addAction(action)
            self._tool_actions[label] = action
        self._tool_actions[FOREGROUND].setChecked(True)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        menus = {
            "&File": [self.open_action, self.load_seeds_action, None, self.save_mask_action,
                      self.save_overlay_action, self.save_seeds_action, None, self.quit_action],
            "&Edit": [self.undo_action, self.redo_action, None, self.clear_action],
            "&Tools": [*self._tool_actions.values(), None, self.smaller_action,
                       self.larger_action],
            "&View": [self.zoom_in_action, self.zoom_out_action, self.fit_action,
                      self.actual_size_action, None, self.overlay_action,
                      self.seeds_visible_action],
            "&Help": [self.help_action, self.about_action],
        }
        for title, actions in menus.items():
            menu = bar.addMenu(title)
            for action in actions:
                if action is None:
                    menu.addSeparator()
                else:
                    menu.addAction(action)

    def _build_toolbar(self, lam: float) -> None:
        bar = QToolBar("Tools", self)
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.addToolBar(bar)
        for action in self._tool_actions.values():
            bar.addAction(action)
        bar.addSeparator()
        self._brush_box = QSpinBox()
        self._brush_box.setRange(1, MAX_BRUSH_RADIUS)
        self._brush_box.setValue(DEFAULT_BRUSH_RADIUS)
        self._brush_box.setSuffix(" px")
        self._brush_box.setToolTip("Brush radius in image pixels ([ and ] change it)")
        self._brush_box.valueChanged.connect(self.view.set_brush_radius)
        self.view.set_brush_radius(DEFAULT_BRUSH_RADIUS)
        bar.addWidget(_labelled("Brush", self._brush_box))
        self._lam_box = QDoubleSpinBox()
        self._lam_box.setDecimals(2)
        self._lam_box.setRange(0.0, 10000.0)
        self._lam_box.setValue(lam)
        self._lam_box.setStepType(QDoubleSpinBox.StepType.AdaptiveDecimalStepType)
        self._lam_box.setToolTip("Smoothness λ: larger values give shorter, smoother boundaries")
        self._lam_box.valueChanged.connect(lambda _: self._lam_timer.start())
        bar.addWidget(_labelled("λ", self._lam_box))
        bar.addSeparator()
        bar.addAction(self.undo_action)
        bar.addAction(self.redo_action)
        bar.addAction(self.clear_action)
        bar.addSeparator()
        self._overlay_box = QCheckBox("Result")
        self._overlay_box.setChecked(True)
        self._overlay_box.setToolTip("Show the segmentation (O)")
        self._overlay_box.toggled.connect(self.overlay_action.setChecked)
        self._overlay_box.toggled.connect(self._apply_overlay_visibility)
        bar.addWidget(self._overlay_box)
        self._opacity_slider = QSlider(Qt.Orientation.Horizontal)
        self._opacity_slider.setRange(0, 100)
        self._opacity_slider.setValue(DEFAULT_OPACITY)
        self._opacity_slider.setFixedWidth(110)
        self._opacity_slider.setToolTip("Opacity of the object fill")
        self._opacity_slider.valueChanged.connect(
            lambda value: self.view.result_fill_layer.setOpacity(value / 100.0))
        self.view.result_fill_layer.setOpacity(DEFAULT_OPACITY / 100.0)
        bar.addWidget(_labelled("Opacity", self._opacity_slider))
        bar.addSeparator()
        bar.addAction(self.fit_action)

    def _build_status_bar(self) -> None:
        status = self.statusBar()
        self._position_label = QLabel()
        self._position_label.setMinimumWidth(
            self._position_label.fontMetrics().horizontalAdvance("row 00000, col 00000   0000 %"))
        self._backend_label = QLabel(_backend_text(*_expected_backend(self.device)))
        self._time_label = QLabel()
        self._size_label = QLabel("no image")
        for label in (self._position_label, self._size_label, self._time_label,
                      self._backend_label):
            status.addPermanentWidget(label)

    def _connect_view(self) -> None:
        self.view.stroke_started.connect(self._on_stroke_started)
        self.view.stroke_moved.connect(self._on_stroke_moved)
        self.view.stroke_finished.connect(self._on_stroke_finished)
        self.view.hovered.connect(self._show_position)
        self.view.zoom_changed.connect(lambda _: self._show_position(*self._hover))
        self._hover = (-1.0, -1.0)

    def _show_position(self, row: float, col: float) -> None:
        self._hover = (row, col)
        zoom = f"{self.view.scale_factor() * 100:.0f} %"
        if self._image is None:
            self._position_label.setText(zoom)
            return
        r, c = round(row), round(col)
        inside = 0 <= r < self._image.shape[0] and 0 <= c < self._image.shape[1]
        self._position_label.setText(f"row {r}, col {c}   {zoom}" if inside else zoom)

    def _update_actions(self) -> None:
        has_image = self._image is not None
        has_mask = self._mask is not None
        for action in (self.load_seeds_action, self.save_seeds_action, self.clear_action,
                       self.fit_action, self.actual_size_action, self.zoom_in_action,
                       self.zoom_out_action):
            action.setEnabled(has_image)
        self.save_mask_action.setEnabled(has_mask)
        self.save_overlay_action.setEnabled(has_mask)
        self.undo_action.setEnabled(has_image and self._canvas.can_undo)
        self.redo_action.setEnabled(has_image and self._canvas.can_redo)

    def _toggle_overlay(self) -> None:
        self._overlay_box.setChecked(self.overlay_action.isChecked())
        self._apply_overlay_visibility(self.overlay_action.isChecked())

    def _apply_overlay_visibility(self, visible: bool) -> None:
        self.view.result_fill_layer.setVisible(visible)
        self.view.outline_layer.setVisible(visible)

    def _toggle_seeds(self) -> None:
        self.view.seed_layer.setVisible(self.seeds_visible_action.isChecked())

    def _show_controls(self) -> None:
        self.show_message("Controls", CONTROLS_HELP)

    def _show_about(self) -> None:
        from importlib.metadata import PackageNotFoundError, version
        try:
            release = version("graphcut")
        except PackageNotFoundError:
            release = "(not installed)"
        self.show_message("About graphcut", f"graphcut {release}: graph-cut segmentation from "
                          "scribbles, on the GPU (CuPy push-relabel) or the CPU (PyMaxflow).")


def _labelled(text: str, widget: QWidget) -> QWidget:
    box = QWidget()
    box.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
    layout = QHBoxLayout(box)
    layout.setContentsMargins(6, 0, 6, 0)
    layout.addWidget(QLabel(text))
    layout.addWidget(widget)
    return box


def _local_files(mime) -> list[str]:
    if not mime.hasUrls():
        return []
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile()]


def _expected_backend(device: str) -> tuple[str, str]:
    """(backend, device name) that ``device`` will use, before any solve has run."""
    from graphcut.solver import BackendUnavailableError, resolve_device
    try:
        backend = resolve_device(device)
    except (BackendUnavailableError, ValueError):
        return "unavailable", device
    if backend == "cuda":
        from graphcut.solver.api import cuda_device_name
        return "cuda", cuda_device_name()
    return "cpu", ""


def _backend_text(backend: str, device_name: str) -> str:
    if backend == "cuda":
        return f"GPU: {device_name or 'CUDA'}"
    if backend == "cpu":
        from graphcut.solver.api import gpu_hint
        return "CPU (PyMaxflow; GPU unused: pip install 'graphcut[gpu]')" if gpu_hint() \
            else "CPU (PyMaxflow)"
    return f"backend: {backend} {device_name}".strip()
