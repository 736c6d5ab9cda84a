"""The segmentation controller's vocabulary (``controller.py``): what it tells its owner
(:class:`Listener`), how answers reach the owner's thread (:class:`PostQueue`), what it knows
about each solver (:class:`Channel`), and the memory a spare CPU solver needs. No Qt.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass, field, replace

from .sharing import to_slices
from .solve import Outcome

# Bytes per pixel that an open CPU session holds beyond the shared image (PyMaxflow's graph,
# 176; n-link weights, capacities, colour bins, seeds and masks), rounded up.
SESSION_BYTES_PER_PIXEL = 250


# Solver processes run this much nicer than the window's process, so that the window's event
# loop gets a core at once when a result arrives, however busy the solvers keep the machine.
SOLVER_NICENESS = 2
# The spare solver runs this much nicer again: its catch-up solves use idle cores only, and
# never slow down the solve of a stroke the user waits for.
SPARE_NICENESS = 5


def spare_bytes(shape) -> int:
    """Memory a spare exact CPU solver of an image of ``shape`` (rows, cols, ...) needs: a
    second session, plus the peak of building it (the energy)."""
    from graphcut.segmentation import ENERGY_BYTES_PER_PIXEL
    pixels = int(shape[0]) * int(shape[1])
    return (SESSION_BYTES_PER_PIXEL + ENERGY_BYTES_PER_PIXEL["colour"]) * pixels


def spare_fits(pixels: int) -> bool:
    """Whether the memory available holds a spare solver of an image of ``pixels`` twice."""
    from graphcut.solver.memory import available_bytes
    available = available_bytes()
    return available is not None and available >= 2 * spare_bytes((pixels, 1))


def since_shown(shown_from: dict, channel, outcome: Outcome) -> Outcome:
    """``outcome`` (about to be shown) with ``region`` bounding every change since the last
    mask of its grid shown: including the changes of the answers from the same solver that were
    not shown (stale, or catching up), gathered in ``channel.unshown``; None (unknown: all)
    when the last one shown came from another solver or none was. ``shown_from`` (grid factor
    -> the channel shown last) is updated."""
    region = channel.unshown if shown_from.get(channel.factor) is channel else None
    shown_from[channel.factor], channel.unshown = channel, None
    return replace(outcome, region=None if region is None else to_slices(region))


class Listener:
    """What the controller tells its owner (all on the owner's thread). Override what you need."""

    def on_outcome(self, outcome: Outcome) -> None:
        """A mask for the newest request: a preview (``outcome.factor > 1``, the mask is on the
        reduced grid) or the exact mask (``factor == 1``), which ends the request."""

    def on_error(self, message: str, details: str = "") -> None:
        """The newest request failed (or its solver crashed; the next request restarts it)."""

    def on_backend(self, backend: str, device_name: str) -> None:
        """The exact solver opened the image on this backend ("cpu" or "cuda")."""


class PostQueue:
    """``post`` for an owner without an event loop: replies wait here until
    :meth:`run_pending` runs them on the calling thread."""

    def __init__(self):
        self._queue: queue.Queue = queue.Queue()

    def __call__(self, function) -> None:
        self._queue.put(function)

    def run_pending(self, timeout: float | None = None) -> int:
        """Run what was posted, waiting up to ``timeout`` seconds for the first; returns how
        many ran."""
        count = 0
        try:
            function = self._queue.get(timeout=timeout)
            while True:
                function()
                count += 1
                function = self._queue.get_nowait()
        except queue.Empty:
            return count


@dataclass
class Channel:
    """One solver as the controller sees it."""

    client: object
    factor: int                       # 1 = exact, k > 1 = preview on a grid reduced k times
    token: int | None = None          # the image this solver holds (None: must be told)
    dirty: object = None              # seed region changed since the last job sent; "all"
    lam: float | None = None          # lambda of the last job sent
    # job number -> (sent time, from scratch, plain: today's incremental energy, labels in it)
    outstanding: dict = field(default_factory=dict)
    fresh_next: bool = True           # the next solve starts from scratch
    backend: str = ""
    opened_seconds: float = float("nan")
    opened: int | None = None         # the image the solver reported open (None: not yet)
    last_number: int = -1             # the newest job sent
    quiet: set = field(default_factory=set)  # jobs sent only to catch up; answers not shown
    fresh_seconds: float = float("nan")        # last solve from scratch
    incremental_seconds: float = float("nan")  # last incremental re-solve
    pipeline_seconds: float = float("nan")     # last job through the pipeline (not plain)
    unshown: tuple | None = None      # where its masks changed since the last one shown
    holds: int | None = None          # the shown request whose seeds and mask it keeps


def expected_backend(device: str) -> str:
    """The backend ``device`` will use ("cpu", "cuda"), or "unavailable"."""
    from graphcut.solver import BackendUnavailableError, resolve_device
    try:
        return resolve_device(device)
    except (BackendUnavailableError, ValueError):
        return "unavailable"
