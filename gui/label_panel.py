"""The label list: a dock with the objects (``labels.py``): add, rename (double-click the name),
colour, hide (the check box), select the one the *Object* tool paints.

The panel edits its :class:`~graphcut.gui.labels.LabelList` and tells the window through
``on_change(what)``: ``"current"`` (another label is painted), ``"look"`` (colours or
visibility: redraw) or ``"names"``. Its methods are also the scripting surface
(``window.label_panel.add_label()``, ...).
"""

from __future__ import annotations

from PyQt6.QtCore import Qt
from PyQt6.QtGui import QColor, QIcon, QPixmap
from PyQt6.QtWidgets import (QColorDialog, QDockWidget, QHBoxLayout, QListWidget,
                             QListWidgetItem, QPushButton, QVBoxLayout, QWidget)

from .labels import LabelList

_VALUE = Qt.ItemDataRole.UserRole


def swatch(rgb) -> QIcon:
    """A 16 x 16 pixel icon filled with the colour ``rgb``.

    Parameters
    ----------
    rgb : sequence of int
        Red, green, blue, each 0..255.

    Returns
    -------
    QIcon
    """
    pixmap = QPixmap(16, 16)
    pixmap.fill(QColor(*rgb))
    return QIcon(pixmap)


class LabelPanel(QDockWidget):
    """The dock widget of the label list."""

    def __init__(self, parent, labels: LabelList, on_change):
        super().__init__("Labels", parent)
        self.setObjectName("labels")
        self.labels, self._on_change = labels, on_change
        self.list = QListWidget()
        self.list.setToolTip("Objects: the selected one is painted by the Object tool (F); "
                             "double-click to rename, the box shows or hides it")
        self.add_button = QPushButton("Add")
        self.add_button.setToolTip("Add an object label and paint with it")
        self.colour_button = QPushButton("Colour…")
        self.add_button.clicked.connect(lambda: self.add_label())
        self.colour_button.clicked.connect(self._choose_colour)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.colour_button)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.list)
        layout.addLayout(buttons)
        self.setWidget(body)
        self._filling = False
        self.list.itemChanged.connect(self._item_changed)
        self.list.currentItemChanged.connect(self._current_changed)
        self.refresh()

    # ----- scripting surface ------------------------------------------------------------------
    def add_label(self, name: str | None = None) -> int:
        """Add an object label, select it; returns its value (1, 3, 4, ...)."""
        label = self.labels.add(name)
        self.refresh()
        self.select(label.value)
        self._on_change("names")
        return label.value

    def select(self, value: int) -> None:
        """Paint with object ``value`` from now on."""
        self.labels.get(value)
        for row in range(self.list.count()):
            if self.list.item(row).data(_VALUE) == value:
                self.list.setCurrentRow(row)
        if self.labels.current != value:
            self.labels.current = value
            self._on_change("current")

    def rename(self, value: int, name: str) -> None:
        """Give object label ``value`` the display name ``name``; the list and listeners
        (change "names") follow.
        """
        self.labels.get(value).name = str(name)
        self._show_label(value)
        self._on_change("names")

    def set_colour(self, value: int, rgb) -> None:
        """Give object label ``value`` the colour ``rgb`` (three ints 0..255); the seeds and
        the result are redrawn (change "look").
        """
        self.labels.get(value).colour = tuple(int(c) for c in rgb)
        self._show_label(value)
        self._on_change("look")

    def set_visible(self, value: int, visible: bool) -> None:
        """Show or hide object label ``value``'s seeds and result (change "look")."""
        self.labels.get(value).visible = bool(visible)
        self._show_label(value)
        self._on_change("look")

    def refresh(self) -> None:
        """Show the label list as it is now."""
        self._filling = True
        try:
            self.list.clear()
            for label in self.labels.labels:
                item = QListWidgetItem()
                item.setData(_VALUE, label.value)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable
                              | Qt.ItemFlag.ItemIsUserCheckable)
                item.setToolTip(f"label value {label.value} in seed and label files")
                self.list.addItem(item)
                self._show_label(label.value)
                if label.value == self.labels.current:
                    self.list.setCurrentItem(item)
        finally:
            self._filling = False

    def _show_label(self, value: int) -> None:
        """Update the row of label ``value`` in place."""
        label = self.labels.get(value)
        filling, self._filling = self._filling, True
        try:
            for row in range(self.list.count()):
                item = self.list.item(row)
                if item.data(_VALUE) == value:
                    item.setText(label.name)
                    item.setIcon(swatch(label.colour))
                    item.setCheckState(Qt.CheckState.Checked if label.visible
                                       else Qt.CheckState.Unchecked)
        finally:
            self._filling = filling

    # ----- widget events ----------------------------------------------------------------------
    def _item_changed(self, item: QListWidgetItem) -> None:
        if self._filling:
            return
        label = self.labels.get(item.data(_VALUE))
        visible = item.checkState() == Qt.CheckState.Checked
        if visible != label.visible:
            self.set_visible(label.value, visible)
        elif item.text() != label.name:
            self.rename(label.value, item.text())

    def _current_changed(self, item, _previous) -> None:
        if not self._filling and item is not None:
            self.select(item.data(_VALUE))

    def _choose_colour(self) -> None:
        label = self.labels.get(self.labels.current)
        colour = QColorDialog.getColor(QColor(*label.colour), self, f"Colour of {label.name}")
        if colour.isValid():
            self.set_colour(label.value, (colour.red(), colour.green(), colour.blue()))
