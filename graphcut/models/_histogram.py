"""``HistogramModel``: the smoothed colour histogram of the Boykov-Jolly energy (today's model).

The binning and smoothing are :mod:`graphcut.energy`'s (``regional_costs`` uses them too); this
class puts them behind the :class:`~graphcut.models.ColourModel` interface with identical
costs: ``HistogramModel().fit(values, seeds == 1).costs(values)`` equals
``regional_costs(image, seeds)[0]`` bit for bit.
"""

from __future__ import annotations

from graphcut.energy import (DEFAULT_COLOUR_BINS, DEFAULT_GREY_BINS, SMOOTHING_PASSES,
                             UNIFORM_WEIGHT, _bin_indices, _smooth, array_module)

from ._base import ColourModel, check_sample


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
            self._indexed = (values, _bin_indices(values, bins), bins)
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
