"""The Box and Lasso tools: drag a rectangle or draw a closed freehand outline around the
object; outside it is background (a hard constraint, as ``graphcut.segment(box=...,
lasso=...)`` has it).

- Box: press at one corner, drag to the opposite one, release. Both corner pixels are inside:
  the box is ``(row0, col0, row1, col1)``, half-open, clipped to the image.
- Lasso: press and drag around the object (freehand; a vertex is kept every
  :data:`LASSO_STEP` pixels), release: the outline closes from the last point to the first.
  A pixel is inside when its centre is (``skimage.draw.polygon2mask``).

The window keeps the result as the seed canvas's undoable *constraint*, a pair ``(box,
lasso)`` of which at most one is set: a new box or lasso replaces the previous one.
:class:`RegionTool` draws the rubber band while dragging and the outline of the constraint.
"""

from __future__ import annotations

import math

from PyQt6.QtCore import QPointF, QRectF, Qt
from PyQt6.QtGui import QColor, QPainterPath, QPen, QPolygonF
from PyQt6.QtWidgets import QGraphicsPathItem

TOOL_BOX, TOOL_LASSO = "box", "lasso"
REGION_TOOLS = (TOOL_BOX, TOOL_LASSO)
LASSO_STEP = 1.0  # image pixels between kept lasso vertices
NO_REGION = (None, None)
_UNBOUNDED = (2**31, 2**31)  # the rubber band is not clipped


def box_from_corners(start, end, shape) -> tuple | None:
    """The half-open box ``(row0, col0, row1, col1)`` whose corner pixels are those under
    ``start`` and ``end`` ((row, col), pixel centres at integers), clipped to an image of
    ``shape``; None when it misses the image."""
    (r0, c0), (r1, c1) = ((round(v) for v in start), (round(v) for v in end))
    top, bottom = max(min(r0, r1), 0), min(max(r0, r1) + 1, int(shape[0]))
    left, right = max(min(c0, c1), 0), min(max(c0, c1) + 1, int(shape[1]))
    if top >= bottom or left >= right:
        return None
    return (top, left, bottom, right)


def lasso_vertices(points) -> tuple | None:
    """The lasso of a freehand path: its points at least :data:`LASSO_STEP` apart, or None
    when fewer than 3 remain (a click, a line)."""
    kept: list[tuple[float, float]] = []
    for row, col in points:
        if not kept or math.dist(kept[-1], (row, col)) >= LASSO_STEP:
            kept.append((float(row), float(col)))
    return tuple(kept) if len(kept) >= 3 else None


def lasso_area(vertices) -> float:
    """The area enclosed by the closed polygon ``vertices`` ((row, col) each), in square
    image pixels (the shoelace formula; a self-crossing outline counts its loops with their
    signs). Zero for a lasso drawn along a line.

    Examples
    --------
    >>> lasso_area([(0, 0), (0, 4), (3, 4), (3, 0)])
    12.0
    >>> lasso_area([(0, 0), (5, 5), (2, 2)])
    0.0
    """
    if len(vertices) < 3:
        return 0.0
    rows = [float(r) for r, _ in vertices]
    cols = [float(c) for _, c in vertices]
    twice = sum(rows[i - 1] * cols[i] - rows[i] * cols[i - 1] for i in range(len(rows)))
    return abs(twice) / 2.0


def _scene(row: float, col: float) -> QPointF:
    return QPointF(col + 0.5, row + 0.5)


def region_path(box=None, lasso=None, points=None) -> QPainterPath:
    """The outline of a box (pixel edges) or a lasso / path (through pixel centres)."""
    path = QPainterPath()
    if box is not None:
        r0, c0, r1, c1 = box
        path.addRect(QRectF(c0, r0, c1 - c0, r1 - r0))
    vertices = lasso if lasso is not None else points
    if vertices:
        path.addPolygon(QPolygonF([_scene(r, c) for r, c in vertices]))
        if lasso is not None:
            path.closeSubpath()
    return path


class RegionTool:
    """Turns a drag into a box or lasso, showing it on ``scene`` as it is drawn, and shows
    the current constraint's outline (dashed, visible on light and dark images)."""

    def __init__(self, scene, z: float = 9.0):
        self._outline = self._item(scene, z, Qt.PenStyle.DashLine)
        self._band = self._item(scene, z + 0.5, Qt.PenStyle.SolidLine)
        self._kind: str | None = None
        self._points: list[tuple[float, float]] = []

    @staticmethod
    def _item(scene, z: float, style) -> QGraphicsPathItem:
        item = QGraphicsPathItem()
        pen = QPen(QColor(255, 255, 255), 2, style)
        pen.setCosmetic(True)  # 2 screen pixels at every zoom
        item.setPen(pen)
        item.setZValue(z)
        scene.addItem(item)
        return item

    @property
    def active(self) -> bool:
        """Whether a box or lasso is being drawn."""
        return self._kind is not None

    def begin(self, kind: str, row: float, col: float) -> None:
        """Start a ``kind`` (box or lasso) region at pixel (``row``, ``col``)."""
        self._kind, self._points = kind, [(row, col)]
        self._draw_band()

    def move(self, row: float, col: float) -> None:
        """Extend the region to pixel (``row``, ``col``): the box's corner, or the lasso's next
        point.
        """
        if self._kind == TOOL_BOX:
            self._points[1:] = [(row, col)]
        elif self._kind == TOOL_LASSO:
            self._points.append((row, col))
        self._draw_band()

    def finish(self, shape):
        """End the drag: the new constraint ``(box, lasso)``, or None when the drag made none
        (a click, or a box outside the image)."""
        kind, points = self._kind, self._points
        self._kind, self._points = None, []
        self._band.setPath(QPainterPath())
        if kind == TOOL_BOX:
            box = box_from_corners(points[0], points[-1], shape)
            return None if box is None else (box, None)
        lasso = lasso_vertices(points)
        return None if lasso is None else (None, lasso)

    def show(self, constraint) -> None:
        """Outline the constraint ``(box, lasso)`` (``NO_REGION`` or None: nothing)."""
        box, lasso = constraint or NO_REGION
        self._outline.setPath(region_path(box=box, lasso=lasso))

    def _draw_band(self) -> None:
        if self._kind == TOOL_BOX:
            box = box_from_corners(self._points[0], self._points[-1], _UNBOUNDED)
            self._band.setPath(region_path(box=box))
        else:
            self._band.setPath(region_path(points=self._points))
