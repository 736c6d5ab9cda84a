"""The canvas's layers: an RGBA array drawn through a pyramid of half-size copies
(:class:`ArrayLayer`: the image and the seeds) and the segmentation drawn at screen resolution
(:class:`ResultLayer`). Scene coordinates are image pixels, x = column, y = row.
"""

from __future__ import annotations

import time

import numpy as np
from PyQt6.QtCore import QRectF
from PyQt6.QtGui import QImage, QPainter
from PyQt6.QtWidgets import QGraphicsItem

from .overlay import ResultStyle, render_labels, render_result, sample_grid

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
        """The full-resolution image array shown (None when empty)."""
        return self._levels[0] if self._levels else None

    @classmethod
    def pyramid(cls, rgba: np.ndarray) -> list[np.ndarray]:
        """The levels :meth:`set_array` shows: ``rgba`` (contiguous uint8), then half-size
        copies down to :attr:`MIN_LEVEL_SIDE`. Building them first lets a caller find out
        that memory runs short before it changes anything on screen."""
        level = np.ascontiguousarray(rgba, dtype=np.uint8)
        levels = [level]
        while min(level.shape[:2]) >= 2 * cls.MIN_LEVEL_SIDE:
            level = _half(level)
            levels.append(level)
        return levels

    def set_array(self, rgba: np.ndarray | None, levels: list | None = None) -> None:
        """Show ``rgba`` ((H, W, 4) uint8); ``levels``: its :meth:`pyramid`, when built."""
        levels = [] if rgba is None else (self.pyramid(rgba) if levels is None else levels)
        self.prepareGeometryChange()
        self._levels = levels
        self._qimages = [_wrap(level) for level in levels]
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
        """Qt: the item's extent in scene units (one unit per image pixel)."""
        if not self._levels:
            return QRectF()
        return QRectF(0, 0, self._levels[0].shape[1], self._levels[0].shape[0])

    def paint(self, painter: QPainter, option, widget=None) -> None:
        """Qt: draw the exposed part from the coarsest pyramid level that keeps at least
        one level pixel per screen pixel (sharp when zoomed in, smooth when zoomed out).
        """
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
        """The shown mask (bool (H, W) or a coarser preview grid), or None."""
        return self._mask

    @property
    def factor(self) -> int:
        """How many image pixels one mask cell covers per axis (1: exact, >1: preview)."""
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
        """Draw the result with ``style`` (tint, outline colour and width) from now on."""
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
        """Qt: the item's extent in scene units (the image's size in pixels)."""
        return QRectF(0, 0, self._size[1], self._size[0])

    def paint(self, painter: QPainter, option, widget=None) -> None:
        """Qt: render the exposed part of the mask or labels at screen resolution (tint and
        outline) and draw it; the time taken is kept in ``paint_seconds``.
        """
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
