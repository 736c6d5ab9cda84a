"""The box, the lasso, the label list, the tools and the segmentation options for the main
window.

- The box or lasso (``tools.py``) is the seed canvas's undoable *constraint*: drawing one,
  or Segment > Clear box and lasso, is an edit that undo and redo cover like a stroke. A lasso
  that encloses no area (drawn along a line) is refused with a message.
- The label list (``labels.py``, shown by ``label_panel.py``) says which object the *Object*
  tool paints (its colour is the toolbar's *Object* swatch) and how each object's seeds and
  result are drawn.
- The options (``options.py``: appearance model, clean-up, box, lasso) and λ go with every
  request to the solver, and into the settings JSON saved next to the seeds. λ follows the
  model's default until the user types one, which then stays for every model until Segment >
  Reset λ (``model_choice.py``).
"""

from __future__ import annotations

import dataclasses

from PyQt6.QtCore import Qt

from graphcut.io import FOREGROUND
from graphcut.segmentation import allowed_region

from .document import Document
from .label_panel import LabelPanel, swatch
from .model_choice import model_help, model_names
from .options import SegmentOptions
from .overlay import seed_layer
from .tools import REGION_TOOLS, RegionTool, lasso_area

MIN_LASSO_AREA = 1.0  # square image pixels: a lasso enclosing less is refused


class ToolActions:
    """Box, lasso, labels, tools and options of ``document``, shown in ``window``."""

    def __init__(self, window, document: Document):
        self.window, self.document = window, document
        self.seed_colours = document.labels.seed_colours()  # RGBA per seed value
        self.region_tool = RegionTool(window.view.scene())
        self.label_panel = LabelPanel(window, document.labels, self.on_labels_changed)
        self._lam_box, self._showing_lam = None, False  # the toolbar's λ box (watch_lam_box)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.label_panel)

    # ----- scripting surface ------------------------------------------------------------------
    def set_region(self, box=None, lasso=None) -> None:
        """Make the box ``(row0, col0, row1, col1)`` (half-open) or the lasso (``(row, col)``
        vertices) the segmentation's region: outside it is background. One undoable edit;
        a new box or lasso replaces the previous one; neither clears it.

        Raises
        ------
        RuntimeError
            No image is open.
        ValueError
            A box outside the image, a lasso enclosing less than :data:`MIN_LASSO_AREA`
            square pixels or no pixel centre, both given.
        """
        canvas = self.document.canvas
        if canvas is None:
            raise RuntimeError("no image is open; call open_image first")
        if box is not None and lasso is not None:
            raise ValueError("give a box or a lasso, not both")
        if lasso is not None and lasso_area(lasso) < MIN_LASSO_AREA:
            raise ValueError(f"the lasso encloses no area ({lasso_area(lasso):.2g} square "
                             "pixels): draw around the object")
        allowed_region(canvas.shape, box=box, lasso=lasso)  # checks them
        region = SegmentOptions().with_region(box=box, lasso=lasso)
        canvas.begin_edit()
        canvas.set_constraint((region.box, region.lasso))
        self.window.painting.after_edit(canvas.end_edit(), region=(slice(0, 0), slice(0, 0)))

    def clear_region(self) -> None:
        """Remove the box or lasso (undoable)."""
        if self.window.painting.idle():
            self.set_region()

    def finish_region(self) -> None:
        """The box or lasso drag ended: make it the region, or say why not."""
        constraint = self.region_tool.finish(self.document.image.shape)
        try:
            if constraint is not None:
                self.set_region(*constraint)
        except ValueError as error:  # e.g. a lasso around no pixel centre
            self.window.statusBar().showMessage(f"No region set: {error}", 8000)

    def set_cleanup(self, on: bool) -> None:
        """Keep only the object parts connected to its seeds (or the box's centre) and fill
        small holes (``options.APP_FILL_HOLES`` pixels), or not."""
        self.window.cleanup_action.setChecked(bool(on))
        self.window.live.set_options(self.document.options.with_cleanup(bool(on)))

    def set_model(self, model: str) -> None:
        """The appearance model: a registered name (``model_choice.model_names()``:
        "histogram", "gmm", "learned", ...). λ shows its default unless the user set one.

        Raises
        ------
        ValueError
            An unknown model name.
        """
        help_text = model_help(model)  # checks the name
        self.window.model_actions[model].setChecked(True)
        self._show_lam(model)
        self.window.live.set_options(dataclasses.replace(self.document.options, model=model))
        self.window.statusBar().showMessage(f"Appearance model {model}: {help_text}", 8000)

    def next_model(self) -> None:
        """Switch to the next registered appearance model (after the last, the first)."""
        names = model_names()
        current = self.document.options.model
        following = names.index(current) + 1 if current in names else 0
        self.set_model(names[following % len(names)])

    # ----- λ ----------------------------------------------------------------------------------
    def set_lam(self, value: float) -> None:
        """The user's λ (it stays for every model until :meth:`reset_lam`); the image is
        segmented again shortly after."""
        self.document.lam.type(value)
        self._show_lam()
        self.document.lam.type(self._lam_box.value())  # as shown: 2 decimals, in range
        self.window.live.lam_timer.start()

    def reset_lam(self) -> None:
        """λ follows the appearance model's default again (``model_choice.LamChoice``)."""
        self.document.lam.reset()
        self._show_lam()
        self.window.live.lam_timer.start()

    def watch_lam_box(self, box) -> None:
        """A value the user types or steps in the toolbar's λ ``box`` becomes the user's λ;
        Escape also restores whether λ followed the model."""
        self._lam_box = box
        box.valueChanged.connect(self._lam_typed)
        box.remember = lambda: self.document.lam.typed
        box.restore = self._restore_lam
        self._show_lam()

    def _lam_typed(self, value: float) -> None:
        if self._showing_lam:
            return  # the app showed the model's default, nobody typed
        self.document.lam.type(value)
        self.window.reset_lam_action.setEnabled(True)
        self.window.live.lam_timer.start()

    def _restore_lam(self, typed) -> None:
        if typed is None:
            self.reset_lam()

    def _show_lam(self, model: str | None = None) -> None:
        """Show λ for ``model`` (None: the current one) without making it the user's."""
        choice = self.document.lam
        self._showing_lam = True
        try:
            self._lam_box.setValue(choice.shown(model or self.document.options.model))
        finally:
            self._showing_lam = False
        self.window.reset_lam_action.setEnabled(not choice.follows_model)

    def set_tool(self, tool) -> None:
        """Select the left button's tool: 1 object (the label selected in the label list),
        2 background, 0 eraser, "box" or "lasso"."""
        window = self.window
        window._tool_actions[tool].setChecked(True)
        window._tool = tool
        window.view.brush_tool = tool not in REGION_TOOLS

    # ----- labels -----------------------------------------------------------------------------
    def note_labels(self, values) -> None:
        """Make sure the label list has every object value in ``values``."""
        labels = self.document.labels
        before = len(labels)
        labels.ensure(values)
        if len(labels) != before:
            self.label_panel.refresh()
            self.on_labels_changed("look")

    def reset_labels(self) -> None:
        """Show the document's label list as it is after a new image (one object)."""
        self.label_panel.refresh()
        self.on_labels_changed("look")

    def on_labels_changed(self, what: str) -> None:
        """The label list changed: ``"current"`` (another label painted), ``"names"`` (a
        name, or a label added) or ``"look"`` (colours, visibility)."""
        window, document = self.window, self.document
        current = document.labels.get(document.labels.current)
        window._tool_actions[FOREGROUND].setIcon(swatch(current.colour))
        if what == "current":
            return
        colours = document.labels.seed_colours()
        if (colours == self.seed_colours).all():  # e.g. a new label: nothing drawn differs
            self.seed_colours = colours
            return
        self.seed_colours = colours
        if document.canvas is not None:
            window.view.seed_layer.set_array(seed_layer(document.canvas.labels, colours))
        if document.result_labels is not None:
            window.view.result_layer.set_colours(document.labels.result_colours())
        window._apply_overlay_visibility(window.overlay_action.isChecked())

    def sync_region(self) -> None:
        """Take the canvas's box / lasso into the options and outline it."""
        self.window.live.sync_options()
        self.region_tool.show(self.document.region())
