"""The toolbar's number boxes (brush radius, λ) and the Help dialog.

A number box is for a quick edit: Enter (or Return) takes the typed value and Escape restores
the value it had, and either hands the keyboard back to the canvas, as does a click on its
arrows; so the tool keys (F, B, E, R, L, ...) and Ctrl+Delete never edit the box by mistake
after a change. The λ box's arrows multiply by 1.1 (up) or 0.9 (down) at every value.
"""

from __future__ import annotations

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import (QAbstractSpinBox, QDialog, QDialogButtonBox, QDoubleSpinBox,
                             QSpinBox, QTextBrowser, QVBoxLayout)

LAM_STEP_UP, LAM_STEP_DOWN = 1.1, 0.9
HELP_SCREEN_SHARE = 0.8  # the Help dialog takes at most this share of the screen's height


class _HandsBackFocus:
    """Mixin for a QAbstractSpinBox: Enter / Escape / an arrow click give the focus to
    ``canvas`` (a widget, set with :meth:`hand_focus_to`)."""

    _canvas = None
    _value_on_focus = None

    def hand_focus_to(self, canvas) -> None:
        self._canvas = canvas

    def _give_back(self) -> None:
        if self._canvas is not None:
            self._canvas.setFocus(Qt.FocusReason.OtherFocusReason)

    def focusInEvent(self, event) -> None:
        self._value_on_focus = self.value()
        super().focusInEvent(event)

    def keyPressEvent(self, event) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.interpretText()
            self._give_back()
            event.accept()
            return
        if key == Qt.Key.Key_Escape:
            if self._value_on_focus is not None:
                self.setValue(self._value_on_focus)
            self._give_back()
            event.accept()
            return
        super().keyPressEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        if not self.lineEdit().geometry().contains(event.position().toPoint()):
            self._give_back()  # an arrow was clicked: no typing follows


class BrushBox(_HandsBackFocus, QSpinBox):
    """The brush radius in image pixels."""


class LamBox(_HandsBackFocus, QDoubleSpinBox):
    """λ: the arrows (and the Up / Down keys) multiply it by :data:`LAM_STEP_UP` or
    :data:`LAM_STEP_DOWN` per step, changing it by at least the last shown decimal.

    ``remember`` and ``restore`` (callables, or None) let Escape restore more than the value:
    ``remember()`` is called when the box gets the focus, and ``restore(what it returned)``
    after Escape restored the value (the app: whether λ followed the model's default)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setStepType(QAbstractSpinBox.StepType.DefaultStepType)
        self.remember = self.restore = None
        self._remembered = None

    def focusInEvent(self, event) -> None:
        if self.remember is not None:
            self._remembered = self.remember()
        super().focusInEvent(event)

    def keyPressEvent(self, event) -> None:
        super().keyPressEvent(event)
        if event.key() == Qt.Key.Key_Escape and self.restore is not None:
            self.restore(self._remembered)

    def stepBy(self, steps: int) -> None:
        """Step λ ``steps`` times (Qt's arrows, Up / Down, the wheel): multiply it by
        :data:`LAM_STEP_UP` per step up or :data:`LAM_STEP_DOWN` per step down, changing it by
        at least the smallest shown decimal, within the box's range.
        """
        value = self.value()
        target = value * (LAM_STEP_UP ** steps if steps > 0 else LAM_STEP_DOWN ** -steps)
        least = 10.0 ** -self.decimals()
        if steps > 0:
            target = max(target, value + least)
        elif steps < 0:
            target = min(target, value - least)
        self.setValue(min(max(target, self.minimum()), self.maximum()))


def help_dialog(parent, title: str, html: str) -> QDialog:
    """A dialog showing ``html`` in a scrolling view with an OK button, no taller than
    :data:`HELP_SCREEN_SHARE` of the screen ``parent`` is on, so that OK stays on screen."""
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    text = QTextBrowser(dialog)
    text.setHtml(html)
    text.setOpenExternalLinks(False)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok, dialog)
    buttons.accepted.connect(dialog.accept)
    layout = QVBoxLayout(dialog)
    layout.addWidget(text)
    layout.addWidget(buttons)
    screen = (parent.screen() if parent is not None else None) or dialog.screen()
    available = screen.availableGeometry()
    width = min(560, int(available.width() * 0.9))
    text.document().setTextWidth(width - 40)
    wanted = int(text.document().size().height()) + buttons.sizeHint().height() + 60
    dialog.resize(width, min(wanted, int(available.height() * HELP_SCREEN_SHARE)))
    return dialog
