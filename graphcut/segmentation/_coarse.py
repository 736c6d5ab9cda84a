"""GrabCut's iterations on a coarse grid, for live strokes without a box.

From strokes alone a model with ``warm=True`` (:class:`~graphcut.models.GMM`) still needs
GrabCut's iterations (the object's mixture learns from the mask, not only from a stroke's few
pixels), but not at full resolution: the mixtures are colour statistics. Each update:

1. the image is cut into blocks of ``f x f`` pixels, ``f`` the smallest whole factor that
   leaves at most :data:`COARSE_PIXELS` blocks; each block is one pixel of a coarse grid, with
   the features of its centre pixel, the locality costs of its centre, and a block's label
   pinned when it holds seeds of one label only;
2. the coarse energy is the fine one per unit of area: a coarse n-link is the sum of the ``f``
   fine n-links across the blocks' common side, divided by ``f^2`` (a block's colour term
   stands for ``f^2`` pixels, its side for ``f`` links);
3. GrabCut's iterations run on the coarse grid (fit, cut, refit, ...), each cut exact and
   re-solved incrementally from the last (:class:`~._solving.GridCuts` on the device, kept
   for the next update);
4. the coarse mask, each block's label given to its pixels, is returned with the model's
   mixtures as they are: the caller refits them once at full resolution and cuts once
   (:func:`~._warm.refit_and_cut`).

For strokes alone the iterations stop early when one changes at most :data:`COARSE_SETTLED`
of the coarse grid's pixels (or lowers the energy by less than ``tol``). Everything depends
on the image and the seeds only, so a :class:`~graphcut.Segmenter`'s answer equals a fresh
:func:`graphcut.segment`'s, unless the session starts each update's iterations from the last
update's coarse labels and mixtures (:class:`CoarseStart`, ``Segmenter.warm_strokes``): then
the first fit is one re-estimation on the last labels (the new seeds pinned) and the
iterations usually settle after one or two; the answer is a GrabCut fixed point reached from
another start, so it may differ from a fresh one's.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from graphcut._arrays import array_module

from ._grabcut import iterate_binary

#: coarse grid pixels at most (a 256 x 256 grid)
COARSE_PIXELS = 1 << 16
#: GrabCut's iterations on the coarse grid at most (None: the model's ``iterations``)
COARSE_ITERATIONS = None
#: strokes alone: the coarse iterations end after one that changes at most this share of the
#: coarse pixels
COARSE_SETTLED = 0.002
#: strokes alone with ``stroke_reach``: the far-background start only when the object seeds
#: cover at least this many coarse blocks (a first object mixture from fewer pixels can lose
#: the whole object to the far background; chosen on cutouts-dev: 16 and 26 keep its strokes
#: NoC@90, 37 and 48 lose 1.2)
FAR_MIN_BLOCKS = 26


class CoarseStart:
    """What a session's last coarse loop ended with, the next update's start
    (``Segmenter.warm_strokes``): the coarse labels (bool, on the device) and the fitted
    per-label models, for the fine n-links ``nlinks`` they were cut with (another lam or
    image: no start)."""

    def __init__(self):
        self.nlinks = self.labels = self.fitted = None

    def mask_for(self, nlinks, binary, xp):
        """The start's labels with the coarse constraints ``binary`` pinned (1 object, 2
        background), or None when there is no usable start (none kept, other n-links or
        grid, or one label left without pixels)."""
        if self.labels is None or self.nlinks is not nlinks or \
                self.labels.shape != binary.shape:
            return None
        mask = xp.where(binary == 1, True, xp.where(binary == 2, False, self.labels))
        count = int(mask.sum())
        return mask if 0 < count < mask.size else None

    def keep(self, nlinks, labels, model) -> None:
        """Keep ``labels`` and copies of ``model``'s fitted per-label models."""
        self.nlinks, self.labels = nlinks, labels
        self.fitted = [copy.copy(m) for m in model._fitted]


def coarse_factor(shape) -> int:
    """The block side ``f`` (pixels) for an image of ``shape`` (H, W): the smallest whole
    number with ``ceil(H / f) * ceil(W / f) <= COARSE_PIXELS``.

    Examples
    --------
    >>> coarse_factor((256, 256)), coarse_factor((300, 400)), coarse_factor((2000, 2000))
    (1, 2, 8)
    """
    h, w = int(shape[0]), int(shape[1])
    f = max(1, int(math.sqrt(h * w / COARSE_PIXELS)))
    while math.ceil(h / f) * math.ceil(w / f) > COARSE_PIXELS:
        f += 1
    return f


def _pool(array, f, xp, reduce):
    """``reduce`` ("any" or "max") over the ``f x f`` blocks of a 2-D array (edge blocks padded
    with the array's own values)."""
    h, w = array.shape
    hc, wc = -(-h // f), -(-w // f)
    padded = xp.pad(array, ((0, hc * f - h), (0, wc * f - w)), mode="edge")
    if xp is np:  # NumPy reduces short axes element by element: combine strided views,
        combine = np.logical_or if reduce == "any" else np.maximum  # rows then columns
        rows = padded[::f].astype(bool) if reduce == "any" else padded[::f].copy()
        for i in range(1, f):
            combine(rows, padded[i::f], out=rows)
        out = np.ascontiguousarray(rows[:, ::f])
        for j in range(1, f):
            combine(out, rows[:, j::f], out=out)
        return out
    blocks = padded.reshape(hc, f, wc, f)
    return getattr(blocks, reduce)(axis=(1, 3))


def _centres(array, f):
    """The block centres' entries of a 2-D or (H, W, F) array (an edge block's centre is
    clipped to the array)."""
    if f == 1:
        return array
    xp = array_module(array)
    h, w = array.shape[:2]
    rows = xp.asarray([min(r * f + f // 2, h - 1) for r in range(-(-h // f))])
    cols = xp.asarray([min(c * f + f // 2, w - 1) for c in range(-(-w // f))])
    return xp.ascontiguousarray(array[rows][:, cols])


def _coarse_nlinks(nlinks, f, shape, xp):
    """Coarse ``(right, down)`` capacities: per block side the sum of the fine n-links across
    it, divided by ``f^2``, rounded (int32)."""
    right, down = nlinks
    h, w = shape
    hc, wc = -(-h // f), -(-w // f)
    # the fine right-links across the sides of column blocks c | c + 1: fine column c*f + f - 1
    columns = xp.asarray([min(c * f + f - 1, w - 2) for c in range(wc - 1)], dtype=xp.int64)
    rows = xp.asarray([min(r * f + f - 1, h - 2) for r in range(hc - 1)], dtype=xp.int64)
    coarse_right = _sum_groups(right[:, columns].astype(xp.float64), f, hc, xp)
    coarse_down = _sum_groups(down[rows, :].T.astype(xp.float64), f, wc, xp).T
    return tuple(xp.ascontiguousarray(xp.rint(c / (f * f)).astype(xp.int32))
                 for c in (coarse_right, coarse_down))


def _sum_groups(array, f, groups, xp):
    """Sums of ``f`` consecutive rows of ``array`` (the last group may be shorter)."""
    padded = xp.pad(array, ((0, groups * f - array.shape[0]), (0, 0)))
    return padded.reshape(groups, f, array.shape[1]).sum(axis=1)


def kept_centres(model, values):
    """The blocks' centres' values of ``values`` that ``model``'s last coarse loop kept (the
    same array at every stroke, so the mixtures' per-pixel products of it stay cached), or
    None."""
    kept = getattr(model, "_coarse", None)
    return kept[4] if kept is not None and kept[3] is values else None


def blocks_sample(values, binary, mask, weights, centres=None):
    """The two labels' samples for a re-estimation, on the coarse grid's blocks of an image
    (:func:`coarse_factor`; a volume's are its voxels): each block's features are its centre
    pixel's, the object's sample holds the blocks whose centre ``mask`` holds or that hold an
    object seed (``binary`` 1) and no background pixel (``binary`` 2), the background's the
    others without an object seed; a block weighs its largest pixel weight.

    Parameters
    ----------
    values : array (H, W, F)
    binary : array (H, W) of uint8
        0 free, 1 object seed, 2 background (seed or outside the box).
    mask : array (H, W) of bool
        The object's pixels to learn from.
    weights : array (H, W) or None
    centres : array or None
        The blocks' centres' values when already taken (:func:`kept_centres`).

    Returns
    -------
    tuple
        ``(values of the blocks, (object sample, background sample), weights or None)``.
    """
    xp = array_module(values)
    is_object, background = binary == 1, binary == 2
    f = coarse_factor(values.shape[:2]) if values.ndim == 3 else 1
    if f == 1:
        return values, ((mask | is_object) & ~background, (~mask | background) & ~is_object), \
            weights
    has_object, has_background = (_pool(is_object, f, xp, "any"),
                                  _pool(background, f, xp, "any"))
    centre = _centres(mask, f)
    chosen = ((centre | has_object) & ~has_background, (~centre | has_background) & ~has_object)
    return (_centres(values, f) if centres is None else centres, chosen,
            None if weights is None else _pool(weights, f, xp, "max"))


def coarse_grabcut(values, nlinks, binary, model, samples, *, weights, priors, o, device,
                   start=None, settled=0.0, strokes_alone=False):
    """GrabCut's iterations on the coarse grid (see the module's notes); returns the coarse
    mask on the fine grid (bool (H, W), on the values' device). ``model`` keeps the
    mixtures of the last coarse iteration, and the coarse grid's solver (``model._coarse``,
    for the image's n-links ``nlinks``): later updates re-solve from its flow.

    Parameters
    ----------
    values : array (H, W, F)
        The model's features.
    nlinks : tuple of two int arrays
        The fine ``(right, down)`` n-link capacities.
    binary : array (H, W) of uint8
        The constraints (0 free, 1 object, 2 background).
    model : AppearanceModel
        The model, fitted and refitted here.
    samples : tuple of two arrays (H, W)
        The labels' first samples (bool or float weights: the seeds).
    weights, priors :
        The pixels' sample weights (or None) and the labels' fixed costs (or None), fine.
    o : dict
        The checked options (``iterations``, ``tol``, ``scale``).
    device : str
        The coarse cuts' device.
    start : CoarseStart or None
        A session's kept start: read (the iterations start from it when it fits) and
        updated with this loop's end. None: a fresh loop from ``samples``.
    settled : float
        End the iterations after one that changes at most this share of the coarse pixels
        (:data:`COARSE_SETTLED` for strokes alone; 0: only an unchanged mask ends them).
    strokes_alone : bool
        Whether the samples are the seeds alone (no box or lasso): then a model's
        ``stroke_reach`` > 0 adds the far blocks to the background's first sample
        (:func:`far_background`) when the object seeds cover at least
        :data:`FAR_MIN_BLOCKS` blocks.

    Returns
    -------
    array (H, W) of bool
    """
    from ._solving import GridCuts

    xp = array_module(values)
    shape = tuple(values.shape[:2])
    f = coarse_factor(shape)
    is_object = _pool(binary == 1, f, xp, "any")
    is_background = _pool(binary == 2, f, xp, "any")
    coarse_binary = xp.where(is_background & ~is_object, xp.uint8(2),
                             xp.where(is_object & ~is_background, xp.uint8(1),
                                      xp.uint8(0))).astype(xp.uint8)
    coarse_samples = tuple(  # a bool sample's block maximum is whether it holds a pixel
        _pool(s, f, xp, "any").astype(xp.float64) if s.dtype == bool else
        _pool(xp.asarray(s, dtype=xp.float64), f, xp, "max") for s in samples)
    reach = getattr(model, "stroke_reach", 0.0) if strokes_alone else 0.0
    if reach > 0 and int((coarse_binary == 1).sum()) < FAR_MIN_BLOCKS:
        reach = 0.0  # too few object blocks for a first mixture against a far background
    if reach > 0:  # the far pixels start as background (:func:`far_background`)
        coarse_samples = far_background(coarse_binary, coarse_samples,
                                        reach * math.sqrt(shape[0] * shape[1]) / f, xp)
    coarse_weights = None if weights is None else _pool(weights, f, xp, "max")
    coarse_priors = None if priors is None else [
        None if p is None else _centres(p, f) for p in priors]
    # (fine n-links, coarse n-links, their solver, the values, the blocks' centres' values)
    kept = getattr(model, "_coarse", None)
    if kept is None or kept[0] is not nlinks or kept[3] is not values:
        coarse_nlinks = _coarse_nlinks(nlinks, f, shape, xp)
        kept = model._coarse = (nlinks, coarse_nlinks,
                                GridCuts(coarse_binary.shape, coarse_nlinks, device),
                                values, _centres(values, f))
    start_mask = None if start is None else start.mask_for(nlinks, coarse_binary, xp)
    if start_mask is not None:
        model._fitted = [copy.copy(m) for m in start.fitted]
    run = iterate_binary(kept[4], kept[1], coarse_binary, model, coarse_samples,
                         iterations=o["iterations"] if COARSE_ITERATIONS is None else
                         min(o["iterations"], COARSE_ITERATIONS), tol=o["tol"],
                         scale=o["scale"], cut=kept[2].cut, weights=coarse_weights,
                         priors=coarse_priors, start_mask=start_mask,
                         settled=settled)
    mask = xp.asarray(run.labels, dtype=bool)
    if start is not None:
        start.keep(nlinks, mask, model)
    if f > 1:
        mask = xp.repeat(xp.repeat(mask, f, axis=0), f, axis=1)[:shape[0], :shape[1]]
    return mask



def far_background(binary, samples, reach, xp):
    """Strokes alone (``GMM(stroke_reach=...)``): the first samples of the coarse iterations
    with every free block (``binary`` 0) farther than ``reach`` blocks from each block of
    object seeds (``binary`` 1; Euclidean, between block centres) added to the background's
    sample at weight 1 (GrabCut's start: what lies far from the object is background until
    the iterations say otherwise); the object's sample is unchanged (its seeds).

    Parameters
    ----------
    binary : array (h, w) of uint8
        The coarse constraints: 0 free, 1 object seeds, 2 background seeds.
    samples : tuple of two float arrays (h, w)
        The object's and the background's first samples (seed weights, 0 elsewhere).
    reach : float
        In blocks (the model's ``stroke_reach`` times ``sqrt(H * W)`` over the block side).
    xp : module
        NumPy or CuPy (the samples' device; the distances are taken on the host).

    Returns
    -------
    tuple of two arrays (h, w)
        ``(object sample, background sample)``.

    Examples
    --------
    >>> import numpy as np
    >>> binary = np.zeros((1, 8), np.uint8)
    >>> binary[0, 0], binary[0, 7] = 1, 2
    >>> samples = (np.where(binary == 1, 9.0, 0.0), np.where(binary == 2, 9.0, 0.0))
    >>> far_background(binary, samples, 3.0, np)[1]
    array([[0., 0., 0., 0., 1., 1., 1., 9.]])
    """
    from scipy import ndimage

    from graphcut._arrays import to_host
    host = to_host(binary)
    far = (host == 0) & (ndimage.distance_transform_edt(host != 1) > reach)
    return samples[0], xp.where(xp.asarray(far), 1.0, samples[1])
