"""The seed label image being painted, with brush strokes and undo/redo. No Qt in here.

Labels are the library's (``graphcut.seeds``): 0 = no seed, 1 = foreground, 2 = background
(uint8, shape (H, W)); further objects are 3, 4, ... up to ``MAX_LABEL`` (254).
An edit may also change the canvas's *constraint* (the box or lasso, ``options.py``), so that
undo and redo cover it too.
Coordinates are (row, column) in pixels, the scikit-image convention; a point with integer
coordinates is the centre of that pixel. A brush of radius r paints every pixel whose centre lies
within distance r of the stroke's centre line (a round-capped thick polyline).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphcut.io import BACKGROUND, FOREGROUND, MAX_LABEL, NONE  # noqa: F401 (re-exported)

_EMPTY = (slice(0, 0), slice(0, 0))


@dataclass(frozen=True)
class _Edit:
    """One undoable change: a rectangle of labels before and after, and the constraint before
    and after (``None``: unchanged)."""

    region: tuple[slice, slice]
    before: np.ndarray
    after: np.ndarray
    constraint: tuple | None = None
    serial: int = 0  # the canvas's state after this edit (see SeedCanvas.state)


class SeedCanvas:
    """Seed labels for one image, edited in undoable steps.

    An edit is everything between :meth:`begin_edit` and :meth:`end_edit` (a whole mouse stroke,
    a clear, a load); only the rectangle that changed is kept for undo, so long histories of
    small strokes on large images stay cheap. A stroke costs what it paints: only the rectangle
    it touched is compared with the labels as they were (kept in a second array).
    """

    def __init__(self, shape: tuple[int, int], *, max_history: int = 200):
        if len(shape) != 2 or min(shape) < 1:
            raise ValueError(f"seed canvas shape must be (H, W) with H, W >= 1, got {shape}")
        self._labels = np.zeros(shape, np.uint8)
        self._saved = self._labels.copy()  # the labels as of the last end_edit / undo / redo
        self._touched: tuple[slice, slice] | None = None  # may differ from _saved here
        self._undo: list[_Edit] = []
        self._redo: list[_Edit] = []
        self._editing = False
        self._max_history = max_history
        self.constraint = None           # the box / lasso (opaque here), set by set_constraint
        self._saved_constraint = None    # as of the last end_edit / undo / redo
        self._serial = 0                 # edits made so far: each edit's state number
        self._base_state = 0             # the state below the oldest edit kept for undo

    @property
    def shape(self) -> tuple[int, int]:
        """(H, W) of the seed labels, in pixels."""
        return self._labels.shape

    @property
    def labels(self) -> np.ndarray:
        """A read-only view of the current labels (copy it to keep it)."""
        view = self._labels.view()
        view.flags.writeable = False
        return view

    def counts(self) -> tuple[int, int]:
        """Numbers of (object, background) seed pixels (objects: every label but 0 and 2)."""
        background = int(np.count_nonzero(self._labels == BACKGROUND))
        return int(np.count_nonzero(self._labels)) - background, background

    @property
    def state(self) -> int:
        """A number for the labels and constraint as they are now: undo and redo return to
        earlier numbers, every new edit gets a new one. Equal numbers mean equal contents,
        so ``canvas.state == saved`` tells whether the canvas is back where it was saved."""
        return self._undo[-1].serial if self._undo else self._base_state

    @property
    def has_content(self) -> bool:
        """Whether there is any seed, or a box or lasso (something a user could lose)."""
        box, lasso = self.constraint or (None, None)
        return bool(self._labels.any()) or box is not None or lasso is not None

    @property
    def can_undo(self) -> bool:
        """Whether there is an edit to undo."""
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        """Whether there is an undone edit to redo."""
        return bool(self._redo)

    def begin_edit(self) -> None:
        """Start an undoable step; nested calls are not allowed."""
        if self._editing:
            raise RuntimeError("begin_edit called twice without end_edit")
        self._editing = True

    def end_edit(self) -> bool:
        """Finish the step; returns whether anything changed (no change leaves no undo entry)."""
        if not self._editing:
            raise RuntimeError("end_edit called without begin_edit")
        self._editing = False
        touched, self._touched = self._touched, None
        region = _EMPTY
        if touched is not None:
            changed = self._saved[touched] != self._labels[touched]
            if changed.any():
                rows = np.flatnonzero(changed.any(axis=1)) + touched[0].start
                cols = np.flatnonzero(changed.any(axis=0)) + touched[1].start
                region = (slice(int(rows[0]), int(rows[-1]) + 1),
                          slice(int(cols[0]), int(cols[-1]) + 1))
        constraint = None
        if self.constraint != self._saved_constraint:
            constraint = (self._saved_constraint, self.constraint)
            self._saved_constraint = self.constraint
        if region == _EMPTY and constraint is None:
            return False
        after = self._labels[region].copy()
        self._serial += 1
        self._undo.append(_Edit(region, self._saved[region].copy(), after, constraint,
                                self._serial))
        self._saved[region] = after
        if len(self._undo) > self._max_history:
            dropped = self._undo[-self._max_history - 1]
            self._base_state = dropped.serial
            del self._undo[:-self._max_history]
        self._redo.clear()
        return True

    def _touch(self, region: tuple[slice, slice]) -> None:
        if self._touched is None:
            self._touched = region
        else:
            (rows, cols), (new_rows, new_cols) = self._touched, region
            self._touched = (slice(min(rows.start, new_rows.start), max(rows.stop, new_rows.stop)),
                             slice(min(cols.start, new_cols.start), max(cols.stop, new_cols.stop)))

    def paint(self, start, end, label: int, radius: float) -> tuple[slice, slice] | None:
        """Paint the segment ``start``-``end`` ((row, col) each) with ``label``.

        Returns the rectangle of pixels that may have changed (for a partial screen update), or
        None when the segment lies entirely outside the image.
        """
        if not _is_label(label):
            raise ValueError(f"label must be 0 (erase), 1 (foreground), 2 (background) or a "
                             f"further object 3..{MAX_LABEL}, got {label!r}")
        if not radius >= 0:
            raise ValueError(f"brush radius must be >= 0 pixels, got {radius!r}")
        (r0, c0), (r1, c1) = (np.asarray(start, float), np.asarray(end, float))
        height, width = self._labels.shape
        top = max(int(np.floor(min(r0, r1) - radius)), 0)
        bottom = min(int(np.ceil(max(r0, r1) + radius)) + 1, height)
        left = max(int(np.floor(min(c0, c1) - radius)), 0)
        right = min(int(np.ceil(max(c0, c1) + radius)) + 1, width)
        if top >= bottom or left >= right:
            return None
        rows = np.arange(top, bottom, dtype=float)[:, None]
        cols = np.arange(left, right, dtype=float)[None, :]
        dr, dc = r1 - r0, c1 - c0
        length2 = dr * dr + dc * dc
        if length2 > 0:
            t = np.clip(((rows - r0) * dr + (cols - c0) * dc) / length2, 0.0, 1.0)
        else:
            t = 0.0
        distance2 = (rows - (r0 + t * dr)) ** 2 + (cols - (c0 + t * dc)) ** 2
        region = (slice(top, bottom), slice(left, right))
        self._labels[region][distance2 <= radius * radius + 1e-9] = label
        self._touch(region)
        return region

    def clear(self) -> None:
        """Remove every seed (call inside an edit to make it undoable)."""
        self._labels[...] = NONE
        self._touch((slice(0, self.shape[0]), slice(0, self.shape[1])))

    def replace(self, labels: np.ndarray) -> None:
        """Set all labels at once (call inside an edit to make it undoable)."""
        labels = np.asarray(labels)
        if labels.shape != self._labels.shape:
            raise ValueError(f"seed labels of shape {labels.shape} do not match the image "
                             f"({self._labels.shape[0]}×{self._labels.shape[1]} pixels, rows×cols)")
        if labels.dtype.kind not in "iu" or labels.size and (
                labels.min() < 0 or labels.max() > MAX_LABEL):
            raise ValueError(f"seed labels must be integers 0 (none), 1 (foreground), "
                             f"2 (background) or 3..{MAX_LABEL} (further objects)")
        self._labels[...] = labels
        self._touch((slice(0, self.shape[0]), slice(0, self.shape[1])))

    def set_constraint(self, constraint) -> None:
        """Set the box / lasso (call inside an edit to make it undoable)."""
        self.constraint = constraint

    def undo(self) -> tuple[slice, slice] | None:
        """Undo the latest edit; returns the (rows, cols) rectangle of labels it changed
        (empty slices when it changed only the constraint), or None when there is nothing to
        undo."""
        if not self._undo:
            return None
        edit = self._undo.pop()
        self._apply(edit, edit.before, 0)
        self._redo.append(edit)
        return edit.region

    def redo(self) -> tuple[slice, slice] | None:
        """Redo the latest undone edit; returns the rectangle it changed (as :meth:`undo`), or
        None when there is nothing to redo."""
        if not self._redo:
            return None
        edit = self._redo.pop()
        self._apply(edit, edit.after, 1)
        self._undo.append(edit)
        return edit.region

    def _apply(self, edit: _Edit, labels: np.ndarray, side: int) -> None:
        self._labels[edit.region] = labels
        self._saved[edit.region] = labels
        if edit.constraint is not None:
            self.constraint = self._saved_constraint = edit.constraint[side]


def _is_label(label) -> bool:
    return isinstance(label, (int, np.integer)) and not isinstance(label, bool) \
        and 0 <= label <= MAX_LABEL
