"""Compact, exact records of the learned model's training samples, so that a later call can
tell whether it is given the samples of the last fit again (:meth:`Learned.log_odds
<graphcut.models.Learned.log_odds>` reuses that fit's costs) without keeping the dense (H, W)
arrays alive between updates."""

from __future__ import annotations

from graphcut._arrays import CUB_SIZE_CLASSES_UP_TO, array_module, to_host

#: a sample is recorded when at most this share of its pixels is nonzero (strokes); a denser
#: one (a box's inside) is not, and never compares equal
SPARSE_SHARE = 0.125
#: records of at most this many pixels are compared on the host (:func:`same_sample`)
HOST_COMPARE = CUB_SIZE_CLASSES_UP_TO


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
    """Whether ``sample`` equals the one :func:`sample_record` recorded (False for None).

    Records of at most :data:`HOST_COMPARE` pixels are compared on the host: on the GPU,
    CuPy's CUB reduction behind ``all()`` is compiled once per power-of-two size class up to
    that size (``graphcut._arrays.CUB_SIZE_CLASSES_UP_TO``; about 2.5 s each on an H100 with
    an empty kernel cache: a stroke of a new size would pay it), and one class serves every
    larger size (:func:`graphcut.segmentation.warm_up` compiles that one).
    """
    if record is None or tuple(sample.shape) != record[0] or sample.dtype != record[1]:
        return False
    other = sample_record(sample)
    if other is None or other[2].size != record[2].size:
        return False
    pairs = ((other[2], record[2]), (other[3], record[3]))
    if record[2].size <= HOST_COMPARE:
        pairs = tuple((to_host(a), to_host(b)) for a, b in pairs)
    return all(bool((a == b).all()) for a, b in pairs)


__all__ = ["HOST_COMPARE", "SPARSE_SHARE", "same_sample", "sample_record"]
