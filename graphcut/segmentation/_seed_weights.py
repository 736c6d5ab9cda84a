"""The seeds' sample weights: each label's seeds weigh a share of the image's pixels together
(the pipeline's ``seed_share``; the live GMM's ``stroke_share`` for strokes alone), every
other pixel 1, so that a few stroke pixels are not drowned by the millions the mask gives a
mixture or a classifier to learn from."""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module, to_host
from graphcut._labels import BACKGROUND, FOREGROUND


def seed_weights(seeds, objects, share):
    """Float (H, W) sample weights: 1, and for the seeds of each of the ``objects``' labels
    and the background's ``share * H * W / (its seed count)`` (at least 1); None when every
    weight is 1 (``share`` 0).

    Parameters
    ----------
    seeds : array (H, W)
        The seed labels (NumPy or CuPy).
    objects : sequence of int
        The objects' labels (the background's, 2, is weighed too).
    share : float
        The share of the image's pixels each label's seeds weigh together, 0 to 1.

    Returns
    -------
    array (H, W) of float64 or None
        On ``seeds``' device.

    Examples
    --------
    >>> import numpy as np
    >>> seeds = np.array([[1, 0, 0, 0], [0, 0, 2, 2]], np.uint8)
    >>> seed_weights(seeds, [1], 0.5)
    array([[4., 1., 1., 1.],
           [1., 1., 2., 2.]])
    """
    if share <= 0:
        return None
    xp = array_module(seeds)
    labels = [*objects, BACKGROUND]
    if xp is np or seeds.dtype != np.uint8:  # a count and an assignment per label
        weights = xp.ones(seeds.shape, dtype=xp.float64)
        for label in labels:
            chosen = seeds == label
            count = int(chosen.sum())
            if count:
                weights[chosen] = max(1.0, share * seeds.size / count)
        return weights
    # on a GPU the labels' counts come in one copy and each pixel's weight is looked up by its
    # label (a table of every uint8 value): no wait per label, no boolean scatter
    counts = to_host(xp.stack([xp.count_nonzero(seeds == label) for label in labels]))
    table = np.ones(256)
    for label, count in zip(labels, counts.tolist()):
        if count:
            table[label] = max(1.0, share * seeds.size / count)
    return xp.asarray(table)[seeds]


def stroke_weights(binary, share):
    """:func:`seed_weights` of one object's seeds and the background's (``binary``: 1 object,
    2 background, as the pipeline's constraints)."""
    return seed_weights(binary, [FOREGROUND], share)


def weighted_samples(seeds, share):
    """One object's and the background's samples from their seeds (``seeds`` 1 and 2): the
    weights of :func:`stroke_weights` on each label's seeds, 0 elsewhere (bool masks when
    ``share`` is 0).

    Returns
    -------
    tuple
        ``(weights, (object_sample, background_sample))``; ``weights`` None when ``share``
        is 0.
    """
    xp = array_module(seeds)
    weights = stroke_weights(seeds, share)
    samples = tuple(s if weights is None else xp.where(s, weights, 0.0)
                    for s in (seeds == FOREGROUND, seeds == BACKGROUND))
    return weights, samples


__all__ = ["seed_weights", "stroke_weights", "weighted_samples"]
