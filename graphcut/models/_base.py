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
    """Shape checks shared by the models: (H, W, C) values, (H, W) bool or float mask; a
    volume's (D, H, W, C) values and (D, H, W) mask."""
    if values.ndim not in (3, 4):
        raise ValueError(f"{what}: values must be (H, W, C) or a volume's (D, H, W, C), got "
                         f"shape {values.shape}")
    if tuple(mask.shape) != tuple(values.shape[:-1]):
        raise ValueError(f"{what}: mask shape {tuple(mask.shape)} differs from the image's "
                         f"{tuple(values.shape[:-1])}")
    if mask.dtype != bool and mask.dtype.kind != "f":
        raise TypeError(f"{what}: mask must be bool or float weights, got dtype {mask.dtype}")


class AppearanceModel:
    """An appearance model of every label, and the knobs that go with it: what
    ``graphcut.segment(model=...)`` and :class:`graphcut.Segmenter` take.

    The pipeline uses a model object only through this interface, so a new model plugs in by
    subclassing it (and registering its name with :func:`register_model` for settings files):

    1. ``features = model.features(values)``, once per image: per-pixel features from the
       image's float values ``(H, W, C)`` (:func:`graphcut._arrays.image_as_float`); by default
       the values themselves;
    2. ``model.fit(features, samples)`` after every seed change: ``samples`` holds one
       ``(H, W)`` bool mask or float weights per label, in the pipeline's label order (one
       object: ``[object, background]``; several: ``[background, object 1, ...]``);
    3. ``model.costs(features)``: one float64 ``(H, W)`` array per label, ``-log p`` in nats,
       on the features' device; they become the t-links;
    4. ``model.refit(features, samples)`` between GrabCut iterations (default: :meth:`fit`).

    Class attributes give the pipeline's defaults for this model (each can be set per object):
    ``lam`` (boundary weight), ``iterations`` (GrabCut re-estimations), ``seed_share`` (the
    share of the image's pixels the seeds of a label weigh together in its sample; 0: every
    pixel 1), ``locality`` (nats a label's cost is lowered near its seeds), ``far_cost`` (nats
    an object's cost rises far from its seeds, strokes only), ``texture`` (radius of the local
    contrast channel added to the values; 0: none).

    :meth:`settings` and :func:`model_from_settings` round-trip a model through a settings
    dict (the JSON of a settings file).

    Examples
    --------
    >>> from graphcut.models import GMM, model_from_settings
    >>> model = GMM(components=3)
    >>> model_from_settings(model.settings()) == model
    True
    """

    #: the name in settings files, the CLI's ``--model`` and ``segment(model="...")``
    name = ""
    lam = 10.0
    iterations = 0
    seed_share = 0.0
    locality = 0.0
    far_cost = 0.0
    #: whether an image box's tightness prior (the object crosses every line of the box)
    #: applies: only the learned model's (histogram and GMM results stay as they were)
    box_tightness = False
    #: with a box or lasso, the object's extra cost at the outline (nats; for models that list
    #: ``outline`` among their knobs), falling to 0 at ``outline_reach`` of the largest
    #: distance from it, or ``outline_pixels`` pixels from it when nearer (:meth:`outline_costs`)
    outline = 0.0
    outline_reach = 0.35
    outline_pixels = None
    texture = 0
    #: knobs of this model (constructor keywords), saved by :meth:`settings`
    knobs: tuple = ("iterations", "seed_share", "locality", "far_cost", "texture")

    def __init__(self, **knobs):
        unknown = set(knobs) - set(self.knobs)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no option(s) "
                            f"{', '.join(sorted(unknown))}; its options are "
                            f"{', '.join(self.knobs)}")
        for key, value in knobs.items():
            if value is not None:
                setattr(self, key, self.check_knob(key, value))

    def check_knob(self, key: str, value):
        """``value`` checked for the knob ``key`` (a ValueError naming it otherwise);
        subclasses check their own knobs and defer the shared ones here."""
        return _checked_knob(key, value)

    def features(self, values):
        """Per-pixel features of the image's float values (computed once per image)."""
        if self.texture:
            from ._texture import with_texture
            return with_texture(values, self.texture)
        return values

    def fit(self, features, samples) -> "AppearanceModel":
        """Fit every label on its sample (one mask or weight array per label); returns
        ``self``."""
        raise NotImplementedError

    def refit(self, features, samples) -> "AppearanceModel":
        """Re-estimate on new samples (GrabCut's iterations); by default :meth:`fit`."""
        return self.fit(features, samples)

    def costs(self, features) -> list:
        """``-log p`` of every pixel under every label's fitted model (nats), one float64
        ``(H, W)`` array per label, in the samples' order."""
        raise NotImplementedError

    def outline_costs(self, region):
        """The object's extra cost (nats, host float64) inside a box or lasso ``region``:
        ``outline`` at its outline, falling linearly to 0 at ``outline_reach`` times the
        largest distance from the outline, or ``outline_pixels`` pixels from it when that is
        nearer (:func:`~graphcut.models._prior.outline_cost`). The pipeline adds it to the
        object's costs for a box or lasso, one object, when the model has a ``core`` and
        ``outline`` > 0 (for a 2-D box in closed form: ``graphcut.segmentation._outline``).

        Parameters
        ----------
        region : array (H, W) or (D, H, W) of bool
            The box's or lasso's inside.

        Returns
        -------
        numpy.ndarray of float64, the region's shape
        """
        from ._prior import outline_cost
        return outline_cost(region, self.outline, self.outline_reach,
                            max_reach=self.outline_pixels)

    def settings(self) -> dict:
        """``{"model": name, knob: value, ...}`` for the knobs that differ from the class's
        defaults; :func:`model_from_settings` makes an equal model from it."""
        saved = {"model": self.name}
        for key in self.knobs:
            value = getattr(self, key)
            if value != getattr(type(self), key, None):
                saved[key] = value
        return saved

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and all(
            getattr(self, key) == getattr(other, key) for key in ("lam", *self.knobs))

    def __hash__(self) -> int:
        return hash((type(self), *(getattr(self, key) for key in self.knobs)))

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.knobs)
        return f"{type(self).__name__}({shown})"


class PerLabelModel(AppearanceModel):
    """An appearance model made of one :class:`ColourModel` per label, fitted on its own
    sample: subclasses implement :meth:`label_model` (a new, unfitted one)."""

    def label_model(self) -> ColourModel:
        """A new, unfitted colour model of one label."""
        raise NotImplementedError

    def fit(self, features, samples) -> "PerLabelModel":
        self._fitted = [self.label_model().fit(features, sample) for sample in samples]
        return self

    def refit(self, features, samples) -> "PerLabelModel":
        for model, sample in zip(self._fitted, samples):
            model.refit(features, sample)
        return self

    def costs(self, features) -> list:
        return [model.costs(features) for model in self._fitted]

    def release_costs(self) -> None:
        """Drop what each label's model keeps of its last per-pixel costs (a cache: a later
        :meth:`costs` computes the same numbers again). Several objects' updates call it once
        their expansion is done: on a 4 MP image that is 32 MB a label."""
        for model in getattr(self, "_fitted", ()):
            forget = getattr(model, "forget_costs", None)
            if forget is not None:
                forget()


class ModelPair(AppearanceModel):
    """Two colour models given as objects, ``(object_model, background_model)``, each with
    ``fit(values, mask)`` and ``costs(values)``: the form :class:`graphcut.Segmenter` has
    always accepted. One object only; no settings round trip."""

    name = "pair"
    knobs = ()

    def __init__(self, object_model, background_model):
        super().__init__()
        for model in (object_model, background_model):
            if not (hasattr(model, "fit") and hasattr(model, "costs")):
                raise TypeError("model must be a model name, a model object (e.g. "
                                "graphcut.models.GMM()) or a pair (object_model, "
                                "background_model) with fit(values, mask) and costs(values)")
        self.pair = (object_model, background_model)

    def fit(self, features, samples) -> "ModelPair":
        if len(samples) != 2:
            raise ValueError("a pair of colour models segments one object; seeds of several "
                             "objects need a model name or object")
        for model, sample in zip(self.pair, samples):
            model.fit(features, sample)
        return self

    def refit(self, features, samples) -> "ModelPair":
        for model, sample in zip(self.pair, samples):
            (model.refit if hasattr(model, "refit") else model.fit)(features, sample)
        return self

    def costs(self, features) -> list:
        return [model.costs(features) for model in self.pair]

    def settings(self) -> dict:
        raise ValueError("a pair of model objects has no settings form; use a named model")


_INTEGER_KNOBS = ("iterations", "texture", "component_rows")


def check_fraction(key: str, value) -> float:
    """``value`` as a float from 0 to 1, or a ValueError naming the knob ``key``.

    Parameters
    ----------
    key : str
        The knob's name (for the message).
    value : float
        The value given.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``value`` is not a number, not finite, or outside [0, 1].

    Examples
    --------
    >>> check_fraction("core", 0.4)
    0.4
    """
    import math
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a number from 0 to 1, got {value!r}") from None
    if isinstance(value, bool) or not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise ValueError(f"{key} must be a number from 0 to 1, got {value!r}")
    return number


def is_whole(value) -> bool:
    """Whether ``value`` is a whole number >= 0 (not a bool, NaN, infinity or a string)."""
    import math
    if isinstance(value, bool):
        return False
    try:
        return math.isfinite(value) and int(value) == value and value >= 0
    except (TypeError, ValueError, OverflowError):
        return False


def _checked_knob(key: str, value):
    """A knob's value checked: integers >= 0 for counts, finite numbers >= 0 otherwise
    (``seed_share`` at most 1)."""
    import math
    if key in _INTEGER_KNOBS:
        if not is_whole(value):
            what = "a window radius in pixels" if key == "texture" else "a count"
            raise ValueError(f"{key} must be an integer >= 0 ({what}), got {value!r}")
        return int(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a number, got {value!r}") from None
    if key == "seed_share" and not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise ValueError(f"seed_share must be a number from 0 to 1, got {number}")
    if not (math.isfinite(number) and number >= 0.0):
        unit = " (nats)" if key in ("locality", "far_cost") else ""
        raise ValueError(f"{key} must be a finite number >= 0{unit}, got {number}")
    return number
