"""Live GrabCut with a box: iterate once per box, then one refit and one cut per stroke.

GrabCut's iterations (:func:`~._grabcut.iterate_binary`) learn the object from the mask, but
running them again after every stroke costs a fit and a cut per iteration. A model with
``warm=True`` (:class:`~graphcut.models.GMM`) runs them only for the box or lasso alone, and
keeps what they gave: the last mask and the fitted mixtures (on an image of more than
:data:`~._coarse.COARSE_PIXELS` pixels the box's iterations run on the coarse grid of
:mod:`._coarse`, then one re-estimation on the image's blocks and one full-size cut give the
box's mask: :data:`COARSE_BOX`). A stroke then costs one fit and one cut:

1. the object's sample is the box's last mask plus the object seeds, the background's its
   complement plus the background seeds and the outside (the seeds weigh as always, see
   ``seed_share``);
2. the kept mixtures are re-estimated on these samples by one EM step (warm start:
   :meth:`~graphcut.models.AppearanceModel.refit`), and the image is cut once under them, with
   the seeds and the outside as hard constraints.

Both steps depend on the image, the box and the seeds only (never on the order of the
strokes), so :class:`~graphcut.Segmenter`'s answer to a stroke equals a fresh
:func:`graphcut.segment`'s with the same box and seeds: the fresh one runs the box's
iterations first.
"""

from __future__ import annotations

import copy
import dataclasses
import time

import numpy as np

from graphcut._arrays import array_module, to_host

from ._coarse import blocks_sample, coarse_factor, coarse_grabcut, kept_centres
from ._grabcut import Iterated, _binary, _Clock, iterate_binary
from ._prune import prune_box
from ._seed_weights import weighted_samples

#: the box's iterations run on the coarse grid (:mod:`._coarse`: blocks of ``f x f`` pixels),
#: then the mixtures are re-estimated once on the image's blocks and the image is cut once
#: (an image of at most ``COARSE_PIXELS`` pixels iterates at full size, as before)
COARSE_BOX = True


class BoxStart:
    """What GrabCut's iterations gave for a box or lasso alone (kept on the model object):
    the mask and each label's fitted colour model, with the inputs they depend on."""

    def __init__(self, key, mask, fitted, run):
        self.key, self.mask, self.fitted, self.run = key, mask, fitted, run

    def matches(self, key) -> bool:
        """Whether ``key`` (:func:`_key`) names the same image, region and options."""
        mine = self.key
        return (mine[0] is key[0] and mine[1] is key[1] and mine[2:-1] == key[2:-1]
                and (mine[-1] is key[-1] or np.array_equal(mine[-1], key[-1])))


def _key(values, nlinks, region, o):
    return (values, nlinks, o["iterations"], o["tol"], o["scale"], to_host(region))


def warm_binary(values, nlinks, binary, model, core, *, region, seeds_given, weights,
                priors, o, cut, device="cpu", box_priors=None) -> Iterated:
    """One object with a box or lasso, for a model with ``warm=True``.

    Parameters
    ----------
    values : array (H, W, F)
        The model's features of the image.
    nlinks : tuple of arrays
        The n-link capacities (the cut's).
    binary : array (H, W) of uint8
        The hard constraints: 0 free, 1 object (seeds), 2 background (seeds and outside).
    model : AppearanceModel
        The model object (a per-label model whose ``refit`` is one EM step from its fit);
        the box's start is kept on it (``model._box_start``).
    core : array (H, W) of bool, or a callable returning it
        The object's first sample for the box alone: the region's core (``model.core``) or
        the whole region (a callable is called only when the box's iterations run).
    region : array (H, W) of bool
        The box's or lasso's inside (host or the values' device).
    seeds_given : bool
        Whether any seed is marked; without seeds the box's iterations are the answer.
    weights : array (H, W) or None
        Every pixel's sample weight (the seeds' ``seed_share``), None: 1.
    priors : list or None
        Per label a fixed cost (H, W) added to its model's, or None.
    o : dict
        The checked options (:func:`~._options.resolve_options`).
    cut : callable
        ``cut(network) -> CutResult``.
    device : str
        Where the coarse grid's cuts run (:func:`~._coarse.coarse_grabcut`).
    box_priors : list or None
        Per label a fixed cost (H, W) for the box's iterations (the model's outline cost:
        it depends on the region and the model only), or None.

    Returns
    -------
    Iterated
        The answer; ``iterations`` is the box's iteration count when no seed is given (0
        when they ran on the coarse grid), else 0 (one refit and one cut).
    """
    xp = array_module(values)
    key = _key(values, nlinks, region, o)
    start = getattr(model, "_box_start", None)
    if start is None or not start.matches(key):
        outside = xp.asarray(~to_host(region))
        box_constraints = xp.where(outside, xp.uint8(2), xp.uint8(0)).astype(xp.uint8)
        samples = (xp.asarray(core() if callable(core) else core), outside)
        if COARSE_BOX and values.ndim == 3 and coarse_factor(values.shape[:2]) > 1:
            run = coarse_then_refit(values, nlinks, box_constraints, model, samples,
                                    weights=None, priors=box_priors, o=o, device=device,
                                    cut=cut)
        else:
            run = iterate_binary(values, nlinks, box_constraints, model, samples,
                                 iterations=o["iterations"], tol=o["tol"], scale=o["scale"],
                                 cut=cut, priors=box_priors)
        sample = prune_box(values, model, run.labels, threshold=getattr(model, "prune", 0.0),
                           priors=box_priors)
        if sample is not None:  # the object's shared Gaussians dropped (:mod:`._prune`)
            run = refit_and_cut(values, nlinks, box_constraints, model, sample, weights=None,
                                priors=box_priors, scale=o["scale"], cut=cut)
        # no tightness prior here (:mod:`._tightness`): on the photo cut-outs it changed the
        # box IoU by +0.004 and cost 28 ms a box at 4 MP on a GPU (docs/appearance-photos.md)
        start = BoxStart(key, run.labels, [copy.copy(m) for m in model._fitted], run)
        model._box_start = start
    if not seeds_given:  # the kept answer, its mask copied (the caller may keep or change it)
        return dataclasses.replace(start.run, labels=start.run.labels.copy())
    model._fitted = [copy.copy(m) for m in start.fitted]
    return refit_and_cut(values, nlinks, binary, model, start.mask, weights=weights,
                         priors=priors, scale=o["scale"], cut=cut)


def coarse_then_refit(values, nlinks, constraints, model, samples, *, weights, priors, o,
                      device, cut, start=None, settled=0.0, strokes_alone=False) -> Iterated:
    """GrabCut's iterations on the coarse grid (:func:`~._coarse.coarse_grabcut`, ``start``,
    ``settled`` and ``strokes_alone`` as there), then one re-estimation on the image's blocks
    and one full-size cut (:func:`refit_and_cut`): a box alone (:data:`COARSE_BOX`) and a live
    model's strokes alone. Strokes alone with a model's ``stroke_share`` set (not None), the
    samples and ``weights`` are the seeds' (``constraints`` 1 and 2) weighted by that share
    instead (:func:`~._seed_weights.stroke_weights`)."""
    share = getattr(model, "stroke_share", None) if strokes_alone else None
    if share is not None:  # strokes alone: the seeds' own share (``GMM(stroke_share=...)``)
        weights, samples = weighted_samples(constraints, share)
    coarse = coarse_grabcut(values, nlinks, constraints, model, samples, weights=weights,
                            priors=priors, o=o, device=device, start=start, settled=settled,
                            strokes_alone=strokes_alone)
    return refit_and_cut(values, nlinks, constraints, model, coarse, weights=weights,
                         priors=priors, scale=o["scale"], cut=cut)


def refit_and_cut(values, nlinks, binary, model, mask, *, weights, priors, scale,
                  cut) -> Iterated:
    """One re-estimation of the fitted ``model`` and one cut: the object's sample is
    ``mask`` plus the object seeds, the background's its complement plus the background
    seeds (``binary``: 1 object, 2 background; ``weights``: the pixels' sample weights or
    None; a label whose sample is empty leaves the model as fitted), taken on the coarse
    grid's blocks (:func:`~._coarse.blocks_sample`: the re-estimation reads ``f^2`` times
    fewer pixels); ``priors``: the labels' fixed costs or None; ``cut(network) ->
    CutResult``.

    Returns
    -------
    Iterated
        The cut's mask (``iterations`` 0) and energy.
    """
    xp = array_module(values)
    clock = _Clock()
    t = time.perf_counter()
    sampled, chosen, sample_weights = blocks_sample(values, binary, xp.asarray(mask), weights,
                                                    centres=kept_centres(model, values))
    if all(bool(c.any()) for c in chosen):  # else a label has nothing to learn from: the
        model.refit(sampled, [c if sample_weights is None else  # model stays as fitted
                              xp.where(c, sample_weights, 0.0) for c in chosen])
    t = clock.add("fit", t)
    problem = _binary(values, nlinks, binary, model, scale, clock, weights, priors)
    t = time.perf_counter()
    result = cut(problem.network)
    clock.add("cut", t)
    energy = result.flow / scale + problem.offset
    return Iterated(xp.asarray(result.source_side, dtype=bool), energy, [energy], 0,
                    result.flow, result.backend, result.seconds, clock.total(), result)
