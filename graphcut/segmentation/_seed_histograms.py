"""Seed histograms kept up to date from seed edits, and terminal capacities by one table
lookup per pixel: the histogram model in the form made for interactive re-solving."""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module
from graphcut._arrays import energy_kernels as _gpu
from graphcut.io import BACKGROUND, FOREGROUND
from graphcut.models import bin_indices, check_bins, cost_table

from ._capacities import DEFAULT_SCALE, quantize


class SeedHistograms:
    """The colour histograms of the object and background seeds, kept up to date from seed
    edits, with their costs as one small table per label.

    This is the colour model of :func:`regional_costs` in a form made for interactive use: a
    pixel's cost depends only on its histogram cell, so the per-pixel costs are a table lookup
    (``table[cell of p]``). After a seed edit only the counts of the edited pixels change
    (:meth:`edit`, a few microseconds per stroke), the tables are recomputed over the cells
    (4,096 for colour images at 16 bins, 64 for grey; done with NumPy on the host, also for a
    GPU session) and :func:`capacities_from_tables` turns them into terminal capacities with
    one lookup per pixel (one kernel launch on the GPU). The capacities are exactly those of
    :func:`terminal_capacities` on :func:`regional_costs` (the same float costs, rounded the
    same way).

    Parameters
    ----------
    values
        the image as :func:`image_as_float` returns it, NumPy or CuPy.
    bins
        histogram bins per channel, as for :func:`regional_costs`.

    Attributes
    ----------
    index
        the histogram cell of every pixel, int32 (H, W), on the image's device.
    counts
        int64 (2, cells) NumPy array: seed pixels per cell, row 0 object, row 1
        background.
    """

    def __init__(self, values, *, bins=None, host_index=True):
        xp = array_module(values)
        self.bins = check_bins(bins, values.shape[-1])
        self.hist_shape = (self.bins,) * values.shape[-1]
        self.cells = self.bins ** values.shape[-1]
        self.index = bin_indices(values, self.bins)
        if xp is np:
            self.index = self.index.astype(np.int32)
        self._index_host = None  # the cells on the host, for edit() and fit()
        if host_index:
            host = self.index.get() if xp is not np else self.index
            self._index_host = host.astype(np.uint16) if self.cells <= 2**16 else host
        self.counts = np.zeros((2, self.cells), dtype=np.int64)

    @property
    def seed_counts(self) -> tuple[int, int]:
        """Numbers of (object, background) seed pixels counted."""
        return int(self.counts[0].sum()), int(self.counts[1].sum())

    def fit(self, seeds) -> None:
        """Count the seeds of a whole (H, W) NumPy label array from scratch."""
        for row, label in ((0, FOREGROUND), (1, BACKGROUND)):
            self.counts[row] = np.bincount(self._index_host[seeds == label],
                                           minlength=self.cells)

    def edit(self, region, before, after) -> bool:
        """Count a seed edit: the labels of ``region`` (a pair of slices) went from ``before``
        to ``after`` (NumPy arrays of the region's shape). Returns whether any label changed."""
        changed = before != after
        if not changed.any():
            return False
        cells = self._index_host[region][changed]
        old, new = before[changed], after[changed]
        for row, label in ((0, FOREGROUND), (1, BACKGROUND)):
            for selected, sign in ((cells[old == label], -1), (cells[new == label], 1)):
                if len(selected) > self.cells // 8:
                    self.counts[row] += sign * np.bincount(selected, minlength=self.cells)
                elif len(selected):
                    np.add.at(self.counts[row], selected, sign)
        return True

    def capacity_tables(self, scale=DEFAULT_SCALE):
        """``(source_table, sink_table)``: int32 NumPy arrays, one entry per cell, of
        ``rint(scale * cost)`` with the background cost on the source side and the object
        cost on the sink side (as :func:`terminal_capacities`). Both models need seeds."""
        if not (self.counts[0].any() and self.counts[1].any()):
            raise ValueError("seed histograms need at least one object and one background seed")
        cost_object = cost_table(self.counts[0].astype(np.float64), self.hist_shape)
        cost_background = cost_table(self.counts[1].astype(np.float64), self.hist_shape)
        return (quantize(cost_background, scale=scale,
                         what="background costs (source capacities)"),
                quantize(cost_object, scale=scale, what="object costs (sink capacities)"))


def capacities_from_tables(index, seeds, pins, source_table, sink_table, *, out=None):
    """Terminal capacities by one table lookup per pixel, with the seeds' hard constraints.

    ``source[p] = source_table[index[p]]`` and ``sink[p] = sink_table[index[p]]``, except
    object seeds (label 1: ``source = pins[p]``, ``sink = 0``) and background seeds (label 2:
    the reverse). On the GPU this is one fused kernel; on the host a few NumPy passes.

    Parameters
    ----------
    index
        int32 (H, W) cell of every pixel (:attr:`SeedHistograms.index`).
    seeds
        uint8 (H, W) labels (0 none, 1 object, 2 background), on the same device.
    pins
        int32 (H, W) hard-constraint capacities (:func:`seed_pins`).
    source_table, sink_table
        int32 per-cell capacities
        (:meth:`SeedHistograms.capacity_tables`), on the same device.
    out
        optional ``(source, sink)`` int32 (H, W) arrays to write into.

    Returns
    -------
    tuple of numpy.ndarray
        ``(source, sink)``, int32 (H, W).
    """
    xp = array_module(index)
    if out is None:
        out = (xp.empty(index.shape, dtype=xp.int32), xp.empty(index.shape, dtype=xp.int32))
    source, sink = out
    if xp is not np:
        _gpu().capacities_from_tables(index, seeds, pins, source_table, sink_table, source,
                                      sink)
        return source, sink
    np.take(source_table, index, out=source)
    np.take(sink_table, index, out=sink)
    is_object = seeds == FOREGROUND
    is_background = seeds == BACKGROUND
    np.copyto(source, pins, where=is_object)
    np.copyto(sink, 0, where=is_object)
    np.copyto(sink, pins, where=is_background)
    np.copyto(source, 0, where=is_background)
    return source, sink


__all__ = ["SeedHistograms", "capacities_from_tables"]
