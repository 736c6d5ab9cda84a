"""The learned model's intensity prior taken from the previous mask where that mask tells the
sides apart more clearly than the seeds (:class:`Learned <graphcut.models.Learned>`'s
``guide``).

The graded prior (:func:`~._prior.graded_prior`) gives the bright side of the Otsu split to
the label whose seeds lie more on it. Corrective clicks land on atypical pixels (pale nuclei,
nucleus-like tissue), so one click can move the labels' bright shares past each other: the
prior then *turns round*, at up to full strength, and tells the classifier that the object's
look is the background's. On a development trajectory of H&E tissue a background click on
dark tissue did so (the object's and the background's bright shares 0.85 / 1.00 -> 0.85 /
0.69) and the object became the tissue (IoU 0.85 -> 0.07 without the hold;
docs/appearance-microscopy.md, "The falls, thirteenth session").

With the previous update's mask (``previous``), its bright shares (the mask's pixels' and the
rest's) tell which side the object has been on, and how clearly (their difference). When the
mask tells the sides apart more clearly than the seeds, :func:`guided_prior` gives the prior
the mask's side and strength (:data:`MODE` ``"mask"``); a first mask that hardly tells the
sides apart (a wrong one) does not overrule clear seeds. The decision is a function of the
seeds and the previous mask only, so an update equals a fresh segmentation given the same
``previous``; the previous update's classifier (the confidence-gated hold's) is trained with
the same guide.
"""

from __future__ import annotations

from graphcut._arrays import array_module

from ._local_split import local_bright_side
from ._prior import FULL_AT, bright_side, graded_prior

#: the prior when the previous mask tells the sides apart more clearly than the seeds: "mask"
#: (the mask's side and difference), "follow" (the mask's side, the seeds' difference, only
#: when they disagree), "off" (no prior when they disagree) or None (the seeds' prior)
MODE = "mask"


def guided_prior(masks, difference, bright, guide, mode=None):
    """The prior ``(masks, difference)`` of :func:`~._prior.graded_prior` checked against
    the previous mask ``guide``, and whether it changed.

    The previous mask's bright shares (the mask's pixels' and the rest's, over the whole
    image) say which side its object lies on, and how clearly: the difference of the two. When
    the mask tells the sides apart more clearly than the seeds (its difference is the larger),
    the prior takes the mask's side and difference (``"mask"``, the default); or, measured
    and not kept, only when the sides disagree, the mask's side with the seeds' difference
    (``"follow"``) or no prior (``"off"``). Otherwise the seeds' prior stands: a previous mask
    that hardly tells the sides apart (a wrong first mask) does not overrule clear seeds.

    Parameters
    ----------
    masks : tuple
        ``(mask_0, mask_1)``: the object's and the background's prior sides (bool (H, W),
        one the complement of the other; ``bright`` or its complement), or ``(None, None)``.
    difference : float
        The difference of the seeds' bright shares (0 to 1; :func:`~._prior.graded_prior`
        without ``full_at``).
    bright : array (H, W) of bool
        :func:`~._prior.bright_side` of the image.
    guide : array (H, W) of bool, or None
        The previous update's mask (object True); None: nothing to check against.
    mode : str, optional
        ``"mask"``, ``"follow"``, ``"off"`` or None (:data:`MODE` when not given).

    Returns
    -------
    tuple
        ``(masks, difference, changed)``.

    Examples
    --------
    >>> import numpy as np
    >>> bright = np.zeros((4, 4), bool); bright[:, 2:] = True
    >>> mask = ~bright                        # the object has been the dark side: shares 0, 1
    >>> (first, second), difference, changed = guided_prior((bright, ~bright), 0.2, bright,
    ...                                                     mask, "mask")
    >>> bool((first == ~bright).all()), difference, changed
    (True, 1.0, True)
    >>> guided_prior((bright, ~bright), 0.2, bright, mask, "follow")[1:]
    (0.2, True)
    """
    mode = MODE if mode is None else mode
    if mode is None or guide is None or masks[0] is None:
        return masks, difference, False
    xp = array_module(bright)
    guide = xp.asarray(guide, dtype=bool)
    inside, size = int(guide.sum()), int(guide.size)
    if inside in (0, size):
        return masks, difference, False
    bright_inside = int((guide & bright).sum())
    share_inside = bright_inside / inside
    share_outside = (int(bright.sum()) - bright_inside) / (size - inside)
    clearer = abs(share_inside - share_outside)
    agree = (masks[0] is bright) == (share_inside > share_outside)
    if clearer <= difference or (agree and mode != "mask"):
        return masks, difference, False
    if mode == "off":
        return (None, None), 0.0, True
    sides = masks if agree else (masks[1], masks[0])
    return sides, (clearer if mode == "mask" else difference), True


def prior_knobs(model):
    """The learned ``model``'s intensity prior weight and split for its next fit: ``prior``
    and ``split`` from strokes alone, ``box_prior`` and ``box_split`` when the pipeline fits
    it with a box or lasso (it sets ``model.region``; the local split and the stronger
    prior, chosen on clicks, cost the dev boxes' small nuclei 0.005: docs/appearance-
    microscopy.md, "The nineteenth session").

    Returns
    -------
    tuple
        ``(weight, split)``: float >= 0 and ``"otsu"`` or ``"local"``.
    """
    if getattr(model, "region", False):
        return float(model.box_prior), model.box_split
    return float(getattr(model, "prior", 0.0)), getattr(model, "split", "otsu")


def prior_sides(model, features, samples):
    """The learned ``model``'s prior for two labels' ``samples``: the graded prior
    (:func:`~._prior.graded_prior`, the image's split kept per image on ``model._split``:
    the global Otsu split, or the local one, :func:`~._local_split.local_bright_side`, as
    :func:`prior_knobs` says) checked against ``model.guide`` (:func:`guided_prior`).

    Parameters
    ----------
    model : graphcut.models.Learned
        Its ``_channels`` (the image's channel count), ``guide`` (the previous mask or None),
        ``split`` (``"otsu"`` or ``"local"``) and ``_split`` (``(features, channels, bright,
        {side: drawn sample}, split)``, made here when missing or for other features or
        split) are read.
    features : array (H, W, F)
        The image's features.
    samples : sequence of two arrays (H, W)
        The object's and the background's samples (bool, or float weights).

    Returns
    -------
    tuple
        ``(masks, strength, split)``: the prior's sides (object first; ``(None, None)``
        without one), its strength (0 to 1) and ``model._split``.
    """
    channels = getattr(model, "_channels", 1)
    kind = prior_knobs(model)[1]
    split = getattr(model, "_split", None)
    if split is None or split[0] is not features or split[1] != channels or \
            split[4:] != (kind,):
        side = local_bright_side if kind == "local" else bright_side
        split = model._split = (features, channels, side(features, channels), {}, kind)
    masks, difference = graded_prior(features, samples, channels, bright=split[2])
    masks, difference, _ = guided_prior(masks, difference, split[2], model.guide)
    return masks, min(1.0, difference / FULL_AT), split


__all__ = ["MODE", "guided_prior", "prior_knobs", "prior_sides"]
