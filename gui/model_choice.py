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
from dataclasses import dataclass, field

from graphcut.models import APPEARANCE_MODELS

# One line per built-in model: what it is good for (menus, tooltips, the Controls help).
_HELP = {
    "histogram": "colour histograms of the seeds: fast, incremental re-solves",
    "gmm": "GrabCut's Gaussian mixtures, re-estimated: photos, slower",
    "learned": "a classifier on multi-scale filter features trained on the seeds: "
               "textures and microscopy",
    "auto": "GrabCut's mixtures with a box core on colour and grey photographs (one refit "
            "per stroke), the learned classifier on micrographs and volumes",
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


def model_lam(name: str, image=None, channel_axis: int | None = -1) -> float:
    """Model ``name``'s own default smoothness weight λ (its class's ``lam``); for a model
    that stands for another one chosen by the image (``"auto"``), the λ of the model it
    stands for on ``image`` (None: the placeholder's).

    Parameters
    ----------
    name : str
        A registered model's name.
    image : array, optional
        The open image (as the solver gets it).
    channel_axis : int or None
        Its channel axis (None: grey).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``name`` is no registered model.

    Examples
    --------
    >>> import numpy as np
    >>> model_lam("histogram"), model_lam("gmm"), model_lam("learned")
    (10.0, 35.0, 4.0)
    >>> photo = np.random.default_rng(0).integers(0, 256, (32, 32, 3)).astype(np.uint8)
    >>> dark = np.zeros((32, 32), np.uint8)  # grey and dark: read as a micrograph
    >>> model_lam("auto", dark), model_lam("auto", photo)
    (4.0, 35.0)
    """
    return float(_model_or_class(name, image, channel_axis).lam)


def chosen_model(name: str, image=None, channel_axis: int | None = -1):
    """What the solver gets for model ``name`` on ``image``: the name itself, or, for a model
    chosen by the image (``"auto"``: :meth:`graphcut.models.Auto.for_image`), the model object
    it stands for there (chosen on the full image, so that a preview's reduced image cuts
    with the same model).

    Parameters
    ----------
    name : str
        A registered model's name.
    image : array or None
        The open image; None: the name itself.
    channel_axis : int or None
        Its channel axis (None: grey).

    Returns
    -------
    str or graphcut.models.AppearanceModel

    Raises
    ------
    ValueError
        ``name`` is no registered model.

    Examples
    --------
    >>> import numpy as np
    >>> chosen_model("gmm", np.zeros((4, 4))), type(chosen_model("auto", np.zeros((4, 4))))
    ('gmm', <class 'graphcut.models._learned.Learned'>)
    """
    cls = _model_class(name)
    if image is None or not hasattr(cls, "for_image"):
        return name
    return cls().for_image(image, channel_axis)


def model_holds(name: str, image=None, channel_axis: int | None = -1) -> bool:
    """Whether model ``name`` (as chosen on ``image`` for ``"auto"``) keeps the previous
    update's mask far from a new stroke (a ``hold`` above 0, ``graphcut.models.Learned``): its
    exact jobs then carry the previous update (``previous_update.py``).

    Parameters
    ----------
    name : str
        A registered model's name.
    image : array, optional
        The open image (as the solver gets it).
    channel_axis : int or None
        Its channel axis (None: grey).

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> model_holds("learned"), model_holds("histogram"), model_holds("auto", np.zeros((4, 4)))
    (True, False, True)
    """
    return float(getattr(_model_or_class(name, image, channel_axis), "hold", 0) or 0) > 0


def _model_or_class(name: str, image, channel_axis):
    """The model object ``name`` stands for on ``image`` (``"auto"``), else its class (whose
    attributes are its defaults)."""
    chosen = chosen_model(name, image, channel_axis)
    return _model_class(name) if isinstance(chosen, str) else chosen


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
    image : array or None
        The open image, for the models chosen by the image (``"auto"``).
    channel_axis : int or None
        Its channel axis (None: grey).

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
    #: the open image (None: none) and its channel axis, for the models that are chosen by the
    #: image (``"auto"``); set with :meth:`set_image`
    image: object = field(default=None, repr=False, compare=False)
    channel_axis: int | None = -1
    _lams: dict = field(default_factory=dict, repr=False, compare=False)

    def set_image(self, image, channel_axis: int | None = -1) -> None:
        """The open image (None: none), for the models that are chosen by the image."""
        self.image, self.channel_axis = image, channel_axis
        self._lams.clear()

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
        if self.typed is not None:
            return self.typed
        if model not in self._lams:  # the rule reads the image once per model and image
            self._lams[model] = model_lam(model, self.image, self.channel_axis)
        return self._lams[model]

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


__all__ = ["LamChoice", "chosen_model", "model_help", "model_holds", "model_lam",
           "model_names", "model_title"]
