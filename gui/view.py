"""The zoomable canvas: the image with its seed and result layers, mouse painting and panning.

Scene coordinates are image pixels with x = column and y = row: pixel (row, col) covers the
square [col, col + 1) × [row, row + 1), so its centre is at (col + 0.5, row + 0.5).
The view knows nothing about segmentation; it reports strokes in (row, col) pixel coordinates
(pixel centres at integers, see ``strokes.py``) through signals.

Mouse: the left button paints with the current tool, the right button always paints background,
the middle button (or space + left button) pans; the wheel zooms around the cursor. A stroke or
pan ends when its button is released, when the view loses the keyboard focus, or at the first
mouse move without the button held (a release lost to another window or a dialog must not
leave the view painting).

Navigation: the view has no scroll bars; the scene rectangle is the image padded by one
viewport on every side (recomputed on zoom and resize), so that any image pixel can be shown
under any viewport point. That is what lets a zoom keep the pixel under the cursor in place
even when the image is smaller than the window (Qt would otherwise centre it).
"""

from __future__ import annotations

import numpy as np
from PyQt6.QtCore import QPointF, QRectF, Qt, pyqtSignal
from PyQt6.QtGui import QColor, QPainter, QPen, QTransform
from PyQt6.QtWidgets import QGraphicsEllipseItem, QGraphicsScene, QGraphicsView

from graphcut.io import BACKGROUND

from .layers import ArrayLayer, ResultLayer

ZOOM_STEP = 1.25  # scale factor per wheel notch
MIN_SCALE, MAX_SCALE = 1 / 64, 64.0
FIT_MARGIN = 4  # screen pixels left around the image by "fit to window"
EMPTY_HINT = ("Open an image to start:\nFile > Open image… (Ctrl+O),\n"
              "or drop an image file here")


class ImageView(QGraphicsView):
    """Shows the layers and turns mouse input into strokes, pans and zooms."""

    stroke_started = pyqtSignal(float, float, int)  # row, col, button label (-1 = current tool)
    stroke_moved = pyqtSignal(float, float)  # row, col
    stroke_finished = pyqtSignal()
    hovered = pyqtSignal(float, float)  # row, col under the cursor
    zoom_changed = pyqtSignal(float)  # screen pixels per image pixel

    CURRENT_TOOL = -1

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.NoAnchor)  # see resizeEvent
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setBackgroundBrush(QColor(48, 48, 48))
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.setAcceptDrops(False)  # drops go to the main window
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.image_layer = ArrayLayer(z=0)
        self.result_layer = ResultLayer(z=1)
        self.seed_layer = ArrayLayer(z=3)
        for layer in (self.image_layer, self.result_layer, self.seed_layer):
            self.scene().addItem(layer)
        self.brush_outline = QGraphicsEllipseItem()
        pen = QPen(QColor(255, 255, 255, 220))
        pen.setCosmetic(True)
        self.brush_outline.setPen(pen)
        self.brush_outline.setZValue(10)
        self.brush_outline.setVisible(False)
        self.scene().addItem(self.brush_outline)
        self.brush_radius = 5.0
        self.brush_tool = True  # the left button's tool is a brush (False: box or lasso)
        self._stroke_button: Qt.MouseButton | None = None  # the button painting, if any
        self._pan_from = None
        self._pan_button: Qt.MouseButton | None = None
        self._space_down = False
        self._centre = QPointF()  # the scene point shown at the viewport's centre
        self._last_zoom = (None, None, None)  # viewport anchor, its scene point, _scroll()
        self._fitted = False  # the whole image is shown, as "fit" left it: resizing fits again
        self._resizing = False

    # ----- content -------------------------------------------------------------------------
    def set_image(self, rgba: np.ndarray, levels=None, seed_levels=None) -> None:
        """Show a new image (clears the other layers) and fit it to the window. ``levels``
        and ``seed_levels``: the image's and the (empty) seed layer's pyramids
        (``ArrayLayer.pyramid``) when built beforehand."""
        self.image_layer.set_array(rgba, levels)
        self.seed_layer.set_array(None if seed_levels is None else seed_levels[0], seed_levels)
        self.result_layer.set_mask(None, rgba.shape[:2])
        self.fit()
        self.viewport().update()

    def has_image(self) -> bool:
        """Whether an image is shown."""
        return self.image_layer.array is not None

    def image_rect(self) -> QRectF:
        """The image in scene coordinates (empty without an image)."""
        return self.image_layer.boundingRect()

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:
        """Without an image, a hint on how to open one, centred in the viewport."""
        super().drawForeground(painter, rect)
        if self.has_image():
            return
        painter.save()
        painter.resetTransform()
        painter.setPen(QColor(200, 200, 200))
        font = painter.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        painter.setFont(font)
        painter.drawText(QRectF(self.viewport().rect()), Qt.AlignmentFlag.AlignCenter,
                         EMPTY_HINT)
        painter.restore()

    # ----- coordinates ----------------------------------------------------------------------
    @staticmethod
    def scene_to_pixel(point: QPointF) -> tuple[float, float]:
        """(row, col) with pixel centres at integers."""
        return point.y() - 0.5, point.x() - 0.5

    @staticmethod
    def pixel_to_scene(row: float, col: float) -> QPointF:
        """The scene point at the centre of pixel (``row``, ``col``)."""
        return QPointF(col + 0.5, row + 0.5)

    def viewport_pos_of_pixel(self, row: float, col: float):
        """Where on the viewport the centre of pixel (row, col) is now (a QPoint)."""
        return self.mapFromScene(self.pixel_to_scene(row, col))

    def viewport_to_scene(self, point: QPointF) -> QPointF:
        """The scene point under a viewport point, without rounding it to whole pixels."""
        inverse, _ = self.transform().inverted()
        return inverse.map(QPointF(point.x() + self.horizontalScrollBar().value(),
                                   point.y() + self.verticalScrollBar().value()))

    def _pixel_at(self, event) -> tuple[float, float]:
        return self.scene_to_pixel(self.mapToScene(event.position().toPoint()))

    # ----- zoom -----------------------------------------------------------------------------
    def scale_factor(self) -> float:
        """The zoom: screen pixels per image pixel."""
        return self.transform().m11()

    def zoom_by(self, factor: float, anchor=None) -> None:
        """Zoom by ``factor``, keeping the scene point under ``anchor`` (a viewport QPoint or
        QPointF; default: the viewport's centre) where it is on the screen."""
        target = min(max(self.scale_factor() * factor, MIN_SCALE), MAX_SCALE)
        if target == self.scale_factor() or not self.has_image():
            return
        anchor = self._viewport_centre() if anchor is None else QPointF(anchor)
        # Scroll positions are whole screen pixels: re-reading the scene point under an
        # unmoved cursor after each notch would add up their rounding, so keep it exact.
        last_anchor, last_scene, last_scroll = self._last_zoom
        if last_anchor == anchor and last_scroll == self._scroll():
            fixed = last_scene
        else:
            fixed = self.viewport_to_scene(anchor)
        self._show(target, fixed, anchor)
        self._last_zoom = (anchor, fixed, self._scroll())
        self._fitted = False

    def _scroll(self) -> tuple[int, int, float]:
        return (self.horizontalScrollBar().value(), self.verticalScrollBar().value(),
                self.scale_factor())

    def fit(self) -> None:
        """Show the whole image, centred."""
        if not self.has_image():
            return
        image = self.image_rect()
        viewport = self.viewport().rect()
        scale = min((viewport.width() - 2 * FIT_MARGIN) / image.width(),
                    (viewport.height() - 2 * FIT_MARGIN) / image.height())
        self._show(min(max(scale, MIN_SCALE), MAX_SCALE), image.center(),
                   self._viewport_centre())
        self._fitted = True

    def actual_size(self) -> None:
        """One screen pixel per image pixel, around the viewport's centre."""
        centre = self._viewport_centre()
        self._show(1.0, self.viewport_to_scene(centre), centre)
        self._fitted = False

    def _viewport_centre(self) -> QPointF:
        return QPointF(self.viewport().width() / 2.0, self.viewport().height() / 2.0)

    def _show(self, scale: float, scene_point: QPointF, viewport_point: QPointF) -> None:
        """Zoom to ``scale`` and scroll so that ``scene_point`` is at ``viewport_point``."""
        self.setTransform(QTransform.fromScale(scale, scale))
        self._pad_scene_rect()
        self._place(scene_point, viewport_point)
        self.zoom_changed.emit(scale)

    def _pad_scene_rect(self) -> None:
        """The image padded by one viewport (in scene units) on every side (module doc)."""
        image = self.image_rect()
        if image.isEmpty():
            self.setSceneRect(QRectF())
            return
        scale = self.scale_factor()
        margin_x = self.viewport().width() / scale
        margin_y = self.viewport().height() / scale
        self.setSceneRect(image.adjusted(-margin_x, -margin_y, margin_x, margin_y))

    def _place(self, scene_point: QPointF, viewport_point: QPointF) -> None:
        mapped = self.transform().map(scene_point)
        self.horizontalScrollBar().setValue(round(mapped.x() - viewport_point.x()))
        self.verticalScrollBar().setValue(round(mapped.y() - viewport_point.y()))
        self._centre = self.viewport_to_scene(self._viewport_centre())

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        """Qt: scroll; remember the scene point at the centre (kept on resizing)."""
        super().scrollContentsBy(dx, dy)
        if not self._resizing:
            self._centre = self.viewport_to_scene(self._viewport_centre())

    def resizeEvent(self, event) -> None:
        """A fitted image is fitted again; otherwise the scene point at the viewport's centre
        stays there (with margins for the new size)."""
        centre = self._centre
        self._resizing = True
        try:
            super().resizeEvent(event)
        finally:
            self._resizing = False
        if self._fitted:
            self.fit()
        elif self.has_image():
            self._pad_scene_rect()
            self._place(centre, self._viewport_centre())

    def wheelEvent(self, event) -> None:
        """Qt: zoom by :data:`ZOOM_STEP` per wheel notch about the pointer."""
        notches = event.angleDelta().y() / 120.0
        if notches:
            self.zoom_by(ZOOM_STEP ** notches, event.position())
        event.accept()

    # ----- brush outline --------------------------------------------------------------------
    def set_brush_radius(self, radius: float) -> None:
        """Set the brush radius, in image pixels, and redraw its outline."""
        self.brush_radius = float(radius)
        self._place_brush_outline(self.brush_outline.rect().center())

    def _place_brush_outline(self, centre: QPointF) -> None:
        # The pixels painted are those whose centres lie within the radius: outline that disk.
        r = self.brush_radius + 0.5
        self.brush_outline.setRect(QRectF(centre.x() - r, centre.y() - r, 2 * r, 2 * r))

    def leaveEvent(self, event) -> None:
        """Qt: the pointer left the view: hide the brush outline."""
        self.brush_outline.setVisible(False)
        super().leaveEvent(event)

    # ----- mouse ----------------------------------------------------------------------------
    def is_stroking(self) -> bool:
        """Whether a stroke is being painted (a painting button is down)."""
        return self._stroke_button is not None

    def mousePressEvent(self, event) -> None:
        """Qt: middle button (or Space + left) starts panning; left / right starts a
        stroke (right paints background) through ``stroke_started``.
        """
        self.setFocus(Qt.FocusReason.MouseFocusReason)  # keys go to the canvas, not a box
        button = event.button()
        if button == Qt.MouseButton.MiddleButton or (
                button == Qt.MouseButton.LeftButton and self._space_down):
            self._end_stroke()  # its release was lost
            self._pan_from, self._pan_button = event.position(), button
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        if button in (Qt.MouseButton.LeftButton, Qt.MouseButton.RightButton) \
                and self.has_image():
            self._end_stroke()  # its release was lost
            self._end_pan()
            self._stroke_button = button
            label = BACKGROUND if button == Qt.MouseButton.RightButton else self.CURRENT_TOOL
            row, col = self._pixel_at(event)
            self.stroke_started.emit(row, col, label)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        # a release that never arrived (taken by a dialog, another window): end what it began
        """Qt: move the brush outline, report the hovered pixel, pan or continue the
        stroke; ends a pan or stroke whose release was lost.
        """
        if self._pan_button is not None and not event.buttons() & self._pan_button:
            self._end_pan()
        if self._stroke_button is not None and not event.buttons() & self._stroke_button:
            self._end_stroke()
        scene_point = self.mapToScene(event.position().toPoint())
        if self.has_image():
            self._place_brush_outline(scene_point)
            self.brush_outline.setVisible(self._pan_from is None and (
                self.brush_tool or self._stroke_button == Qt.MouseButton.RightButton))
            self.hovered.emit(*self.scene_to_pixel(scene_point))
        if self._pan_from is not None:
            delta = event.position() - self._pan_from
            self._pan_from = event.position()
            self._fitted = False
            self.horizontalScrollBar().setValue(
                self.horizontalScrollBar().value() - round(delta.x()))
            self.verticalScrollBar().setValue(
                self.verticalScrollBar().value() - round(delta.y()))
            event.accept()
            return
        if self._stroke_button is not None:
            self.stroke_moved.emit(*self.scene_to_pixel(scene_point))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        """Qt: end the pan or the stroke (``stroke_finished``) of that button."""
        if self._pan_from is not None and event.button() == self._pan_button:
            self._end_pan()
            event.accept()
            return
        if self._stroke_button is not None and event.button() == self._stroke_button:
            self._end_stroke()
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def _end_stroke(self) -> None:
        if self._stroke_button is not None:
            self._stroke_button = None
            self.stroke_finished.emit()

    def _end_pan(self) -> None:
        if self._pan_from is not None:
            self._pan_from = self._pan_button = None
            self._update_cursor()

    def contextMenuEvent(self, event) -> None:
        """Qt: no context menu (the right button paints background)."""
        event.accept()  # the right button paints background; no context menu

    # ----- space + drag ---------------------------------------------------------------------
    def keyPressEvent(self, event) -> None:
        """Qt: Space held turns dragging into panning."""
        if event.key() == Qt.Key.Key_Space:
            if not event.isAutoRepeat():
                self._space_down = True
                self._update_cursor()
            event.accept()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        """Qt: Space released ends panning mode."""
        if event.key() == Qt.Key.Key_Space:
            if not event.isAutoRepeat():
                self._space_down = False
                self._update_cursor()
            event.accept()
            return
        super().keyReleaseEvent(event)

    def focusOutEvent(self, event) -> None:
        # a dialog or another window took the focus: its release will not come here
        """Qt: the focus left: end any stroke or pan (its release will not come here)."""
        self._end_stroke()
        self._end_pan()
        self._space_down = False
        self._update_cursor()
        super().focusOutEvent(event)

    def _update_cursor(self) -> None:
        shape = Qt.CursorShape.OpenHandCursor if self._space_down else Qt.CursorShape.CrossCursor
        self.viewport().setCursor(shape)
