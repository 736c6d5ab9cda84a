"""``segment``: image + seeds (and / or a box or lasso) -> object mask or label image."""

from __future__ import annotations

import logging
import math
import time

import numpy as np

from graphcut._arrays import to_host
from graphcut.energy import (DEFAULT_LAM, DEFAULT_SCALE, _nlink_weights, array_module,
                             build_network,
                             image_as_float, quantize)
from graphcut.memory import array_segmentation_backend
from graphcut.models import make_model
from graphcut.seeds import BACKGROUND, FOREGROUND, NONE, check_seeds, object_labels
from graphcut.solver import CutResult, min_cut, resolve_device

from ._cleanup import KEEP_CHOICES, clean_labels
from ._grabcut import DEFAULT_TOL, iterate_binary, iterate_labels
from ._regions import allowed_region
from ._texture import with_texture

log = logging.getLogger("graphcut")

MODEL_CHOICES = ("histogram", "gmm")
# lam when none is given, per colour model: the GMM's costs span far more nats than the
# histogram's, so its boundary term needs more weight (chosen on bench/bench_quality.py's
# development set; docs/segment.md).
DEFAULT_LAMS = {"histogram": DEFAULT_LAM, "gmm": 35.0}
# Re-estimation iterations when none are given: GrabCut's iterations for the GMM; none for
# the histogram (today's one-cut Boykov-Jolly segmentation).
DEFAULT_ITERATIONS = {"histogram": 0, "gmm": 5}
# Seeds are what the user said: in the colour models' samples, the seeds of each label weigh
# together as much as this share of the image's pixels (each seed pixel at least 1), so that
# a stroke teaches its label its colours even when the label's region is large. The
# histogram keeps today's plain counts.
DEFAULT_SEED_SHARES = {"histogram": 0.0, "gmm": 0.1}
# Strokes act locally: near its seeds a label's cost is lowered by up to this many nats,
# fading with the distance d to the nearest seed as exp(-d^2 / (2 rho^2)), rho =
# LOCALITY_REACH * sqrt(H * W) (5 % of a square image's side). The histogram keeps today's
# energy.
DEFAULT_LOCALITY = {"histogram": 0.0, "gmm": 2.0}
LOCALITY_REACH = 0.05
# Strokes only (no box or lasso): an object's cost rises with the distance d to its nearest
# seed as far_cost * (1 - exp(-d^2 / (2 R^2))), R = FAR_REACH * sqrt(H * W) (20 % of a square
# image's side), so that regions far from every object stroke do not turn object merely for
# sharing a colour with it (the box does this job when there is one). The histogram keeps
# today's energy. Chosen on bench/bench_quality.py's development set (docs/appearance.md).
DEFAULT_FAR_COSTS = {"histogram": 0.0, "gmm": 5.0}
FAR_REACH = 0.2
# The colour models also see the local contrast (standard deviation of the grey intensity
# over a (2 r + 1)-square window, :mod:`._texture`) as one more channel, with this radius r;
# 0: colours only.
DEFAULT_TEXTURE = {"histogram": 0, "gmm": 4}


def _is_whole(value) -> bool:
    """Whether ``value`` is a whole number >= 0 (not a bool, NaN, infinity or a string)."""
    if isinstance(value, bool):
        return False
    try:
        return math.isfinite(value) and int(value) == value and value >= 0
    except (TypeError, ValueError, OverflowError):
        return False


def segment(image, seeds=None, *, box=None, lasso=None, model="histogram", lam=None,
            sigma=None, bins=None, components=None, iterations=None, keep="all",
            fill_holes=0, seed_share=None, locality=None, far_cost=None, texture=None,
            tol=DEFAULT_TOL,
            channel_axis=-1,
            scale=DEFAULT_SCALE, device="auto", return_result=False, spacing=None):
    """Segment the object (or objects) marked by ``seeds`` and / or a box or lasso.

    Parameters
    ----------
    image
        grey (H, W) or colour (H, W, C) image, uint8 / uint16 / bool / float, RGB or
        RGBA (alpha ignored); or a volume, grey (D, H, W) or colour (D, H, W, C),
        segmented on the 6-connected voxel grid with today's energy (the histogram model,
        one cut, no box, lasso or clean-up). NumPy or CuPy. Not modified.
    seeds
        (H, W) (or (D, H, W)) integer labels: 0 no seed, 1 object, 2 background;
        several objects are labelled 1, 3, 4, ... (2 is always the background). ``None``:
        no seeds (a box or lasso is then needed). Not modified.
    box
        ``(row0, col0, row1, col1)``, half-open: everything outside is background
        (hard). Without object seeds the object's colours are first learnt from the
        inside, as in GrabCut.
    lasso
        a closed polygon of ``(row, col)`` vertices; outside is background (hard).
    model
        the colour model of every label: "histogram" (smoothed colour histogram, the
        Boykov-Jolly energy) or "gmm" (GrabCut's Gaussian mixtures).
    lam
        weight of the boundary term against the colour term; ``None``: 10 for the
        histogram, 35 for the GMM.
    sigma
        colour-difference scale of the boundary weights; ``None`` estimates it from
        the image (:func:`graphcut.energy.estimate_sigma`).
    bins
        histogram bins per channel (model "histogram"; ``None``: 64 grey, 16 colour).
    components
        Gaussians per label (model "gmm"; ``None``: 5).
    iterations
        GrabCut's re-estimation iterations at most (re-fit the models to the
        result, re-cut; stops early once the energy stops falling); ``None``: 5 for the
        GMM, 0 for the histogram.
    keep
        "all", or "connected": keep only the object parts that touch a seed of their
        object or the central part of the box or lasso (the largest part when none does).
    fill_holes
        fill holes of fewer than this many pixels inside an object (0: none).
        Holes with a background seed are never filled.
    seed_share
        in the colour models' samples, the seeds of each label weigh together as
        much as this share of the image's pixels (each seed pixel at least 1), so a stroke
        teaches its label its colours; ``None``: 0.1 for the GMM, 0 (every pixel 1) for
        the histogram.
    locality
        strokes act locally: near its seeds a label's cost is lowered by up to this
        many nats, fading over about 5 % of the image's size (``None``: 2 for the GMM, 0
        for the histogram).
    far_cost
        strokes only (ignored with a box or lasso): an object's cost rises with the
        distance d to its nearest seed, as ``far_cost * (1 - exp(-d^2 / (2 R^2)))`` nats
        with R = 20 % of sqrt(H * W), so far regions that merely share a colour with the
        object stay background (``None``: 5 for the GMM, 0 for the histogram).
    texture
        model "gmm": the colour models also see each pixel's local contrast (the
        standard deviation of its grey intensity over the ``(2 texture + 1)``-square
        window around it) as one more channel, which separates textured objects from
        smooth backgrounds of the same colours (and the reverse); 0: colours only;
        ``None``: 4. The boundary term is not changed.
    tol
        an iteration lowering the energy by less than ``tol`` nats per pixel ends the
        iterations (0: run them all unless the energy stops falling).
    channel_axis
        the channel axis of a 3-D image (scikit-image convention).
    scale
        float capacities are multiplied by this and rounded to integers.
    device
        "auto", "cpu" or "cuda" (see :func:`graphcut.solver.min_cut`). With "cuda"
        (or "auto" choosing it) a NumPy image is copied to the GPU and the colour models,
        the networks and the cuts all run there.
    return_result
        also return a :class:`CutResult`.
    spacing
        ``(dy, dx)`` or ``(dz, dy, dx)``: pixel (voxel) size per axis; n-links along
        an axis are weighed by ``min(spacing) / spacing[axis]`` (today's energy only).
        ``None``: isotropic.

    Returns
    -------
    numpy.ndarray or tuple
        One object labelled 1 (or none, with a box or lasso): a bool NumPy (H, W) mask,
        True = object. Otherwise a uint8 (H, W) label image: 0 background, each object its
        seed label. With ``return_result``, ``(output, result)``: ``result.flow`` is the last
        minimisation's integer energy (the max flow for one object), ``result.source_side``
        the object pixels, ``result.stats`` the solver's numbers plus "iterations",
        "energies" (the energy after each minimisation, nats, never increasing), "model",
        "lam", and ``stats["seconds"]["total"]`` the min-cut time of all cuts.

    Raises
    ------
    ValueError or TypeError
        bad image, seeds or options (the message says which).
    graphcut.solver.BackendUnavailableError
        ``device="cuda"`` without a usable GPU.
    MemoryError
        ``device="cuda"`` and the GPU ran out of memory (with ``device="auto"``
        the image is segmented on the CPU instead, with a logged warning);
        ``HostMemoryError`` when the segmentation would not fit in the memory available,
        raised before it starts (:mod:`graphcut.memory`).

    Examples
    --------
    One object from two seed pixels (1 = object, 2 = background):

    >>> import numpy as np
    >>> from graphcut import segment
    >>> image = np.zeros((6, 8), np.uint8)
    >>> image[1:5, 2:6] = 200
    >>> seeds = np.zeros((6, 8), np.uint8)
    >>> seeds[2, 3], seeds[0, 0] = 1, 2
    >>> mask = segment(image, seeds, device="cpu")
    >>> mask.dtype, mask.shape, int(mask.sum())
    (dtype('bool'), (6, 8), 16)

    GrabCut from a box alone (``(row0, col0, row1, col1)``, half-open), with the Gaussian
    mixture colour model:

    >>> segment(image, box=(1, 1, 5, 7), model="gmm", device="cpu").astype(int)
    array([[0, 0, 0, 0, 0, 0, 0, 0],
           [0, 0, 1, 1, 1, 1, 0, 0],
           [0, 0, 1, 1, 1, 1, 0, 0],
           [0, 0, 1, 1, 1, 1, 0, 0],
           [0, 0, 1, 1, 1, 1, 0, 0],
           [0, 0, 0, 0, 0, 0, 0, 0]])

    Several objects are labelled 1, 3, 4, ...; the answer is then a label image:

    >>> seeds[2, 5] = 3
    >>> segment(image, seeds, device="cpu").dtype
    dtype('uint8')

    The solver's answer too: ``flow`` is the minimum energy, in capacity units:

    >>> seeds[2, 5] = 0
    >>> mask, result = segment(image, seeds, device="cpu", return_result=True)
    >>> result.backend, result.flow > 0, bool((result.source_side == mask).all())
    ('cpu', True, True)
    """
    options = _check_options(model=model, lam=lam, sigma=sigma, bins=bins,
                             components=components, iterations=iterations, keep=keep,
                             fill_holes=fill_holes, seed_share=seed_share, locality=locality,
                             far_cost=far_cost, texture=texture, tol=tol,
                             channel_axis=channel_axis, scale=scale, box=box, lasso=lasso)
    if _is_plain(options, seeds):  # today's one-cut Boykov-Jolly energy, volumes too
        plain = dict(lam=options["lam"], sigma=sigma, bins=bins, channel_axis=channel_axis,
                     scale=scale, spacing=spacing)
        return _run_on_device(_segment_on_gpu, _plain_segment, image, seeds, plain, device,
                              return_result)
    if spacing is not None or (seeds is not None and getattr(seeds, "ndim", 2) != 2):
        raise ValueError("volumes (and spacing) work with today's energy only: "
                         "model='histogram' without iterations, box, lasso, clean-up or "
                         "further objects")
    return _run_on_device(_pipeline_on_gpu, _segment, image, seeds, options, device,
                          return_result)


def _is_plain(o, seeds) -> bool:
    """Whether the request is today's energy: histogram, one cut, seeds of labels 0/1/2 only
    (anything that is not an integer label array also goes there, for its errors)."""
    if (o["model"] != "histogram" or o["iterations"] or o["box"] is not None
            or o["lasso"] is not None or o["keep"] != "all" or o["fill_holes"]
            or o["seed_share"] or o["locality"] or o["far_cost"] or o["texture"]
            or seeds is None):
        return False
    kind = getattr(getattr(seeds, "dtype", None), "kind", None)
    if kind not in ("i", "u") or getattr(seeds, "ndim", 2) != 2 or not seeds.size:
        return True
    return only_binary_labels(seeds)


def only_binary_labels(seeds) -> bool:
    """Whether the integer label array ``seeds`` holds no label above 2 (no further object).
    On the GPU through the package's seed-counting kernel (no CuPy reduction to compile)."""
    if array_module(seeds) is np:
        return int(np.asarray(seeds).max()) <= BACKGROUND
    from .energy_kernels import seed_labels
    try:
        _, (_, _, unknown) = seed_labels(seeds)
    except TypeError:  # a dtype the kernel does not take: a CuPy reduction then
        return int(seeds.max()) <= BACKGROUND
    return not unknown


def _run_on_device(on_gpu, on_cpu, image, seeds, options, device, return_result):
    """``on_gpu`` or ``on_cpu``, falling back to the CPU with device "auto" when the image is
    too large for the GPU or the GPU runs out of memory (logged)."""
    shape_of = seeds if seeds is not None else np.broadcast_to(np.uint8(0), _image_plane(image))
    if array_segmentation_backend(image, shape_of, device) == "cpu" and device == "auto":
        image, seeds, device = to_host(image), _seeds_to_host(seeds), "cpu"  # too large
    if resolve_device(device) == "cuda":
        try:
            return on_gpu(image, seeds, options, device, return_result)
        except MemoryError as error:  # GPUMemoryError, or CuPy's OutOfMemoryError while building
            if device != "auto":
                raise
            log.warning("the GPU ran out of memory (%s); segmenting on the CPU instead", error)
            image, seeds = to_host(image), _seeds_to_host(seeds)
            device = "cpu"
    return on_cpu(image, seeds, options, device, return_result)


def _image_plane(image):
    shape = tuple(getattr(image, "shape", np.shape(image)))
    return shape[:2] if len(shape) >= 2 else shape


def _plain_segment(image, seeds, options, device, return_result):
    result = min_cut(build_network(image, seeds, **options), device=device)
    mask = np.asarray(result.source_side, dtype=bool)
    return (mask, _plain_result(result, options)) if return_result else mask


def _plain_result(result, options) -> CutResult:
    """Today's CutResult with the pipeline's "model", "lam" and "iterations" (0) stats."""
    stats = {**result.stats, "model": "histogram", "lam": options["lam"], "iterations": 0}
    return CutResult(result.flow, result.source_side, result.backend, stats)


def _segment_on_gpu(image, seeds, options, device, return_result):
    import cupy
    if array_module(image) is np:
        image = cupy.asarray(np.asarray(image))
    if array_module(seeds) is np:
        seeds = cupy.asarray(np.asarray(seeds))
    result = min_cut(build_network(image, seeds, **options), device=device)
    side = result.source_side
    mask = side.get() if hasattr(side, "get") else np.asarray(side, dtype=bool)
    return (mask, _plain_result(result, options)) if return_result else mask


def _pipeline_on_gpu(image, seeds, options, device, return_result):
    import cupy
    if array_module(image) is np:
        image = cupy.asarray(np.asarray(image))
    if seeds is not None and array_module(seeds) is np:
        seeds = cupy.asarray(np.asarray(seeds))
    return _segment(image, seeds, options, device, return_result)


def _seeds_to_host(seeds):
    """The seeds in host memory; None (a box or lasso alone) stays None."""
    return None if seeds is None else to_host(seeds)


def check_options(**options) -> dict:
    """:func:`segment`'s keyword options (model, lam, sigma, bins, components, iterations,
    keep, fill_holes, seed_share, locality, far_cost, texture, tol, channel_axis, scale, box,
    lasso;
    missing ones take
    their defaults) checked and with defaults filled in, as used by :func:`segment_values`."""
    defaults = dict(model="histogram", lam=None, sigma=None, bins=None, components=None,
                    iterations=None, keep="all", fill_holes=0, seed_share=None,
                    locality=None, far_cost=None, texture=None, tol=DEFAULT_TOL,
                    channel_axis=-1, scale=DEFAULT_SCALE, box=None, lasso=None)
    unknown = set(options) - set(defaults)
    if unknown:
        raise TypeError(f"unknown segmentation option(s) {', '.join(sorted(unknown))}")
    return _check_options(**{**defaults, **options})


def _check_options(*, model, lam, sigma, bins, components, iterations, keep, fill_holes,
                   seed_share, locality, far_cost, texture, tol, channel_axis, scale, box,
                   lasso) -> dict:
    if model not in MODEL_CHOICES:
        raise ValueError(f"unknown colour model {model!r}; expected one of "
                         f"{', '.join(MODEL_CHOICES)}")
    if bins is not None and model != "histogram":
        raise ValueError("bins applies to model='histogram' only")
    if components is not None and model != "gmm":
        raise ValueError("components applies to model='gmm' only")
    lam = DEFAULT_LAMS[model] if lam is None else float(lam)
    if not (math.isfinite(lam) and lam >= 0.0):
        raise ValueError(f"lam must be a finite number >= 0, got {lam}")
    iterations = DEFAULT_ITERATIONS[model] if iterations is None else iterations
    if not _is_whole(iterations):
        raise ValueError(f"iterations must be an integer >= 0, got {iterations!r}")
    if keep not in KEEP_CHOICES:
        raise ValueError(f"keep must be one of {', '.join(map(repr, KEEP_CHOICES))}, got "
                         f"{keep!r}")
    if not _is_whole(fill_holes):
        raise ValueError(f"fill_holes must be an integer >= 0 (an area in pixels), got "
                         f"{fill_holes!r}")
    seed_share = DEFAULT_SEED_SHARES[model] if seed_share is None else float(seed_share)
    if not (math.isfinite(seed_share) and 0.0 <= seed_share <= 1.0):
        raise ValueError(f"seed_share must be a number from 0 to 1, got {seed_share}")
    locality = DEFAULT_LOCALITY[model] if locality is None else float(locality)
    if not (math.isfinite(locality) and locality >= 0.0):
        raise ValueError(f"locality must be a finite number >= 0 (nats), got {locality}")
    far_cost = DEFAULT_FAR_COSTS[model] if far_cost is None else float(far_cost)
    if not (math.isfinite(far_cost) and far_cost >= 0.0):
        raise ValueError(f"far_cost must be a finite number >= 0 (nats), got {far_cost}")
    texture = DEFAULT_TEXTURE[model] if texture is None else texture
    if isinstance(texture, bool) or int(texture) != texture or texture < 0:
        raise ValueError(f"texture must be an integer >= 0 (a window radius in pixels), got "
                         f"{texture!r}")
    if texture and model != "gmm":
        raise ValueError("texture applies to model='gmm' only")
    tol = float(tol)
    if not (math.isfinite(tol) and tol >= 0.0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol}")
    model_options = {"bins": bins} if model == "histogram" else {"components": components}
    make_model(model, **model_options)  # checks bins / components now
    return dict(model=model, model_options=model_options, lam=lam, sigma=sigma,
                iterations=int(iterations), keep=keep, fill_holes=int(fill_holes),
                seed_share=seed_share, locality=locality, far_cost=far_cost,
                texture=int(texture), tol=tol,
                channel_axis=channel_axis, scale=scale, box=box, lasso=lasso)


def _segment(image, seeds, o, device, return_result):
    started = time.perf_counter()
    values = image_as_float(image, channel_axis=o["channel_axis"])
    nlinks = nlink_capacities(values, o)
    output, run = segment_values(values, nlinks, seeds, o, device=device,
                                 cut=lambda network: min_cut(network, device=device))
    if not return_result:
        return output
    return output, _result(run, np.asarray(output) != 0, o, started)


def nlink_capacities(values, o):
    """The quantised ``lam * w`` of the 4-neighbour pairs, ``(right, down)`` int32."""
    right_w, down_w = _nlink_weights(values, o["sigma"])
    what = "n-link capacities (lam * weights)"
    return (quantize(o["lam"] * right_w, scale=o["scale"], what=what),
            quantize(o["lam"] * down_w, scale=o["scale"], what=what))


def segment_values(values, nlinks, seeds, o, *, device, cut):
    """The work of :func:`segment` on the float ``values`` (:func:`image_as_float`) with the
    n-link capacities ``nlinks`` and the checked options ``o``; one-object cuts go through
    ``cut(network) -> CutResult`` (a fresh :func:`min_cut`, or a :class:`Segmenter`'s
    incremental solver), K-label moves through alpha-expansion on ``device``.

    Returns ``(output, run)``: the mask or label image (host) and the :class:`Iterated`."""
    xp = array_module(values)
    shape = values.shape[:2]
    if o.get("texture", 0):
        values = with_texture(values, o["texture"])
    region = allowed_region(shape, box=o["box"], lasso=o["lasso"])
    has_region = region is not None
    if seeds is None:
        if not has_region:
            raise ValueError("nothing marks the object: give seeds (at least one object and "
                             "one background seed) or a box or lasso")
        seeds = xp.zeros(shape, dtype=xp.uint8)
    else:
        if array_module(seeds) is not xp:
            seeds = xp.asarray(to_host(seeds))
        seeds = check_seeds(seeds, shape, require_both=not has_region, multi=True)
    objects = object_labels(seeds)
    outside = None
    constraints = seeds
    if has_region:
        outside = xp.asarray(~region)
        stray = int(((seeds != NONE) & (seeds != BACKGROUND) & outside).sum())
        if stray:
            raise ValueError(f"{stray} object seed pixel(s) lie outside the box / lasso, where "
                             "everything is background; erase them or enlarge the box")
        constraints = xp.where(outside, xp.uint8(BACKGROUND), seeds).astype(xp.uint8)
        if not bool((constraints == BACKGROUND).any()):
            raise ValueError("the box / lasso covers the whole image and there is no "
                             "background seed: nothing is known to be background")
    def new_model():
        return make_model(o["model"], **o["model_options"])

    weights = _seed_weights(seeds, objects, o["seed_share"])
    background = constraints == BACKGROUND
    labels_in_order = [objects[0] if objects else FOREGROUND, BACKGROUND] \
        if len(objects) <= 1 else [BACKGROUND, *objects]
    far_cost = 0.0 if has_region else o["far_cost"]
    priors = _locality_priors(seeds, labels_in_order, o["locality"], xp,
                              far_cost=far_cost, objects=objects or [FOREGROUND])
    if len(objects) <= 1:
        label = objects[0] if objects else FOREGROUND
        is_object = constraints == label
        binary = xp.where(is_object, xp.uint8(FOREGROUND),
                          xp.where(background, xp.uint8(BACKGROUND), xp.uint8(NONE)))
        sample = (~background) if has_region else is_object
        samples = tuple(s if weights is None else xp.where(s, weights, 0.0)
                        for s in (sample, background))
        run = iterate_binary(values, nlinks, binary, (new_model(), new_model()), samples,
                             iterations=o["iterations"], tol=o["tol"], scale=o["scale"],
                             cut=cut, weights=weights, priors=priors)
        mask = to_host(run.labels).astype(bool)
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
        run = iterate_labels(values, nlinks, pinned, [new_model() for _ in samples], samples,
                             iterations=o["iterations"], tol=o["tol"], scale=o["scale"],
                             device=device, weights=weights, priors=priors)
        lookup = np.array([0] + objects, dtype=np.uint8)
        labels = lookup[to_host(run.labels)]
    if o["keep"] != "all" or o["fill_holes"] > 0:
        labels = clean_labels(labels, objects or [FOREGROUND], to_host(seeds), keep=o["keep"],
                              fill_holes_area=o["fill_holes"],
                              outside=None if outside is None else to_host(outside))
    single = objects in ([], [FOREGROUND])
    return (labels == FOREGROUND if single else labels), run


def _locality_priors(seeds, labels, strength, xp, *, far_cost=0.0, objects=()):
    """Per label (in ``labels`` order): None, or a fixed cost (H, W) in nats added to its
    colour model's, from the distance d (pixels) to the label's nearest seed:

    - ``-strength * exp(-d^2 / (2 rho^2))``, ``rho = LOCALITY_REACH * sqrt(H * W)``: a bonus
      for every label near its strokes;
    - for the labels in ``objects`` also ``far_cost * (1 - exp(-d^2 / (2 R^2)))``, ``R =
      FAR_REACH * sqrt(H * W)``: a cost for an object far from its strokes.

    The distances are exact Euclidean distance transforms of the host seeds (SciPy), so the
    CPU and GPU paths add the same numbers; the costs are then moved to ``xp``'s device."""
    if strength <= 0 and far_cost <= 0:
        return None
    from scipy import ndimage

    host = to_host(seeds)
    size = math.sqrt(host.size)
    rho, reach = LOCALITY_REACH * size, FAR_REACH * size
    priors = [None] * len(labels)
    for index, label in enumerate(labels):
        chosen = host == label
        far = far_cost if label in objects else 0.0
        if chosen.any() and (strength > 0 or far > 0):
            squared = ndimage.distance_transform_edt(~chosen) ** 2
            cost = np.zeros(host.shape)
            if strength > 0:
                cost -= strength * np.exp(-squared / (2 * rho * rho))
            if far > 0:
                cost += far * -np.expm1(-squared / (2 * reach * reach))
            priors[index] = xp.asarray(cost)
    return priors if any(p is not None for p in priors) else None


def _seed_weights(seeds, objects, share):
    """Float (H, W) sample weights: 1, and for the seeds of each label ``share * H * W /
    (its seed count)`` (at least 1); None when every weight is 1."""
    if share <= 0:
        return None
    xp = array_module(seeds)
    weights = xp.ones(seeds.shape, dtype=xp.float64)
    for label in [*objects, BACKGROUND]:
        chosen = seeds == label
        count = int(chosen.sum())
        if count:
            weights = xp.where(chosen, max(1.0, share * seeds.size / count), weights)
    return weights


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
