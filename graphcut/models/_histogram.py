"""``HistogramModel``: the smoothed colour histogram of the Boykov-Jolly energy (today's model).

The binning, smoothing and cost tables live here (``graphcut.segmentation.regional_costs`` and
``SeedHistograms`` use them too); :class:`HistogramModel` puts them behind the
:class:`~graphcut.models.ColourModel` interface with identical costs: ``HistogramModel().fit(values, seeds == 1).costs(values)`` equals
``regional_costs(image, seeds)[0]`` bit for bit.
"""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module
from graphcut._arrays import energy_kernels as _gpu
from graphcut._labels import BACKGROUND, FOREGROUND

from ._base import ColourModel, PerLabelModel, check_sample


# Histogram bins per channel when ``bins`` is None.
DEFAULT_GREY_BINS = 64
DEFAULT_COLOUR_BINS = 16
# Weight of the uniform distribution mixed into each colour model, so that colours never seen
# among the seeds get a finite cost (the same for both models).
UNIFORM_WEIGHT = 0.01
# Passes of the [1, 2, 1] / 4 binomial filter smoothing each histogram axis.
SMOOTHING_PASSES = 2


def _smooth(histogram, passes: int):
    """[1, 2, 1] / 4 binomial smoothing along every axis, ``passes`` times, zero outside."""
    xp = array_module(histogram)
    everything = (slice(None),) * histogram.ndim
    for axis in range(histogram.ndim):
        head = everything[:axis] + (slice(None, -1),)   # all but the last cell along axis
        tail = everything[:axis] + (slice(1, None),)    # all but the first
        for _ in range(passes):
            lower, upper = xp.zeros_like(histogram), xp.zeros_like(histogram)
            lower[tail] = histogram[head]   # the neighbour before, 0 outside
            upper[head] = histogram[tail]   # the neighbour after
            histogram = 0.25 * lower + 0.5 * histogram + 0.25 * upper
    return histogram


def bin_indices(values, bins: int):
    """Joint histogram cell of every pixel, int64 (H, W) (or (D, H, W)); channels quantised
    over the image's own per-channel range into ``bins`` equal bins."""
    xp = array_module(values)
    if xp is not np:
        return _gpu().bin_cells(values, bins)  # int32
    spatial_axes = tuple(range(values.ndim - 1))
    low = values.min(axis=spatial_axes)
    high = values.max(axis=spatial_axes)
    span = xp.where(high > low, high - low, 1.0)
    quantised = xp.clip(xp.floor((values - low) / span * bins), 0, bins - 1).astype(xp.int64)
    index = quantised[..., 0]
    for channel in range(1, values.shape[-1]):
        index = index * bins + quantised[..., channel]
    return index


def cost_table(counts, shape):
    """-log P(cell | model) of every histogram cell (flat), for the model with these cell
    ``counts`` (float64, flat): smoothed, normalised, mixed with ``UNIFORM_WEIGHT`` uniform."""
    xp = array_module(counts)
    cells = counts.size
    smoothed = _smooth(counts.reshape(shape), SMOOTHING_PASSES).reshape(-1)
    probability = ((1.0 - UNIFORM_WEIGHT) * smoothed / smoothed.sum()
                   + UNIFORM_WEIGHT / cells)
    return -xp.log(probability)


def _colour_model_costs(index, selected, cells: int, shape):
    """-log P(cell | model) per pixel, for the model estimated from the pixels ``selected``."""
    xp = array_module(index)
    counts = xp.bincount(index[selected], minlength=cells).astype(xp.float64)
    return xp.take(cost_table(counts, shape), index)


def check_bins(bins, channels: int) -> int:
    """``bins`` checked (an integer 2..256), or the default for ``channels`` when None."""
    if bins is None:
        return DEFAULT_GREY_BINS if channels == 1 else DEFAULT_COLOUR_BINS
    if isinstance(bins, bool) or int(bins) != bins or not 2 <= bins <= 256:
        raise ValueError(f"bins must be an integer from 2 to 256, got {bins!r}")
    return int(bins)


def histogram_costs(values, seeds, bins):
    """``(cost_object, cost_background)`` of the histogram models of the object (label 1) and
    background (label 2) seeds, for the float ``values``
    (:func:`graphcut._arrays.image_as_float`)."""
    channels = values.shape[-1]
    bins = check_bins(bins, channels)
    index = bin_indices(values, bins)
    shape = (bins,) * channels
    cells = bins ** channels
    if array_module(values) is not np:  # per-cell tables on the host, one lookup per pixel
        import cupy
        counts = _gpu().seed_histograms(index, seeds, cells).astype(np.float64)
        return tuple(_gpu().lookup_costs(cupy.asarray(cost_table(row, shape)), index)
                     for row in counts)
    cost_object = _colour_model_costs(index, seeds == FOREGROUND, cells, shape)
    cost_background = _colour_model_costs(index, seeds == BACKGROUND, cells, shape)
    return cost_object, cost_background


class HistogramModel(ColourModel):
    """Joint colour histogram of the sample, smoothed and mixed with 1 % uniform.

    Channels are quantised over the whole image's own range into ``bins`` equal bins (joint
    over R, G, B for colour), the sample's histogram is smoothed with two passes of a
    [1, 2, 1] / 4 filter along each axis and mixed with 1 % of a uniform distribution, so the
    cost of a colour is ``-log P(its bin)``, between 0 and about ``log(bins ** C / 0.01)``
    nats.

    Parameters
    ----------
    bins
        bins per channel, 2..256; ``None``: 64 for grey, 16 for colour images.

    Examples
    --------
    Colours the sample holds cost less than colours it does not:

    >>> import numpy as np
    >>> from graphcut.models import HistogramModel
    >>> values = np.linspace(0, 1, 16).reshape(4, 4, 1)    # (H, W, C) floats, as segment uses
    >>> sample = values[..., 0] < 0.3                       # the darkest pixels
    >>> costs = HistogramModel(bins=8).fit(values, sample).costs(values)
    >>> costs.shape, bool(costs[0, 0] < costs[3, 3])
    ((4, 4), True)
    """

    name = "histogram"

    def __init__(self, bins=None):
        if bins is not None and (isinstance(bins, bool) or int(bins) != bins
                                 or not 2 <= bins <= 256):
            raise ValueError(f"bins must be an integer from 2 to 256, got {bins!r}")
        self.bins = None if bins is None else int(bins)
        self._table = None        # -log P per histogram cell, flat, on the values' device
        self._indexed = None      # (values, cell of every pixel, bins) of the last image seen

    def __repr__(self) -> str:
        return f"HistogramModel(bins={self.bins})"

    @property
    def fitted(self) -> bool:
        return self._table is not None

    def _index(self, values):
        """The histogram cell of every pixel (cached for the last ``values`` object)."""
        if self._indexed is None or self._indexed[0] is not values:
            bins = self.bins or (DEFAULT_GREY_BINS if values.shape[-1] == 1
                                 else DEFAULT_COLOUR_BINS)
            self._indexed = (values, bin_indices(values, bins), bins)
        return self._indexed[1], self._indexed[2]

    def fit(self, values, mask) -> "HistogramModel":
        check_sample(values, mask, "HistogramModel")
        xp = array_module(values)
        index, bins = self._index(values)
        shape = (bins,) * values.shape[-1]
        cells = bins ** values.shape[-1]
        if mask.dtype == bool:
            counts = xp.bincount(index[mask], minlength=cells).astype(xp.float64)
        else:
            counts = xp.bincount(index.ravel(), weights=mask.ravel().astype(xp.float64),
                                 minlength=cells)
        total = float(counts.sum())
        if total == 0:
            raise ValueError("HistogramModel: the sample is empty (no pixel selected)")
        smoothed = _smooth(counts.reshape(shape), SMOOTHING_PASSES).reshape(-1)
        probability = ((1.0 - UNIFORM_WEIGHT) * smoothed / smoothed.sum()
                       + UNIFORM_WEIGHT / cells)
        self._table = -xp.log(probability)
        return self

    def refit(self, values, mask) -> "HistogramModel":
        """The histogram of the new sample (a histogram has no iterative fit)."""
        return self.fit(values, mask)

    def costs(self, values):
        if not self.fitted:
            raise RuntimeError("HistogramModel.costs() called before fit()")
        index, _ = self._index(values)
        return array_module(index).take(self._table, index)


class Histogram(PerLabelModel):
    """The Boykov-Jolly appearance model: each label's smoothed colour histogram
    (:class:`HistogramModel`), one cut, no GrabCut iterations by default.

    Parameters
    ----------
    bins : int, optional
        Histogram bins per channel, 2..256; ``None``: 64 for grey, 16 for colour images.
    **knobs
        The pipeline's knobs ``iterations``, ``seed_share``, ``locality`` and ``far_cost``
        (:class:`~graphcut.models.AppearanceModel`); ``None`` keeps the defaults (0 each:
        today's Boykov-Jolly energy).

    Examples
    --------
    >>> import graphcut
    >>> model = graphcut.models.Histogram(bins=32)
    >>> model.settings()
    {'model': 'histogram', 'bins': 32}
    """

    name = "histogram"
    lam = 10.0
    bins = None
    knobs = ("bins", "iterations", "seed_share", "locality", "far_cost")

    def __init__(self, bins=None, **knobs):
        super().__init__(bins=bins, **knobs)

    def check_knob(self, key, value):
        if key == "bins":
            return HistogramModel(value).bins  # its range check and message
        return super().check_knob(key, value)

    def label_model(self) -> HistogramModel:
        return HistogramModel(self.bins)

    def fit(self, features, samples) -> "Histogram":
        """One histogram per label, as :class:`~graphcut.models.PerLabelModel` fits them, with
        the histogram cell of every pixel computed once for all labels (and kept while the
        same ``features`` array is given: a :class:`graphcut.Segmenter`'s strokes)."""
        indexed = getattr(self, "_indexed", None)
        fitted = []
        for sample in samples:
            model = self.label_model()
            model._indexed = indexed
            fitted.append(model.fit(features, sample))
            indexed = model._indexed
        self._fitted, self._indexed = fitted, indexed
        return self
