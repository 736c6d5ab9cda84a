"""Colour models for the regional term: per label, ``fit(values, mask)`` then ``costs(values)``.

- :class:`HistogramModel`: the smoothed joint colour histogram of the Boykov-Jolly energy.
- :class:`GMMModel`: GrabCut's Gaussian mixture (5 full-covariance components in RGB, 1-D
  for grey images), fitted by EM with NumPy, or with CuPy when the image is on the GPU.

``make_model(name, **options)`` builds one by name (``"histogram"`` or ``"gmm"``).
"""

from ._base import ColourModel
from ._gmm import COVARIANCE_FLOOR, DEFAULT_COMPONENTS, GMMModel
from ._histogram import HistogramModel

MODELS = {"histogram": HistogramModel, "gmm": GMMModel}


def make_model(name: str, **options) -> ColourModel:
    """A new, unfitted colour model: ``"histogram"`` (options: ``bins``) or ``"gmm"``
    (options: ``components``, ``em_steps``, ``covariance_floor``). Options that are None
    are left at their defaults.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.models import make_model
    >>> make_model("histogram", bins=8)
    HistogramModel(bins=8)
    >>> make_model("gmm", components=3).name
    'gmm'
    >>> make_model("forest")
    Traceback (most recent call last):
        ...
    ValueError: unknown colour model 'forest'; expected one of histogram, gmm
    """
    try:
        cls = MODELS[name]
    except KeyError:
        raise ValueError(f"unknown colour model {name!r}; expected one of "
                         f"{', '.join(MODELS)}") from None
    return cls(**{key: value for key, value in options.items() if value is not None})


__all__ = ["COVARIANCE_FLOOR", "ColourModel", "DEFAULT_COMPONENTS", "GMMModel",
           "HistogramModel", "MODELS", "make_model"]
