"""The main window: wires the document to the objects that act on it and to the widgets.

- ``document.py``: the Qt-free :class:`~graphcut.gui.document.Document` (image, seeds, labels,
  options, result, paths, saved state), ``window.document``;
- ``file_actions.py``: opening and saving (``window.files``);
- ``seed_actions.py``: strokes, undo, redo, clear (``window.painting``);
- ``tool_actions.py``: box, lasso, label list, tools, options (``window.tools``);
- ``live.py``: the segmentation controller (``controller.py``) fed with every edit, its
  answers drawn (``window.live``);
- ``actions.py``: the actions, menus, toolbar and the Controls help; ``view.py``: the canvas.

Scripting (also used by the tests), on the window: ``open_image``, ``load_seeds``,
``paint_stroke``, ``wait_until_idle``, ``mask``, ``seeds``, ``save_mask``, ``save_overlay``,
``save_labels``, ``save_seeds``, ``set_lam``, ``set_max_pixels``, ``set_region``,
``set_cleanup``, ``set_model``, ``segment_options``, ``result_labels``, ``label_panel``,
``is_modified``; ``grab()`` is Qt's screenshot. Message boxes go through
:meth:`MainWindow.show_error`, :meth:`MainWindow.show_message`, :meth:`MainWindow.show_help`
and :meth:`MainWindow.confirm_discard`, which scripts and tests may replace.
"""

from __future__ import annotations

import atexit
import dataclasses
import logging
import math
import sys
import weakref

import numpy as np
from PyQt6.QtCore import pyqtSignal
from PyQt6.QtGui import QColor
from PyQt6.QtWidgets import QApplication, QColorDialog, QLabel, QMainWindow, QMessageBox

from graphcut.io import FOREGROUND

from .actions import (DEFAULT_BRUSH_RADIUS, build_actions, build_menus, build_toolbar,
                      controls_help)
from .boxes import help_dialog
from .display import describe
from .document import Document
from .file_actions import FileActions, local_files
from .live import LiveSegmentation, backend_text, expected_backend
from .seed_actions import MAX_BRUSH_RADIUS, SeedActions
from .tool_actions import ToolActions
from .view import ImageView

log = logging.getLogger("graphcut.gui")

# A new image's brush is at least this radius in screen pixels at the fitted view.
MIN_BRUSH_SCREEN_RADIUS = 3.0

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


class MainWindow(QMainWindow):
    """The graphcut desktop app. ``MainWindow()`` creates the QApplication if none exists.

    Args:
        device: "auto", "cpu" or "cuda", passed to ``graphcut`` for every segmentation.
        lam: the user's smoothness weight (None: the appearance model's default).
        model: the appearance model to start with (None: the app's default, auto).
        solver_process: segment in a child process (see ``solver_process.py``: the window
            stays responsive even while PyMaxflow holds the GIL); False segments on a thread
            of this process.
        max_pixels: the image size limit (File > Image size limit): larger images are refused
            as possible decompression bombs. None: Pillow's ``Image.MAX_IMAGE_PIXELS``.
    """

    _posted = pyqtSignal(object)  # a function from a solver's thread, run on the GUI thread

    def __init__(self, *, device: str = "auto", lam: float | None = None,
                 model: str | None = None, solver_process: bool = True,
                 max_pixels: int | None = None, parent=None):
        _ensure_application()
        super().__init__(parent)
        self.device = device
        self.last_error: str | None = None
        self._tool = FOREGROUND
        self.setWindowTitle("graphcut[*]")
        self.setAcceptDrops(True)
        self.document = Document(model)
        self.view = ImageView(self)
        self.setCentralWidget(self.view)
        self.files = FileActions(self, self.document, max_pixels)
        self.painting = SeedActions(self, self.document)
        self.tools = ToolActions(self, self.document)
        self.label_panel = self.tools.label_panel
        build_actions(self)
        build_menus(self)
        if lam is not None:
            self.document.lam.type(lam)  # the caller's λ wins, as a typed one
        self.toolbar = build_toolbar(self, self.document.lam.shown(self.document.options.model))
        self._build_status_bar()
        self.live = LiveSegmentation(self, self.document, solver_process=solver_process)
        self._controller = self.live.controller  # for benchmarks and tests
        self._connect_view()
        self._update_actions()
        self.resize(1100, 780)
        _windows.add(self)

    # ===== scripting surface (each delegates to the object that does it) =====================
    def open_image(self, path) -> bool:
        """Open an image file (``FileActions.open_image``); returns success."""
        return self.files.open_image(path)

    def load_seeds(self, path) -> bool:
        """Load seeds and their settings (``FileActions.load_seeds``); returns success."""
        return self.files.load_seeds(path)

    def save_mask(self, path) -> bool:
        """Write the 0/255 mask (``FileActions.save_mask``); returns success."""
        return self.files.save_mask(path)

    def save_overlay(self, path) -> bool:
        """Write the overlay as the screen shows it (``FileActions.save_overlay``)."""
        return self.files.save_overlay(path)

    def save_labels(self, path) -> bool:
        """Write the result as a label image (``FileActions.save_labels``)."""
        return self.files.save_labels(path)

    def save_seeds(self, path) -> bool:
        """Write the seeds and their settings JSON as a pair (``FileActions.save_seeds``)."""
        return self.files.save_seeds(path)

    def wait_for_result(self, what: str = "result") -> bool:
        """Wait for the result of the seeds on screen (``FileActions.wait_for_result``)."""
        return self.files.wait_for_result(what)

    def max_pixels(self) -> int:
        """The image size limit in pixels (``FileActions.max_pixels``)."""
        return self.files.max_pixels()

    def set_max_pixels(self, pixels: int | None) -> None:
        """Set the image size limit (None: Pillow's default)."""
        self.files.set_max_pixels(pixels)

    def paint_stroke(self, points, label: int, radius: float) -> None:
        """Paint one undoable stroke through (row, col) ``points`` (see ``SeedActions``)."""
        self.painting.paint_stroke(points, label, radius)

    def set_region(self, box=None, lasso=None) -> None:
        """Set the box or lasso, or clear it (``ToolActions.set_region``)."""
        self.tools.set_region(box=box, lasso=lasso)

    def clear_region(self) -> None:
        """Remove the box or lasso (undoable)."""
        self.tools.clear_region()

    def region(self) -> tuple:
        """The current ``(box, lasso)``; ``(None, None)`` when there is neither."""
        return self.document.region()

    def set_cleanup(self, on: bool) -> None:
        """Turn Segment > Clean up result on or off."""
        self.tools.set_cleanup(on)

    def set_model(self, model: str) -> None:
        """The appearance model: "histogram", "gmm", "learned" (``ToolActions.set_model``)."""
        self.tools.set_model(model)

    def set_tool(self, tool) -> None:
        """Select the left button's tool: 1, 2, 0, "box" or "lasso"."""
        self.tools.set_tool(tool)

    def segment_options(self) -> dict:
        """``graphcut.segment``'s keyword options that give what the window shows (with the
        window's seeds: ``graphcut.segment(image, w.seeds(), **w.segment_options())``), with
        the lam the app cuts at (the model's own while λ follows the model)."""
        options = self.document.options
        return options.segment_kwargs(self.document.lam.shown(options.model))

    def result_labels(self) -> np.ndarray | None:
        """The exact result as a label image (uint8), or None until it has arrived."""
        return self.document.result_label_image()

    def wait_until_idle(self, timeout: float = 30.0) -> None:
        """Process events until no segmentation runs or waits (TimeoutError at ``timeout``)."""
        self.live.wait_until_idle(timeout)

    def is_busy(self) -> bool:
        """Whether a segmentation is running, waiting, or about to be asked for."""
        return self.live.is_busy()

    def is_modified(self) -> bool:
        """Whether the seeds, box or lasso differ from those last saved or loaded."""
        return self.document.is_modified

    def mask(self) -> np.ndarray | None:
        """A copy of the exact object mask of the current seeds (bool, True = object), or
        None until it has arrived (a preview on screen does not count)."""
        mask = self.document.mask
        return None if mask is None else mask.copy()

    def seeds(self) -> np.ndarray | None:
        """A copy of the current seed labels (uint8: 0 none, 1 foreground, 2 background,
        3, 4, ... further objects), or None without an image."""
        canvas = self.document.canvas
        return None if canvas is None else canvas.labels.copy()

    def image(self) -> np.ndarray | None:
        """The open image as read (not a copy: do not modify it)."""
        return self.document.image

    def lam(self) -> float:
        """The smoothness weight λ shown (the model's default until the user sets one)."""
        return self._lam_box.value()

    def set_lam(self, value: float | None) -> None:
        """Set the user's smoothness weight (None: follow the model's default again); the
        image is segmented again shortly after."""
        if value is None:
            self.tools.reset_lam()
        else:
            self.tools.set_lam(value)

    def brush_radius(self) -> int:
        """The brush radius in image pixels."""
        return self._brush_box.value()

    def set_brush_radius(self, radius: int) -> None:
        """Set the brush radius in image pixels (1..200)."""
        self._brush_box.setValue(int(radius))

    def result_style(self):
        """How the result is drawn (``overlay.ResultStyle``: fill colour and opacity, outline
        colour and width in screen pixels); also what Save overlay writes."""
        return self.view.result_layer.style

    def set_result_style(self, **changes) -> None:
        """Change how the result is drawn: ``fill`` / ``outline`` (r, g, b), ``opacity``
        (0..1), ``outline_width`` (screen pixels)."""
        style = dataclasses.replace(self.view.result_layer.style, **changes)
        self.view.result_layer.set_style(style)
        percent = round(style.opacity * 100)
        if self._opacity_slider.value() != percent:
            self._opacity_slider.setValue(percent)

    def shutdown(self) -> None:
        """Stop the segmentation (a running solve is abandoned) and the solvers. Idempotent."""
        live = getattr(self, "live", None)
        if live is not None:
            live.shutdown()

    # ===== messages (replaceable by scripts and tests) =========================================
    def show_error(self, title: str, text: str) -> None:
        """Tell the user something failed (a modal message box)."""
        self.last_error = text
        log.warning("%s: %s", title, text)
        QMessageBox.critical(self, title, text)

    def show_message(self, title: str, text: str) -> None:
        """Show information (a modal message box)."""
        QMessageBox.information(self, title, text)

    def show_help(self, title: str, html: str) -> None:
        """Show a long text (HTML) in a scrolling dialog that fits the screen."""
        help_dialog(self, title, html).exec()

    def confirm_discard(self) -> bool:
        """Ask whether unsaved seeds may be lost: True = go on (after saving if asked)."""
        answer = QMessageBox.question(
            self, "Unsaved seeds", "The seeds (or the box or lasso) have changed since they "
            "were last saved. Save them first?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.files.save_seeds_dialog()
        return answer == QMessageBox.StandardButton.Discard

    # ===== the document ========================================================================
    def _show_document(self, prepared) -> None:
        """Make the prepared image (``prepare.PreparedImage``) the document, with no seeds,
        one object label and a brush visible at the fitted view."""
        image, path = prepared.image, prepared.path
        self.document.open(image, path, prepared.canvas)
        self.view.set_image(prepared.levels[0], prepared.levels, prepared.seed_levels)
        self.tools.reset_labels()
        self.live.open_image(image)
        self.tools.sync_region()
        scale = self.view.scale_factor()
        self.set_brush_radius(min(MAX_BRUSH_RADIUS, max(
            DEFAULT_BRUSH_RADIUS, math.ceil(MIN_BRUSH_SCREEN_RADIUS / scale))))
        self._show_modified()
        self.setWindowTitle(f"graphcut — {path.name}[*]")
        self._size_label.setText(describe(image))
        self._time_label.setText("")
        self._time_label.setToolTip("")
        self.statusBar().showMessage(
            "Paint foreground (left button) and background (right button) seeds", 8000)
        self._update_actions()

    def _show_modified(self) -> None:
        self.setWindowModified(self.document.is_modified)

    def _set_seeds_dirty(self, dirty: bool) -> None:
        """Mark the seeds as modified or saved (for scripts; saving does this itself)."""
        self.document.mark_modified() if dirty else self.document.mark_saved()
        self._show_modified()

    def _may_discard_seeds(self) -> bool:
        return not self.document.needs_saving or self.confirm_discard()

    def _on_outcome(self, outcome) -> None:
        """Every answer of the controller passes here (scripts may wrap it)."""
        self.live.on_outcome(outcome)

    # ===== Qt events ==========================================================================
    def closeEvent(self, event) -> None:
        """Qt: ask before discarding unsaved seeds; shut the solver down on closing."""
        if not self._may_discard_seeds():
            event.ignore()
            return
        self.shutdown()
        event.accept()

    def dragEnterEvent(self, event) -> None:
        """Qt: accept a drag that carries local files."""
        if local_files(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        """Qt: as :meth:`dragEnterEvent`."""
        self.dragEnterEvent(event)

    def dropEvent(self, event) -> None:
        """Qt: open the first dropped file as the image."""
        files = local_files(event.mimeData())
        if not files:
            event.ignore()
            return
        event.acceptProposedAction()
        self.open_image(files[0])

    # ===== construction and widgets ===========================================================
    def _build_status_bar(self) -> None:
        status = self.statusBar()
        self._position_label = QLabel()
        self._position_label.setMinimumWidth(
            self._position_label.fontMetrics().horizontalAdvance("row 00000, col 00000   0000 %"))
        self._backend_label = QLabel(backend_text(*expected_backend(self.device)))
        self._time_label = QLabel()
        self._size_label = QLabel("no image")
        for label in (self._position_label, self._size_label, self._time_label,
                      self._backend_label):
            status.addPermanentWidget(label)

    def _connect_view(self) -> None:
        self.view.stroke_started.connect(self.painting.stroke_started)
        self.view.stroke_moved.connect(self.painting.stroke_moved)
        self.view.stroke_finished.connect(self.painting.stroke_finished)
        self.view.hovered.connect(self._show_position)
        self.view.zoom_changed.connect(lambda _: self._show_position(*self._hover))
        self._hover = (-1.0, -1.0)

    def _show_position(self, row: float, col: float) -> None:
        self._hover = (row, col)
        zoom = f"{self.view.scale_factor() * 100:.0f} %"
        image = self.document.image
        if image is None:
            self._position_label.setText(zoom)
            return
        r, c = round(row), round(col)
        inside = 0 <= r < image.shape[0] and 0 <= c < image.shape[1]
        self._position_label.setText(f"row {r}, col {c}   {zoom}" if inside else zoom)

    def _update_actions(self) -> None:
        document = self.document
        has_image = document.has_image
        # saving while a segmentation runs waits for it (file_actions.py), so it may start
        can_save = document.mask is not None or (has_image and self.is_busy())
        for action in (self.load_seeds_action, self.save_seeds_action, self.clear_action,
                       self.fit_action, self.actual_size_action, self.zoom_in_action,
                       self.zoom_out_action, self.clear_region_action):
            action.setEnabled(has_image)
        for action in (self.save_mask_action, self.save_overlay_action,
                       self.save_labels_action):
            action.setEnabled(can_save)
        self.undo_action.setEnabled(has_image and document.canvas.can_undo)
        self.redo_action.setEnabled(has_image and document.canvas.can_redo)

    def _toggle_overlay(self) -> None:
        self._overlay_box.setChecked(self.overlay_action.isChecked())
        self._apply_overlay_visibility(self.overlay_action.isChecked())

    def _apply_overlay_visibility(self, visible: bool) -> None:
        """Show the result when ``visible``; one object's mask only while its label is shown
        (several objects hide label by label)."""
        document = self.document
        single_hidden = (document.result_labels is None
                         and not document.labels.get(FOREGROUND).visible)
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
        self.show_help("Controls", controls_help(self))

    def _show_about(self) -> None:
        from importlib.metadata import PackageNotFoundError, version
        try:
            release = version("graphcut")
        except PackageNotFoundError:
            release = "(not installed)"
        self.show_message("About graphcut", f"graphcut {release}: graph-cut segmentation from "
                          "scribbles, on the GPU (CuPy push-relabel) or the CPU (PyMaxflow).")
