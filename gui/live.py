"""Live segmentation for the main window: feeds the segmentation controller
(``controller.py``) with the document's seeds and options, and draws its answers.

Every seed edit asks for a new segmentation; a newer request supersedes older ones (a GPU
solve is stopped), outcomes of older requests are never shown, and on the CPU a coarse preview
is shown until the exact mask arrives. The window never waits for the solver. A λ change waits
:data:`LAM_DEBOUNCE_MS` for the next one before it asks.
"""

from __future__ import annotations

import logging
import time
import weakref
from math import nan

import numpy as np
from PyQt6.QtCore import QEventLoop, QTimer
from PyQt6.QtWidgets import QApplication

from .controller import Listener, SegmentationController
from .document import Document
from .solve import Outcome

log = logging.getLogger("graphcut.gui")

LAM_DEBOUNCE_MS = 150  # wait this long after the last lambda change before re-segmenting


class LiveSegmentation:
    """The window's side of the segmentation controller.

    Args:
        window: the main window (its ``view``, status bar labels, ``show_error``).
        document: the document whose seeds are segmented.
        solver_process: segment in child processes (see ``MainWindow``).
    """

    def __init__(self, window, document: Document, *, solver_process: bool):
        self.window, self.document = window, document
        self.stopped = False
        self.lam_timer = QTimer(window)
        self.lam_timer.setSingleShot(True)
        self.lam_timer.setInterval(LAM_DEBOUNCE_MS)
        self.lam_timer.timeout.connect(self.request)
        window._posted.connect(lambda function: function())  # queued: runs on the GUI thread
        self.controller = SegmentationController(
            _WindowListener(window), post=window._posted.emit, device=window.device,
            lam=document.lam.requested, use_process=solver_process)
        self.controller.set_options(document.options)
        if solver_process:
            self.controller.warm_up()

    # ----- requests ---------------------------------------------------------------------------
    def open_image(self, image: np.ndarray) -> None:
        """Segment ``image`` from now on (anything still segmenting belonged to the old one)."""
        self.controller.open_image(image)
        self.sync_options()
        self.show_mask(None)

    def seeds_changed(self, region) -> None:
        """The canvas's labels changed inside ``region`` ((rows, cols) slices; None: anywhere)."""
        self.controller.set_seeds(self.document.canvas.labels, region)

    def sync_options(self) -> None:
        """Send the document's options (with the canvas's box / lasso) to the controller."""
        self.controller.set_options(self.document.sync_region())

    def set_options(self, options) -> None:
        """Use ``options`` from now on and segment again when they differ."""
        if options != self.document.options:
            self.document.options = options
            self.controller.set_options(options)
            self.request()

    def request(self) -> None:
        """Segment the current seeds (the window's status bar says what happens)."""
        window = self.window
        if not self.document.has_image or self.stopped:
            return
        self.lam_timer.stop()
        self.controller.set_lam(self.document.lam.requested)
        if self.controller.request() is None:
            self.show_mask(None)
            window.statusBar().showMessage("Paint at least one object and one background "
                                           "seed, or draw a box or lasso, to segment")
            return
        self.document.set_result(None)
        window.statusBar().showMessage("Segmenting…")
        window._update_actions()

    def is_busy(self) -> bool:
        """Whether a segmentation is running, waiting, or about to be asked for."""
        return self.controller.is_busy() or self.lam_timer.isActive()

    def wait_until_idle(self, timeout: float = 30.0) -> None:
        """Process Qt events until no segmentation is running or waiting.

        Raises:
            TimeoutError: still busy after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        app = QApplication.instance()
        while self.is_busy():
            if time.monotonic() > deadline:
                raise TimeoutError(f"segmentation still running after {timeout} s")
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
            time.sleep(0.002)
        app.processEvents()

    def shutdown(self) -> None:
        """Stop the segmentation (a running solve is abandoned) and the solvers. Idempotent."""
        if self.stopped:
            return
        self.stopped = True
        self.lam_timer.stop()
        self.controller.close()

    # ----- answers ----------------------------------------------------------------------------
    def on_outcome(self, outcome: Outcome) -> None:
        """A mask for the newest request: a preview (on a reduced grid) or the exact one."""
        window, document = self.window, self.document
        labels = outcome.labels
        window.view.result_layer.set_mask(
            outcome.mask, document.image.shape, factor=outcome.factor, region=outcome.region,
            labels=labels, colours=None if labels is None else document.labels.result_colours())
        waited = outcome.seconds.get("waited", nan)
        status = window.statusBar()
        if outcome.factor > 1:
            status.showMessage(f"Preview at 1/{outcome.factor} resolution after "
                               f"{duration(waited)}; segmenting at full resolution…")
            return
        document.set_result(outcome.mask, labels)
        window._apply_overlay_visibility(window.overlay_action.isChecked())
        window._update_actions()
        window._backend_label.setText(backend_text(outcome.backend, outcome.device_name))
        self._show_wait(waited, outcome)
        status.showMessage(f"Object covers {100 * outcome.coverage:.1f} % of the image", 5000)

    def on_error(self, message: str) -> None:
        """A solve failed: clear the result and show ``message`` in an error dialog."""
        self.show_mask(None)
        self.window.statusBar().showMessage("Segmentation failed")
        self.window.show_error("Segmentation failed", message)

    def show_mask(self, mask: np.ndarray | None) -> None:
        """Show ``mask`` (one object) as the result, or nothing."""
        self.document.set_result(mask)
        image = self.document.image
        self.window.view.result_layer.set_mask(mask, None if image is None else image.shape)
        self.window._update_actions()

    def _show_wait(self, waited: float, outcome: Outcome) -> None:
        """Show how long the user waited for ``outcome``: from the request (the end of the
        stroke, the λ change taking effect) to its mask on screen, in seconds."""
        label = self.window._time_label
        label.setText(f"result in {duration(waited)}")
        kind = "an incremental re-solve" if outcome.incremental else "a solve from scratch"
        seconds = outcome.seconds
        label.setToolTip(
            f"You waited {duration(waited)} from the end of the stroke to the result on "
            f"screen (the exact one, after any preview). That includes the solver's "
            f"{duration(seconds.get('total', nan))} ({kind}: colour model and capacities "
            f"{duration(seconds.get('energy', nan))}, max-flow "
            f"{duration(seconds.get('solve', nan))}, finding the changed part of the mask "
            f"{duration(seconds.get('mask', nan))}; the first request for an image also waits "
            "for its session to be built), sending the seeds and the mask, and waiting for an "
            "earlier segmentation still running.")


class _WindowListener(Listener):
    """The controller's answers, handed to the window (on the GUI thread). They go through the
    window's ``_on_outcome`` so that scripts and benchmarks may watch them there."""

    def __init__(self, window):
        self._window = weakref.ref(window)

    def _live(self):
        window = self._window()
        live = getattr(window, "live", None)
        return None if live is None or live.stopped else window

    def on_outcome(self, outcome) -> None:
        window = self._live()
        if window is not None:
            window._on_outcome(outcome)

    def on_error(self, message: str, details: str = "") -> None:
        window = self._live()
        if window is not None:
            if details:
                log.debug("segmentation failed: %s\n%s", message, details)
            window.live.on_error(message)

    def on_backend(self, backend: str, device_name: str) -> None:
        window = self._live()
        if window is not None:
            window._backend_label.setText(backend_text(backend, device_name))


def duration(seconds: float) -> str:
    """``"85 ms"`` below a second, ``"1.24 s"`` above, ``"? ms"`` for NaN (not measured)."""
    if seconds != seconds:
        return "? ms"
    return f"{seconds * 1e3:.0f} ms" if seconds < 1.0 else f"{seconds:.2f} s"


def expected_backend(device: str) -> tuple[str, str]:
    """(backend, device name) that ``device`` will use, before any solve has run."""
    from graphcut.solver import BackendUnavailableError, resolve_device
    try:
        backend = resolve_device(device)
    except (BackendUnavailableError, ValueError):
        return "unavailable", device
    if backend == "cuda":
        from graphcut.solver import cuda_device_name
        return "cuda", cuda_device_name()
    return "cpu", ""


def backend_text(backend: str, device_name: str) -> str:
    """The status bar's backend label, e.g. ``"GPU: NVIDIA H100"`` or ``"CPU (PyMaxflow)"``."""
    if backend == "cuda":
        return f"GPU: {device_name or 'CUDA'}"
    if backend == "cpu":
        from graphcut.solver import gpu_hint
        return "CPU (PyMaxflow; GPU unused: pip install 'graphcut[gpu]')" if gpu_hint() \
            else "CPU (PyMaxflow)"
    return f"backend: {backend} {device_name}".strip()
