"""Compact, exact records of the learned model's training samples, so that a later call can
tell whether it is given the samples of the last fit again (:meth:`Learned.log_odds
<graphcut.models.Learned.log_odds>` reuses that fit's costs) without keeping the dense (H, W)
arrays alive between updates."""

from __future__ import annotations

from graphcut._arrays import array_module

#: a sample is recorded when at most this share of its pixels is nonzero (strokes); a denser
#: one (a box's inside) is not, and never compares equal
SPARSE_SHARE = 0.125


def sample_record(sample):
    """``(shape, dtype, flat indices of the nonzero pixels, their values)`` of a bool or float
    (H, W) sample on its device, or None when more than :data:`SPARSE_SHARE` of it is
    nonzero.

    Examples
    --------
    >>> import numpy as np
    >>> sample = np.zeros((4, 5))
    >>> sample[1, 2] = 3.0
    >>> record = sample_record(sample)
    >>> record[2].tolist(), record[3].tolist()
    ([7], [3.0])
    >>> same_sample(record, sample.copy()), same_sample(record, sample * 2)
    (True, False)
    """
    xp = array_module(sample)
    flat = sample.reshape(-1)
    if int(xp.count_nonzero(flat)) > SPARSE_SHARE * flat.size:  # no index array for it
        return None
    index = xp.flatnonzero(flat)
    return tuple(sample.shape), sample.dtype, index, flat[index]


def same_sample(record, sample) -> bool:
    """Whether ``sample`` equals the one :func:`sample_record` recorded (False for None)."""
    if record is None or tuple(sample.shape) != record[0] or sample.dtype != record[1]:
        return False
    other = sample_record(sample)
    return other is not None and other[2].size == record[2].size and \
        bool((other[2] == record[2]).all()) and bool((other[3] == record[3]).all())


__all__ = ["SPARSE_SHARE", "same_sample", "sample_record"]
