"""A box's object mixture without the Gaussians the background explains as well.

GrabCut's object mixture starts from the box's core (``GMM(core=...)``). On a thin or open
object (scissors with their handles' holes, a diagonal spoon) the core is mostly background,
and the object's first mixture learns that background's colours. The iterations cannot undo
it: the pixels of those colours sit in the object's mask, so every refit learns them again.
Such a Gaussian carries no evidence for the object: over its pixels the background's mixture
costs about as much as the object's. After the box's iterations (:mod:`._warm`), the object
Gaussians whose pixels in the mask (the mask's pixels whose most responsible object Gaussian
it is) have a median margin ``cost_background - cost_object`` below ``prune`` nats are
*shared*; when the shared Gaussians' weights add up to at least :data:`PRUNE_WEIGHT` (a
background region the core swallowed is large, and it is often split among several
Gaussians), they are dropped; the object is re-estimated once on the mask without those
pixels (the background on the rest: they join it) and the image is cut once
(:func:`~._warm.refit_and_cut`, called by :func:`~._warm.warm_binary`). When nothing is
dropped, or every Gaussian would be, the box's mask stands. ``auto`` uses it on colour
photographs only (:data:`graphcut.models._auto.COLOUR_ONLY`).

The margin's object cost includes the box's fixed object costs (the outline cost). Whole-array
NumPy / CuPy code on the image's device (the costs and responsibilities are the ones the last
cut computed, kept by the mixture), so the CPU and GPU paths compute the same numbers to
rounding; only the K medians travel to the host.

Measured on the photo cut-outs' development split (docs/appearance.md, "A box: the object's
shared Gaussians"): box IoU 0.837 -> 0.863 and NoC@90 3.80 -> 3.47; only the scissors
change.
"""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module, to_host

#: the shared Gaussians are dropped only when their mixing weights add up to at least this
#: (a background region the core swallowed is large; a few small shared Gaussians are an
#: object's highlights and shadows, which the background may share)
PRUNE_WEIGHT = 0.15


def shared_components(margins, responsible, mask, weights, threshold, *, min_weight=None):
    """The indices of the object Gaussians to drop.

    Parameters
    ----------
    margins : array (N,)
        ``cost_background - cost_object`` per pixel (nats), NumPy or CuPy.
    responsible : array (N,) of int
        The object Gaussian most responsible for each pixel.
    mask : array (N,) of bool
        The object's mask.
    weights : numpy.ndarray (K,)
        The object Gaussians' mixing weights.
    threshold : float
        A Gaussian is shared when its pixels' median margin is below this (nats).
    min_weight : float, optional
        The shared Gaussians are dropped only when their weights add up to at least this;
        None: :data:`PRUNE_WEIGHT` (read when called, so that a patched constant counts).

    Returns
    -------
    list of int
        The shared Gaussians' indices, ascending; empty when their weights add up to less
        than ``min_weight``, or when every Gaussian is shared (the object would have no
        mixture left).

    Examples
    --------
    >>> import numpy as np
    >>> margins = np.array([0.2, -0.1, 9.0, 8.0, 0.3, 7.0])
    >>> responsible = np.array([0, 0, 1, 1, 0, 2])
    >>> mask = np.ones(6, bool)
    >>> shared_components(margins, responsible, mask, np.array([0.5, 0.4, 0.1]), 1.0)
    [0]
    >>> shared_components(margins, responsible, mask, np.array([0.1, 0.6, 0.3]), 1.0)
    []
    """
    xp = array_module(margins)
    min_weight = PRUNE_WEIGHT if min_weight is None else min_weight
    weights = np.asarray(weights, dtype=np.float64)
    chosen = []
    for k in range(len(weights)):
        mine = margins[mask & (responsible == k)]
        if mine.size and float(to_host(xp.median(mine))) < threshold:
            chosen.append(k)
    if len(chosen) == len(weights) or float(weights[chosen].sum()) < min_weight:
        return []
    return chosen


def without_components(mixture, drop) -> None:
    """Remove the Gaussians ``drop`` (indices) from a fitted ``GMMModel``, in place; the
    remaining weights are renormalised."""
    keep = np.setdiff1d(np.arange(len(mixture.weights)), np.asarray(drop, dtype=np.int64))
    weights = mixture.weights[keep]
    mixture.weights = weights / weights.sum()
    mixture.means = mixture.means[keep]
    mixture.covariances = mixture.covariances[keep]
    mixture._evaluated = None


def prune_box(values, model, mask, *, threshold, priors):
    """Drop the object's shared Gaussians (module notes) after the box's iterations.

    Parameters
    ----------
    values : array (H, W, F)
        The model's features of the image.
    model : PerLabelModel
        The fitted model (``model._fitted``: the object's and the background's
        ``GMMModel``); the object's mixture loses the dropped Gaussians, in place.
    mask : array (H, W) of bool
        The box's mask.
    threshold : float
        :func:`shared_components`' threshold (nats); 0: off.
    priors : list or None
        The labels' fixed costs of the box (object first), or None.

    Returns
    -------
    array (H, W) of bool, or None
        The object's sample for the re-estimation (``mask`` without the dropped Gaussians'
        pixels), on ``values``' device; None when nothing is dropped (the model unchanged).
    """
    fitted = getattr(model, "_fitted", None)
    if threshold <= 0 or fitted is None or len(fitted) != 2 or \
            not hasattr(fitted[0], "weights") or len(fitted[0].weights) < 2:
        return None
    xp = array_module(values)
    obj, background = fitted
    cost_object = obj.costs(values).reshape(-1)
    if priors is not None and priors[0] is not None:
        cost_object = cost_object + xp.asarray(priors[0]).reshape(-1)
    margins = background.costs(values).reshape(-1) - cost_object
    _, responsibilities = obj._evaluate(values)
    responsible = responsibilities.parts.argmax(axis=1)
    mask = xp.asarray(mask, dtype=bool)
    drop = shared_components(margins, responsible, mask.reshape(-1), obj.weights, threshold)
    if not drop:
        return None
    without_components(obj, drop)
    return mask & ~xp.isin(responsible, xp.asarray(drop)).reshape(mask.shape)
