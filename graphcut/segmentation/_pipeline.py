"""The segmentation pipeline's general update: every appearance model, boxes and lassos,
several objects, GrabCut iterations, clean-up (:func:`segment_values`), and the
:class:`~graphcut.solver.CutResult` it reports."""

from __future__ import annotations

import functools
import time

import numpy as np

from graphcut._arrays import array_module, to_host
from graphcut._labels import BACKGROUND, FOREGROUND, NONE
from graphcut.io import checked_objects, object_labels
from graphcut.solver import CutResult

from ._cleanup import clean_labels, clean_mask
from ._grabcut import iterate_binary, iterate_labels
from ._regions import allowed_region, region_core
from . import _coarse
from ._coarse import coarse_factor
from ._hold import check_previous, hold_costs, with_hold
from ._locality import _locality_priors
from ._previous_start import previous_start
from ._ring import with_ring
from ._outline import outline_priors
from ._tightness import tight_box, tighten_run
from ._seed_weights import seed_weights, weighted_samples
from ._warm import coarse_then_refit, warm_binary


def segment_values(values, nlinks, seeds, o, *, device, cut, shape=None, moves=None,
                   starts=None, device_output=False, coarse_start=None, previous=None):
    """One update of the pipeline on the model's features ``values`` (``o["appearance"]``'s
    :meth:`~graphcut.models.AppearanceModel.features` of the image's float values) with the
    n-link capacities ``nlinks`` and the checked options ``o`` (:func:`resolve_options`):
    constraints from the seeds and the box / lasso, the labels' samples, the model fitted and
    its costs turned into t-links; one-object cuts go through ``cut(network) -> CutResult``
    (the :class:`Segmenter`'s incremental solver), K-label moves through alpha-expansion on
    ``device``; GrabCut's iterations refit and re-cut; clean-up last.

    ``shape``: the grid's shape, (H, W) or a volume's (D, H, W); None: ``values.shape[:2]``.
    ``moves``: called (without arguments) for the expansion moves' cutter when the seeds mark
    several objects (:meth:`GridCuts.moves`); None: one cutter per expansion. ``starts``:
    several objects' labellings kept between updates (a dict, see :func:`kept_start`;
    :attr:`GridCuts.starts`), None: every expansion starts from the cheapest labels.

    ``device_output``: one object's mask stays on the values' device (a label image of
    several objects always comes to the host). ``coarse_start``: a live model's strokes alone
    start their coarse iterations from the last update's (a kept
    :class:`~._coarse.CoarseStart`, updated here); None: from the seeds (exact: a fresh
    update's answer). ``previous``: the previous update's ``(seeds, mask)`` for a model with
    a ``hold`` (:mod:`._hold`; one object, strokes alone, an image), or its ``(seeds,
    labels)`` for several objects, whose expansion then starts from those labels
    (:mod:`._previous_start`); None: no hold, the cheapest labels.

    Returns ``(output, run)``: the mask or label image (host) and the :class:`Iterated`."""
    xp = array_module(values)
    shape = tuple(values.shape[:2] if shape is None else shape)
    labels_before = None if previous is None else previous[1]  # several objects' start
    previous = check_previous(previous, shape)
    outside = None
    if o["box"] is not None and o["lasso"] is None:  # kept for the next strokes
        region, outside = _box_region(shape, tuple(int(v) for v in o["box"]), xp)
    else:
        region = allowed_region(shape, box=o["box"], lasso=o["lasso"])
    has_region = region is not None
    if seeds is None:
        if not has_region:
            raise ValueError("nothing marks the object: give seeds (at least one object and "
                             "one background seed) or a box or lasso")
        seeds, objects = xp.zeros(shape, dtype=xp.uint8), []
    else:
        if array_module(seeds) is not xp:
            seeds = to_host(seeds)  # host seeds are checked on the host, then moved once
        seeds, objects = checked_objects(seeds, shape, require_both=not has_region)
    seeds = xp.asarray(seeds)
    if len(objects) > 1 and len(shape) != 2:
        raise ValueError(f"the seeds mark {len(objects)} objects (labels "
                         f"{', '.join(map(str, objects))}) in a volume: several objects are "
                         "segmented in images only (alpha-expansion is 2-D); segment a volume's "
                         "objects one at a time (object seeds 1, background 2)")
    constraints = seeds
    if has_region:
        outside = xp.asarray(~region) if outside is None else outside
        stray = int(((seeds != NONE) & (seeds != BACKGROUND) & outside).sum())
        if stray:
            raise ValueError(f"{stray} object seed pixel(s) lie outside the box / lasso, where "
                             "everything is background; erase them or enlarge the box")
        constraints = xp.where(outside, xp.uint8(BACKGROUND), seeds).astype(xp.uint8)
        if not bool((constraints == BACKGROUND).any()):
            raise ValueError("the box / lasso covers the whole image and there is no "
                             "background seed: nothing is known to be background")
    model = o["appearance"]
    cleans_up = o["keep"] != "all" or o["fill_holes"] > 0
    live = getattr(model, "warm", False) and o["iterations"] > 0
    warm = live
    if warm and (len(objects) > 1 or (not has_region and len(shape) != 2)):
        o, warm = {**o, "iterations": 0}, False  # live: no iterations per stroke
    weights = seed_weights(seeds, objects, o["seed_share"])
    background = constraints == BACKGROUND
    labels_in_order = [objects[0] if objects else FOREGROUND, BACKGROUND] \
        if len(objects) <= 1 else [BACKGROUND, *objects]
    far_cost = 0.0 if has_region else o["far_cost"]
    priors = _locality_priors(seeds, labels_in_order, o["locality"], xp,
                              far_cost=far_cost, objects=objects or [FOREGROUND],
                              # a live model's strokes (several objects too): block distances
                              block=coarse_factor(shape) if live and len(shape) == 2 else 1)
    if len(objects) <= 1:
        label = objects[0] if objects else FOREGROUND
        is_object = constraints == label
        binary = xp.where(is_object, xp.uint8(FOREGROUND),
                          xp.where(background, xp.uint8(BACKGROUND), xp.uint8(NONE)))

        def core():  # the object's first sample with a region: its core, or all of it
            if has_region and getattr(model, "core", 0):  # e.g. the learned model
                only_box = o["box"] if o["lasso"] is None else None
                return region_core(region, model.core, box=only_box)
            return region

        box_priors = None
        if has_region and getattr(model, "core", 0) and getattr(model, "outline", 0) > 0:
            # the model's position prior: the object costs more near the outline (kept)
            box_priors = outline_priors(model, region, o["box"] if o["lasso"] is None
                                        else None, xp, values=values)
            priors = _with_outline_cost(priors, box_priors[0], xp)
        if previous is not None:  # the mask on the device once (the hold and the guide)
            previous = (previous[0], xp.asarray(previous[1]))
        if hasattr(model, "region"):  # the learned prior's knobs for a box or lasso
            model.region = bool(has_region)
        if hasattr(model, "guide"):  # the learned prior may come from the previous mask
            model.guide = previous[1] if previous is not None and not has_region and \
                len(shape) == 2 else None
        if previous is not None and not has_region and len(shape) == 2 and \
                getattr(model, "hold", 0) > 0:  # the earlier mask holds far from the stroke
            held = hold_costs(previous, seeds, hold=model.hold, reach=model.hold_reach,
                              after=model.hold_after,
                              confident_after=getattr(model, "confident_after", None),
                              confident_hold=getattr(model, "confident_hold", None),
                              scale=getattr(model, "rim_weights", None),
                              margin=lambda: _previous_log_odds(values, model, previous[0],
                                                                o["seed_share"], xp))
            priors = priors if held is None else with_hold(priors, held, xp)
        if warm and has_region:  # GrabCut's iterations per box, one refit and cut a stroke
            run = warm_binary(values, nlinks, binary, model, core, region=region,
                              seeds_given=bool((seeds != NONE).any()), weights=weights,
                              priors=priors, o=o, cut=cut, device=device,
                              box_priors=box_priors)
        else:
            sample = is_object
            if has_region:
                inside = core()
                sample = ~background if inside is region else xp.asarray(inside) | is_object
            samples = tuple(s if weights is None else xp.where(s, weights, 0.0)
                            for s in (sample, background))
            if has_region and getattr(model, "ring", 0) > 0:  # the box's margin: background
                samples = with_ring(samples, region, is_object, model.ring, xp,
                                    box=o["box"] if o["lasso"] is None else None,
                                    reach=model.outline_reach,
                                    near=getattr(model, "near", None))
            if warm:  # strokes only: the iterations on a coarse grid, one fine refit and cut
                run = coarse_then_refit(values, nlinks, binary, model, samples,
                                        weights=weights, priors=priors, o=o, device=device,
                                        cut=cut, start=coarse_start,
                                        settled=_coarse.COARSE_SETTLED, strokes_alone=True)
            else:
                run = iterate_binary(values, nlinks, binary, model, samples,
                                     iterations=o["iterations"], tol=o["tol"],
                                     scale=o["scale"], cut=cut, weights=weights,
                                     priors=priors)
                box = tight_box(o)
                if box is not None:  # the box's tightness prior (:mod:`._tightness`)
                    run, _ = tighten_run(values, nlinks, binary, model, run, box,
                                         priors=priors, weights=weights, scale=o["scale"],
                                         cut=cut)
        if label == FOREGROUND and cleans_up and xp is not np and len(shape) == 2:
            # on the GPU: the clean-up there (flood fills), then one copy to the host
            cleaned = clean_mask(run.labels.astype(bool, copy=False), seeds, keep=o["keep"],
                                 fill_holes_area=o["fill_holes"], outside=outside)
            return (cleaned if device_output else to_host(cleaned)), run
        if device_output and label == FOREGROUND and not cleans_up:
            return run.labels.astype(bool, copy=False), run
        mask = to_host(run.labels).astype(bool, copy=False)
        if label == FOREGROUND and not cleans_up:
            return mask, run  # the mask is the output: no label image to build and compare
        labels = np.where(mask, label, 0).astype(np.uint8)
    else:
        pinned = xp.full(shape, -1, dtype=xp.int64)
        pinned = xp.where(background, 0, pinned)
        samples = [background]
        for index, label in enumerate(objects, start=1):
            pinned = xp.where(constraints == label, index, pinned)
            samples.append(constraints == label)
        if weights is not None:
            samples = [xp.where(s, weights, 0.0) for s in samples]
        start = kept_start(starts, o["lam"], objects) if labels_before is None \
            else previous_start(labels_before, objects, xp)
        run = iterate_labels(values, nlinks, pinned, model, samples,
                             iterations=o["iterations"], tol=o["tol"], scale=o["scale"],
                             device=device, weights=weights, priors=priors,
                             cuts=None if moves is None else moves(),
                             start=start)
        if hasattr(model, "release_costs"):  # per-label caches not read again: freed now
            model.release_costs()
        if starts is not None:
            keep_start(starts, o["lam"], objects, run.labels)
        lookup = xp.asarray(np.array([0] + objects, dtype=np.uint8))
        labels = to_host(lookup[run.labels])  # on the device: a quarter of the bytes back
    if cleans_up:
        labels = clean_labels(labels, objects or [FOREGROUND], to_host(seeds), keep=o["keep"],
                              fill_holes_area=o["fill_holes"],
                              outside=None if outside is None else to_host(outside))
    single = objects in ([], [FOREGROUND])
    return (labels == FOREGROUND if single else labels), run


@functools.lru_cache(maxsize=4)
def _box_region(shape, box, xp):
    """A box's region (host bool) and its outside (on ``xp``'s device), kept for the next
    updates with the same box (the app's strokes): read-only."""
    region = allowed_region(shape, box=box)
    return region, xp.asarray(~region)


def kept_start(starts, lam, objects):
    """The labels (indices, 0 = background) the last update at this ``lam`` ended with, when
    it segmented the same ``objects``; else None (start from the cheapest labels)."""
    kept = None if starts is None else starts.get(float(lam))
    if kept is None or kept[0] != tuple(objects):
        return None
    return kept[1]


def keep_start(starts, lam, objects, labels) -> None:
    """Keep ``labels`` as the next update's start at ``lam`` (at most two lams: the
    automatic lam's guard cuts at two)."""
    starts.pop(float(lam), None)
    starts[float(lam)] = (tuple(objects), labels)
    while len(starts) > 2:
        starts.pop(next(iter(starts)))


def _with_outline_cost(priors, cost, xp):
    """``priors`` (per label, object first) with ``cost`` ((H, W), nats: the model's
    :meth:`~graphcut.models.AppearanceModel.outline_costs` of the box or lasso) added to the
    object's."""
    cost = xp.asarray(cost)
    priors = list(priors) if priors is not None else [None, None]
    priors[0] = cost if priors[0] is None else priors[0] + cost
    return priors


def _previous_log_odds(values, model, seeds, share, xp):
    """The log-odds of the object that ``model`` (with a ``log_odds`` method: the learned
    model) gives every pixel when trained on the strokes ``seeds`` of an earlier update (one
    object, strokes alone: the samples this pipeline builds), or None when those seeds do not
    mark one object and the background."""
    seeds = xp.asarray(seeds)
    if not hasattr(model, "log_odds") or object_labels(seeds) != [FOREGROUND] or \
            not bool((seeds == BACKGROUND).any()):
        return None
    return model.log_odds(values, weighted_samples(seeds, share)[1])


def result_of(run, objects_mask, o, started) -> CutResult:
    """The :class:`CutResult` that :func:`segment` returns for the :class:`Iterated` ``run``
    (see its docstring)."""
    return _result(run, objects_mask, o, started)


def _result(run, objects_mask, o, started) -> CutResult:
    last_stats = dict(run.last.stats) if isinstance(run.last, CutResult) else {
        "expansion": run.last}
    seconds = dict(last_stats.get("seconds", {}))
    seconds.update(total=run.cut_seconds, segment=time.perf_counter() - started,
                   stages=run.seconds)
    stats = {**last_stats, "seconds": seconds, "iterations": run.iterations,
             "energies": list(run.history), "model": o["model"], "lam": o["lam"]}
    return CutResult(run.flow, objects_mask, run.backend, stats)


__all__ = ["FAR_REACH", "LOCALITY_REACH", "keep_start", "kept_start", "result_of",
           "segment_values"]
