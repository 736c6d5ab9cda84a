"""``segment``'s and ``Segmenter``'s options checked once: the model object resolved (from a
name, a model object, a settings dict or a pair of colour models) with the old keyword
arguments folded into it, and the pipeline's options filled in from the model's defaults."""

from __future__ import annotations

import copy
import math

from graphcut.io import KEEP_CHOICES
from graphcut.models import APPEARANCE_MODELS, GMM, AppearanceModel, Histogram, as_model, is_whole

from ._capacities import DEFAULT_SCALE
from ._grabcut import DEFAULT_TOL
from ._neighbours import check_connectivity
from ._smoothness import guarded_lams

#: the model names (registered appearance models)
MODEL_CHOICES = tuple(APPEARANCE_MODELS)
# The defaults of the two built-in models, by name (their home is the model classes).
DEFAULT_LAMS = {"histogram": Histogram.lam, "gmm": GMM.lam}
DEFAULT_ITERATIONS = {"histogram": Histogram.iterations, "gmm": GMM.iterations}
DEFAULT_SEED_SHARES = {"histogram": Histogram.seed_share, "gmm": GMM.seed_share}
DEFAULT_LOCALITY = {"histogram": Histogram.locality, "gmm": GMM.locality}
DEFAULT_FAR_COSTS = {"histogram": Histogram.far_cost, "gmm": GMM.far_cost}
DEFAULT_TEXTURE = {"histogram": Histogram.texture, "gmm": GMM.texture}

#: keyword arguments of ``segment`` that are knobs of a model (folded into the model object)
MODEL_KNOBS = ("bins", "components", "iterations", "seed_share", "locality", "far_cost",
               "texture")
#: further keyword options of ``segment`` and ``Segmenter`` (the energy's)
ENERGY_OPTIONS = ("sigma", "scale", "spacing", "tol", "connectivity")
# which built-in model a knob belongs to, for the message when given to another
_KNOB_OWNER = {"bins": "histogram", "components": "gmm", "texture": "gmm"}


def resolve_options(model=None, *, lam=None, keep="all", fill_holes=0, channel_axis=-1,
                    box=None, lasso=None, image=None, **options) -> dict:
    """The checked options of one segmentation, defaults filled in.

    Parameters
    ----------
    model : None, str, AppearanceModel, dict or pair
        As :func:`graphcut.models.as_model` takes it; never modified.
    lam, keep, fill_holes, channel_axis, box, lasso :
        As for :func:`graphcut.segment`.
    image : array, optional
        The image's values with their channels last (as ``Segmenter`` holds them), when
        known: a model that stands for another one chosen by the image
        (:class:`~graphcut.models.Auto`) is then replaced by it (its ``for_image``).
    **options :
        The model's knobs as keyword arguments (``bins``, ``components``, ``iterations``,
        ``seed_share``, ``locality``, ``far_cost``, ``texture``; None = the model's default)
        and the energy's options (``sigma``, ``scale``, ``spacing``, ``tol``,
        ``connectivity``: 4 or 8).

    Returns
    -------
    dict
        ``appearance`` (the model object), ``model`` (its name), ``lam``, ``auto_lam`` (the
        collapse guard's weights for box / lasso updates, or None), ``iterations``,
        ``seed_share``, ``locality``, ``far_cost``, ``texture``, ``keep``, ``fill_holes``,
        ``sigma``, ``scale``, ``spacing``, ``tol``, ``channel_axis``, ``box``, ``lasso``,
        ``connectivity``.

    Raises
    ------
    TypeError
        An unknown option.
    ValueError
        A bad value; the message names the option.
    """
    unknown = set(options) - set(MODEL_KNOBS) - set(ENERGY_OPTIONS)
    if unknown:
        raise TypeError(f"unknown segmentation option(s) {', '.join(sorted(unknown))}")
    appearance = _with_knobs(as_model(model), {key: options.get(key) for key in MODEL_KNOBS})
    if image is not None and hasattr(appearance, "for_image"):
        appearance = appearance.for_image(image, -1)
    auto_lam = guarded_lams(appearance, lam)  # the collapse guard's weights, or None
    lam = appearance.lam if lam is None else lam
    lam = float(lam)
    if not (math.isfinite(lam) and lam >= 0.0):
        raise ValueError(f"lam must be a finite number >= 0, got {lam}")
    if keep not in KEEP_CHOICES:
        raise ValueError(f"keep must be one of {', '.join(map(repr, KEEP_CHOICES))}, got "
                         f"{keep!r}")
    if not is_whole(fill_holes):
        raise ValueError(f"fill_holes must be an integer >= 0 (an area in pixels), got "
                         f"{fill_holes!r}")
    tol = float(options.get("tol", DEFAULT_TOL))
    if not (math.isfinite(tol) and tol >= 0.0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol}")
    return dict(appearance=appearance, model=appearance.name, lam=lam, auto_lam=auto_lam,
                iterations=appearance.iterations, seed_share=appearance.seed_share,
                locality=appearance.locality, far_cost=appearance.far_cost,
                texture=appearance.texture, keep=keep, fill_holes=int(fill_holes),
                sigma=options.get("sigma"), scale=options.get("scale", DEFAULT_SCALE),
                spacing=options.get("spacing"), tol=tol, channel_axis=channel_axis, box=box,
                lasso=lasso, connectivity=check_connectivity(options.get("connectivity", 4)))


def _with_knobs(model: AppearanceModel, knobs: dict) -> AppearanceModel:
    """``model`` (a fresh copy) with the given knobs set; a knob the model does not have is
    a ValueError naming the model it belongs to."""
    given = {key: value for key, value in knobs.items() if value is not None}
    if not given:
        return model
    for key in given:
        if key not in model.knobs:
            owner = _KNOB_OWNER.get(key)
            where = f"model='{owner}'" if owner else "a model with that option"
            raise ValueError(f"{key} applies to {where} only")
    model = copy.copy(model)
    for key, value in given.items():
        setattr(model, key, model.check_knob(key, value))
    return model


__all__ = ["DEFAULT_FAR_COSTS", "DEFAULT_ITERATIONS", "DEFAULT_LAMS", "DEFAULT_LOCALITY",
           "DEFAULT_SEED_SHARES", "DEFAULT_TEXTURE", "ENERGY_OPTIONS", "MODEL_CHOICES",
           "MODEL_KNOBS", "resolve_options"]
