"""Painting seeds: mouse strokes and scripted strokes, undo, redo, clear. Every edit is one
undoable step of the document's seed canvas (``strokes.py``), redrawn where it changed and
segmented again (``live.py``).

The left button paints with the selected tool (the *Object* brush paints the label selected
in the label list), the right button always paints background; with the Box or Lasso tool the
left button draws the region instead (``tool_actions.py``).
"""

from __future__ import annotations

import numpy as np

from graphcut.io import FOREGROUND

from .document import Document
from .overlay import seed_layer
from .tools import REGION_TOOLS
from .view import ImageView

MAX_BRUSH_RADIUS = 200


class SeedActions:
    """Stroke, undo, redo and clear on ``document``'s canvas, shown in ``window.view``."""

    def __init__(self, window, document: Document):
        self.window, self.document = window, document
        self._label: int | None = None               # the label of the stroke being painted
        self._last: tuple[float, float] | None = None
        self._region: tuple | None = None            # rows, cols painted by the stroke

    @property
    def stroking(self) -> bool:
        """Whether a seed stroke is being painted."""
        return self._label is not None

    # ----- scripting surface ------------------------------------------------------------------
    def paint_stroke(self, points, label: int, radius: float) -> None:
        """Paint one undoable stroke through ``points`` ((row, col) pixel coordinates).

        Parameters
        ----------
        points : sequence of (row, col)
            Consecutive points are joined by straight lines.
        label : int
            1 = foreground (object 1), 2 = background, 0 = erase, 3, 4, ... further objects
            (added to the label list when new).
        radius : float
            Brush radius in image pixels (pixels whose centres are within it are painted).

        Raises
        ------
        RuntimeError
            No image is open.
        ValueError
            No point, or a label outside 0..254.
        """
        canvas = self.document.canvas
        if canvas is None:
            raise RuntimeError("no image is open; call open_image first")
        points = np.asarray(points, dtype=float).reshape(-1, 2)
        if len(points) == 0:
            raise ValueError("a stroke needs at least one (row, col) point")
        canvas.paint(points[0], points[0], label, 0)  # checks the label, changes nothing
        self.window.tools.note_labels([label])
        canvas.begin_edit()
        region = None
        try:
            for start, end in zip(points, points[1:] if len(points) > 1 else points):
                region = union(region, canvas.paint(start, end, label, radius))
        finally:
            changed = canvas.end_edit()
        self.after_edit(changed, region=region)

    def undo(self) -> None:
        """Undo the last seed edit and re-solve (only while no stroke, box or lasso is
        being drawn)."""
        if self.idle():
            region = self.document.canvas.undo()
            if region:
                self.after_edit(True, region=region)

    def redo(self) -> None:
        """Redo the last undone seed edit and re-solve."""
        if self.idle():
            region = self.document.canvas.redo()
            if region:
                self.after_edit(True, region=region)

    def clear(self) -> None:
        """Remove every seed (one undoable step; the box or lasso stays)."""
        if not self.idle():
            return
        canvas = self.document.canvas
        canvas.begin_edit()
        canvas.clear()
        self.after_edit(canvas.end_edit())

    def replace(self, labels: np.ndarray, constraint=None) -> None:
        """Replace the seeds with ``labels`` and the box / lasso with ``constraint`` (one
        undo step; loaded seeds)."""
        self.window.tools.note_labels(np.unique(labels))
        canvas = self.document.canvas
        canvas.begin_edit()
        canvas.replace(labels)
        canvas.set_constraint(constraint)
        self.after_edit(canvas.end_edit(), region=None)

    def idle(self) -> bool:
        """Whether an image is open and no stroke, box or lasso is being drawn."""
        return (not self.stroking and not self.window.tools.region_tool.active
                and self.document.canvas is not None)

    def change_brush(self, direction: int) -> None:
        """A larger (+1) or smaller (-1) brush, by a fifth of its radius (at least 1)."""
        window = self.window
        radius = window.brush_radius()
        step = max(1, round(radius * 0.2))
        window.set_brush_radius(min(max(radius + direction * step, 1), MAX_BRUSH_RADIUS))

    # ----- after every edit -------------------------------------------------------------------
    def after_edit(self, changed: bool, *, redraw: bool = True, region=None) -> None:
        """Redraw the seed layer where it changed (unless already drawn as painted), then
        re-segment. ``region``: the (rows, cols) slices that changed; None = anywhere."""
        window, live = self.window, self.window.live
        if changed:
            labels = self.document.canvas.labels
            seeds_changed = region is None or (region[0].start < region[0].stop
                                               and region[1].start < region[1].stop)
            if redraw and seeds_changed:
                colours = window.tools.seed_colours
                if region is None:
                    window.view.seed_layer.set_array(seed_layer(labels, colours))
                else:
                    window.view.seed_layer.update_region(region, seed_layer(labels[region],
                                                                            colours))
            if seeds_changed:
                live.seeds_changed(region)
            window.tools.sync_region()
            window._show_modified()
            live.request()
        window._update_actions()

    # ----- mouse (the view's signals) ---------------------------------------------------------
    def stroke_started(self, row: float, col: float, button_label: int) -> None:
        """A mouse press at pixel (``row``, ``col``) (floats, image pixels): start a
        stroke of ``button_label`` (or of the current tool), or a box / lasso.
        """
        window = self.window
        if self.document.canvas is None:
            return
        label = window._tool if button_label == ImageView.CURRENT_TOOL else button_label
        if label in REGION_TOOLS:
            window.tools.region_tool.begin(label, row, col)
            return
        self._label = self.document.labels.current if label == FOREGROUND else label
        self._last = (row, col)
        self._region = None
        self.document.canvas.begin_edit()
        self._paint_segment((row, col), (row, col))

    def stroke_moved(self, row: float, col: float) -> None:
        """The pointer moved to pixel (``row``, ``col``): paint the segment from the last
        point, or extend the box / lasso.
        """
        tools = self.window.tools
        if tools.region_tool.active:
            tools.region_tool.move(row, col)
        if self._label is None:
            return
        self._paint_segment(self._last, (row, col))
        self._last = (row, col)

    def stroke_finished(self) -> None:
        """The button was released: finish the box / lasso or the stroke and solve."""
        tools = self.window.tools
        if tools.region_tool.active:
            tools.finish_region()
            return
        if self._label is None:
            return
        self._label = self._last = None
        self.after_edit(self.document.canvas.end_edit(), redraw=False, region=self._region)

    def _paint_segment(self, start, end) -> None:
        canvas = self.document.canvas
        region = canvas.paint(start, end, self._label, self.window.brush_radius())
        if region is not None:
            self._region = union(self._region, region)
            self.window.view.seed_layer.update_region(
                region, self.window.tools.seed_colours[canvas.labels[region]])


def union(a, b):
    """The bounding (rows, cols) slices of two regions (None is empty)."""
    if a is None or b is None:
        return b if a is None else a
    return (slice(min(a[0].start, b[0].start), max(a[0].stop, b[0].stop)),
            slice(min(a[1].start, b[1].start), max(a[1].stop, b[1].stop)))
