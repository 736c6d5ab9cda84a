"""The napari dock widget: pick the image and the scribbles, press Segment or turn on Live.

Built from magicgui widgets (no fixed Qt binding); the segmentation runs in a napari
``thread_worker`` through :class:`~._controller.ScribbleSegmenter` and the answer goes to a
Labels layer named "graphcut mask" (label 1 = object). With Live on, every finished stroke on
the scribbles layer (napari's ``paint`` event) or a replaced scribbles array re-segments; a
stroke made while a segmentation runs is answered as soon as it ends (only the newest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from magicgui.widgets import CheckBox, ComboBox, Container, FloatSpinBox, Label, PushButton

from graphcut.segmentation import DEFAULT_LAM

from ._controller import (BACKGROUND_LABEL, OBJECT_LABEL, Coalescer, MissingScribbles,
                          ScribbleSegmenter, Segmentation, spatial_shape)

if TYPE_CHECKING:
    import napari

MASK_LAYER = "graphcut mask"
SCRIBBLES_LAYER = "scribbles"


def thread_submit(job, on_done, on_error, on_finished) -> None:
    """Run ``job`` in a napari thread_worker; the callbacks run on the GUI thread."""
    from napari.qt.threading import create_worker
    worker = create_worker(job, _start_thread=False)
    worker.returned.connect(on_done)
    worker.errored.connect(on_error)
    worker.finished.connect(on_finished)
    worker.start()


class GraphCutWidget(Container):
    """Graph-cut segmentation of the image layer from the scribbles layer.

    ``submit`` (tests, scripts) replaces the thread worker, e.g. with
    :func:`~._controller.run_here` to segment synchronously.
    """

    def __init__(self, viewer: napari.viewer.Viewer, *, submit=None):
        super().__init__(labels=True)
        self.viewer = viewer
        self.segmenter = ScribbleSegmenter()
        self.last: Segmentation | None = None
        self.image_combo = ComboBox(label="image", choices=self._image_layers,
                                    nullable=True)
        self.scribbles_combo = ComboBox(label="scribbles", choices=self._labels_layers,
                                        nullable=True)
        self.new_scribbles_button = PushButton(text="New scribbles layer")
        self.lam_box = FloatSpinBox(label="lambda", value=DEFAULT_LAM, min=0.0, max=1000.0,
                                    step=1.0, tooltip="Weight of the boundary term: larger = "
                                    "smoother boundaries that follow edges more")
        self.device_combo = ComboBox(label="device", choices=["auto", "cpu", "cuda"],
                                     value="auto")
        self.segment_button = PushButton(text="Segment")
        self.live_box = CheckBox(text="Live (re-segment after every stroke)", value=False)
        self.status = Label(value=f"scribbles: label {OBJECT_LABEL} = object, "
                                  f"{BACKGROUND_LABEL} = background")
        self.status.native.setWordWrap(True)
        self.extend([self.image_combo, self.scribbles_combo, self.new_scribbles_button,
                     self.lam_box, self.device_combo, self.segment_button, self.live_box,
                     self.status])
        self._coalescer = Coalescer(self._make_job, submit or thread_submit, self._show,
                                    self._failed)
        self._watched = None
        self.new_scribbles_button.changed.connect(self.add_scribbles_layer)
        self.segment_button.changed.connect(self.segment)
        self.scribbles_combo.changed.connect(self._watch_scribbles)
        self.live_box.changed.connect(lambda live: live and self._on_scribbles_changed())
        for event in (viewer.layers.events.inserted, viewer.layers.events.removed,
                      viewer.layers.events.reordered):
            event.connect(self._refresh_choices)
        self._refresh_choices()

    # -- layers ----------------------------------------------------------------------------

    def _image_layers(self, widget=None):
        from napari.layers import Image
        return [(layer.name, layer) for layer in self.viewer.layers
                if isinstance(layer, Image)]

    def _labels_layers(self, widget=None):
        from napari.layers import Labels
        return [(layer.name, layer) for layer in self.viewer.layers
                if isinstance(layer, Labels) and layer.name != MASK_LAYER]

    def _refresh_choices(self, event=None) -> None:
        self.image_combo.reset_choices()
        self.scribbles_combo.reset_choices()
        if self.image_combo.value is None and self.image_combo.choices[1:]:
            self.image_combo.value = self.image_combo.choices[-1]
        if self.scribbles_combo.value is None and self.scribbles_combo.choices[1:]:
            self.scribbles_combo.value = self.scribbles_combo.choices[-1]

    def add_scribbles_layer(self, *args):
        """A new Labels layer shaped like the image (spatially), brush on the object label."""
        image = self.image_combo.value
        if image is None:
            self.status.value = "open an image first"
            return None
        shape = spatial_shape(image.data.shape, image.rgb)
        layer = self.viewer.add_labels(np.zeros(shape, dtype=np.uint8), name=SCRIBBLES_LAYER,
                                       scale=image.scale[:len(shape)],
                                       translate=image.translate[:len(shape)])
        layer.selected_label = OBJECT_LABEL
        layer.mode = "paint"
        self.scribbles_combo.value = layer
        return layer

    def _watch_scribbles(self, layer) -> None:
        if self._watched is not None:
            for event in (self._watched.events.paint, self._watched.events.data):
                event.disconnect(self._on_scribbles_changed)
        self._watched = layer
        if layer is not None:
            for event in (layer.events.paint, layer.events.data):
                event.connect(self._on_scribbles_changed)

    def _on_scribbles_changed(self, event=None) -> None:
        if self.live_box.value:
            # after the event: Labels.paint() emits `paint` before it writes the data
            from qtpy.QtCore import QTimer
            QTimer.singleShot(0, self.segment)

    # -- segmentation ----------------------------------------------------------------------

    def segment(self, *args) -> None:
        """Segment now (or as soon as the running segmentation ends)."""
        self._coalescer.request()

    def _make_job(self):
        image, scribbles = self.image_combo.value, self.scribbles_combo.value
        if image is None or scribbles is None:
            raise MissingScribbles("choose an image layer and a scribbles layer")
        data = np.asarray(image.data)
        seeds = np.array(scribbles.data, copy=True)  # the user may paint on meanwhile
        options = dict(rgb=bool(image.rgb), lam=float(self.lam_box.value),
                       device=self.device_combo.value, image_key=(id(image), id(image.data)))
        self.status.value = "segmenting..."
        return lambda: self.segmenter.segment(data, seeds, **options)

    def _show(self, result: Segmentation) -> None:
        self.last = result
        mask = result.mask.astype(np.uint8)
        layer = next((layer for layer in self.viewer.layers if layer.name == MASK_LAYER), None)
        if layer is not None and layer.data.shape == mask.shape:
            layer.data[...] = mask
            layer.refresh()
        else:
            if layer is not None:
                self.viewer.layers.remove(layer)
            image = self.image_combo.value
            ndim = mask.ndim
            self.viewer.add_labels(mask, name=MASK_LAYER, opacity=0.45,
                                   scale=image.scale[:ndim] if image else None,
                                   translate=image.translate[:ndim] if image else None)
        self.status.value = result.summary()

    def _failed(self, error: BaseException) -> None:
        self.status.value = (str(error) if isinstance(error, MissingScribbles)
                             else f"failed: {error}")
