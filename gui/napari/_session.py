"""The plugin's segmentation, without Qt: an image layer, its scribbles layer and the output
layer, bound to the app's :class:`~graphcut.gui.controller.SegmentationController`.

The controller solves in its own processes (the viewer's event loop never waits for a solve;
a new stroke makes older jobs stale and stops a running GPU solve), previews large 2-D images on
the CPU on a reduced grid at once, and applies the colour model, the box and the clean-up. This
module tells it what changed and shows what comes back:

- scribble edits: napari's ``paint`` event (a finished stroke, a fill; it names the region
  painted) and ``set_data`` (undo, redo, a refresh: the whole array is compared with the seeds
  last sent) are handled one event-loop turn later (napari emits ``paint`` before it writes);
  only the region that changed goes to the solvers;
- results go to one Labels layer that this object made (kept by identity; a layer of the
  same name is never touched), with the scribbles' label values, added without changing the
  user's layer selection;
- removing the image or the scribbles layer ends the solvers and frees their memory.

The learned model's hold needs nothing here: the controller sends each exact job the mask
last shown and its scribbles (``previous_update.py``); clearing the output when nothing can be
segmented is the controller's "nothing shown" too.

Call everything on the viewer's thread; ``post`` runs a function there later (a queued Qt
signal in the widget, a :class:`~graphcut.gui.controller.PostQueue` in scripts and tests).
"""

from __future__ import annotations

import logging

import numpy as np

from ..controller import Listener, SegmentationController
from ..options import SegmentOptions
from ._layers import (MASK_OPACITY, ChoiceNeeded, LayerError, as_seeds, changed_region,
                      foreground_box, mask_colormap, paint_region, prepare_image, union_regions,
                      upscale_into)
from ._refresh import show_region, write_labels

log = logging.getLogger("graphcut.gui")

NEEDS_BOTH = ("paint an object (label 1; 3 and up for more objects) and the background "
              "(label 2) to segment")


class LayerSegmentation(Listener):
    """Segments the chosen image layer from the chosen scribbles layer into an output layer.

    Parameters
    ----------
    viewer : napari.components.ViewerModel
        The viewer (or ``napari.Viewer``) whose layers are used.
    post : callable
        ``post(function)`` runs ``function`` on the viewer's thread later.
    on_status : callable, optional
        ``on_status(text, error)``: a line for the user; ``error`` True for real failures.
    use_process : bool
        Solve in solver processes (the default); False solves on threads (tests).
    """

    def __init__(self, viewer, *, post, on_status=None, use_process: bool = True):
        self.viewer, self._post = viewer, post
        self._on_status = on_status or (lambda text, error: None)
        self._use_process = use_process
        self.image_layer = self.scribbles_layer = None
        self.channels = "ask"
        self.device, self.lam = "auto", None  # lam None: the model's default
        self.options = SegmentOptions()
        self.live = False
        self.output_layer = None      # the Labels layer this object made, by identity
        self.outputs: list = []       # every output layer made (one per image) still shown
        self._output_of: list = []    # (image layer, its output layer), by identity
        self.last_outcome = None      # the last outcome shown (preview or exact)
        self.last_error: str | None = None
        self._controller: SegmentationController | None = None
        self._prepared = None
        self._opened_key = None
        self._seen: np.ndarray | None = None  # the seeds the controller holds (uint8)
        self._fresh = True            # _seen was just reset: compare all scribbles once
        self._pending_region = None   # scribble edits waiting for the next turn
        self._sync_posted = False
        self._watched = None
        self._exact_shown = None      # (output layer, exact labels last written, of one object)
        self._preview_region = None   # where previews wrote into it since
        self._shown_box = None        # (output layer, a box holding all its non-zero elements)
        viewer.layers.events.removed.connect(self._on_layer_removed)

    # ----- choices --------------------------------------------------------------------------
    def set_layers(self, image_layer, scribbles_layer, channels: str = "ask") -> None:
        """Segment ``image_layer`` from ``scribbles_layer`` (either may be None); ``channels``
        as in :func:`~._layers.prepare_image`. In Live mode this re-segments."""
        if (image_layer is self.image_layer and scribbles_layer is self.scribbles_layer
                and channels == self.channels):
            return
        if image_layer is not self.image_layer:  # each image has its own output layer
            self.output_layer = next((output for image, output in self._output_of
                                      if image is image_layer), None)
        self.image_layer, self.channels = image_layer, channels
        self._watch(scribbles_layer)
        self._opened_key = None
        self._changed()

    def set_lam(self, lam: float | None) -> None:
        """The smoothness weight (None: the appearance model's default, exactly as
        ``graphcut.segment`` without ``lam``)."""
        self.lam = None if lam is None else float(lam)
        if self._controller is not None:
            self._controller.set_lam(lam)
        self._changed()

    def set_device(self, device: str) -> None:
        """"auto", "cpu" or "cuda": new solvers on that device."""
        if device != self.device:
            self.device = device
            self._close_controller()
            self._changed()

    def set_options(self, options: SegmentOptions) -> None:
        """Colour model, clean-up, box (as for the app)."""
        self.options = options
        if self._controller is not None:
            self._controller.set_options(self._effective_options())
        self._changed()

    def _effective_options(self) -> SegmentOptions:
        """The options for the open image: the plugin's box and lasso are drawn on one 2-D
        view, so a volume is segmented without them (with its model and clean-up)."""
        if self._prepared is not None and len(self._prepared.shape) != 2:
            return self.options.with_region()
        return self.options

    def set_live(self, live: bool) -> None:
        """Re-segment after every change (True) or only on :meth:`segment`."""
        self.live = bool(live)
        self._changed()

    def _changed(self) -> None:
        if self.live:
            self.segment()

    # ----- segmenting -----------------------------------------------------------------------
    def segment(self) -> int | None:
        """Send the current scribbles to the solvers (the whole array is compared with what
        they hold); returns the request's number, or None when nothing was sent (the status
        line says why)."""
        if not self._ready():
            return None
        return self._send(None)

    def _ready(self) -> bool:
        if self.image_layer is None or self.scribbles_layer is None:
            self._status("choose an image layer and a scribbles layer")
            return False
        try:
            self._open()
        except ChoiceNeeded as error:
            self._status(str(error))
            return False
        except (LayerError, ValueError) as error:
            self._status(str(error), error=True)
            return False
        return True

    def _open(self) -> None:
        """Open the image in the controller when it, its channels or its data changed."""
        layer, scribbles = self.image_layer, self.scribbles_layer
        key = (id(layer), id(layer.data), self.channels, tuple(layer.scale),
               tuple(scribbles.data.shape))
        if key == self._opened_key and self._controller is not None:
            return
        prepared = prepare_image(layer, self.channels)
        if tuple(scribbles.data.shape) != prepared.shape:
            raise LayerError(f"the scribbles layer '{scribbles.name}' has shape "
                             f"{tuple(scribbles.data.shape)} but the image '{layer.name}' "
                             f"{prepared.shape}; add a scribbles layer made for this image")
        controller = self._ensure_controller()
        controller.open_image(prepared.data, channel_axis=prepared.channel_axis,
                              spacing=prepared.spacing)
        self._prepared, self._seen = prepared, np.zeros(prepared.shape, np.uint8)
        controller.set_options(self._effective_options())
        self._opened_key, self._fresh = key, True
        if self.output_layer is not None and tuple(self.output_layer.data.shape) != \
                prepared.shape:
            self.output_layer = None

    def _send(self, region) -> int | None:
        """Pass the scribbles of ``region`` (None: compare all) to the controller and request."""
        data = self.scribbles_layer.data
        try:
            if region is None or self._fresh:  # (just opened: compare all)
                region = changed_region(self._seen, np.asarray(data))  # checked below
            if region is not None:
                seeds = as_seeds(data, region)
                self._seen[region] = seeds
                self._controller.set_seeds(self._seen, region)
            self._fresh = False
        except LayerError as error:
            self._status(str(error), error=True)
            return None
        number = self._controller.request()
        if number is None:
            self._status(NEEDS_BOTH)
            layer = self.output_layer
            if layer is not None and layer in self.viewer.layers and layer.data.any():
                write_labels(layer, 0)  # a mask of scribbles that are no more (e.g. undone)
                self.last_outcome = self._exact_shown = self._shown_box = None
        return number

    # ----- scribble events ------------------------------------------------------------------
    def _watch(self, layer) -> None:
        if self._watched is not None:
            self._watched.events.paint.disconnect(self._on_paint)
            self._watched.events.set_data.disconnect(self._on_set_data)
        self.scribbles_layer = self._watched = layer
        if layer is not None:
            layer.events.paint.connect(self._on_paint)
            layer.events.set_data.connect(self._on_set_data)

    def _on_paint(self, event) -> None:
        shape = np.shape(self.scribbles_layer.data)
        region = paint_region(getattr(event, "value", None) or (), shape)
        self._schedule(region if region is not None else "all")

    def _on_set_data(self, event=None) -> None:
        self._schedule("all")  # undo, redo, replaced data or a plain refresh: compare

    def _schedule(self, region) -> None:
        if not self.live:
            return
        pending = self._pending_region
        if pending == "all" or region == "all":
            self._pending_region = "all"
        elif pending is None:
            self._pending_region = region
        else:
            self._pending_region = union_regions(pending, region)
        if not self._sync_posted:
            self._sync_posted = True
            self._post(self._sync)

    def _sync(self) -> None:
        region, self._pending_region, self._sync_posted = self._pending_region, None, False
        if region is None or not self.live or not self._ready():
            return
        self._send(None if region == "all" else region)

    # ----- answers (the controller's listener) ----------------------------------------------
    def on_outcome(self, outcome) -> None:
        """Show a solve's result in the output layer (a preview upscaled, an exact mask
        only in its changed region) and its timing and coverage in the status.
        """
        shape = self._prepared.shape
        if outcome.factor > 1:
            self._show_preview(outcome.mask if outcome.labels is None else outcome.labels,
                               outcome.factor)  # several objects: their labels
            kind = f"preview (1/{outcome.factor} grid)"
        else:
            self._show_exact(outcome)
            kind = "exact"
        self.last_outcome, self.last_error = outcome, None
        seconds = outcome.seconds.get("waited", float("nan"))
        size = "x".join(str(n) for n in shape[::-1])
        lam = "" if outcome.factor > 1 or outcome.lam != outcome.lam else \
            f" · λ {outcome.lam:g}"  # the library's choice where lambda follows the model
        self._status(f"{kind} · {outcome.backend} {outcome.device_name} · {seconds:.3f} s · "
                     f"{size} · object {100.0 * outcome.coverage:.1f} %{lam}")

    def on_error(self, message: str, details: str = "") -> None:
        """A solve failed: keep ``message`` as ``last_error`` and show it in the status;
        ``details`` (a traceback) goes to the debug log.
        """
        self.last_error = message
        log.debug("segmentation failed: %s\n%s", message, details)
        self._status(f"segmentation failed: {message}", error=True)

    def on_backend(self, backend: str, device_name: str) -> None:
        """Log which backend (``"cpu"`` / ``"gpu"``) and device the solves run on."""
        log.debug("solving on %s (%s)", backend, device_name)

    def _output(self):
        """The output layer, made (all zeros) when there is none; whether it is new."""
        layer = self.output_layer
        if layer is not None and layer in self.viewer.layers:
            return layer, False
        self.output_layer = self._add_output(np.zeros(self._prepared.shape, np.uint8))
        return self.output_layer, True

    def _show_exact(self, outcome) -> None:
        """Show an exact result: only the bounding box where it differs from the last exact
        result shown in this layer, and where previews wrote since, is written (and
        refreshed); edits of the layer outside it stay. That box is the controller's
        ``region`` between two masks of one object, else found by comparing."""
        binary = outcome.labels is None
        values = outcome.mask.view(np.uint8) if binary else outcome.labels
        layer, new = self._output()
        shown = self._exact_shown
        if new or shown is None or shown[0] is not layer or shown[1].shape != values.shape:
            write_labels(layer, values)
            self._shown_box = (layer, foreground_box(values))
        else:
            known = binary and shown[2] and outcome.region is not None
            region = union_regions(outcome.region if known else
                                   changed_region(shown[1], values), self._preview_region)
            if region is not None:
                write_labels(layer, values[region], region)
                self._shown_box = (layer, union_regions(self._box_shown(layer), region))
        self._exact_shown, self._preview_region = (layer, values, binary), None

    def _show_preview(self, small: np.ndarray, factor: int) -> None:
        """Show a preview on a grid reduced ``factor`` times, upscaled into the box that holds
        both its object and everything the layer may show (no full-grid pass)."""
        layer, new = self._output()
        box = union_regions(foreground_box(small, factor), None if new else
                            self._box_shown(layer))
        if box is not None:
            box = upscale_into(layer.data, small, factor, box)
            show_region(layer, box)
            self._preview_region = union_regions(self._preview_region, box)
            self._shown_box = (layer, union_regions(self._box_shown(layer), box))

    def _box_shown(self, layer):
        """A box holding every non-zero element this object wrote into ``layer`` (all of it
        when unknown)."""
        if self._shown_box is not None and self._shown_box[0] is layer:
            return self._shown_box[1]
        return tuple(slice(0, n) for n in layer.data.shape)

    def _add_output(self, data):
        """A new Labels layer for the results, placed like the image; the selection stays."""
        selection = self.viewer.layers.selection
        selected, active = set(selection), selection.active
        prepared = self._prepared
        from napari.layers import Labels
        layer = Labels(data, name=f"{self.image_layer.name} graphcut", scale=prepared.scale,
                       translate=prepared.translate, opacity=MASK_OPACITY,
                       colormap=mask_colormap())
        self.outputs.append(layer)  # known before the viewer announces it
        self._output_of.append((self.image_layer, layer))
        self.viewer.layers.append(layer)
        selection.clear()
        selection.update(selected)
        selection.active = active
        return layer

    # ----- lifetime -------------------------------------------------------------------------
    def _on_layer_removed(self, event) -> None:
        layer = event.value
        if layer is self.output_layer:
            self.output_layer = None
        self.outputs = [output for output in self.outputs if output is not layer]
        self._output_of = [(image, output) for image, output in self._output_of
                           if image is not layer and output is not layer]
        if layer is self.image_layer or layer is self.scribbles_layer:
            self._close_controller()  # frees the solvers' memory and the shared image
            self.set_layers(None if layer is self.image_layer else self.image_layer,
                            None if layer is self.scribbles_layer else self.scribbles_layer,
                            self.channels)

    def _ensure_controller(self) -> SegmentationController:
        if self._controller is None:
            self._controller = SegmentationController(
                self, post=self._post, device=self.device, lam=self.lam,
                use_process=self._use_process)
            self._controller.set_options(self._effective_options())
        return self._controller

    def _close_controller(self) -> None:
        if self._controller is not None:
            self._controller.close()
            self._controller = None
        self._opened_key, self._prepared, self._seen = None, None, None

    @property
    def controller(self) -> SegmentationController | None:
        """The controller in use (None until the first segmentation or after a close)."""
        return self._controller

    def warm_up(self) -> None:
        """Start the solver process now (it takes a second), before the first stroke."""
        self._ensure_controller().warm_up()

    def is_busy(self) -> bool:
        """Whether the newest request still waits for its exact mask."""
        return self._controller is not None and self._controller.is_busy()

    def close(self) -> None:
        """End the solvers and stop following the layers. Idempotent."""
        self._close_controller()
        self._watch(None)
        try:
            self.viewer.layers.events.removed.disconnect(self._on_layer_removed)
        except (TypeError, ValueError, RuntimeError):
            pass

    def _status(self, text: str, error: bool = False) -> None:
        self._on_status(text, error)
