"""Which route a :class:`~graphcut.segmentation.Segmenter` update takes: the histogram's
cost tables (:func:`tabled`) or the pipeline, one object or several
(:func:`only_binary_labels`)."""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module, energy_kernels
from graphcut._labels import BACKGROUND
from graphcut.models import Histogram


def tabled(o) -> bool:
    """Whether the options ``o`` (:func:`resolve_options`) let the histogram model answer
    updates from per-cell cost tables kept up to date from seed edits (the same capacities
    as its general pipeline update, computed from the edited pixels only): the histogram
    model with one cut, plain seed counts, no locality, far cost or clean-up."""
    return (type(o["appearance"]) is Histogram and not o["iterations"]
            and not o["seed_share"] and not o["locality"] and not o["far_cost"]
            and o["keep"] == "all" and not o["fill_holes"])


def only_binary_labels(seeds) -> bool:
    """Whether the integer label array ``seeds`` holds no label above 2 (no further object).
    On the GPU through the package's seed-counting kernel (no CuPy reduction to compile)."""
    if array_module(seeds) is np:
        return int(np.asarray(seeds).max()) <= BACKGROUND
    try:
        _, (_, _, unknown) = energy_kernels().seed_labels(seeds)
    except TypeError:  # a dtype the kernel does not take: a CuPy reduction then
        return int(seeds.max()) <= BACKGROUND
    return not unknown


__all__ = ["only_binary_labels", "tabled"]
