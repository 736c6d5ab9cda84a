"""The previous update the user saw, for the learned model's hold and for several objects.
No Qt.

``Learned(hold=...)`` (the default model ``auto`` on microscopy; ``graphcut.segmentation
._hold``) keeps the previous mask far from a new stroke, from the ``hold_after``-th stroke on,
but only when the caller gives the previous update, ``Segmenter.update(seeds,
previous=(seeds_before, mask_before))``. The app's solvers cannot keep "the previous update"
themselves: a spare solver takes every other stroke, stale jobs are dropped, a CPU solve's
process is ended and restarted, previews solve on a reduced grid. So the controller sends it
with each exact job, and the answer does not depend on timing: an exact mask always equals

    graphcut.segment(image, seeds, model=..., lam=..., previous=(seeds shown, mask shown))

where **shown** is the last exact mask the user was shown *when the stroke was made* (the
request), with the seeds of the request that made it. A stroke made while an earlier one is
still solving holds to the last mask shown before it, so a burst of strokes acts near all of
them. Details:

- the previous update goes only with jobs of a model that uses it (a model whose ``hold`` is
  above 0, as the image's ``auto`` chooses: :func:`~.model_choice.model_holds`), one object from
  strokes alone (no box or lasso), a 2-D image, and only when the mask shown was made with the
  same image, smoothness and options (model, clean-up); otherwise the job has none and the
  answer is a fresh ``segment``'s. A change of lambda, model or clean-up is a fresh start;
- with seeds of several objects (strokes alone, a 2-D image, any model) every exact job
  carries the label image shown instead, when it was made with the same image, smoothness,
  options and also several objects: the expansion starts from those labels
  (``graphcut.segmentation._previous_start``), and the answer equals ``graphcut.segment(image,
  seeds, ..., previous=(seeds shown, labels shown))``;
- an undo or redo is a request like a stroke: its previous update is the mask shown before
  it (far from the undone stroke that mask stands; near it, the seeds decide);
- a request with nothing to segment (the seeds cleared, or no background left) clears the
  mask, and the next mask has no previous update; so does opening an image;
- previews (the reduced grid) get none: they are shown only until the exact mask comes;
- cheaply: the controller copies the seeds of a request that may use it (one uint8 copy per
  request); a solver keeps the seeds and mask of its last answer, so a job to the solver
  that made the mask shown carries only its number (:class:`Previous`); the seeds and the
  packed mask travel once to a solver that lacks them (the spare, or a solver restarted).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Previous:
    """A job's previous update: the request whose exact mask the user saw, and (when the
    solver does not hold them) its seeds and mask.

    Attributes
    ----------
    number : int
        The request that made the mask.
    seeds : numpy.ndarray or None
        Its (H, W) uint8 seed labels; None: the solver holds them (its own answer).
    bits : numpy.ndarray or None
        The mask, ``numpy.packbits`` of the row-major bool (H, W) mask; None with ``seeds``.
    labels : numpy.ndarray or None
        Instead of ``bits``, several objects' uint8 (H, W) label image.
    """

    number: int
    seeds: np.ndarray | None = field(default=None, repr=False)
    bits: np.ndarray | None = field(default=None, repr=False)
    labels: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def carrying(cls, number: int, seeds, mask) -> "Previous":
        """A previous update that carries its seeds and mask (packed), or its label image
        (several objects: ``mask`` not bool).

        Examples
        --------
        >>> mask = np.eye(3, dtype=bool)
        >>> sent = Previous.carrying(4, np.zeros((3, 3), np.uint8), mask)
        >>> bool((sent.mask() == mask).all()), Previous(4).mask() is None
        (True, True)
        >>> Previous.carrying(5, np.zeros((1, 3), np.uint8), np.array([[0, 3, 1]])).mask()
        array([[0, 3, 1]], dtype=uint8)
        """
        seeds = np.asarray(seeds, np.uint8)
        if np.asarray(mask).dtype != bool:
            return cls(int(number), seeds, labels=np.asarray(mask, np.uint8))
        return cls(int(number), seeds, np.packbits(mask))

    def mask(self) -> np.ndarray | None:
        """The bool (H, W) mask carried (the label image, for several objects), or None."""
        if self.labels is not None:
            return self.labels
        if self.bits is None:
            return None
        count = self.seeds.size
        return np.unpackbits(self.bits, count=count).reshape(self.seeds.shape).view(bool)


@dataclass(frozen=True)
class Shown:
    """The last exact mask shown (the controller's record)."""

    number: int
    key: tuple        # (image token, lam, options) of the request that made it
    seeds: np.ndarray = field(repr=False)
    mask: np.ndarray = field(repr=False)


class ShownUpdates:
    """The controller's side: the seeds of the newest request that may become the previous
    update, the mask shown, and the :class:`Previous` each exact job carries.

    Each exact solver's ``Channel.holds`` says which shown request's seeds and mask its
    solver keeps (None: none); the controller resets it when the solver starts over.
    """

    def __init__(self):
        self.shown: Shown | None = None
        self._asked: tuple | None = None  # (number, key, seeds copy) of the newest request

    def forget(self) -> None:
        """Nothing shown (a new image, or the mask cleared)."""
        self.shown = self._asked = None

    def request(self, number: int, key: tuple, seeds: np.ndarray, holds: bool) -> bool:
        """Request ``number`` was made: keep a copy of its seeds when it may use the hold
        (its exact mask may then be the next request's previous update).

        Parameters
        ----------
        number : int
            The request.
        key : tuple
            ``(image token, lam, options)`` it was made with; a previous update is used only
            by a request of the same key.
        seeds : numpy.ndarray
            Its (H, W) uint8 seed labels (copied).
        holds : bool
            Its model uses the previous update, and it is one object from strokes alone in
            an image.

        Returns
        -------
        bool
            Whether its exact jobs carry the mask shown (:meth:`previous_for`).
        """
        self._asked = (number, key, seeds.copy()) if holds else None
        return holds and self.shown is not None and self.shown.key == key

    def previous_for(self, channel) -> Previous:
        """The :class:`Previous` of a job to ``channel`` (after :meth:`request` said yes).

        Parameters
        ----------
        channel : Channel
            The exact solver the job goes to (``holds`` is read and set).

        Returns
        -------
        Previous
            The shown request's number, with its seeds and packed mask when the channel's
            solver does not hold them (from then on it does).
        """
        shown = self.shown
        if channel.holds == shown.number:
            return Previous(shown.number)
        channel.holds = shown.number
        return Previous.carrying(shown.number, shown.seeds, shown.mask)

    def exact_shown(self, number: int, mask: np.ndarray, channel) -> None:
        """Request ``number``'s exact ``mask`` is now shown.

        Parameters
        ----------
        number : int
            The request (the newest).
        mask : numpy.ndarray
            Its bool (H, W) mask as shown (not modified afterwards).
        channel : Channel
            The exact solver that made it: its solver keeps the seeds and mask of its last
            answer when the model holds, so its next job needs only the number.
        """
        asked, self._asked = self._asked, None
        if asked is None or asked[0] != number:
            self.shown = None
            return
        self.shown = Shown(number, asked[1], asked[2], mask)
        channel.holds = number


class HeldUpdates:
    """A solver's side: the seeds and mask of its last answer and of the last previous update
    a job referred to (on the solver's device), so that a job naming one needs no data."""

    def __init__(self):
        self._held = self._last = None  # (number, seeds, mask)

    def clear(self) -> None:
        """Forget everything (a new image)."""
        self._held = self._last = None

    def take(self, previous: Previous | None, to_device=lambda array: array) -> None:
        """A job's previous update arrived (taken even when the job is not solved).

        Parameters
        ----------
        previous : Previous or None
            The job's; carried seeds and mask replace what is held.
        to_device : callable
            Moves a NumPy array to the solver's device.
        """
        if previous is None:
            return
        if previous.seeds is not None:
            self._held = (previous.number, to_device(previous.seeds),
                          to_device(previous.mask()))
        elif self._held is None or self._held[0] != previous.number:
            if self._last is not None and self._last[0] == previous.number:
                self._held = self._last

    def pair(self, previous: Previous | None):
        """``(seeds, mask)`` of ``previous`` for ``Segmenter.update(..., previous=)``.

        Parameters
        ----------
        previous : Previous or None
            The job's (taken first with :meth:`take`).

        Returns
        -------
        tuple or None
            The held seeds and mask (on the solver's device); None for no previous update.

        Raises
        ------
        RuntimeError
            The solver holds no update of that number (the controller sent only its number).
        """
        if previous is None:
            return None
        if self._held is None or self._held[0] != previous.number:
            raise RuntimeError(f"the solver does not hold the seeds and mask of request "
                               f"{previous.number}")
        return self._held[1], self._held[2]

    def answered(self, number: int, seeds, mask) -> None:
        """The solver answered job ``number``.

        Parameters
        ----------
        number : int
            The job.
        seeds, mask : array
            Its seeds and its mask as sent (copies, never modified afterwards; on the
            solver's device).
        """
        self._last = (number, seeds, mask)


__all__ = ["HeldUpdates", "Previous", "Shown", "ShownUpdates"]
