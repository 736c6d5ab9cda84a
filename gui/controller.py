"""The segmentation controller: jobs, cancellation and previews for one opened image. No Qt.

The window (``window.py``) and other front ends (a napari widget, the benchmark) drive it the
same way: :meth:`SegmentationController.open_image`, then for every edit
:meth:`~SegmentationController.set_seeds` (the rectangle that changed) and
:meth:`~SegmentationController.request`; results come back through a listener.

What it does for them:

- the image goes to the solvers once, in shared memory; seeds go as changed rectangles;
- solver processes run a little nicer than the window's (``SOLVER_NICENESS``), so that the
  event loop gets a core at once when a result arrives, however busy they keep the machine;
- every request goes to the solver at once; a solver answers only the newest of the jobs
  waiting for it, and on the GPU a newer job stops the running solve between launch batches;
- on the CPU, when the image is large (``PREVIEW_MIN_PIXELS``), a second solver answers each
  request on a reduced grid within a fraction of a second; its mask is shown until the exact
  one of the same request arrives, which always replaces it;
- a running CPU solve that the next job cannot reuse is ended when a new process gets the
  answer sooner (``solver_policy.py``);
- an outcome's ``region`` bounds every change since the last mask shown of its grid;
- each exact job of a model with a hold, or of several objects (the expansion starts from the
  labels shown), carries the previous update the user saw (``previous_update.py``);
- optionally (``spare="auto"``), on the CPU a second exact solver (the *spare*) holds the same
  image in its own process, opened once the first exact mask is shown. A request made while
  the other exact solver is busy goes to the idle one, which solves it at once on the other
  core, incrementally from the seeds it last saw; the busy one's answer, now stale, is
  dropped. So the final mask of a burst of strokes comes about one incremental solve after
  the last stroke instead of up to two. Each solver keeps its own graph and flow; the spare
  costs a second session's memory (:func:`spare_bytes`, about 250 bytes per pixel: 1 GB at
  4 MP, 3 GB at 12 MP) and is only made when twice that is available.

Threads: call every method on one thread, the owner's (the GUI thread). Solvers answer on
their own threads; the controller passes each answer to ``post`` (a callable that runs a
function on the owner's thread later: a queued Qt signal, or a :class:`PostQueue`) and handles
it there, calling the listener.
"""

from __future__ import annotations

import dataclasses
import logging
import time

import numpy as np

import graphcut

from .controller_parts import (SESSION_BYTES_PER_PIXEL, SOLVER_NICENESS, SPARE_NICENESS,
                               Listener, PostQueue, since_shown, spare_bytes, spare_fits)
from .controller_parts import Channel as _Channel
from .controller_parts import expected_backend as _expected_backend
from .model_choice import model_holds
from .options import SegmentOptions
from .previous_update import ShownUpdates
from .sharing import SeedDelta, SharedArray, from_slices, shared_memory_fits, to_slices, union
from .solve import PREVIEW_PIXELS, Job, Opened, Outcome, Session, preview_factor, spatial_shape
from .solver_policy import pick_exact, restart_pays
from .worker import Crashed, ProcessClient, ThreadClient

log = logging.getLogger("graphcut.gui")

# Images from this many pixels get coarse previews when they are segmented on the CPU.
PREVIEW_MIN_PIXELS = 2**20


class SegmentationController:
    """Segmentation requests for one image at a time, answered by solver processes.

    Args:
        listener: a :class:`Listener`.
        post: runs a function on the owner's thread later (see the module docstring).
        device: "auto", "cpu" or "cuda".
        lam: the smoothness weight to start with (None: each model's own default).
        use_process: solve in child processes (the app's default); False solves on threads of
            this process (no interruption of CPU solves, and PyMaxflow holds the GIL).
        preview: "auto" (previews for images from ``PREVIEW_MIN_PIXELS`` segmented on the
            CPU), True (always when the image can be reduced) or False.
        preview_pixels: the largest preview grid (pixels); the image is reduced by the
            smallest integer factor that fits.
        spare: a second exact solver process for requests made while the first is busy
            (module docstring): "auto" (on the CPU, in processes, when memory allows), True
            (whenever solving in processes) or False (the default: on a machine with fewer
            than two idle cores the two solvers slow each other down more than they gain).
    """

    def __init__(self, listener: Listener, *, post, device: str = "auto",
                 lam: float | None = None, use_process: bool = True,
                 preview="auto", preview_pixels: int = PREVIEW_PIXELS, spare=False):
        self.listener, self._post = listener, post
        self.device, self.lam = device, None if lam is None else float(lam)
        self._client_class = ProcessClient if use_process else ThreadClient
        self._use_process = use_process
        self._preview_mode, self._preview_pixels = preview, int(preview_pixels)
        self.expected_backend = _expected_backend(device)
        self._exact = _Channel(self._make_client("exact"), 1)
        self._preview: _Channel | None = None
        self._spare_mode = spare
        self._spare: _Channel | None = None
        self._no_spare_for = None      # the image the spare failed to open
        self._image = None
        self._channel_axis, self._spacing = -1, None
        self._shared: SharedArray | None = None
        self._token = 0
        self._seeds: np.ndarray | None = None
        self._counts = np.zeros(256, dtype=np.int64)  # pixels per seed label
        self.options = SegmentOptions()
        self._number = 0               # the newest request
        self._requested: dict[int, float] = {}  # request number -> time.perf_counter()
        self._final: Outcome | None = None     # the exact outcome (or failure) of _number
        self._waiting = False          # _number has no exact answer yet
        self._shown_from: dict = {}    # grid factor -> the channel whose mask was shown last
        self._previous = ShownUpdates()  # the exact mask shown, for a model's hold
        self._holds: dict = {}         # (image token, model name) -> whether the model holds

    def warm_up(self) -> None:
        """Start the exact solver now (its process takes a second to start), before any image."""
        self._exact.client.send("ping", None)

    # ----- the image and its seeds ----------------------------------------------------------
    def open_image(self, image: np.ndarray, *, channel_axis: int | None = -1,
                   spacing=None) -> None:
        """Segment ``image`` from now on (not copied: do not modify it); drops everything about
        the previous image, a running solve of it included.

        ``channel_axis`` and ``spacing`` as in :class:`~.solve.Session`: the defaults are the
        app's 2-D images (grey, or colour channels last); ``channel_axis=None`` opens a grey
        volume (D, H, W), whose seeds and masks are 3-D (no previews)."""
        self._token += 1
        self._invalidate()
        self._previous.forget()
        self._holds.clear()
        self._image = image
        self._channel_axis = channel_axis
        self._spacing = None if spacing is None else tuple(float(v) for v in spacing)
        self._seeds = np.zeros(spatial_shape(image.shape, channel_axis), dtype=np.uint8)
        self._counts[:] = 0
        self._counts[graphcut.NONE] = self._seeds.size
        old_shared, self._shared = self._shared, None
        if self._use_process and shared_memory_fits(image.nbytes):
            self._shared = SharedArray(image)  # else the image goes through the pipes
        for channel in self._exact_channels():
            if channel.outstanding and channel.backend == "cpu":
                self._restart(channel)  # its solve is useless now
        if self._spare is not None:
            self._spare.token = None  # opened again once the first exact mask is shown
        self._open(self._exact)
        factor = preview_factor(self._seeds.shape, self._preview_pixels) \
            if self._seeds.ndim == 2 else 1
        wanted = factor > 1 and (self._preview_mode is True or (
            self._preview_mode == "auto" and self.expected_backend == "cpu"
            and image.shape[0] * image.shape[1] >= PREVIEW_MIN_PIXELS))
        if wanted:
            if self._preview is None:
                self._preview = _Channel(self._make_client("preview"), factor)
            self._preview.factor = factor
            self._open(self._preview)
        elif self._preview is not None:
            self._preview.client.close()
            self._preview = None
        if old_shared is not None:
            old_shared.close()  # solvers that mapped it keep their mapping until they drop it

    def set_seeds(self, labels: np.ndarray, region=None) -> None:
        """The seed labels changed inside ``region`` (a pair of slices, one slice per axis for
        a volume; None: anywhere). Only that part of ``labels`` is read, and copied."""
        if self._seeds is None:
            raise RuntimeError("open an image first")
        if region is None:
            region = tuple(slice(0, n) for n in self._seeds.shape)
        region = tuple(slice(*s.indices(n)[:2]) for s, n in zip(region, self._seeds.shape))
        new = np.asarray(labels[region], dtype=np.uint8)
        self._counts -= np.bincount(self._seeds[region].ravel(), minlength=256)
        self._counts += np.bincount(new.ravel(), minlength=256)
        self._seeds[region] = new
        box = tuple(bound for s in region for bound in (s.start, max(s.start, s.stop)))
        for channel in self._channels():
            channel.dirty = "all" if channel.dirty == "all" else union(channel.dirty, box)

    def set_lam(self, lam: float | None) -> None:
        """Use this smoothness weight from the next request on (None: the model's default)."""
        self.lam = None if lam is None else float(lam)

    def set_options(self, options: SegmentOptions) -> None:
        """Use these options (colour model, clean-up, box, lasso) from the next request on."""
        self.options = options

    @property
    def has_both_labels(self) -> bool:
        """Whether there is something to segment: an object seed and a background seed, or
        a box or lasso."""
        objects = self._counts.sum() - self._counts[graphcut.NONE] \
            - self._counts[graphcut.BACKGROUND]
        return bool(self.options.has_region or (objects and self._counts[graphcut.BACKGROUND]))

    def _plain_energy(self) -> bool:
        """Whether the request is today's energy (one object, histogram, no box or lasso):
        the incremental path, timed apart from the pipeline's solves."""
        return (not self.options.has_region and self.options.model == "histogram"
                and not self._counts[graphcut.BACKGROUND + 1:].any())

    # ----- requests -------------------------------------------------------------------------
    def request(self) -> int | None:
        """Segment the current seeds; returns the request's number, or None when there is
        nothing to segment (no image, or no foreground or no background seed)."""
        if self._image is None:
            return None
        self._invalidate()
        if not self.has_both_labels:
            self._previous.forget()  # the mask is cleared: the next one holds to none
            return None
        number = self._number
        self._requested[number] = time.perf_counter()
        self._waiting = True
        for channel in self._exact_channels():
            if restart_pays(channel, self.lam):
                log.debug("ending the CPU solve of job(s) %s: job %d cannot reuse its work",
                          list(channel.outstanding), number)
                self._restart(channel)
        several = self._several_objects()
        held = self._previous.request(number, (self._token, self.lam, self.options, several),
                                      self._seeds, several or self._model_holds())
        self._send_job(self._pick_exact(), number, held)
        if self._preview is not None:  # any model, box or lasso, several objects (no clean-up)
            self._send_job(self._preview, number)
        return number

    def _pick_exact(self) -> _Channel:
        return pick_exact(self._exact_channels(), self._token, self._exact)

    def _several_objects(self) -> bool:
        """Several objects from strokes alone in an image: exact jobs carry the labels shown."""
        return (not self.options.has_region and self._seeds.ndim == 2
                and bool(self._counts[graphcut.BACKGROUND + 1:].any()))

    def _model_holds(self) -> bool:
        """Whether this request's exact jobs carry the previous update (``previous_update.py``):
        one object from strokes alone in an image, with a model that holds."""
        if self.options.has_region or self._seeds.ndim != 2 or self._several_objects():
            return False
        key = (self._token, self.options.model)
        if key not in self._holds:
            self._holds[key] = model_holds(self.options.model, self._image, self._channel_axis)
        return self._holds[key]

    def _send_job(self, channel: _Channel, number: int, held: bool = False) -> None:
        if channel.token != self._token:
            self._open(channel)
        if channel.dirty == "all":
            delta = SeedDelta(None, self._seeds.copy())
        elif channel.dirty is None:
            empty = (0, 0) * self._seeds.ndim
            delta = SeedDelta(empty, self._seeds[to_slices(empty)].copy())
        else:
            delta = SeedDelta(channel.dirty, self._seeds[to_slices(channel.dirty)].copy())
        channel.dirty = None
        if channel.lam != self.lam:
            channel.fresh_next = True
            channel.lam = self.lam
        labels = int(np.count_nonzero(self._counts[graphcut.NONE + 1:]))
        channel.outstanding[number] = (time.perf_counter(), channel.fresh_next,
                                       self._plain_energy(), labels)
        channel.fresh_next = False
        channel.last_number = number
        previous = self._previous.previous_for(channel) if held else None
        channel.client.send("solve", Job(number, self._token, self.lam, delta, self.options,
                                         previous))

    def _open(self, channel: _Channel) -> None:
        image = self._shared.ref if self._shared is not None else self._image
        session = Session(self._token, image, self.lam, self.device, channel.factor,
                          self._channel_axis, self._spacing, self.options.model)
        channel.client.send("open", session)
        channel.token, channel.dirty = self._token, "all"  # the solver starts from empty seeds
        channel.outstanding.clear()
        channel.lam, channel.fresh_next = self.lam, True
        channel.opened, channel.holds = None, None

    def _restart(self, channel: _Channel) -> None:
        channel.client.kill()
        channel.token = channel.opened = channel.holds = None
        channel.outstanding.clear()

    def _want_spare(self) -> bool:
        """Whether a spare exact solver should hold the current image (module docstring)."""
        if (not self._use_process or self._spare_mode is False or self._image is None
                or self._no_spare_for == self._token):
            return False
        if self._spare_mode is True:
            return True
        return self._exact.backend == "cpu" and spare_fits(self._seeds.size)

    def _open_spare(self) -> None:
        """Open the current image in the spare solver (made first if needed), when wanted."""
        if self._spare is not None and self._spare.token == self._token:
            return
        if not self._want_spare():
            return
        if self._spare is None:
            self._spare = _Channel(self._make_client("spare", nice=SOLVER_NICENESS
                                                     + SPARE_NICENESS), 1)
        self._open(self._spare)

    def _invalidate(self) -> None:
        """A newer request (or image) makes everything shown or awaited so far stale."""
        self._number += 1
        self._final = None
        self._waiting = False

    # ----- answers --------------------------------------------------------------------------
    def _on_reply_from_thread(self, client, reply) -> None:
        self._post(lambda: self._on_reply(client, reply))

    def _on_reply(self, client, reply) -> None:
        channel = next((c for c in self._channels() if c.client is client), None)
        if channel is None:
            return  # a preview solver closed meanwhile
        if isinstance(reply, Crashed):
            self._on_crash(channel, reply.message)
        elif isinstance(reply, Opened):
            self._on_opened(channel, reply)
        elif isinstance(reply, Outcome):
            self._on_outcome(channel, reply)

    def _on_crash(self, channel: _Channel, message: str) -> None:
        lost = set(channel.outstanding)
        channel.token = channel.holds = None
        channel.outstanding.clear()
        if channel.factor > 1:
            log.warning("the preview solver failed: %s", message)
        elif self._waiting and self._number in lost:
            self._fail(message)

    def _on_opened(self, channel: _Channel, opened: Opened) -> None:
        if opened.token != self._token:
            return
        if opened.error:
            channel.token = None
            if channel is self._spare:
                log.warning("the spare solver cannot open the image: %s", opened.error)
                self._spare, self._no_spare_for = None, opened.token
                channel.client.close()
                return
            if channel.factor > 1:
                log.warning("the preview solver cannot open the image: %s", opened.error)
            elif self._waiting:
                self._fail(opened.error, opened.details)
            else:
                self.listener.on_error(opened.error, opened.details)
            return
        channel.backend, channel.opened_seconds = opened.backend, opened.seconds
        channel.opened = opened.token
        if channel is self._exact:
            self.listener.on_backend(opened.backend, opened.device_name)
        elif not self._waiting:
            self._catch_up()  # the spare: solve the seeds shown, from scratch, now

    def _on_outcome(self, channel: _Channel, outcome: Outcome) -> None:
        if outcome.region is not None:  # its client's mask changed there, shown or not
            channel.unshown = union(channel.unshown, from_slices(outcome.region))
        sent = channel.outstanding.pop(outcome.number, None)
        quiet = outcome.number in channel.quiet
        channel.quiet.discard(outcome.number)
        if outcome.token != self._token or sent is None:
            return
        if not outcome.cancelled and not outcome.error:
            seconds = outcome.seconds.get("total", float("nan"))
            if not sent[2]:
                channel.pipeline_seconds = seconds
            elif outcome.incremental:
                channel.incremental_seconds = seconds
            else:
                channel.fresh_seconds = seconds
        if outcome.number != self._number or outcome.cancelled or quiet:
            return
        requested = self._requested.get(outcome.number, float("nan"))
        outcome = dataclasses.replace(
            outcome, seconds={**outcome.seconds, "waited": outcome.received - requested})
        if channel.factor > 1:
            if outcome.error:
                log.warning("preview failed: %s", outcome.error)
            elif self._waiting:
                self.listener.on_outcome(since_shown(self._shown_from, channel, outcome))
            return
        self._requested.clear()
        if outcome.error:
            self._fail(outcome.error, outcome.details)
            return
        outcome = since_shown(self._shown_from, channel, outcome)
        self._final, self._waiting = outcome, False
        self._previous.exact_shown(outcome.number, outcome.mask if outcome.labels is None
                                   else outcome.labels, channel)
        self.listener.on_outcome(outcome)
        self._open_spare()  # after the first mask is shown, not before (it takes a core)
        self._catch_up()

    def _catch_up(self) -> None:
        """Let an idle exact solver that missed the last request solve it too (on the other
        core; not shown), so that its next job is a small incremental re-solve."""
        for channel in self._exact_channels():
            if (channel.token == self._token and channel.opened == self._token
                    and not channel.outstanding and channel.last_number < self._number
                    and self.has_both_labels):
                channel.quiet.add(self._number)
                self._send_job(channel, self._number)

    def _fail(self, message: str, details: str = "") -> None:
        self._final = Outcome(self._number, self._token, error=message, details=details)
        self._waiting = False
        self._previous.forget()  # the window clears the mask
        self.listener.on_error(message, details)

    # ----- state ----------------------------------------------------------------------------
    def is_busy(self) -> bool:
        """Whether the newest request still waits for its exact answer."""
        return self._waiting

    def mask(self) -> np.ndarray | None:
        """The exact mask of the newest request (read-only), or None before it arrived."""
        final = self._final
        return None if final is None or final.error else final.mask

    @property
    def latest(self) -> int:
        """The newest request's number."""
        return self._number

    def close(self) -> None:
        """End the solvers and free the shared image. Idempotent."""
        self._invalidate()
        for channel in self._channels():
            channel.client.close()
        self._preview = self._spare = None
        if self._shared is not None:
            self._shared.close()
            self._shared = None

    def _channels(self):
        return [c for c in (self._exact, self._spare, self._preview) if c is not None]

    def _exact_channels(self):
        return [c for c in (self._exact, self._spare) if c is not None]

    def _make_client(self, name: str, nice: int = SOLVER_NICENESS):
        if self._client_class is ThreadClient:
            return ThreadClient(self._on_reply_from_thread, name=name)
        return self._client_class(self._on_reply_from_thread, name=name, nice=nice)


__all__ = ["Listener", "PostQueue", "SegmentationController", "SESSION_BYTES_PER_PIXEL",
           "SOLVER_NICENESS", "SPARE_NICENESS", "PREVIEW_MIN_PIXELS", "spare_bytes"]
