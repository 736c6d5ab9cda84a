"""The zoomable canvas: the image with its seed and result layers, mouse painting and panning.

Scene coordinates are image pixels with x = column and y = row: pixel (row, col) covers the
square [col, col + 1) × [row, row + 1), so its centre is at (col + 0.5, row + 0.5).
The view knows nothing about segmentation; it reports strokes in (row, col) pixel coordinates
(pixel centres at integers, see ``strokes.py``) through signals.

Mouse: the left button paints with the current tool, the right button always paints background,
the middle button (or space + left button) pans; the wheel zooms around the cursor.
"""

from __future__ import annotations

import numpy as np
from PyQt6.QtCore import QPointF, QRectF, Qt, pyqtSignal
from PyQt6.QtGui import QColor, QImage, QPainter, QPen
from PyQt6.QtWidgets import QGraphicsEllipseItem, QGraphicsItem, QGraphicsScene, QGraphicsView

from .strokes import BACKGROUND

ZOOM_STEP = 1.25  # scale factor per wheel notch
MIN_SCALE, MAX_SCALE = 1 / 64, 64.0


class ArrayLayer(QGraphicsItem):
    """Draws an (H, W, 4) uint8 RGBA NumPy array at 1 scene unit per pixel.

    The QImage wraps the array's memory without copying, so a region can be changed in place
    with :meth:`update_region` and only that part is repainted.
    """

    def __init__(self, rgba: np.ndarray | None = None, z: float = 0.0):
        super().__init__()
        self.setZValue(z)
        self._array = None
        self._qimage = None
        if rgba is not None:
            self.set_array(rgba)

    @property
    def array(self) -> np.ndarray | None:
        return self._array

    def set_array(self, rgba: np.ndarray | None) -> None:
        self.prepareGeometryChange()
        if rgba is None:
            self._array = self._qimage = None
        else:
            array = np.ascontiguousarray(rgba, dtype=np.uint8)
            height, width = array.shape[:2]
            self._array = array
            self._qimage = QImage(array.data, width, height, width * 4,
                                  QImage.Format.Format_RGBA8888)
        self.update()

    def update_region(self, region: tuple[slice, slice], rgba: np.ndarray) -> None:
        """Copy ``rgba`` into ``region`` (rows, cols) of the array and repaint just there."""
        rows, cols = region
        self._array[rows, cols] = rgba
        self.update(QRectF(cols.start, rows.start, cols.stop - cols.start,
                           rows.stop - rows.start))

    def boundingRect(self) -> QRectF:
        if self._array is None:
            return QRectF()
        return QRectF(0, 0, self._array.shape[1], self._array.shape[0])

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if self._qimage is None:
            return
        # Sharp pixels when zoomed in, smooth when zoomed out (a thin outline stays visible).
        smooth = painter.worldTransform().m11() < 1.0
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, smooth)
        exposed = option.exposedRect.toAlignedRect().intersected(
            self.boundingRect().toAlignedRect())
        if exposed.isEmpty():
            return
        painter.drawImage(QRectF(exposed), self._qimage, QRectF(exposed))


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
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setBackgroundBrush(QColor(48, 48, 48))
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.setAcceptDrops(False)  # drops go to the main window
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.image_layer = ArrayLayer(z=0)
        self.result_fill_layer = ArrayLayer(z=1)
        self.outline_layer = ArrayLayer(z=2)
        self.seed_layer = ArrayLayer(z=3)
        for layer in (self.image_layer, self.result_fill_layer, self.outline_layer,
                      self.seed_layer):
            self.scene().addItem(layer)
        self.brush_outline = QGraphicsEllipseItem()
        pen = QPen(QColor(255, 255, 255, 220))
        pen.setCosmetic(True)
        self.brush_outline.setPen(pen)
        self.brush_outline.setZValue(10)
        self.brush_outline.setVisible(False)
        self.scene().addItem(self.brush_outline)
        self.brush_radius = 5.0
        self._stroking = False
        self._pan_from = None
        self._space_down = False

    # ----- content -------------------------------------------------------------------------
    def set_image(self, rgba: np.ndarray) -> None:
        """Show a new image (clears the other layers) and fit it to the window."""
        self.image_layer.set_array(rgba)
        for layer in (self.result_fill_layer, self.outline_layer, self.seed_layer):
            layer.set_array(None)
        height, width = rgba.shape[:2]
        self.scene().setSceneRect(QRectF(0, 0, width, height))
        self.fit()

    def has_image(self) -> bool:
        return self.image_layer.array is not None

    # ----- coordinates ----------------------------------------------------------------------
    @staticmethod
    def scene_to_pixel(point: QPointF) -> tuple[float, float]:
        """(row, col) with pixel centres at integers."""
        return point.y() - 0.5, point.x() - 0.5

    @staticmethod
    def pixel_to_scene(row: float, col: float) -> QPointF:
        return QPointF(col + 0.5, row + 0.5)

    def viewport_pos_of_pixel(self, row: float, col: float):
        """Where on the viewport the centre of pixel (row, col) is now (a QPoint)."""
        return self.mapFromScene(self.pixel_to_scene(row, col))

    def _pixel_at(self, event) -> tuple[float, float]:
        return self.scene_to_pixel(self.mapToScene(event.position().toPoint()))

    # ----- zoom -----------------------------------------------------------------------------
    def scale_factor(self) -> float:
        return self.transform().m11()

    def zoom_by(self, factor: float, anchor=None) -> None:
        """Zoom by ``factor``, keeping the scene point under ``anchor`` (a viewport QPoint;
        default: the viewport's centre) where it is on the screen."""
        target = min(max(self.scale_factor() * factor, MIN_SCALE), MAX_SCALE)
        factor = target / self.scale_factor()
        if factor == 1.0:
            return
        if anchor is None:
            anchor = self.viewport().rect().center()
        fixed = self.mapToScene(anchor)
        self.scale(factor, factor)
        drift = self.mapFromScene(fixed) - anchor
        self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() + drift.x())
        self.verticalScrollBar().setValue(self.verticalScrollBar().value() + drift.y())
        self.zoom_changed.emit(self.scale_factor())

    def fit(self) -> None:
        """Show the whole image."""
        if self.has_image():
            self.fitInView(self.sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
            self.zoom_changed.emit(self.scale_factor())

    def actual_size(self) -> None:
        """One screen pixel per image pixel."""
        self.resetTransform()
        self.zoom_changed.emit(1.0)

    def wheelEvent(self, event) -> None:
        notches = event.angleDelta().y() / 120.0
        if notches:
            self.zoom_by(ZOOM_STEP ** notches, event.position().toPoint())
        event.accept()

    # ----- brush outline --------------------------------------------------------------------
    def set_brush_radius(self, radius: float) -> None:
        self.brush_radius = float(radius)
        self._place_brush_outline(self.brush_outline.rect().center())

    def _place_brush_outline(self, centre: QPointF) -> None:
        # The pixels painted are those whose centres lie within the radius: outline that disk.
        r = self.brush_radius + 0.5
        self.brush_outline.setRect(QRectF(centre.x() - r, centre.y() - r, 2 * r, 2 * r))

    def leaveEvent(self, event) -> None:
        self.brush_outline.setVisible(False)
        super().leaveEvent(event)

    # ----- mouse ----------------------------------------------------------------------------
    def mousePressEvent(self, event) -> None:
        button = event.button()
        if button == Qt.MouseButton.MiddleButton or (
                button == Qt.MouseButton.LeftButton and self._space_down):
            self._pan_from = event.position()
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        if button in (Qt.MouseButton.LeftButton, Qt.MouseButton.RightButton) \
                and self.has_image() and not self._stroking:
            self._stroking = True
            label = BACKGROUND if button == Qt.MouseButton.RightButton else self.CURRENT_TOOL
            row, col = self._pixel_at(event)
            self.stroke_started.emit(row, col, label)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        scene_point = self.mapToScene(event.position().toPoint())
        if self.has_image():
            self._place_brush_outline(scene_point)
            self.brush_outline.setVisible(self._pan_from is None)
            self.hovered.emit(*self.scene_to_pixel(scene_point))
        if self._pan_from is not None:
            delta = event.position() - self._pan_from
            self._pan_from = event.position()
            self.horizontalScrollBar().setValue(
                self.horizontalScrollBar().value() - round(delta.x()))
            self.verticalScrollBar().setValue(
                self.verticalScrollBar().value() - round(delta.y()))
            event.accept()
            return
        if self._stroking:
            self.stroke_moved.emit(*self.scene_to_pixel(scene_point))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if self._pan_from is not None and event.button() in (Qt.MouseButton.MiddleButton,
                                                             Qt.MouseButton.LeftButton):
            self._pan_from = None
            self._update_cursor()
            event.accept()
            return
        if self._stroking and event.button() in (Qt.MouseButton.LeftButton,
                                                 Qt.MouseButton.RightButton):
            self._stroking = False
            self.stroke_finished.emit()
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def contextMenuEvent(self, event) -> None:
        event.accept()  # the right button paints background; no context menu

    # ----- space + drag ---------------------------------------------------------------------
    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space:
            if not event.isAutoRepeat():
                self._space_down = True
                self._update_cursor()
            event.accept()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space:
            if not event.isAutoRepeat():
                self._space_down = False
                self._update_cursor()
            event.accept()
            return
        super().keyReleaseEvent(event)

    def focusOutEvent(self, event) -> None:
        self._space_down = False
        self._update_cursor()
        super().focusOutEvent(event)

    def _update_cursor(self) -> None:
        shape = Qt.CursorShape.OpenHandCursor if self._space_down else Qt.CursorShape.CrossCursor
        self.viewport().setCursor(shape)
