"""The appearance model and the smoothness weight λ as the app and the napari plugin offer
them. No Qt.

Every registered appearance model (:data:`graphcut.models.APPEARANCE_MODELS`) is offered, with
a line of help (:func:`model_help`). λ follows the chosen model's own default (its class's
``lam``: histogram 10, GMM 35, learned 4) until the user types a value (:class:`LamChoice`);
from then on the typed value wins, whatever model is chosen afterwards, until the user resets λ
to the model's default. While λ follows the model, the app cuts at the model's own ``lam``,
so that its result equals ``graphcut.segment(image, seeds, model=name)`` with default options,
with one exception: for the histogram with a box or lasso, ``segment`` chooses between λ 10
and 20 itself (:func:`graphcut.segmentation.guarded_lams`, two cuts from scratch per update),
while the app keeps λ 10 so that box edits stay incremental and fast.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from graphcut.models import APPEARANCE_MODELS

# One line per built-in model: what it is good for (menus, tooltips, the Controls help).
_HELP = {
    "histogram": "colour histograms of the seeds: fast, incremental re-solves",
    "gmm": "GrabCut's Gaussian mixtures, re-estimated: photos, slower",
    "learned": "a classifier on multi-scale filter features trained on the seeds: "
               "textures and microscopy",
    "auto": "GrabCut's mixtures with a box core on colour images (one refit per stroke), "
            "the learned classifier on grey ones",
}
# Menu texts (with their mnemonic) of the built-in models; others show their name.
_TITLES = {"histogram": "&Histogram", "gmm": "&GMM (GrabCut)", "learned": "&Learned",
           "auto": "&Automatic"}


def model_names() -> tuple:
    """The names of every registered appearance model, in registration order.

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> "histogram" in model_names() and "learned" in model_names()
    True
    """
    return tuple(APPEARANCE_MODELS)


def model_title(name: str) -> str:
    """The menu text of model ``name`` (with a ``&`` mnemonic for the built-in ones).

    Examples
    --------
    >>> model_title("gmm"), model_title("forest")
    ('&GMM (GrabCut)', 'forest')
    """
    return _TITLES.get(name, name)


def model_help(name: str) -> str:
    """One line about model ``name`` and its default λ; for a model registered elsewhere,
    the first line of its class's docstring.

    Raises
    ------
    ValueError
        ``name`` is no registered model.

    Examples
    --------
    >>> model_help("learned")  # doctest: +ELLIPSIS
    'a classifier on multi-scale filter features ... (default λ 4)'
    """
    text = _HELP.get(name)
    if text is None:
        doc = (_model_class(name).__doc__ or "").strip()
        text = doc.splitlines()[0].rstrip(".") if doc else name
    return f"{text} (default λ {model_lam(name):g})"


def model_lam(name: str, channels: int | None = None) -> float:
    """Model ``name``'s own default smoothness weight λ (its class's ``lam``); for a model
    that stands for another one chosen by the image (``"auto"``), the chosen model's λ for an
    image of ``channels`` channels (None: the placeholder's).

    Raises
    ------
    ValueError
        ``name`` is no registered model.

    Examples
    --------
    >>> model_lam("histogram"), model_lam("gmm"), model_lam("learned")
    (10.0, 35.0, 4.0)
    >>> model_lam("auto", channels=1), model_lam("auto", channels=3)
    (4.0, 35.0)
    """
    cls = _model_class(name)
    if channels is not None and hasattr(cls, "for_channels"):
        return float(cls().for_channels(int(channels)).lam)
    return float(cls.lam)


def _model_class(name: str) -> type:
    try:
        return APPEARANCE_MODELS[name]
    except KeyError:
        raise ValueError(f"unknown appearance model {name!r}; expected one of "
                         f"{', '.join(APPEARANCE_MODELS)}") from None


@dataclass
class LamChoice:
    """λ as the user chose it: None follows the model's default, a number is the user's.

    Attributes
    ----------
    typed : float or None
        The value the user typed (or a settings file or script set), which wins for every
        model; None while λ follows the model's default.

    Examples
    --------
    >>> lam = LamChoice()
    >>> lam.shown("gmm"), lam.requested
    (35.0, None)
    >>> lam.type(12)
    >>> lam.shown("gmm"), lam.shown("learned"), lam.requested
    (12.0, 12.0, 12.0)
    >>> lam.reset()
    >>> lam.shown("learned")
    4.0
    """

    typed: float | None = None
    #: the open image's channel count (1 grey, 3 colour; None: no image), for the models that
    #: are chosen by the image (``"auto"``)
    channels: int | None = None

    @property
    def follows_model(self) -> bool:
        """Whether λ is the model's default (the user typed no value)."""
        return self.typed is None

    @property
    def requested(self) -> float | None:
        """The typed ``lam``, or None: the model's own ``lam`` (the solver cuts at it)."""
        return self.typed

    def shown(self, model: str) -> float:
        """The value the λ field shows when ``model`` is chosen."""
        return model_lam(model, self.channels) if self.typed is None else self.typed

    def type(self, value: float) -> None:
        """The user's value from now on.

        Raises
        ------
        ValueError
            ``value`` is negative or not finite.
        """
        value = float(value)
        if not (math.isfinite(value) and value >= 0.0):
            raise ValueError(f"λ must be a finite number >= 0, got {value}")
        self.typed = value

    def reset(self) -> None:
        """Follow the model's default again."""
        self.typed = None


__all__ = ["LamChoice", "model_help", "model_lam", "model_names", "model_title"]
