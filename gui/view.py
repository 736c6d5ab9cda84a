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

import time

import numpy as np
from PyQt6.QtCore import QPointF, QRectF, Qt, pyqtSignal
from PyQt6.QtGui import QColor, QImage, QPainter, QPen, QTransform
from PyQt6.QtWidgets import QGraphicsEllipseItem, QGraphicsItem, QGraphicsScene, QGraphicsView

from .overlay import ResultStyle, render_labels, render_result, sample_grid
from .strokes import BACKGROUND

ZOOM_STEP = 1.25  # scale factor per wheel notch
MIN_SCALE, MAX_SCALE = 1 / 64, 64.0
FIT_MARGIN = 4  # screen pixels left around the image by "fit to window"
EMPTY_HINT = ("Open an image to start:\nFile > Open image… (Ctrl+O),\n"
              "or drop an image file here")


class ArrayLayer(QGraphicsItem):
    """Draws an (H, W, 4) uint8 RGBA NumPy array at 1 scene unit per pixel.

    The colours must be 0 wherever alpha is 0, and alpha only 0 or 255 (true of the image and
    seed layers): the data is then also valid premultiplied RGBA, which Qt draws without
    converting it. The QImage wraps the array's memory without copying, so a region can be
    changed in place with :meth:`update_region` and only that part is repainted.

    Zoomed out, the layer draws from a pyramid of half-size copies (2x2 means), the largest one
    not finer than the screen: the cost of a repaint follows the window's size, not the image's,
    and thin strokes fade instead of vanishing.
    """

    MIN_LEVEL_SIDE = 128  # the pyramid stops at levels smaller than this on either side

    def __init__(self, rgba: np.ndarray | None = None, z: float = 0.0):
        super().__init__()
        self.setZValue(z)
        # paint() gets the exposed rectangle, not the whole item, in option.exposedRect
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self._levels: list[np.ndarray] = []
        self._qimages: list[QImage] = []
        if rgba is not None:
            self.set_array(rgba)

    @property
    def array(self) -> np.ndarray | None:
        return self._levels[0] if self._levels else None

    def set_array(self, rgba: np.ndarray | None) -> None:
        self.prepareGeometryChange()
        self._levels, self._qimages = [], []
        if rgba is not None:
            level = np.ascontiguousarray(rgba, dtype=np.uint8)
            while True:
                self._levels.append(level)
                self._qimages.append(_wrap(level))
                if min(level.shape[:2]) < 2 * self.MIN_LEVEL_SIDE:
                    break
                level = _half(level)
        self.update()

    def update_region(self, region: tuple[slice, slice], rgba: np.ndarray) -> None:
        """Copy ``rgba`` into ``region`` (rows, cols) of the array and repaint just there."""
        rows, cols = region
        self._levels[0][rows, cols] = rgba
        r0, r1, c0, c1 = rows.start, rows.stop, cols.start, cols.stop
        for finer, coarser in zip(self._levels, self._levels[1:]):
            r0, r1, c0, c1 = r0 // 2, min(-(-r1 // 2), coarser.shape[0]), c0 // 2, \
                min(-(-c1 // 2), coarser.shape[1])
            coarser[r0:r1, c0:c1] = _half(finer[2 * r0:2 * r1, 2 * c0:2 * c1])[
                :r1 - r0, :c1 - c0]
        self.update(QRectF(cols.start, rows.start, cols.stop - cols.start,
                           rows.stop - rows.start))

    def boundingRect(self) -> QRectF:
        if not self._levels:
            return QRectF()
        return QRectF(0, 0, self._levels[0].shape[1], self._levels[0].shape[0])

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if not self._levels:
            return
        scale = painter.worldTransform().m11()
        level = 0
        while level + 1 < len(self._levels) and scale * 2 ** (level + 1) <= 1.0:
            level += 1
        factor = 2 ** level
        # Sharp pixels when zoomed in, smooth when zoomed out.
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, scale * factor < 1.0)
        exposed = option.exposedRect.toAlignedRect().intersected(
            self.boundingRect().toAlignedRect())
        if exposed.isEmpty():
            return
        target = QRectF(exposed)
        source = QRectF(target.x() / factor, target.y() / factor, target.width() / factor,
                        target.height() / factor)
        painter.drawImage(target, self._qimages[level], source)


def _wrap(array: np.ndarray) -> QImage:
    height, width = array.shape[:2]
    return QImage(array.data, width, height, width * 4,
                  QImage.Format.Format_RGBA8888_Premultiplied)


def _half(array: np.ndarray) -> np.ndarray:
    """2x2 means (rounded) of an (H, W, 4) uint8 array; an odd last row or column is
    averaged with itself."""
    if array.shape[0] % 2 or array.shape[1] % 2:
        array = np.pad(array, ((0, array.shape[0] % 2), (0, array.shape[1] % 2), (0, 0)),
                       mode="edge")
    total = array[0::2, 0::2].astype(np.uint16)
    total += array[1::2, 0::2]
    total += array[0::2, 1::2]
    total += array[1::2, 1::2]
    return ((total + 2) >> 2).astype(np.uint8)


class ResultLayer(QGraphicsItem):
    """The segmentation drawn at screen resolution: fill and outline (``overlay.py``).

    Only the exposed part of the screen is rendered, at each paint, from the mask sampled at
    screen pixel centres: the cost follows the window's size, not the image's, nothing of
    image size is built when a result arrives, and the outline keeps its width in screen
    pixels at every zoom. The mask may be on a grid reduced ``factor`` times (a preview).
    """

    def __init__(self, z: float = 0.0):
        super().__init__()
        self.setZValue(z)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self._mask: np.ndarray | None = None
        self._labels: np.ndarray | None = None  # several objects: drawn in their colours
        self._colours: np.ndarray | None = None
        self._factor = 1
        self._size = (0, 0)  # the image's (height, width): the item's extent
        self.style = ResultStyle()
        self.paint_seconds: list[float] = []  # every paint's rendering time (benchmarks)

    @property
    def mask(self) -> np.ndarray | None:
        return self._mask

    @property
    def factor(self) -> int:
        return self._factor

    def set_mask(self, mask: np.ndarray | None, image_shape=None, *, factor: int = 1,
                 region=None, labels=None, colours=None) -> None:
        """Show ``mask`` (bool, not copied: it must not change afterwards) for an image of
        ``image_shape``; ``region`` (a pair of slices of the mask) bounds what changed since
        the mask shown before, when both are on the same grid. With ``labels`` (a label
        image of several objects, ``mask`` its objects) each label is drawn in its RGBA
        ``colours[value]`` (alpha 0: hidden)."""
        whole = (region is None or self._mask is None or mask is None
                 or factor != self._factor or mask.shape != self._mask.shape
                 or labels is not None or self._labels is not None)
        self._labels, self._colours = labels, colours
        if image_shape is not None and tuple(image_shape[:2]) != self._size:
            self.prepareGeometryChange()
            self._size = tuple(image_shape[:2])
            whole = True
        self._mask, self._factor = mask, int(factor)
        if whole:
            self.update()
            return
        rows, cols = region
        if rows.start >= rows.stop or cols.start >= cols.stop:
            return
        margin = (self.style.outline_width + 1) / self._view_scale()
        f = self._factor
        self.update(QRectF(cols.start * f - margin, rows.start * f - margin,
                           (cols.stop - cols.start) * f + 2 * margin,
                           (rows.stop - rows.start) * f + 2 * margin))

    def set_style(self, style: ResultStyle) -> None:
        self.style = style
        self.update()

    def set_colours(self, colours) -> None:
        """New label colours (``set_mask``'s ``colours``), e.g. a label hidden."""
        self._colours = colours
        self.update()

    def _view_scale(self) -> float:
        views = self.scene().views() if self.scene() is not None else []
        return min((v.transform().m11() for v in views), default=1.0) or 1.0

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, self._size[1], self._size[0])

    def paint(self, painter: QPainter, option, widget=None) -> None:
        mask = self._mask
        if mask is None:
            return
        started = time.perf_counter()
        transform = painter.worldTransform()
        exposed = option.exposedRect.intersected(self.boundingRect())
        device = transform.mapRect(exposed).toAlignedRect()
        if device.isEmpty():
            return
        scale_x, scale_y = transform.m11(), transform.m22()
        width = self.style.outline_width
        cols = sample_grid((device.left() - width - transform.dx()) / scale_x, 1 / scale_x,
                           device.width() + 2 * width, self._factor, mask.shape[1])
        rows = sample_grid((device.top() - width - transform.dy()) / scale_y, 1 / scale_y,
                           device.height() + 2 * width, self._factor, mask.shape[0])
        if self._labels is not None:
            rgba = render_labels(self._labels, rows, cols, self.style, self._colours)
        else:
            rgba = render_result(mask, rows, cols, self.style)
        image = _wrap(rgba)
        painter.save()
        painter.resetTransform()
        painter.drawImage(device.topLeft(), image)
        painter.restore()
        self.paint_seconds.append(time.perf_counter() - started)
        del self.paint_seconds[:-1000]


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
    def set_image(self, rgba: np.ndarray) -> None:
        """Show a new image (clears the other layers) and fit it to the window."""
        self.image_layer.set_array(rgba)
        self.seed_layer.set_array(None)
        self.result_layer.set_mask(None, rgba.shape[:2])
        self.fit()
        self.viewport().update()

    def has_image(self) -> bool:
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
        notches = event.angleDelta().y() / 120.0
        if notches:
            self.zoom_by(ZOOM_STEP ** notches, event.position())
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
    def is_stroking(self) -> bool:
        """Whether a stroke is being painted (a painting button is down)."""
        return self._stroke_button is not None

    def mousePressEvent(self, event) -> None:
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
        # a dialog or another window took the focus: its release will not come here
        self._end_stroke()
        self._end_pan()
        self._space_down = False
        self._update_cursor()
        super().focusOutEvent(event)

    def _update_cursor(self) -> None:
        shape = Qt.CursorShape.OpenHandCursor if self._space_down else Qt.CursorShape.CrossCursor
        self.viewport().setCursor(shape)
