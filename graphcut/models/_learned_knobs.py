"""The learned model's own knobs checked (:meth:`graphcut.models.Learned.check_knob`)."""

from __future__ import annotations

import numpy as np

from ._base import is_whole

#: the classifiers :class:`~graphcut.models.LearnedModel` trains
CLASSIFIERS = ("logistic", "gaussian")
#: the intensity prior's splits (:class:`~graphcut.models.Learned`'s ``split``): a global
#: Otsu threshold (:func:`~._prior.bright_side`) or the local one
#: (:func:`~._local_split.local_bright_side`)
SPLITS = ("otsu", "local")


def check_learned_knob(key, value):
    """``value`` checked and converted for the learned model's knob ``key``, or
    ``NotImplemented`` for a knob the model shares with the others (the base class checks it).

    Parameters
    ----------
    key : str
        The knob's name.
    value : object
        Its value.

    Returns
    -------
    object
        The value (str, int or float), or ``NotImplemented``.

    Raises
    ------
    ValueError
        The value is not allowed for the knob.

    Examples
    --------
    >>> check_learned_knob("rim_band", 2.0), check_learned_knob("seed_share", 0.1)
    (2, NotImplemented)
    """
    if key == "classifier":
        if value not in CLASSIFIERS:
            raise ValueError(f"unknown classifier {value!r}; expected one of "
                             f"{', '.join(CLASSIFIERS)}")
        return value
    if key in ("split", "box_split"):
        if value not in SPLITS:
            raise ValueError(f"unknown split {value!r}; expected one of {', '.join(SPLITS)}")
        return value
    if key in ("hold_after", "confident_after", "rim_band"):
        if not is_whole(value):
            raise ValueError(f"{key} must be an integer >= 0 (a count of "
                             f"{'pixels' if key == 'rim_band' else 'strokes'}), got {value!r}")
        return int(value)
    if key in ("prior", "box_prior", "ring", "hold", "hold_reach", "rim", "near", "neighbours",
               "level"):
        value = float(value)
        positive = key in ("hold_reach", "rim")
        if not (np.isfinite(value) and value >= 0) or (positive and value == 0):
            raise ValueError(f"{key} must be a finite number "
                             f"{'> 0' if positive else '>= 0'}, got {value}")
        return value
    if key in ("l2", "core"):
        value = float(value)
        low_ok = value > 0 if key == "l2" else value >= 0
        if not (np.isfinite(value) and low_ok and (key == "l2" or value <= 1)):
            raise ValueError(f"{key} must be a finite number "
                             f"{'> 0' if key == 'l2' else 'from 0 to 1'}, got {value}")
        return value
    return NotImplemented


__all__ = ["CLASSIFIERS", "SPLITS", "check_learned_knob"]
