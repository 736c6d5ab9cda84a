"""Colour models for the regional term: per label, ``fit(values, mask)`` then ``costs(values)``.

- :class:`HistogramModel`: the smoothed joint colour histogram of the Boykov-Jolly energy.
- :class:`GMMModel`: GrabCut's Gaussian mixture (5 full-covariance components in RGB, 1-D
  for grey images), fitted by EM with NumPy, or with CuPy when the image is on the GPU.
- :class:`LearnedModel`: a classifier trained on all labels' samples in a per-pixel feature
  space; the labels' models are linked views of it (:func:`learned_models`).

``make_model(name, **options)`` builds one by name (``"histogram"`` or ``"gmm"``).
"""

from ._base import ColourModel
from ._gmm import COVARIANCE_FLOOR, DEFAULT_COMPONENTS, GMMModel
from ._histogram import HistogramModel
from ._learned import CLASSIFIERS, LearnedModel, learned_models

MODELS = {"histogram": HistogramModel, "gmm": GMMModel, "learned": LearnedModel}
#: THE default appearance model of the library, the CLI, batch, the app and napari (the one
#: place it is set; docs/appearance.md says why). Settings files that name a model keep it.
DEFAULT_MODEL = "histogram"


def make_model(name: str, **options) -> ColourModel:
    """A new, unfitted colour model: ``"histogram"`` (options: ``bins``) or ``"gmm"``
    (options: ``components``, ``em_steps``, ``covariance_floor``). Options that are None
    are left at their defaults."""
    try:
        cls = MODELS[name]
    except KeyError:
        raise ValueError(f"unknown colour model {name!r}; expected one of "
                         f"{', '.join(MODELS)}") from None
    return cls(**{key: value for key, value in options.items() if value is not None})


def make_models(name: str, count: int, **options) -> list:
    """``count`` new, unfitted models of ``name``, one per label: independent ones for the
    histogram and the GMM, linked views of one classifier for ``"learned"``
    (:func:`learned_models`)."""
    if name == "learned":
        return learned_models(count, **{k: v for k, v in options.items() if v is not None})
    return [make_model(name, **options) for _ in range(count)]


__all__ = ["CLASSIFIERS", "COVARIANCE_FLOOR", "ColourModel", "DEFAULT_COMPONENTS",
           "DEFAULT_MODEL", "GMMModel",
           "HistogramModel", "LearnedModel", "MODELS", "learned_models", "make_model",
           "make_models"]
