"""The desktop app's document: the open image, its seeds, object labels, options and result,
the files they came from, and whether the seeds are saved. No Qt.

The window shows a :class:`Document`, and its file and tool actions (``file_actions.py``,
``seed_actions.py``, ``tool_actions.py``) change it; scripts may read it
(``window.document``). One image at a time: :meth:`Document.open` starts the next image with
no seeds, one object label and no box or lasso.

*Saved*: the seed canvas numbers its states (``SeedCanvas.state``: undo and redo return to
earlier numbers), and the document remembers the number of the state last saved or loaded.
The seeds are modified when the canvas is in another state, so painting and undoing back to
the saved seeds is not a change. A box or lasso is part of that state.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from .labels import LabelList
from .model_choice import LamChoice, model_lam
from .options import APP_DEFAULTS, SegmentOptions
from .strokes import SeedCanvas

NO_REGION = (None, None)


class Document:
    """What the app has open (see the module doc). All attributes may be read; change them
    through the methods.

    Attributes:
        image: the image as read (never modified), or None before the first one.
        path: the image's file.
        canvas: the seed labels with their undo history (``strokes.SeedCanvas``).
        labels: the object labels (``labels.LabelList``): names, colours, visibility.
        options: colour model, clean-up, box and lasso (``options.SegmentOptions``).
        lam: λ as the user chose it (``model_choice.LamChoice``: the model's default until
            the user types a value).
        mask: the exact result of the seeds on screen (bool, True = object) or None.
        result_labels: for seeds of several objects, the result as a label image, else None.
        seeds_path: the seed file last saved or loaded, or None.
    """

    def __init__(self, model: str | None = None):
        """A document with no image; ``model``: the appearance model (None: the app's
        default; ValueError for an unknown name)."""
        self.image: np.ndarray | None = None
        self.path: Path | None = None
        self.canvas: SeedCanvas | None = None
        self.labels = LabelList()
        if model is not None:
            model_lam(model)  # checks the name
        self.options: SegmentOptions = APP_DEFAULTS if model is None else \
            dataclasses.replace(APP_DEFAULTS, model=model)
        self.lam = LamChoice()
        self.mask: np.ndarray | None = None
        self.result_labels: np.ndarray | None = None
        self.seeds_path: Path | None = None
        self._saved_state: int | None = None

    @property
    def has_image(self) -> bool:
        """Whether an image is open."""
        return self.image is not None

    def open(self, image: np.ndarray, path, canvas: SeedCanvas | None = None) -> None:
        """Make ``image`` (read from ``path``) the document: no seeds (``canvas``, when made
        beforehand, must be empty and of the image's size), one object label, no box or
        lasso, no result; the colour model and clean-up stay."""
        canvas = SeedCanvas(image.shape[:2]) if canvas is None else canvas
        if canvas.shape != tuple(image.shape[:2]) or canvas.has_content:
            raise ValueError("a new image needs an empty seed canvas of its size")
        self.image, self.path, self.canvas = image, Path(path), canvas
        self.lam.set_image(image, -1 if image.ndim == 3 else None)  # "auto" reads it
        self.seeds_path = None
        self.labels.reset()
        self.options = self.options.with_region()
        self.set_result(None)
        self.mark_saved()

    # ----- the box or lasso -------------------------------------------------------------------
    def region(self) -> tuple:
        """The canvas's ``(box, lasso)``; ``(None, None)`` when there is neither."""
        return (self.canvas.constraint if self.canvas is not None else None) or NO_REGION

    def sync_region(self) -> SegmentOptions:
        """Take the canvas's box / lasso (undo may have changed it) into the options."""
        box, lasso = self.region()
        self.options = self.options.with_region(box=box, lasso=lasso)
        return self.options

    # ----- saved state ------------------------------------------------------------------------
    def mark_saved(self, seeds_path=None) -> None:
        """The seeds as they are now are saved (in ``seeds_path``, when given) or loaded."""
        if seeds_path is not None:
            self.seeds_path = Path(seeds_path)
        self._saved_state = None if self.canvas is None else self.canvas.state

    def mark_modified(self) -> None:
        """Count the seeds as changed until the next save (whatever the canvas's state)."""
        self._saved_state = None

    @property
    def is_modified(self) -> bool:
        """Whether the seeds (or the box / lasso) differ from the last saved or loaded ones."""
        return self.canvas is not None and self.canvas.state != self._saved_state

    @property
    def needs_saving(self) -> bool:
        """Whether closing the document would lose work: modified, and there is a seed, a
        box or a lasso (an empty canvas loses nothing)."""
        return self.is_modified and self.canvas.has_content

    # ----- result -----------------------------------------------------------------------------
    def set_result(self, mask: np.ndarray | None, labels: np.ndarray | None = None) -> None:
        """The exact result of the seeds on screen (None: none yet)."""
        self.mask, self.result_labels = mask, labels

    def result_label_image(self) -> np.ndarray | None:
        """The exact result as a label image (uint8: 0 background, each object its seed value:
        1, 3, 4, ...), or None until it has arrived."""
        if self.mask is None:
            return None
        if self.result_labels is not None:
            return self.result_labels.copy()
        return self.mask.astype(np.uint8)

    # ----- files ------------------------------------------------------------------------------
    def inputs(self) -> tuple:
        """The files the document was read from (never to be overwritten by a save)."""
        return tuple(p for p in (self.path, self.seeds_path) if p is not None)

    def seed_settings(self) -> dict:
        """The settings JSON saved next to the seeds: ``graphcut segment``'s options that give
        what the app shows (no ``lam`` while λ follows the model), and the label list."""
        return {**self.options.settings(self.lam.requested),
                "labels": self.labels.to_settings()}

    def default_path(self, suffix: str) -> str:
        """``<image stem>_<suffix>.png`` next to the image ("" without an image)."""
        if self.path is None:
            return ""
        return str(self.path.with_name(f"{self.path.stem}_{suffix}.png"))

    def default_seeds_path(self) -> str:
        """The seed file last used, else ``../seeds/<stem>.png`` when that folder exists (the
        samples' layout), else ``<stem>_seeds.png`` next to the image."""
        if self.seeds_path is not None:
            return str(self.seeds_path)
        if self.path is None:
            return ""
        sibling = self.path.parent.parent / "seeds"
        if sibling.is_dir():
            return str(sibling / f"{self.path.stem}.png")
        return self.default_path("seeds")


__all__ = ["Document", "NO_REGION"]
