"""The napari dock widget: choose the image and the scribbles, press Segment or turn on Live.

Built from magicgui widgets (no fixed Qt binding). The work is done by
:class:`~._session.LayerSegmentation` (Qt-free) with the desktop app's segmentation controller:
solver processes, previews, the colour model, the box and the clean-up. This module only wires
the controls to it and brings the solvers' answers to the viewer's thread (a queued signal).
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import TYPE_CHECKING

from magicgui.widgets import CheckBox, ComboBox, Container, FloatSpinBox, Label, PushButton

from ..model_choice import LamChoice, model_help, model_lam, model_names
from ..options import APP_DEFAULTS
from ._layers import (BACKGROUND_LABEL, CHANNEL_CHOICES, OBJECT_LABEL, needs_channel_choice,
                      prepare_image)
from ._session import LayerSegmentation

if TYPE_CHECKING:
    import napari

SCRIBBLES_LAYER = "scribbles"
LAM_TIP = ("Weight of the boundary term: larger = smoother boundaries that follow edges more. "
           "It follows the model's default until you change it; your value then stays for "
           "every model until 'Model's default lambda'")
HINT = (f"scribbles: label {OBJECT_LABEL} = object, {BACKGROUND_LABEL} = background, "
        "3 and up = more objects")


def make_post():
    """``post(function)``: run ``function`` on the Qt main thread at the next event-loop turn
    (queued even when called from that thread)."""
    from qtpy.QtCore import QObject, Qt, Signal

    class _Poster(QObject):
        posted = Signal(object)

    poster = _Poster()
    poster.posted.connect(lambda function: function(), Qt.ConnectionType.QueuedConnection)
    return _Post(poster)


_WATCHERS: set = set()  # the QObjects waiting for a widget's end (when_destroyed)


def when_destroyed(widget, callback) -> None:
    """Call ``callback()`` once when the Qt ``widget`` is destroyed.

    Through a slot of a QObject of its own, kept alive here until then: a plain Python
    callable connected to ``destroyed`` goes through a proxy that PyQt may free while the
    widget is destroyed (seen: a segmentation fault when a widget closed in an earlier
    test is deleted).
    """
    from qtpy.QtCore import QObject, Slot

    class _Watcher(QObject):
        @Slot()
        def fire(self) -> None:
            _WATCHERS.discard(self)
            callback()

    watcher = _Watcher()
    _WATCHERS.add(watcher)
    widget.destroyed.connect(watcher.fire)


class _Post:
    """A callable that keeps its QObject alive."""

    def __init__(self, poster):
        self.poster = poster

    def __call__(self, function) -> None:
        self.poster.posted.emit(function)


class GraphCutWidget(Container):
    """Graph-cut segmentation of an image layer from a scribbles (Labels) layer.

    Parameters
    ----------
    viewer : napari.viewer.Viewer
        The viewer (or a ``ViewerModel``).
    use_process : bool
        Solve in solver processes (the default; the viewer never waits for a solve). False
        solves on threads of napari's process (tests).
    """

    def __init__(self, viewer: napari.viewer.Viewer, *, use_process: bool = True):
        super().__init__(labels=True)
        self.viewer = viewer
        self.session = LayerSegmentation(viewer, post=make_post(), on_status=self._show_status,
                                         use_process=use_process)
        self.image_combo = ComboBox(label="image", choices=self._image_layers, nullable=True)
        self.channels_combo = ComboBox(label="channels", value="ask",
                                       choices=[(text, key) for key, text
                                                in CHANNEL_CHOICES.items()])
        self.scribbles_combo = ComboBox(label="scribbles", choices=self._labels_layers,
                                        nullable=True)
        self.new_scribbles_button = PushButton(text="New scribbles layer")
        self.lam_choice = LamChoice()
        self._showing_lam = False
        self.model_combo = ComboBox(label="model", choices=list(model_names()),
                                    value=APP_DEFAULTS.model, tooltip="Appearance model:\n"
                                    + "\n".join(f"{name}: {model_help(name)}"
                                                for name in model_names()))
        self.lam_box = FloatSpinBox(label="lambda", value=model_lam(self.model_combo.value),
                                    min=0.0, max=10000.0, step=1.0, tooltip=LAM_TIP)
        self.lam_reset_button = PushButton(text="Model's default lambda", enabled=False,
                                           tooltip="lambda follows the model's default again")
        self.device_combo = ComboBox(label="device", choices=["auto", "cpu", "cuda"],
                                     value="auto")
        self.cleanup_box = CheckBox(text="Clean up (keep parts touching the scribbles, fill "
                                    "small holes)", value=True)
        self.box_combo = ComboBox(label="box", choices=self._shapes_layers, nullable=True,
                                  tooltip="a Shapes layer whose first shape's bounding box "
                                  "holds the object (2-D images)")
        self.segment_button = PushButton(text="Segment")
        self.live_box = CheckBox(text="Live (re-segment after every change)", value=False)
        self.status = Label(value=HINT)
        self._fit_status()
        self.extend([self.image_combo, self.channels_combo, self.scribbles_combo,
                     self.new_scribbles_button, self.model_combo, self.lam_box,
                     self.lam_reset_button, self.device_combo, self.cleanup_box,
                     self.box_combo, self.segment_button, self.live_box, self.status])
        self._box_layer = None
        self.new_scribbles_button.changed.connect(self.add_scribbles_layer)
        self.segment_button.changed.connect(self.segment)
        for combo in (self.image_combo, self.channels_combo, self.scribbles_combo):
            combo.changed.connect(self._layers_changed)
        self.lam_box.changed.connect(self._lam_typed)
        self.lam_reset_button.changed.connect(self.reset_lam)
        self.device_combo.changed.connect(lambda value: self.session.set_device(value))
        for control in (self.model_combo, self.cleanup_box, self.box_combo):
            control.changed.connect(self._options_changed)
        self.live_box.changed.connect(lambda live: self.session.set_live(live))
        events = (viewer.layers.events.inserted, viewer.layers.events.removed,
                  viewer.layers.events.reordered)
        this = weakref.ref(self)

        def refresh(event=None) -> None:  # a plain function: napari disconnects it without
            widget = this()                # looking into the (maybe deleted) widget
            if widget is not None:
                widget._refresh_choices(event)
        for event in events:
            event.connect(refresh)
        self.session.set_lam(self.lam_choice.requested)
        self._options_changed()
        self._refresh_choices()
        session = self.session

        def closed() -> None:  # the dock widget is gone: its solvers and handlers too
            session.close()
            for event in events:
                event.disconnect(refresh)
        when_destroyed(self.native, closed)

    # ----- layers ---------------------------------------------------------------------------
    def _image_layers(self, widget=None):
        from napari.layers import Image
        return [(layer.name, layer) for layer in self.viewer.layers if isinstance(layer, Image)]

    def _labels_layers(self, widget=None):
        from napari.layers import Labels
        return [(layer.name, layer) for layer in self.viewer.layers
                if isinstance(layer, Labels)
                and not any(layer is output for output in self.session.outputs)]

    def _shapes_layers(self, widget=None):
        from napari.layers import Shapes
        return [(layer.name, layer) for layer in self.viewer.layers if isinstance(layer, Shapes)]

    def _refresh_choices(self, event=None) -> None:
        for combo in (self.image_combo, self.scribbles_combo, self.box_combo):
            combo.reset_choices()
        if self.image_combo.value is None and self.image_combo.choices[1:]:
            self.image_combo.value = self.image_combo.choices[-1]
        if self.scribbles_combo.value is None and self.scribbles_combo.choices[1:]:
            self.scribbles_combo.value = self.scribbles_combo.choices[-1]
        self._layers_changed()

    def _layers_changed(self, *args) -> None:
        image = self.image_combo.value
        self.channels_combo.visible = image is not None and needs_channel_choice(image)
        self.session.set_layers(image, self.scribbles_combo.value, self.channels_combo.value)
        self._show_lam()  # what "auto" stands for depends on the image

    def add_scribbles_layer(self, *args):
        """A new Labels layer shaped like the image (spatially), painting the object label."""
        image = self.image_combo.value
        if image is None:
            self._show_status("open an image first", False)
            return None
        try:
            prepared = prepare_image(image, self.channels_combo.value)
        except ValueError as error:
            self._show_status(str(error), True)
            return None
        import numpy as np
        layer = self.viewer.add_labels(np.zeros(prepared.shape, dtype=np.uint8),
                                       name=SCRIBBLES_LAYER, scale=prepared.scale,
                                       translate=prepared.translate)
        layer.selected_label = OBJECT_LABEL
        layer.mode = "paint"
        self.scribbles_combo.value = layer
        return layer

    # ----- options --------------------------------------------------------------------------
    def _options_changed(self, *args) -> None:
        layer = self.box_combo.value
        if layer is not self._box_layer:
            if self._box_layer is not None:
                self._box_layer.events.data.disconnect(self._options_changed)
            self._box_layer = layer
            if layer is not None:
                layer.events.data.connect(self._options_changed)
        options = dataclasses.replace(APP_DEFAULTS.with_cleanup(bool(self.cleanup_box.value)),
                                      model=self.model_combo.value)
        self._show_lam()
        self.session.set_options(options.with_region(box=box_of(layer)))

    # ----- lambda: the model's default until the user types one (model_choice.LamChoice) --
    def set_lam(self, value: float | None) -> None:
        """The user's lambda, which stays for every model (None: the model's default)."""
        if value is None:
            self.reset_lam()
            return
        self.lam_choice.type(value)  # also when the box shows it already (no change event)
        self._show_lam()
        self.session.set_lam(self.lam_choice.requested)

    def reset_lam(self, *args) -> None:
        """lambda follows the appearance model's default again."""
        self.lam_choice.reset()
        self._show_lam()
        self.session.set_lam(None)

    def _lam_typed(self, value) -> None:
        if self._showing_lam:
            return  # the widget showed the model's default, nobody typed
        self.lam_choice.type(value)
        self.lam_reset_button.enabled = True
        self.session.set_lam(self.lam_choice.requested)

    def _show_lam(self) -> None:
        layer = getattr(self, "image_combo", None)
        layer = None if layer is None else layer.value
        if layer is not None:  # what "auto" stands for depends on the image (its colours)
            try:  # the image as the solver gets it
                prepared = prepare_image(layer, self.channels_combo.value)
                self.lam_choice.set_image(prepared.data, prepared.channel_axis)
            except ValueError:  # not segmentable as it is (the status says why)
                self.lam_choice.set_image(None)
        self._showing_lam = True
        try:
            self.lam_box.value = self.lam_choice.shown(self.model_combo.value)
        finally:
            self._showing_lam = False
        self.lam_reset_button.enabled = not self.lam_choice.follows_model

    # ----- actions --------------------------------------------------------------------------
    def segment(self, *args) -> None:
        """Segment now (the answer comes when the solver has it)."""
        self.session.segment()

    def _show_status(self, text: str, error: bool) -> None:
        self.status.value = text
        self.status.tooltip = text
        if error:
            from napari.utils.notifications import show_error
            show_error(text)  # a message, no traceback

    def _fit_status(self) -> None:
        """A long status line wraps instead of widening the dock."""
        from qtpy.QtWidgets import QSizePolicy
        native = self.status.native
        native.setWordWrap(True)
        native.setMinimumWidth(1)
        native.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)


def box_of(layer):
    """The box ``(row0, col0, row1, col1)`` (half-open, pixels) around a Shapes layer's first
    shape, or None (no layer or no shape)."""
    if layer is None or not len(layer.data):
        return None
    import numpy as np
    points = np.asarray(layer.data[0])[:, -2:]
    low, high = np.floor(points.min(axis=0)), np.ceil(points.max(axis=0))
    return (int(low[0]), int(low[1]), int(high[0]) + 1, int(high[1]) + 1)
