"""The main window: the open image and its seeds, the canvas, the live segmentation and the
status bar. Opening and saving files is ``files.py``'s (a mixin); the actions, menus, toolbar
and the Controls help are built by ``actions.py``.

The window holds no energy or solver logic: segmentation is ``graphcut``'s, run on a worker
thread (``worker.py``). Every seed edit asks for a new segmentation; while one runs, only the
newest request waits, and the outcome of any request older than the newest is dropped, so the
overlay always matches the seeds on screen and the window never waits for the solver.

Scripting (also used by the tests): ``open_image``, ``load_seeds``, ``paint_stroke``,
``wait_until_idle``, ``mask``, ``save_mask``, ``save_overlay``, ``save_seeds``, ``set_lam``,
``set_max_pixels``; ``grab()`` is Qt's screenshot. Message boxes go through
:meth:`MainWindow.show_error`, :meth:`MainWindow.show_message` and
:meth:`MainWindow.confirm_discard`, which scripts and tests may replace.
"""

from __future__ import annotations

import atexit
import logging
import sys
import time
import weakref
from pathlib import Path

import numpy as np
from PyQt6.QtCore import QEventLoop, QThread, QTimer, pyqtSignal
from PyQt6.QtWidgets import QApplication, QLabel, QMainWindow, QMessageBox

import graphcut

from .actions import (MAX_BRUSH_RADIUS, TOOL_NAMES, build_actions, build_menus, build_toolbar,
                      controls_help)
from .display import describe
from .files import FileOperations
from .overlay import SEED_COLOURS, fill_layer, outline_layer, seed_layer
from .strokes import FOREGROUND, SeedCanvas
from .view import ImageView
from .solve import Job, Outcome
from .worker import SegmentationWorker

log = logging.getLogger("graphcut.gui")

LAM_DEBOUNCE_MS = 300  # wait this long after the last lambda change before re-segmenting

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


class MainWindow(FileOperations, QMainWindow):
    """The graphcut desktop app. ``MainWindow()`` creates the QApplication if none exists.

    Args:
        device: "auto", "cpu" or "cuda", passed to ``graphcut`` for every segmentation.
        lam: the initial smoothness weight (``graphcut.DEFAULT_LAM`` by default).
        solver_process: segment in a child process (see ``solver_process.py``: the window
            stays responsive even while PyMaxflow holds the GIL); False segments on a thread
            of this process.
        max_pixels: the image size limit (File > Image size limit): larger images are refused
            as possible decompression bombs. None: Pillow's ``Image.MAX_IMAGE_PIXELS``.
    """

    _submit = pyqtSignal(object)  # Job -> worker thread
    _warm_up = pyqtSignal()
    _prepare = pyqtSignal(object)  # Job of a newly opened image -> worker thread (warm-up)

    def __init__(self, *, device: str = "auto", lam: float | None = None,
                 solver_process: bool = True, max_pixels: int | None = None, parent=None):
        _ensure_application()
        super().__init__(parent)
        self.set_max_pixels(max_pixels)
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
        self._requested_at = 0.0  # time.perf_counter() when the newest request was made
        self._running: int | None = None
        self._pending: Job | None = None
        self._stopped = False

        self.setWindowTitle("graphcut[*]")
        self.setAcceptDrops(True)
        self.view = ImageView(self)
        self.setCentralWidget(self.view)
        build_actions(self)
        build_menus(self)
        self.toolbar = build_toolbar(self, graphcut.DEFAULT_LAM if lam is None else lam)
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
        self._prepare.connect(self._worker.prepare)
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
        self._requested_at = time.perf_counter()
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
        self._show_wait(time.perf_counter() - self._requested_at, outcome)
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

    # ===== the document (used by files.py) ====================================================
    def _set_image(self, image: np.ndarray, path: Path, rgba: np.ndarray) -> None:
        """Make ``image`` (read from ``path``, shown as ``rgba``) the open image, with no
        seeds; anything still segmenting belongs to the old image."""
        self._image_token += 1
        self._latest_request += 1  # anything still running belongs to the old image
        self._pending = None
        self._image, self._image_path = image, path
        if not self._stopped:  # the solver loads its kernels and state while the image shows
            self._prepare.emit(Job(0, self._image_token, image, None,
                                   float(self._lam_box.value()), self.device))
        self._canvas = SeedCanvas(image.shape[:2])
        self._seeds_path = None
        self._set_seeds_dirty(False)
        self.view.set_image(rgba)
        self.view.seed_layer.set_array(seed_layer(self._canvas.labels))
        self._show_mask(None)
        self.setWindowTitle(f"graphcut — {path.name}[*]")
        self._size_label.setText(describe(image))
        self._time_label.setText("")
        self._time_label.setToolTip("")
        self.statusBar().showMessage(
            "Paint foreground (left button) and background (right button) seeds", 8000)
        self._update_actions()

    def _replace_seeds(self, labels: np.ndarray, path: Path) -> None:
        """Replace the seeds with ``labels`` read from ``path`` (one undo step)."""
        self._canvas.begin_edit()
        self._canvas.replace(labels)
        changed = self._canvas.end_edit()
        self._seeds_path = path
        self._after_seed_edit(changed, dirty=False)

    # ===== Qt events ==========================================================================
    def closeEvent(self, event) -> None:
        if not self._may_discard_seeds():
            event.ignore()
            return
        self.shutdown()
        event.accept()

    # ===== construction =======================================================================
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

    def _show_wait(self, waited: float, outcome: Outcome) -> None:
        """Show how long the user waited for ``outcome``: from the request (the end of the
        stroke, the λ change taking effect) to its mask on screen, in seconds."""
        self._time_label.setText(f"result in {_duration(waited)}")
        kind = ("an incremental re-solve" if outcome.incremental else
                "a solve from scratch (the first for this image and λ also builds the session)")
        self._time_label.setToolTip(
            f"You waited {_duration(waited)} from the end of the stroke to the result on "
            f"screen. That includes the solver's {_duration(outcome.wall_seconds)} (building "
            f"the graph, {kind}: {_duration(outcome.solve_seconds)} of max-flow, and the "
            "outline), and sending the seeds, waiting for an earlier segmentation still "
            "running, and drawing the result.")

    def _update_actions(self) -> None:
        has_image = self._image is not None
        # saving while a segmentation runs waits for it (files.py), so it may start already
        can_save = self._mask is not None or (has_image and self.is_busy())
        for action in (self.load_seeds_action, self.save_seeds_action, self.clear_action,
                       self.fit_action, self.actual_size_action, self.zoom_in_action,
                       self.zoom_out_action):
            action.setEnabled(has_image)
        self.save_mask_action.setEnabled(can_save)
        self.save_overlay_action.setEnabled(can_save)
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
        self.show_message("Controls", controls_help(self))

    def _show_about(self) -> None:
        from importlib.metadata import PackageNotFoundError, version
        try:
            release = version("graphcut")
        except PackageNotFoundError:
            release = "(not installed)"
        self.show_message("About graphcut", f"graphcut {release}: graph-cut segmentation from "
                          "scribbles, on the GPU (CuPy push-relabel) or the CPU (PyMaxflow).")


def _duration(seconds: float) -> str:
    """``"85 ms"`` below a second, ``"1.24 s"`` above."""
    if seconds != seconds:  # NaN: not measured
        return "? ms"
    return f"{seconds * 1e3:.0f} ms" if seconds < 1.0 else f"{seconds:.2f} s"


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
