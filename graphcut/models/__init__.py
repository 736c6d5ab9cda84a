"""Appearance models: the t-links come from a model of every label fitted on the seeds.

Model objects (what ``graphcut.segment(model=...)`` and ``graphcut.Segmenter`` take; each
carries its knobs and the pipeline's defaults for it, and round-trips through a settings dict):

- :class:`Auto`: the default (``"auto"``): ``GMM(core=0.4, warm=True, outline=8,
  stroke_reach=0.2, locality=4, prune=1, texture=0, stroke_share=0.05)`` for colour photographs
  (without ``prune`` and ``stroke_share`` and with the texture channel for grey photographs),
  ``Learned()`` for grey micrographs, volumes and colour micrographs (the rules:
  :func:`colour_statistics`, :func:`grey_statistics`; measured in docs/appearance.md,
  "What the default is and why");
- :class:`Histogram`: the Boykov-Jolly smoothed colour histograms (the default until 2026-11);
- :class:`GMM`: GrabCut's Gaussian mixtures with its iterations, local seeds and texture;
- :class:`Learned`: a classifier on per-pixel filter features.

Every model follows :class:`AppearanceModel` (``features``, ``fit``, ``costs``, ``refit``,
``settings``); a new model registers its name with :func:`register_model`. The per-label colour
models behind the two (``fit(values, mask)`` then ``costs(values)``) are
:class:`HistogramModel` and :class:`GMMModel`; ``make_model(name, **options)`` builds one.
"""

from __future__ import annotations

import copy

from ._base import AppearanceModel, ColourModel, ModelPair, PerLabelModel, is_whole
from ._gmm import COVARIANCE_FLOOR, DEFAULT_COMPONENTS, GMM, GMMModel
from ._histogram import (DEFAULT_COLOUR_BINS, DEFAULT_GREY_BINS, SMOOTHING_PASSES, UNIFORM_WEIGHT,
                         Histogram, HistogramModel, bin_indices, check_bins, cost_table,
                         histogram_costs)
from ._texture import local_contrast, with_texture
from ._features import DEFAULT_SCALES, feature_names, image_features, pixel_features
from ._learned import CLASSIFIERS, Learned, LearnedModel, learned_models
from ._auto import Auto
from ._image_kind import ColourStatistics, GreyStatistics, colour_statistics, grey_statistics

MODELS = {"histogram": HistogramModel, "gmm": GMMModel}

#: appearance model classes by name (settings files, ``--model``, ``segment(model="...")``)
APPEARANCE_MODELS: dict[str, type] = {}


def register_model(cls: type) -> type:
    """Make the :class:`AppearanceModel` subclass ``cls`` known by its ``name`` (settings files
    and ``model="name"``); returns ``cls``, so it can decorate the class.

    Raises
    ------
    TypeError
        ``cls`` is not an AppearanceModel subclass with a name.
    """
    if not (isinstance(cls, type) and issubclass(cls, AppearanceModel) and cls.name):
        raise TypeError(f"register_model takes an AppearanceModel subclass with a name, got "
                        f"{cls!r}")
    APPEARANCE_MODELS[cls.name] = cls
    return cls


register_model(Histogram)
register_model(GMM)
register_model(Learned)
register_model(Auto)


def as_model(model) -> AppearanceModel:
    """A new model object from what ``segment(model=...)`` accepts.

    Parameters
    ----------
    model : None, str, AppearanceModel, dict or pair
        ``None``: :class:`Auto` (the default); a registered name (``"histogram"``,
        ``"gmm"``, ``"learned"``, ``"auto"``); a model object (copied, so the caller's
        is never fitted or changed); a settings dict (:func:`model_from_settings`); or a pair
        ``(object_model, background_model)`` of colour models (:class:`ModelPair`).

    Returns
    -------
    AppearanceModel

    Raises
    ------
    ValueError
        An unknown name.
    TypeError
        Anything else.
    """
    if model is None:
        return Auto()
    if isinstance(model, str):
        try:
            return APPEARANCE_MODELS[model]()
        except KeyError:
            raise ValueError(f"unknown colour model {model!r}; expected one of "
                             f"{', '.join(APPEARANCE_MODELS)}") from None
    if isinstance(model, AppearanceModel):
        return copy.copy(model)
    if isinstance(model, dict):
        return model_from_settings(model)
    if isinstance(model, (tuple, list)) and len(model) == 2:
        return ModelPair(*model)
    raise TypeError(f"model must be a model name ({', '.join(APPEARANCE_MODELS)}), a model "
                    f"object such as graphcut.models.GMM(), or a pair (object_model, "
                    f"background_model); got {type(model).__name__}")


def model_from_settings(settings: dict) -> AppearanceModel:
    """The model a settings dict names, with its knobs: the inverse of
    :meth:`AppearanceModel.settings`. Keys that are no knob of the model are ignored (a
    settings file also holds lam, box, ...).

    Raises
    ------
    ValueError
        No or an unknown ``"model"``, or a bad knob value.
    """
    name = settings.get("model", "histogram")
    cls = type(as_model(name))
    return cls(**{key: settings[key] for key in cls.knobs if key in settings})


def make_model(name: str, **options) -> ColourModel:
    """A new, unfitted per-label colour model: ``"histogram"`` (options: ``bins``) or ``"gmm"``
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


__all__ = ["APPEARANCE_MODELS", "AppearanceModel", "Auto", "CLASSIFIERS", "COVARIANCE_FLOOR",
           "ColourModel", "ColourStatistics", "colour_statistics", "GreyStatistics",
           "grey_statistics",
           "DEFAULT_SCALES", "Learned", "LearnedModel", "feature_names", "image_features",
           "learned_models", "pixel_features",
           "DEFAULT_COLOUR_BINS", "DEFAULT_COMPONENTS", "DEFAULT_GREY_BINS", "GMM", "GMMModel",
           "Histogram", "HistogramModel", "MODELS", "ModelPair", "PerLabelModel",
           "SMOOTHING_PASSES", "UNIFORM_WEIGHT", "as_model", "bin_indices", "check_bins",
           "cost_table", "histogram_costs", "is_whole", "local_contrast", "make_model",
           "model_from_settings", "register_model", "with_texture"]
