"""GrabCut's iterated re-estimation (Rother, Kolmogorov and Blake 2004), for one object or K.

Start: each label's colour model is fitted to its sample (seeds; with a box or lasso and no
object seeds, the object's sample is the inside and the background's the outside), and the
energy of :mod:`._energy` is minimised: one minimum cut for one object, alpha-expansion for
several. Then, ``iterations`` times at most:

1. re-estimate every model on the pixels the last result gave its label (one EM step for the
   GMM: assign each pixel to the components softly, re-learn them);
2. minimise the energy again under the new models (a cut through ``cut``, or expansion moves
   started from the last labelling).

Step 1 never raises the energy of the current labelling by more than rounding (EM; a refit
that does is not used and ends the run) and step 2 never raises it at all (an exact minimum
over all labellings, or moves that only accept improvements), so the energies recorded in
``history`` never increase. The run stops early when an iteration changes no pixel (or at most
a share ``settled`` of them) or lowers the energy by less than ``tol`` nats per pixel. A
mixture model's first fit on a small sample (seeds) reads only its pixels (:func:`fit_samples`).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

from graphcut._arrays import array_module, to_host

from ._previous_start import fill_cheapest
from ._problems import binary_problem, label_problem

# An iteration that lowers the energy by less than this many nats per pixel ends the run.
DEFAULT_TOL = 1e-4
#: a mixture model's first fit reads only a label's sample's pixels when they are at most
#: this share of the image (:func:`fit_samples`; 0: always the whole image)
COMPACT_FIT = 0.25
#: a compact sample of at most this many rows is fitted on the host (NumPy): on the GPU its
#: fit is a few dozen small kernels and waits (a few ms however small the sample), on the host
#: a few hundred rows take about a millisecond
HOST_FIT_ROWS = 4096
# A session's mixture model remembers this many labels' compact fits (rows, weights, the
# mixture as fitted): after a stroke only the labels whose seeds changed are fitted again (the
# fit is a function of its rows and weights: the same mixtures; refits replace a mixture's
# arrays, never change them, so the copies kept are never altered).
REMEMBERED_FITS = 8


@dataclass
class Iterated:
    """What the iterated minimisation returns.

    Attributes
    ----------
    labels
        bool mask (one object; True = object) or int32 label indices (K labels;
        0 = background), on the image's device.
    energy
        E_q of ``labels`` under the last models (see :mod:`._energy`), nats.
    history
        E_q after the first minimisation and after every iteration; never increases.
    iterations
        how many re-estimation iterations ran (0 = the first minimisation only).
    flow
        the last minimisation's integer energy (the max flow for one object, the
        expansion energy for K).
    backend
        the min-cut backend.
    cut_seconds
        the min-cut backend's own time, summed over the minimisations.
    seconds
        per stage (fit, costs, problem, cut, total), wall time.
    last
        the last CutResult (one object) or ExpansionResult (K labels).
    """

    labels: object
    energy: float
    history: list
    iterations: int
    flow: int
    backend: str
    cut_seconds: float
    seconds: dict = field(default_factory=dict)
    last: object = None


class _Clock:
    def __init__(self):
        self.seconds = {"fit": 0.0, "costs": 0.0, "problem": 0.0, "cut": 0.0}
        self.started = time.perf_counter()

    def add(self, stage, since):
        now = time.perf_counter()
        self.seconds[stage] += now - since
        return now

    def total(self):
        return {**self.seconds, "total": time.perf_counter() - self.started}


def iterate_binary(values, nlinks, constraints, model, samples, *, iterations, tol, scale,
                   cut, weights=None, priors=None, start_mask=None, settled=0) -> Iterated:
    """One object: ``model`` the appearance model (:class:`~graphcut.models.AppearanceModel`)
    of the labels (object, background), ``samples`` = their first samples (bool or float
    weights), ``constraints`` 0 free / 1 object / 2 background, ``cut(network) ->
    CutResult``; ``weights``: every pixel's weight in the samples of the re-estimations
    (None: 1); ``priors``: per label, None or a fixed (H, W) cost added to its model's.

    ``start_mask``: a warm start (bool (H, W) with pixels of both labels; ``samples`` is then
    not read): the fitted ``model`` is re-estimated once on it (:meth:`refit`, as an iteration
    does) instead of fitted on ``samples``. ``settled``: the run also ends after an iteration
    that changes at most ``settled * size`` pixels (0: only an unchanged mask)."""
    xp = array_module(values)
    clock = _Clock()
    t = time.perf_counter()
    if start_mask is None:
        fit_samples(model, values, samples)
    else:
        model.refit(values, [_sample(start_mask, weights), _sample(~start_mask, weights)])
    t = clock.add("fit", t)
    problem = _binary(values, nlinks, constraints, model, scale, clock, weights, priors)
    t = time.perf_counter()
    result = cut(problem.network)
    t = clock.add("cut", t)
    cut_seconds = result.seconds
    mask = xp.asarray(result.source_side, dtype=bool)
    energy = result.flow / scale + problem.offset
    history = [energy]
    done = 0
    size = mask.size
    while done < iterations:
        if int(mask.sum()) in (0, size):  # one wait for the GPU, not two
            break  # one label has no pixel left to learn from
        t = time.perf_counter()
        model.refit(values, [_sample(mask, weights), _sample(~mask, weights)])
        clock.add("fit", t)
        new_problem = _binary(values, nlinks, constraints, model, scale, clock, weights, priors)
        if new_problem.energy(mask) > energy:
            break  # the refit did not lower the energy (rounding): converged
        t = time.perf_counter()
        new_result = cut(new_problem.network)
        clock.add("cut", t)
        cut_seconds += new_result.seconds
        new_mask = xp.asarray(new_result.source_side, dtype=bool)
        new_energy = new_result.flow / scale + new_problem.offset
        changed = int((new_mask != mask).sum())
        done += 1
        drop = energy - new_energy
        mask, result, energy, problem = new_mask, new_result, new_energy, new_problem
        history.append(energy)
        if changed <= settled * size or drop < tol * size:
            break
    return Iterated(mask, energy, history, done, result.flow, result.backend, cut_seconds,
                    clock.total(), result)


def fit_samples(model, values, samples):
    """``model.fit(values, samples)``; for per-label mixture models (the GMM's) a label whose
    sample (seeds: bool or float weights) covers at most :data:`COMPACT_FIT` of the pixels is
    fitted on those pixels only, as an (N, 1, F) image: EM over pixels of weight 0 adds
    nothing, so the mixtures are the same up to the order of the sums (several objects' seeds
    on a 4 MP image: hundreds of rows instead of 4 million per EM step); a sample of at most
    :data:`HOST_FIT_ROWS` rows is fitted on the host (the mixtures' parameters live there
    anyway; the costs are then evaluated on the values' device)."""
    from graphcut.models import GMMModel, PerLabelModel

    if not (COMPACT_FIT > 0 and isinstance(model, PerLabelModel)
            and isinstance(model.label_model(), GMMModel)):
        return model.fit(values, list(samples))
    xp = array_module(values)
    flat = values.reshape(-1, values.shape[-1])
    fitted, remembered = [], getattr(model, "_compact_fits", [])
    for sample in samples:
        label = model.label_model()
        chosen = xp.flatnonzero(sample.reshape(-1))
        count = int(chosen.size)
        if count > COMPACT_FIT * flat.shape[0]:
            fitted.append(label.fit(values, sample))
            continue
        rows, weights = flat[chosen][:, None, :], sample.reshape(-1)[chosen][:, None]
        if count <= HOST_FIT_ROWS:
            rows, weights = to_host(rows), to_host(weights)
        same = _remembered_fit(remembered, rows, weights)
        if same is not None:  # this label's sample is unchanged: the same mixture
            fitted.append(copy.copy(same))
            continue
        shared = getattr(label, "shared_features", None)  # the rows are read once: kept out
        label.shared_features = None  # of the labels' shared cache of per-pixel products
        fitted.append(label.fit(rows, weights))
        label.shared_features = shared
        if REMEMBERED_FITS > 0:
            remembered = [*remembered[1 - REMEMBERED_FITS:], (rows, weights, copy.copy(label))]
    model._fitted, model._compact_fits = fitted, remembered
    return model


def _remembered_fit(remembered, rows, weights):
    """The mixture fitted earlier on exactly these ``rows`` and ``weights`` (an entry of
    ``remembered``, as fitted, before any refit), or None."""
    xp = array_module(rows)
    for kept_rows, kept_weights, label in remembered:
        if (array_module(kept_rows) is xp and kept_rows.shape == rows.shape
                and bool(xp.array_equal(kept_rows, rows))
                and bool(xp.array_equal(kept_weights, weights))):
            return label
    return None


def _sample(selected, weights):
    if weights is None:
        return selected
    return array_module(weights).where(selected, weights, 0.0)


def _costs(values, model, priors):
    """Every label's costs under the fitted ``model``, plus its fixed prior (if any)."""
    costs = model.costs(values)
    return [c if prior is None else c + prior
            for c, prior in zip(costs, priors or [None] * len(costs))]


def _binary(values, nlinks, constraints, model, scale, clock, weights, priors):
    t = time.perf_counter()
    cost_object, cost_background = _costs(values, model, priors)
    t = clock.add("costs", t)
    problem = binary_problem(cost_object, cost_background, nlinks, constraints, scale=scale,
                             weights=weights)
    clock.add("problem", t)
    return problem


def iterate_labels(values, nlinks, pinned, model, samples, *, iterations, tol, scale,
                   device, max_cycles=20, weights=None, priors=None, cuts=None,
                   start=None) -> Iterated:
    """K labels: ``model`` the appearance model of all of them, ``samples[i]`` label index
    i's first sample (0 = background);
    ``pinned`` int (H, W), -1 free else the label index; moves by alpha-expansion on
    ``device`` (``cuts``: its cutter, see :func:`~graphcut.labeling.alpha_expansion`);
    ``start``: the first expansion's starting label indices (every pinned pixel set to its
    label first; ``_previous_start.CHEAPEST`` where unknown), None: the per-pixel cheapest
    label."""
    from graphcut.labeling import alpha_expansion

    xp = array_module(values)
    clock = _Clock()
    t = time.perf_counter()
    fit_samples(model, values, samples)
    clock.add("fit", t)
    count = len(samples)
    problem = _labels(values, nlinks, pinned, model, scale, clock, weights, priors)
    if start is not None:  # seeds first; a pixel without a start label: its cheapest
        start = fill_cheapest(xp.where(pinned >= 0, pinned, start), problem.costs)
    t = time.perf_counter()
    result = alpha_expansion(problem.costs, problem.weights, device=device,
                             max_cycles=max_cycles, cuts=cuts, initial_labels=start,
                             device_labels=True)
    clock.add("cut", t)
    cut_seconds = sum(result.maxflow_seconds.values())
    labels = xp.asarray(result.labels)
    energy = result.energy / scale + problem.offset
    history = [energy]
    done = 0
    while done < iterations:
        present = [bool((labels == index).any()) for index in range(count)]
        if not all(present):
            break
        t = time.perf_counter()
        model.refit(values, [_sample(labels == index, weights) for index in range(count)])
        clock.add("fit", t)
        new_problem = _labels(values, nlinks, pinned, model, scale, clock, weights, priors)
        if new_problem.energy(labels) > energy:
            break
        t = time.perf_counter()
        new_result = alpha_expansion(new_problem.costs, new_problem.weights, device=device,
                                     max_cycles=max_cycles, initial_labels=labels, cuts=cuts,
                                     device_labels=True)
        clock.add("cut", t)
        cut_seconds += sum(new_result.maxflow_seconds.values())
        new_labels = xp.asarray(new_result.labels)
        new_energy = new_result.energy / scale + new_problem.offset
        changed = int((new_labels != labels).sum())
        done += 1
        drop = energy - new_energy
        labels, result, energy = new_labels, new_result, new_energy
        history.append(energy)
        if changed == 0 or drop < tol * labels.size:
            break
    backend = next(iter(result.maxflow_seconds), "cpu")
    return Iterated(labels, energy, history, done, result.energy, backend, cut_seconds,
                    clock.total(), result)


def _labels(values, nlinks, pinned, model, scale, clock, weights, priors):
    xp = array_module(values)
    t = time.perf_counter()
    costs = xp.stack(_costs(values, model, priors))
    t = clock.add("costs", t)
    problem = label_problem(costs, nlinks, pinned, scale=scale, weights=weights)
    clock.add("problem", t)
    return problem
