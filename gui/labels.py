"""The objects being segmented: names, colours and visibility of the object labels. No Qt.

Seed values follow ``graphcut.segment``: object 1 is 1, the background is always 2, further
objects are 3, 4, ... (``LabelList.add`` hands them out in that order). Results use the same
values (0 = background), so a label image the app saves equals what ``graphcut segment``
writes for the same seeds. Painting with the *Object* tool uses the selected label's value.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from graphcut.io import PALETTE

from graphcut.io import BACKGROUND, FOREGROUND, MAX_LABEL

FIRST_COLOUR = (255, 0, 0)      # object 1: red, as seed strokes have always been
BACKGROUND_COLOUR = (0, 64, 255)


def default_colour(order: int) -> tuple:
    """The colour of the ``order``-th object (0 = object 1): red, then the overlay palette of
    ``graphcut segment`` without its red and blue (kept for object 1 and the background)."""
    if order == 0:
        return FIRST_COLOUR
    others = PALETTE[2:]
    return tuple(int(c) for c in others[(order - 1) % len(others)])


@dataclass
class ObjectLabel:
    """One object: its seed / result value, name, colour (r, g, b) and whether it is drawn."""

    value: int
    name: str
    colour: tuple
    visible: bool = True


class LabelList:
    """The object labels, in the order they were added; ``current`` is the one painted."""

    def __init__(self):
        self.labels: list[ObjectLabel] = []
        self.current = FOREGROUND
        self.reset()

    def reset(self) -> None:
        """Back to one object, "Object 1" in red, painted (a new image starts so)."""
        self.labels.clear()
        self.current = FOREGROUND
        self.add()

    def __len__(self) -> int:
        return len(self.labels)

    def get(self, value: int) -> ObjectLabel:
        """The object label whose value is ``value``.

        Raises
        ------
        KeyError
            no label has that value.
        """
        for label in self.labels:
            if label.value == value:
                return label
        raise KeyError(f"no object label {value}")

    def next_value(self) -> int:
        """The value a new object label gets: one more than the largest, skipping the
        background value; :data:`FOREGROUND` for an empty list.
        """
        if not self.labels:
            return FOREGROUND
        value = max(label.value for label in self.labels) + 1
        return value + 1 if value == BACKGROUND else value

    def add(self, name: str | None = None, colour=None, value: int | None = None) -> ObjectLabel:
        """A new object label (the next free value unless ``value`` is given)."""
        value = self.next_value() if value is None else int(value)
        if not (1 <= value <= MAX_LABEL) or value == BACKGROUND:
            raise ValueError(f"object labels are 1 and 3..{MAX_LABEL} (2 is the background); "
                             f"no room for label {value}")
        if any(label.value == value for label in self.labels):
            raise ValueError(f"object label {value} exists already")
        label = ObjectLabel(value, name or f"Object {len(self.labels) + 1}",
                            tuple(colour) if colour is not None
                            else default_colour(len(self.labels)))
        self.labels.append(label)
        self.labels.sort(key=lambda item: item.value)
        return label

    def ensure(self, values) -> None:
        """Add a label for every object value in ``values`` that has none (loaded seeds)."""
        for value in sorted(int(v) for v in values):
            if value not in (0, BACKGROUND) and all(lab.value != value for lab in self.labels):
                self.add(value=value)

    def seed_colours(self) -> np.ndarray:
        """(256, 4) uint8 RGBA of the seed values: 0 transparent, 2 the background's blue,
        objects their colours; hidden objects transparent."""
        table = np.zeros((256, 4), np.uint8)
        table[BACKGROUND] = (*BACKGROUND_COLOUR, 255)
        for label in self.labels:
            if label.visible:
                table[label.value] = (*label.colour, 255)
        return table

    def result_colours(self) -> np.ndarray:
        """(256, 4) uint8 RGBA of the result values: objects their colours with alpha 255,
        hidden objects and 0 (background) alpha 0."""
        table = self.seed_colours()
        table[BACKGROUND] = 0
        return table

    def to_settings(self) -> list:
        """The labels as JSON values (the settings file's ``labels`` key)."""
        return [{**asdict(label), "colour": list(label.colour)} for label in self.labels]

    def load_settings(self, entries) -> None:
        """Names, colours and visibility from a settings file's ``labels`` (malformed entries
        are skipped: they only describe the labels)."""
        if not isinstance(entries, list):
            return
        for entry in entries:
            try:
                value = int(entry["value"])
                label = self.get(value) if any(x.value == value for x in self.labels) \
                    else self.add(value=value)
                label.name = str(entry.get("name", label.name))
                colour = entry.get("colour", label.colour)
                if len(colour) == 3 and all(0 <= int(c) <= 255 for c in colour):
                    label.colour = tuple(int(c) for c in colour)
                label.visible = bool(entry.get("visible", True))
            except (KeyError, TypeError, ValueError):
                continue
