"""The main window: the open image and its seeds, the canvas, the live segmentation and the
status bar. Opening and saving files is ``files.py``'s (a mixin), the box, lasso, label list
and segmentation options ``tool_operations.py``'s (a mixin, with ``tools.py``, ``labels.py``
and ``label_panel.py``); the actions, menus, toolbar and the Controls help are built by
``actions.py``.

The window holds no energy or solver logic: segmentation is ``graphcut``'s, run in solver
processes by the segmentation controller (``controller.py``), which this window only feeds
with seed edits and whose answers it draws. Every seed edit asks for a new segmentation; a
newer request supersedes older ones (a GPU solve is stopped), outcomes of older requests are
never shown, and on the CPU a coarse preview is shown until the exact mask arrives. The window
never waits for the solver.

Scripting (also used by the tests): ``open_image``, ``load_seeds``, ``paint_stroke``,
``wait_until_idle``, ``mask``, ``save_mask``, ``save_overlay``, ``save_seeds``, ``set_lam``,
``set_max_pixels``, and ``tool_operations.py``'s ``set_region``, ``set_cleanup``,
``set_model``, ``segment_options``, ``result_labels``, ``label_panel``; ``grab()`` is Qt's
screenshot. Message boxes go through
:meth:`MainWindow.show_error`, :meth:`MainWindow.show_message` and
:meth:`MainWindow.confirm_discard`, which scripts and tests may replace.
"""

from __future__ import annotations

import atexit
import logging
import sys
import time
import weakref
from math import nan
from pathlib import Path

import numpy as np
from PyQt6.QtCore import QEventLoop, QTimer, pyqtSignal
from PyQt6.QtGui import QColor
from PyQt6.QtWidgets import QApplication, QColorDialog, QLabel, QMainWindow, QMessageBox

import graphcut

from .actions import MAX_BRUSH_RADIUS, build_actions, build_menus, build_toolbar, controls_help
from .display import describe
from .files import FileOperations
from .controller import Listener, SegmentationController
from .overlay import seed_layer
from .solve import Outcome
from .strokes import FOREGROUND, SeedCanvas
from .tool_operations import ToolOperations
from .tools import REGION_TOOLS
from .view import ImageView

log = logging.getLogger("graphcut.gui")

LAM_DEBOUNCE_MS = 150  # wait this long after the last lambda change before re-segmenting

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


class MainWindow(FileOperations, ToolOperations, QMainWindow):
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

    _posted = pyqtSignal(object)  # a function from a solver's thread, run on the GUI thread

    def __init__(self, *, device: str = "auto", lam: float | None = None,
                 solver_process: bool = True, max_pixels: int | None = None, parent=None):
        _ensure_application()
        super().__init__(parent)
        self.set_max_pixels(max_pixels)
        self.device = device
        self.last_error: str | None = None
        self._image: np.ndarray | None = None
        self._image_path: Path | None = None
        self._canvas: SeedCanvas | None = None
        self._mask: np.ndarray | None = None
        self._result_labels: np.ndarray | None = None  # several objects: the label image
        self._seeds_path: Path | None = None
        self._seeds_dirty = False
        self._tool = FOREGROUND
        self._stroke_label: int | None = None
        self._stroke_last: tuple[float, float] | None = None
        self._stroke_region: tuple | None = None  # rows, cols painted by the current stroke
        self._stopped = False

        self.setWindowTitle("graphcut[*]")
        self.setAcceptDrops(True)
        self.view = ImageView(self)
        self.setCentralWidget(self.view)
        self._build_tools()
        build_actions(self)
        build_menus(self)
        self.toolbar = build_toolbar(self, graphcut.DEFAULT_LAM if lam is None else lam)
        self._build_status_bar()
        self._lam_timer = QTimer(self)
        self._lam_timer.setSingleShot(True)
        self._lam_timer.setInterval(LAM_DEBOUNCE_MS)
        self._lam_timer.timeout.connect(self._request_segmentation)
        self._connect_view()
        self._start_controller(solver_process)
        self._update_actions()
        self.resize(1100, 780)
        _windows.add(self)

    # ===== scripting surface ==================================================================
    def paint_stroke(self, points, label: int, radius: float) -> None:
        """Paint one undoable stroke through ``points`` ((row, col) pixel coordinates).

        Args:
            points: a sequence of (row, col); consecutive points are joined by straight lines.
            label: 1 = foreground (object 1), 2 = background, 0 = erase, 3, 4, ... further
                objects (added to the label list when new).
            radius: brush radius in image pixels (pixels whose centres are within it are
                painted).
        """
        if self._canvas is None:
            raise RuntimeError("no image is open; call open_image first")
        points = np.asarray(points, dtype=float).reshape(-1, 2)
        if len(points) == 0:
            raise ValueError("a stroke needs at least one (row, col) point")
        self._canvas.paint(points[0], points[0], label, 0)  # checks the label, changes nothing
        self._note_labels([label])
        self._canvas.begin_edit()
        region = None
        try:
            for start, end in zip(points, points[1:] if len(points) > 1 else points):
                region = _union(region, self._canvas.paint(start, end, label, radius))
        finally:
            changed = self._canvas.end_edit()
        self._after_seed_edit(changed, region=region)

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
        return self._controller.is_busy() or self._lam_timer.isActive()

    def mask(self) -> np.ndarray | None:
        """A copy of the exact object mask of the current seeds (bool, True = object), or
        None until it has arrived (a preview on screen does not count)."""
        return None if self._mask is None else self._mask.copy()

    def result_style(self):
        """How the result is drawn (``overlay.ResultStyle``: fill colour and opacity, outline
        colour and width in screen pixels); also what Save overlay writes."""
        return self.view.result_layer.style

    def set_result_style(self, **changes) -> None:
        """Change how the result is drawn: ``fill`` / ``outline`` (r, g, b), ``opacity``
        (0..1), ``outline_width`` (screen pixels)."""
        import dataclasses
        style = dataclasses.replace(self.view.result_layer.style, **changes)
        self.view.result_layer.set_style(style)
        percent = round(style.opacity * 100)
        if self._opacity_slider.value() != percent:
            self._opacity_slider.setValue(percent)

    def seeds(self) -> np.ndarray | None:
        """A copy of the current seed labels (uint8: 0 none, 1 foreground, 2 background,
        3, 4, ... further objects)."""
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

    def set_tool(self, label) -> None:
        """Select the left button's tool: 1 object (the label selected in the label list),
        2 background, 0 eraser, "box" or "lasso"."""
        self._tool_actions[label].setChecked(True)
        self._tool = label
        self.view.brush_tool = label not in REGION_TOOLS

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
    def _start_controller(self, solver_process: bool) -> None:
        self._posted.connect(lambda function: function())  # queued: runs on this thread
        self._controller = SegmentationController(
            _WindowListener(self), post=self._posted.emit, device=self.device,
            lam=self._lam_box.value(), use_process=solver_process)
        if solver_process:
            self._controller.warm_up()

    def shutdown(self) -> None:
        """Stop the segmentation (a running solve is abandoned) and the solvers. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self._lam_timer.stop()
        self._controller.close()

    def _request_segmentation(self) -> None:
        if self._image is None or self._stopped:
            return
        self._lam_timer.stop()
        self._controller.set_lam(self._lam_box.value())
        if self._controller.request() is None:
            self._show_mask(None)
            self.statusBar().showMessage("Paint at least one object and one background seed, "
                                         "or draw a box or lasso, to segment")
            return
        self._mask = self._result_labels = None
        self.statusBar().showMessage("Segmenting…")
        self._update_actions()

    def _on_outcome(self, outcome: Outcome) -> None:
        """A mask for the newest request: a preview (on a reduced grid) or the exact one."""
        labels = outcome.labels
        self.view.result_layer.set_mask(
            outcome.mask, self._image.shape, factor=outcome.factor, region=outcome.region,
            labels=labels, colours=None if labels is None else self._labels.result_colours())
        waited = outcome.seconds.get("waited", float("nan"))
        if outcome.factor > 1:
            self.statusBar().showMessage(
                f"Preview at 1/{outcome.factor} resolution after {_duration(waited)}; "
                "segmenting at full resolution…")
            return
        self._mask, self._result_labels = outcome.mask, labels
        self._apply_overlay_visibility(self.overlay_action.isChecked())
        self._update_actions()
        self._backend_label.setText(_backend_text(outcome.backend, outcome.device_name))
        self._show_wait(waited, outcome)
        self.statusBar().showMessage(f"Object covers {100 * outcome.coverage:.1f} % of the "
                                     "image", 5000)

    def _on_segmentation_error(self, message: str) -> None:
        self._show_mask(None)
        self.statusBar().showMessage("Segmentation failed")
        self.show_error("Segmentation failed", message)

    def _show_mask(self, mask: np.ndarray | None) -> None:
        self._mask, self._result_labels = mask, None
        shape = None if self._image is None else self._image.shape
        self.view.result_layer.set_mask(mask, shape)
        self._update_actions()

    # ===== seeds ==============================================================================
    def _after_seed_edit(self, changed: bool, *, redraw: bool = True, dirty: bool = True,
                         region=None) -> None:
        """Redraw the seed layer where it changed (unless already drawn as painted), then
        re-segment. ``region``: the (rows, cols) slices that changed; None = anywhere."""
        if changed:
            labels = self._canvas.labels
            seeds_changed = region is None or (region[0].start < region[0].stop
                                               and region[1].start < region[1].stop)
            if redraw and seeds_changed:
                if region is None:
                    self.view.seed_layer.set_array(seed_layer(labels, self._seed_colours))
                else:
                    self.view.seed_layer.update_region(
                        region, seed_layer(labels[region], self._seed_colours))
            if seeds_changed:
                self._controller.set_seeds(labels, region)
            self._sync_options()
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
        label = self._tool if button_label == ImageView.CURRENT_TOOL else button_label
        if label in REGION_TOOLS:
            self.region_tool.begin(label, row, col)
            return
        self._stroke_label = self._labels.current if label == FOREGROUND else label
        self._stroke_last = (row, col)
        self._stroke_region = None
        self._canvas.begin_edit()
        self._paint_segment((row, col), (row, col))

    def _on_stroke_moved(self, row: float, col: float) -> None:
        if self.region_tool.active:
            self.region_tool.move(row, col)
        if self._stroke_label is None:
            return
        self._paint_segment(self._stroke_last, (row, col))
        self._stroke_last = (row, col)

    def _on_stroke_finished(self) -> None:
        if self.region_tool.active:
            constraint = self.region_tool.finish(self._image.shape)
            try:
                if constraint is not None:
                    self.set_region(*constraint)
            except ValueError as error:  # e.g. a lasso around no pixel centre
                self.statusBar().showMessage(f"No region set: {error}", 8000)
            return
        if self._stroke_label is None:
            return
        self._stroke_label = self._stroke_last = None
        self._after_seed_edit(self._canvas.end_edit(), redraw=False, region=self._stroke_region)

    def _paint_segment(self, start, end) -> None:
        region = self._canvas.paint(start, end, self._stroke_label, self.brush_radius())
        if region is not None:
            self._stroke_region = _union(self._stroke_region, region)
            self.view.seed_layer.update_region(
                region, self._seed_colours[self._canvas.labels[region]])

    def _undo(self) -> None:
        if self._idle_canvas():
            region = self._canvas.undo()
            if region:
                self._after_seed_edit(True, region=region)

    def _redo(self) -> None:
        if self._idle_canvas():
            region = self._canvas.redo()
            if region:
                self._after_seed_edit(True, region=region)

    def _idle_canvas(self) -> bool:
        """Whether an image is open and no stroke, box or lasso is being drawn."""
        return (self._stroke_label is None and not self.region_tool.active
                and self._canvas is not None)

    def _clear_seeds(self) -> None:
        if not self._idle_canvas():
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
        self._image, self._image_path = image, path
        self._canvas = SeedCanvas(image.shape[:2])
        self._seeds_path = None
        self._set_seeds_dirty(False)
        self.view.set_image(rgba)
        self.view.seed_layer.set_array(seed_layer(self._canvas.labels, self._seed_colours))
        self._controller.open_image(image)
        self._sync_options()
        self._show_mask(None)
        self.setWindowTitle(f"graphcut — {path.name}[*]")
        self._size_label.setText(describe(image))
        self._time_label.setText("")
        self._time_label.setToolTip("")
        self.statusBar().showMessage(
            "Paint foreground (left button) and background (right button) seeds", 8000)
        self._update_actions()

    def _replace_seeds(self, labels: np.ndarray, path: Path, constraint=None) -> None:
        """Replace the seeds with ``labels`` read from ``path`` and the box / lasso with
        ``constraint`` (one undo step)."""
        self._note_labels(np.unique(labels))
        self._canvas.begin_edit()
        self._canvas.replace(labels)
        self._canvas.set_constraint(constraint)
        changed = self._canvas.end_edit()
        self._seeds_path = path
        self._after_seed_edit(changed, dirty=False, region=None)

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
        kind = "an incremental re-solve" if outcome.incremental else "a solve from scratch"
        seconds = outcome.seconds
        self._time_label.setToolTip(
            f"You waited {_duration(waited)} from the end of the stroke to the result on "
            f"screen (the exact one, after any preview). That includes the solver's {_duration(seconds.get('total', nan))} "
            f"({kind}: colour model and capacities {_duration(seconds.get('energy', nan))}, "
            f"max-flow {_duration(seconds.get('solve', nan))}, finding the changed part of "
            f"the mask {_duration(seconds.get('mask', nan))}; the first request for an image "
            "also waits for its session to be built), sending the seeds and the mask, and "
            "waiting for an earlier segmentation still running.")

    def _update_actions(self) -> None:
        has_image = self._image is not None
        # saving while a segmentation runs waits for it (files.py), so it may start already
        can_save = self._mask is not None or (has_image and self.is_busy())
        for action in (self.load_seeds_action, self.save_seeds_action, self.clear_action,
                       self.fit_action, self.actual_size_action, self.zoom_in_action,
                       self.zoom_out_action, self.clear_region_action):
            action.setEnabled(has_image)
        for action in (self.save_mask_action, self.save_overlay_action,
                       self.save_labels_action):
            action.setEnabled(can_save)
        self.undo_action.setEnabled(has_image and self._canvas.can_undo)
        self.redo_action.setEnabled(has_image and self._canvas.can_redo)

    def _toggle_overlay(self) -> None:
        self._overlay_box.setChecked(self.overlay_action.isChecked())
        self._apply_overlay_visibility(self.overlay_action.isChecked())

    def _apply_overlay_visibility(self, visible: bool) -> None:
        """Show the result when ``visible``; one object's mask only while its label is shown
        (several objects hide label by label)."""
        single_hidden = self._result_labels is None and not self._labels.get(FOREGROUND).visible
        self.view.result_layer.setVisible(visible and not single_hidden)

    def _choose_colour(self, part: str) -> None:
        """Let the user pick the fill or outline colour (``part``: "fill" or "outline")."""
        current = QColor(*getattr(self.result_style(), part))
        title = "Result fill colour" if part == "fill" else "Result outline colour"
        colour = QColorDialog.getColor(current, self, title)
        if colour.isValid():
            self.set_result_style(**{part: (colour.red(), colour.green(), colour.blue())})

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


class _WindowListener(Listener):
    """The controller's answers, handed to the window (on the GUI thread)."""

    def __init__(self, window: "MainWindow"):
        self._window = weakref.ref(window)

    def on_outcome(self, outcome) -> None:
        window = self._window()
        if window is not None and not window._stopped:
            window._on_outcome(outcome)

    def on_error(self, message: str, details: str = "") -> None:
        window = self._window()
        if window is not None and not window._stopped:
            if details:
                log.debug("segmentation failed: %s\n%s", message, details)
            window._on_segmentation_error(message)

    def on_backend(self, backend: str, device_name: str) -> None:
        window = self._window()
        if window is not None and not window._stopped:
            window._backend_label.setText(_backend_text(backend, device_name))


def _union(a, b):
    """The bounding (rows, cols) slices of two regions (None is empty)."""
    if a is None or b is None:
        return b if a is None else a
    return (slice(min(a[0].start, b[0].start), max(a[0].stop, b[0].stop)),
            slice(min(a[1].start, b[1].start), max(a[1].stop, b[1].stop)))


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
        from graphcut.solver import cuda_device_name
        return "cuda", cuda_device_name()
    return "cpu", ""


def _backend_text(backend: str, device_name: str) -> str:
    if backend == "cuda":
        return f"GPU: {device_name or 'CUDA'}"
    if backend == "cpu":
        from graphcut.solver import gpu_hint
        return "CPU (PyMaxflow; GPU unused: pip install 'graphcut[gpu]')" if gpu_hint() \
            else "CPU (PyMaxflow)"
    return f"backend: {backend} {device_name}".strip()
