"""The interface every colour model follows."""

from __future__ import annotations

from abc import ABC, abstractmethod


class ColourModel(ABC):
    """The colour distribution of one label (object or background), fitted to sample pixels.

    ``values`` is always the whole image as float64 ``(H, W, C)`` (C = 1 grey or 3 RGB, scaled
    as :func:`graphcut.energy.image_as_float` does), NumPy or CuPy; ``mask`` is an ``(H, W)``
    array on the same device that selects the sample: bool, or float weights >= 0 (a pixel of
    weight 3 counts as three pixels, e.g. a seed the user painted). Everything a model
    computes stays on that device.

    Subclasses implement :meth:`fit`, :meth:`refit` and :meth:`costs`; a fitted model is
    used as ``costs = model.fit(values, mask).costs(values)``.
    """

    #: the name used by ``graphcut.segment(model=...)`` and the CLI's ``--model``
    name: str = ""

    @abstractmethod
    def fit(self, values, mask) -> "ColourModel":
        """Fit the model to the pixels ``values[mask]`` from scratch; returns ``self``.

        Raises
        ------
        ValueError
            ``mask`` selects no pixel, or shapes do not match.
        """

    @abstractmethod
    def refit(self, values, mask) -> "ColourModel":
        """Re-estimate from the current fit on a new sample (one step of GrabCut's iterated
        re-estimation; for the GMM one EM step, which never raises the sample's weighted total
        cost). Returns ``self``."""

    @abstractmethod
    def costs(self, values):
        """``-log p(colour)`` of every pixel of ``values`` under the fitted model, in nats:
        float64 ``(H, W)`` on the values' device. May be negative where p is a density > 1."""

    @property
    @abstractmethod
    def fitted(self) -> bool:
        """Whether :meth:`fit` has run."""


def check_sample(values, mask, what: str = "colour model") -> None:
    """Shape checks shared by the models: (H, W, C) values, (H, W) bool or float mask."""
    if values.ndim != 3:
        raise ValueError(f"{what}: values must be (H, W, C), got shape {values.shape}")
    if tuple(mask.shape) != tuple(values.shape[:2]):
        raise ValueError(f"{what}: mask shape {tuple(mask.shape)} differs from the image's "
                         f"{tuple(values.shape[:2])}")
    if mask.dtype != bool and mask.dtype.kind != "f":
        raise TypeError(f"{what}: mask must be bool or float weights, got dtype {mask.dtype}")
