"""The box, the lasso, the label list and the segmentation options for the main window:
:class:`ToolOperations`, a mixin of :class:`~graphcut.gui.window.MainWindow`.

- The box or lasso (``tools.py``) is the seed canvas's undoable *constraint*: drawing one,
  or Segment > Clear box and lasso, is an edit that undo and redo cover like a stroke.
- The label list (``labels.py``, shown by ``label_panel.py``) says which object the *Object*
  tool paints and how each object's seeds and result are drawn.
- The options (``options.py``: colour model, clean-up, box, lasso) go with every request to
  the solver, and into the settings JSON saved next to the seeds.

The mixin uses the window's ``view``, ``_canvas``, ``_controller``, ``_image``, ``_mask``
and its ``_after_seed_edit`` / ``_request_segmentation``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from PyQt6.QtCore import Qt

from graphcut.segmentation import allowed_region

from .label_panel import LabelPanel
from .labels import LabelList
from .options import APP_DEFAULTS, SegmentOptions
from .overlay import seed_layer
from .tools import NO_REGION, RegionTool


class ToolOperations:
    """Box, lasso, labels and options (see the module doc)."""

    def _build_tools(self) -> None:
        self._labels = LabelList()
        self._seed_colours = self._labels.seed_colours()
        self._options: SegmentOptions = APP_DEFAULTS
        self.region_tool = RegionTool(self.view.scene())
        self.label_panel = LabelPanel(self, self._labels, self._on_labels_changed)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.label_panel)

    # ----- scripting surface ------------------------------------------------------------------
    def set_region(self, box=None, lasso=None) -> None:
        """Make the box ``(row0, col0, row1, col1)`` (half-open) or the lasso (``(row, col)``
        vertices) the segmentation's region: outside it is background. One undoable edit;
        a new box or lasso replaces the previous one; neither clears it.

        Raises:
            ValueError: a box outside the image, a lasso enclosing no pixel, both given.
        """
        if self._canvas is None:
            raise RuntimeError("no image is open; call open_image first")
        if box is not None and lasso is not None:
            raise ValueError("give a box or a lasso, not both")
        allowed_region(self._canvas.shape, box=box, lasso=lasso)  # checks them
        region = SegmentOptions().with_region(box=box, lasso=lasso)
        self._canvas.begin_edit()
        self._canvas.set_constraint((region.box, region.lasso))
        self._after_seed_edit(self._canvas.end_edit(), region=(slice(0, 0), slice(0, 0)))

    def clear_region(self) -> None:
        """Remove the box or lasso (undoable)."""
        if self._idle_canvas():
            self.set_region()

    def region(self) -> tuple:
        """The current ``(box, lasso)``; ``(None, None)`` when there is neither."""
        return (self._canvas.constraint if self._canvas is not None else None) or NO_REGION

    def set_cleanup(self, on: bool) -> None:
        """Keep only the object parts connected to its seeds (or the box's centre) and fill
        small holes (``options.APP_FILL_HOLES`` pixels), or not."""
        self.cleanup_action.setChecked(bool(on))
        self._set_options(self._options.with_cleanup(bool(on)))

    def set_model(self, model: str) -> None:
        """The colour model: "histogram" (fast, incremental) or "gmm" (GrabCut's)."""
        self.gmm_action.setChecked(model == "gmm")
        self._set_options(dataclasses.replace(self._options, model=model))

    def segment_options(self) -> dict:
        """``graphcut.segment``'s keyword options that give what the window shows (with the
        window's seeds: ``graphcut.segment(image, w.seeds(), **w.segment_options())``)."""
        return self._options.segment_kwargs(self.lam())

    def result_labels(self) -> np.ndarray | None:
        """The exact result as a label image (uint8: 0 background, each object its seed
        value: 1, 3, 4, ...), or None until it has arrived."""
        if self._mask is None:
            return None
        if self._result_labels is not None:
            return self._result_labels.copy()
        return self._mask.astype(np.uint8)

    # ----- internals --------------------------------------------------------------------------
    def _set_options(self, options: SegmentOptions) -> None:
        if options != self._options:
            self._options = options
            self._controller.set_options(options)
            self._request_segmentation()

    def _sync_options(self) -> None:
        """Take the canvas's box / lasso into the options and outline it."""
        box, lasso = self.region()
        self._options = self._options.with_region(box=box, lasso=lasso)
        self._controller.set_options(self._options)
        self.region_tool.show((box, lasso))

    def _note_labels(self, values) -> None:
        """Make sure the label list has every object value in ``values``."""
        before = len(self._labels)
        self._labels.ensure(values)
        if len(self._labels) != before:
            self.label_panel.refresh()
            self._on_labels_changed("look")

    def _on_labels_changed(self, what: str) -> None:
        if what != "look":
            return
        self._seed_colours = self._labels.seed_colours()
        if self._canvas is not None:
            self.view.seed_layer.set_array(seed_layer(self._canvas.labels, self._seed_colours))
        if self._result_labels is not None:
            self.view.result_layer.set_colours(self._labels.result_colours())
        self._apply_overlay_visibility(self.overlay_action.isChecked())
