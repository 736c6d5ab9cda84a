"""``LearnedModel``: appearance learned from the seeds by a classifier in feature space.

Unlike the histogram and the GMM, which describe each label on its own, a classifier tells the
labels apart: it is trained on all labels' samples at once (the seeds; with a box, its inside
as the object's and its outside as the background's) and gives every pixel a probability per
label, whose ``-log`` is that label's cost. The labels' models are therefore *linked views* of
one shared classifier: :func:`learned_models` makes them, each view's :meth:`~LearnedModel.fit`
hands over its label's sample, and the first :meth:`~LearnedModel.costs` after a change trains
the classifier on all samples.

``values`` are per-pixel feature vectors ``(H, W, F)`` (usually
:func:`graphcut.segmentation.features.pixel_features`, standardised); NumPy or CuPy, and the
training and scoring run on that device with the same formulas.

Classifiers (``classifier=``):

- ``"logistic"`` (the default): L2-regularised logistic regression on the features and their
  squares (``2 F + 1`` weights per label, one-against-the-rest for more than two labels),
  trained by a fixed number of Newton steps: a few small ``(2F+1)^2`` solves, GPU-friendly
  and deterministic.
- ``"gaussian"``: naive Bayes, one diagonal Gaussian per label in feature space (closed form).

Each label's sample is reduced to at most ``max_samples`` pixels (a fixed-seed random choice,
so equal inputs train equal classifiers) and the labels weigh equally in training (balanced
classes: a stroke of 50 pixels counts as much as a background of a million).
"""

from __future__ import annotations

import copy

import numpy as np

from graphcut._arrays import array_module

from ._base import AppearanceModel, ColourModel
from ._features import image_features
from ._guide import prior_knobs, prior_sides
from ._logistic import DEFAULT_L2, _design, fit_logistic, training_rows
from ._naive_bayes import fit_gaussian, gaussian_log_likelihood
from ._learned_knobs import CLASSIFIERS, check_learned_knob
from ._rim import RIM, RIM_BAND, rim_weights
from ._samples import same_sample, sample_record

#: pixels per label used for training at most
MAX_SAMPLES = 8000
#: probabilities are clipped to [MIN_PROBABILITY, 1]: costs at most ~9.2 nats
MIN_PROBABILITY = 1e-4
_SAMPLE_SEED = 20240624
#: the outline cost falls to 0 at this share of the largest distance from a box's outline,
#: and at most this many pixels from it
OUTLINE_REACH, OUTLINE_PIXELS = 0.35, 10.0
#: the earlier mask's hold far from a new stroke (nats), its reach (pixels) and the strokes
#: after which it starts (graphcut.segmentation._hold; chosen on the dev trajectories)
HOLD, HOLD_REACH, HOLD_AFTER = 8.0, 30.0, 7
#: from this many strokes (below HOLD_AFTER) the hold is gated by the previous update's
#: confidence, far from the stroke this many nats (graphcut.segmentation._hold; dev-chosen)
CONFIDENT_AFTER, CONFIDENT_HOLD = 3, 16.0
#: with a box or lasso, the region's inner ring joins the background's sample, weighing this
#: share of it (graphcut.segmentation._ring; chosen on the dev nucleus boxes)
RING = 1.0
#: the largest cost, -log MIN_PROBABILITY (nats)
MAX_COST = float(-np.log(MIN_PROBABILITY))
#: pixels scored at once on a GPU (temporary memory ~ 2 SCORE_CHUNK * F floats)
SCORE_CHUNK = 1 << 20


def _flat_sample(values, mask, max_samples):
    """(features (n, F) float64, weights (n,)) of the pixels ``mask`` selects (weights > 0),
    at most ``max_samples`` of them chosen by a fixed-seed random draw, weights scaled so
    that their total is the full sample's."""
    xp = array_module(values)
    flat_mask = mask.reshape(-1)
    weights = flat_mask.astype(xp.float64, copy=False)  # only read
    index = xp.nonzero(weights > 0)[0]
    total = float(weights[index].sum()) if index.size else 0.0
    if index.size > max_samples:
        chosen = np.random.default_rng(_SAMPLE_SEED).choice(int(index.size), max_samples,
                                                            replace=False)
        chosen.sort()
        index = index[xp.asarray(chosen)]
    flat = values.reshape(-1, values.shape[-1])
    x = flat[index].astype(xp.float64)
    w = weights[index]
    if w.size:
        w = w * (total / float(w.sum()))
    return x, w


class _Shared:
    """The classifier the linked :class:`LearnedModel` views share."""

    def __init__(self, count, classifier, l2, max_samples):
        self.samples = [None] * count
        self.prior = [None] * count     # (x, w) of each label's image prior, or None
        self.prior_weight = 0.0
        self.classifier = classifier
        self.l2 = l2
        self.max_samples = max_samples
        self.stale = True
        self.params = None
        self.scored = None     # (values, costs (count, H, W)) of the last scoring

    def set_sample(self, index, values, mask):
        self.samples[index] = _flat_sample(values, mask, self.max_samples)
        self.stale = True

    def set_prior(self, index, values, mask, weight, *, sample=None):
        """The pixels ``mask`` selects as label ``index``'s weak prior sample, weighing
        ``weight`` times the label's own sample in training (None: no prior); ``sample``:
        ``_flat_sample(values, mask, max_samples)`` when the caller kept it."""
        if mask is not None and sample is None:
            sample = _flat_sample(values, mask, self.max_samples)
        self.prior[index] = None if mask is None else sample
        self.prior_weight = float(weight)
        self.stale = True

    def train(self):
        missing = [i for i, s in enumerate(self.samples) if s is None or not s[0].shape[0]]
        if missing:
            raise ValueError("LearnedModel: every label needs sample pixels to learn from; "
                             f"label(s) {missing} of {len(self.samples)} have none")
        xp = array_module(self.samples[0][0])
        if self.classifier == "gaussian":
            self.params = [fit_gaussian(x, w, xp) for x, w in self.samples]
        else:
            x_all, labels, w_all = training_rows(self.samples, self.prior, self.prior_weight,
                                                 xp)
            x_all = _design(x_all, xp)
            pairs = [(0, None)] if len(self.samples) == 2 else list(
                enumerate(self.samples))
            self.params = [fit_logistic(x_all, (labels == k).astype(xp.float64), w_all,
                                        l2=self.l2) for k, _ in pairs]
        self.stale = False
        self.scored = None

    def costs(self, values, index):
        if self.stale:
            self.train()
        if self.scored is None or self.scored[0] is not values:
            self.scored = (values, self._score(values))
        return self.scored[1][index]

    def _score(self, values):
        """-log p(label | x) for every label, float64 (count, H, W): one pass over the
        features in chunks of rows (:func:`_chunk_rows`), each chunk's scores, probabilities
        and costs computed while it is in cache; no full-image temporary but the result. On a
        GPU the two-label logistic costs are one kernel launch
        (:func:`~graphcut.models._learned_kernels.fused_binary_costs`)."""
        xp = array_module(values)
        if self.classifier == "logistic" and len(self.params) == 1 and \
                xp.__name__ != "numpy":
            from ._learned_kernels import fused_binary_costs
            fused = fused_binary_costs(values, self.params[0], MAX_COST)
            if fused is not None:
                return fused
        shape = values.shape[:-1]
        flat = values.reshape(-1, values.shape[-1])
        if flat.dtype != xp.float32:
            flat = flat.astype(xp.float32)
        count = len(self.samples)
        out = xp.empty((count, flat.shape[0]), dtype=xp.float64)
        params = self.params if self.classifier == "gaussian" else [
            (b[1:flat.shape[1] + 1].astype(xp.float32), b[flat.shape[1] + 1:].astype(
                xp.float32), float(b[0])) for b in self.params]
        step = _chunk_rows(xp, flat.shape[1])
        for start in range(0, flat.shape[0], step):
            x = flat[start:start + step]
            out[:, start:start + step] = self._chunk_costs(x, params, xp)
        return out.reshape((count,) + shape)

    def _chunk_costs(self, x, params, xp):
        """Costs (count, n) float32 of the feature rows ``x`` (n, F) float32."""
        if self.classifier == "gaussian":
            log_like = xp.stack([gaussian_log_likelihood(x, p, xp) for p in params])
            log_like = log_like - log_like.max(axis=0, keepdims=True)
            log_p = log_like - xp.log(xp.exp(log_like).sum(axis=0, keepdims=True))
            return xp.minimum(-log_p, MAX_COST)
        squares = x * x
        scores = [x @ linear + squares @ quadratic + xp.float32(bias)
                  for linear, quadratic, bias in params]
        if len(scores) == 1:  # binary: label 0 is the positive class; -log p = softplus
            z = xp.clip(scores[0], xp.float32(-30), xp.float32(30))
            cost_first = xp.log1p(xp.exp(-z))
            costs = xp.stack([cost_first, cost_first + z])
        else:  # one against the rest, normalised
            p = xp.stack([1.0 / (1.0 + xp.exp(-xp.clip(s, -30.0, 30.0))) for s in scores])
            costs = -xp.log(xp.maximum(p / p.sum(axis=0, keepdims=True), 1e-30))
        return xp.minimum(costs, MAX_COST)


def _chunk_rows(xp, features):
    """Rows scored at once: ~256 kB of features on the CPU (they stay in cache through the
    chunk's few passes), SCORE_CHUNK rows on a GPU (few kernel launches)."""
    if xp.__name__ == "numpy":
        return max(1024, (1 << 18) // (4 * max(1, features)))
    return SCORE_CHUNK


class LearnedModel(ColourModel):
    """One label's view of a classifier shared by all labels (see the module's notes).

    Make the views with :func:`learned_models`; a view made alone (``LearnedModel()``) is
    the first of a pair whose second view is :attr:`partner`.

    Parameters
    ----------
    classifier : str
        ``"logistic"`` (quadratic logistic regression, Newton) or ``"gaussian"`` (naive Bayes).
    l2 : float
        The logistic regression's penalty per unit of sample weight (``None``: 0.1).
    max_samples : int
        Pixels per label used for training at most (``None``: 8000).
    """

    name = "learned"

    def __init__(self, classifier="logistic", l2=None, max_samples=None, *, _shared=None,
                 _index=0):
        if classifier not in CLASSIFIERS:
            raise ValueError(f"unknown classifier {classifier!r}; expected one of "
                             f"{', '.join(CLASSIFIERS)}")
        l2 = DEFAULT_L2 if l2 is None else float(l2)
        if not (np.isfinite(l2) and l2 > 0):
            raise ValueError(f"l2 must be a finite number > 0, got {l2}")
        max_samples = MAX_SAMPLES if max_samples is None else max_samples
        if isinstance(max_samples, bool) or int(max_samples) != max_samples or max_samples < 2:
            raise ValueError(f"max_samples must be an integer >= 2, got {max_samples!r}")
        self.classifier, self.l2, self.max_samples = classifier, l2, int(max_samples)
        self._shared = _shared or _Shared(2, classifier, l2, int(max_samples))
        self._index = _index
        self._fitted = False
        if _shared is None:
            self.partner = LearnedModel(classifier, l2, max_samples, _shared=self._shared,
                                        _index=1)

    def __repr__(self) -> str:
        return (f"LearnedModel(classifier={self.classifier!r}, l2={self.l2}, "
                f"label={self._index} of {len(self._shared.samples)})")

    @property
    def fitted(self) -> bool:
        return self._fitted

    def fit(self, values, mask) -> "LearnedModel":
        if tuple(mask.shape) != tuple(values.shape[:-1]):
            raise ValueError(f"LearnedModel: mask shape {tuple(mask.shape)} differs from the "
                             f"features' {tuple(values.shape[:-1])}")
        if mask.dtype != bool and mask.dtype.kind != "f":
            raise TypeError(f"LearnedModel: mask must be bool or float weights, got dtype "
                            f"{mask.dtype}")
        self._shared.set_sample(self._index, values, mask)
        if not self._shared.samples[self._index][0].shape[0]:
            raise ValueError("LearnedModel: the sample is empty (no pixel selected)")
        self._fitted = True
        return self

    def refit(self, values, mask) -> "LearnedModel":
        """Train again on a new sample (GrabCut's re-estimation: the current labelling)."""
        return self.fit(values, mask)

    def costs(self, values):
        if not self._fitted:
            raise RuntimeError("LearnedModel.costs() called before fit()")
        return self._shared.costs(values, self._index)


def learned_models(count: int, classifier="logistic", l2=None, max_samples=None) -> list:
    """``count`` (>= 2) linked :class:`LearnedModel` views of one classifier, one per label.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(-1, 1, 20).reshape(4, 5, 1)
    >>> obj, bg = learned_models(2)
    >>> costs = obj.fit(x, x[..., 0] > 0.5).costs(x) if bg.fit(x, x[..., 0] < -0.5) else None
    >>> bool(costs[0, 0] > costs[-1, -1])
    True
    """
    if isinstance(count, bool) or int(count) != count or count < 2:
        raise ValueError(f"learned_models needs count >= 2 labels, got {count!r}")
    first = LearnedModel(classifier, l2, max_samples)
    shared = _Shared(int(count), first.classifier, first.l2, first.max_samples)
    return [LearnedModel(classifier, l2, max_samples, _shared=shared, _index=i)
            for i in range(int(count))]


class Learned(AppearanceModel):
    """The learned appearance model: a classifier on per-pixel filter features
    (:mod:`graphcut.models._features`), trained on every label's sample at once, whose
    ``-log`` probabilities are the labels' costs (see this module's notes).

    Parameters
    ----------
    **knobs
        ``classifier`` (str): ``"logistic"`` (quadratic logistic regression, Newton steps)
        or ``"gaussian"``; ``None``: ``"logistic"``. ``l2`` (float): penalty of the
        logistic regression per unit of sample weight; ``None``: 0.1. ``core`` (float,
        0..1): with a box or lasso, the object's sample is the region's core, its pixels at
        least ``core`` times the largest distance from the outline, plus the object seeds;
        ``None``: 0.5. ``prior`` (>= 0): the intensity prior's weight, ``split`` its split,
        ``"otsu"`` or ``"local"`` (:mod:`._local_split`), ``box_prior``, ``box_split`` the
        same with a box or lasso; ``None``: 0.75, ``"local"``, 0.6, ``"otsu"``. ``ring``
        (>= 0; 0 turns it off): with a box or lasso, the region's pixels within
        ``min(0.35 d_max, 4)`` pixels of its outline join the background's sample, weighing
        ``ring`` times the rest of it (:mod:`graphcut.segmentation._ring`); ``None``: 1. ``hold`` (nats, >= 0; 0 turns it off), ``hold_reach`` (pixels, > 0),
        ``hold_after`` (strokes, an integer >= 0): one object from strokes alone, the
        previous update's mask *holds*: a pixel far from the new stroke costs up to ``hold``
        nats more on the side it was not on, fading to 0 within about ``hold_reach`` pixels
        of the stroke (or 3 times the mask's thickness), once the seeds hold ``hold_after``
        strokes, when the caller gives the previous update as ``previous=(seeds, mask)``
        (``Segmenter.update``, :func:`graphcut.segment`; :mod:`graphcut.segmentation._hold`);
        ``None``: 8, 30, 7. ``confident_after`` (strokes, an integer >= 0; at least
        ``hold_after`` turns it off): from this many strokes the hold is gated by the previous
        update's confidence: a pixel holds only as much as the classifier trained on the
        previous seeds favoured its side of the previous mask (nothing up to 0.5 nat, all
        of 16 nats from 2), from ``hold_after`` on the larger of that and ``hold``
        (:mod:`graphcut.segmentation._hold`); ``None``: 3. ``rim`` (> 0; 1 turns it off),
        ``rim_band`` (pixels, an integer >= 0): with ``previous`` (as the hold's), the
        classifier's costs within ``rim_band`` pixels of the previous mask's outline weigh
        ``rim`` times more (the hold's too from ``hold_after`` strokes)
        (:mod:`graphcut.models._rim`); ``None``: 16, 1. ``near`` (>= 0; 0 turns it off): with
        an image's box, the pixels outside it within half its smaller side weigh ``near``
        times the background sample's total more (:mod:`graphcut.segmentation._ring`);
        ``None``: ``_ring.NEAR_SHARE`` (1). ``neighbours`` (nats, >= 0; 0 turns it off):
        with an image's box, the tightness prior's cuts add this to the object's cost at the
        pixels a neighbour crossing the box's side brings in
        (:mod:`graphcut.segmentation._box_neighbours`); ``None``: its ``NEIGHBOUR_COST`` (1.25).
        ``level`` (nats, >= 0; 0 turns it off): the box's own level prior
        (:mod:`graphcut.segmentation._box_level`); ``None``: its ``LEVEL_COST`` (1). The
        pipeline's knobs (:class:`~graphcut.models.AppearanceModel`) too.

    Examples
    --------
    >>> from graphcut.models import Learned
    >>> Learned(classifier="gaussian").settings()
    {'model': 'learned', 'classifier': 'gaussian'}
    """

    name = "learned"
    lam = 4.0
    iterations = 0
    seed_share = 0.1
    locality = 0.0
    far_cost = 0.0
    texture = 0
    classifier = "logistic"
    l2 = DEFAULT_L2
    core, prior, split, box_prior, box_split = 0.5, 0.75, "local", 0.6, "otsu"
    outline = 8.0
    hold, hold_reach, hold_after = HOLD, HOLD_REACH, HOLD_AFTER
    confident_after, confident_hold = CONFIDENT_AFTER, CONFIDENT_HOLD
    ring = RING
    rim, rim_band = RIM, RIM_BAND
    near = None  # None: graphcut.segmentation._ring.NEAR_SHARE
    neighbours = level = None  # None: _box_neighbours.NEIGHBOUR_COST, _box_level.LEVEL_COST
    # the pipeline's: guide the previous mask (._guide), region a box or lasso's fit
    box_tightness, guide, region = True, None, False
    outline_reach, outline_pixels = OUTLINE_REACH, OUTLINE_PIXELS
    knobs = ("classifier", "l2", "core", "prior", "split", "box_prior", "box_split", "outline",
             "ring", "hold", "hold_reach", "hold_after", "confident_after", "rim", "rim_band",
             "near", "neighbours", "level", "iterations", "seed_share", "locality", "far_cost")

    def check_knob(self, key, value):
        checked = check_learned_knob(key, value)
        return super().check_knob(key, value) if checked is NotImplemented else checked

    def features(self, values):
        self._channels = int(values.shape[-1])
        return image_features(values)

    def fit(self, features, samples) -> "Learned":
        self._fitted_on = (features, [sample_record(sample) for sample in samples])
        self._views = learned_models(len(samples), classifier=self.classifier, l2=self.l2)
        for view, sample in zip(self._views, samples):
            view.fit(features, sample)
        weight = prior_knobs(self)[0]
        if weight > 0 and len(samples) == 2:
            masks, strength, kept = prior_sides(self, features, samples)
            self._fitted_on += ((masks[0] is None, masks[0] is kept[2], strength),)
            shared = self._views[0]._shared
            for index, mask in enumerate(masks):
                drawn = None
                if mask is not None:
                    side = mask is kept[2]
                    if side not in kept[3]:
                        kept[3][side] = _flat_sample(features, mask, shared.max_samples)
                    drawn = kept[3][side]
                shared.set_prior(index, features, mask, weight * strength, sample=drawn)
        return self

    def costs(self, features) -> list:
        costs = [view.costs(features) for view in self._views]
        weights = self.rim_weights() if len(costs) == 2 else None  # one object's guide
        return costs if weights is None else [c * weights for c in costs]

    def rim_weights(self):
        """The factors (H, W) of the classifier's costs near the outline of :attr:`guide`, the
        previous mask (:func:`~._rim.rim_weights`), or None."""
        return rim_weights(self.guide, self.rim, self.rim_band)

    def _decision(self, features, samples):
        """What :meth:`fit` records of its prior for ``samples`` (with :attr:`guide`)."""
        if not (prior_knobs(self)[0] > 0 and len(samples) == 2):
            return ()
        masks, strength, kept = prior_sides(self, features, samples)
        return ((masks[0] is None, masks[0] is kept[2], strength),)

    def log_odds(self, features, samples):
        """``log p(object) - log p(background)`` (nats) of the classifier trained on two
        labels' ``samples`` (object first), this model's fit unchanged: the previous update's
        confidence for ``confident_after`` (the last :meth:`fit`'s costs when it was on equal
        sparse samples of the same features, as in a session: :mod:`._samples`, and gave its
        prior the same side and strength; the prior checked against :attr:`guide`, the
        previous mask the pipeline sets: :mod:`._guide`).

        Parameters
        ----------
        features : array (H, W, F)
            :meth:`features` of the image.
        samples : sequence of two arrays (H, W)
            The object's and the background's samples (bool, or float weights).

        Returns
        -------
        array (H, W) of float64

        Examples
        --------
        >>> import numpy as np
        >>> model = Learned(prior=0)
        >>> features = model.features(np.linspace(0, 1, 64).reshape(8, 8, 1))
        >>> obj, bg = np.zeros((8, 8), bool), np.zeros((8, 8), bool)
        >>> obj[7, 5:], bg[0, :3] = True, True
        >>> odds = model.log_odds(features, (obj, bg))
        >>> bool(odds[7, 7] > 0 > odds[0, 0])
        True
        """
        kept = getattr(self, "_fitted_on", None)
        same = kept is not None and kept[0] is features and len(kept[1]) == 2 and all(
            map(same_sample, kept[1], samples)) and kept[2:] == self._decision(features, samples)
        model = self if same else copy.copy(self).fit(features, samples)
        costs = [view.costs(features) for view in model._views]
        return costs[1] - costs[0]

