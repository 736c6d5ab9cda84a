"""The earlier mask's hold: a stroke acts near itself; far from it the previous update's mask
stands unless the appearance model's evidence against it is strong.

Why: a learned appearance model (:class:`graphcut.models.Learned`) is one classifier for the
whole image. A corrective click lands, by construction, on pixels that look like the other
label's (a bright gap between nuclei marked background, a dim nucleus marked object); the
classifier learns that look and every pixel of it across the image changes side, so the mask
can lose, 100 pixels away, nuclei that earlier clicks had got right (docs/appearance-microscopy.md,
"The falls"). The hold makes the update's energy remember the previous update's mask:

- the *changed pixels* are those whose seed label differs from the previous update's (the new
  stroke, or an erased one); ``d`` is a pixel's Euclidean distance to the nearest of them;
- a pixel the previous mask gave the object gets ``hold * w(d)`` nats added to its background
  cost, one it gave the background the same added to its object cost, ``w(d) = 1 - exp(-d^2 /
  (2 r^2))``: nothing at the stroke, the full hold far from it (given to the cut as one
  signed cost on the object's side, :func:`hold_costs`);
- the reach ``r`` is ``hold_reach`` pixels, or three times the previous mask's thickness
  (:func:`thickness`, about 0.8 times a disk's radius) where that is larger: a stroke on a
  large object acts over the object;
- the hold starts once the seeds hold ``hold_after`` strokes (connected parts of each label's
  seed pixels): the first clicks teach the classifier what the objects look like, and their
  changes across the image are what the user wants;
- from then on it is *released* (scaled down, to nothing) when the new stroke's pixels were
  given the other label, surely, by the previous update's classifier (:func:`release`): that
  classifier, and the mask it made, are then contradicted by the newest seeds, and a mask an
  earlier click left wrong is not kept (docs/appearance-microscopy.md, "The falls, twelfth
  session").

Seeds stay hard: the new stroke corrects its own pixels exactly. It applies to one object in
an image, marked by strokes alone (no box or lasso), and only when the caller gives the
previous update, ``previous=(seeds, mask)`` (``Segmenter.update`` and :func:`graphcut.segment`
take it; a Segmenter keeps no hidden state, so its answer stays a fresh segment's given the
same inputs). On a large image the distances are those between the
:func:`~._coarse.coarse_factor` blocks holding a changed pixel (at most 65 536 blocks: a small
host transform), the same numbers on the CPU and the GPU.
"""

from __future__ import annotations

import math

import numpy as np

from graphcut._arrays import array_module, to_host
from graphcut._labels import BACKGROUND, FOREGROUND

#: the reach is at least this many times the previous mask's thickness (:func:`thickness`)
HOLD_THICKNESS = 3.0
#: the confidence-gated hold (``confident_after``): a pixel is not held while the previous
#: update's classifier favoured its side of the previous mask by at most GATE_FROM nats, fully
#: held from GATE_FULL nats on, linearly between
GATE_FROM, GATE_FULL = 0.5, 2.0
#: the new stroke discredits the previous classifier when that classifier gave the stroke's
#: pixels the other label: the whole hold is scaled by 1 up to RELEASE_FROM nats against (the
#: mean over the stroke's new pixels), 0 from RELEASE_FULL nats, linearly between (None: off)
RELEASE_FROM, RELEASE_FULL = 6.0, 9.0
#: beyond this many reaches from the changed pixels the hold's weight is 1.0 in float64
#: (``d^2 / (2 r^2) > 40``: ``exp(-40)`` is below half of float64's spacing under 1)
SATURATED = 9.0


def check_previous(previous, shape):
    """``previous`` checked: None, or ``(seeds, mask)`` of the grid's ``shape`` (a ValueError
    saying what was expected otherwise).

    Parameters
    ----------
    previous : None or tuple
        The previous update's ``(seeds, mask)``: its (H, W) seed labels (0 none, 1 object, 2
        background) and its bool (H, W) mask; NumPy or CuPy.
    shape : tuple of int
        The image's (H, W).

    Returns
    -------
    None or tuple
        ``(seeds, mask)``, the mask as bool.

    Raises
    ------
    ValueError
        ``previous`` is not a pair of arrays of ``shape``.

    Examples
    --------
    >>> import numpy as np
    >>> seeds, mask = check_previous((np.zeros((2, 3), np.uint8), np.ones((2, 3))), (2, 3))
    >>> mask.dtype
    dtype('bool')
    """
    if previous is None:
        return None
    try:
        seeds, mask = previous
    except (TypeError, ValueError):
        raise ValueError("previous must be None or (seeds, mask): the previous update's seed "
                         "labels and its bool mask") from None
    for name, array in (("seeds", seeds), ("mask", mask)):
        if tuple(getattr(array, "shape", ())) != tuple(shape):
            raise ValueError(f"previous {name} must have the image's shape {tuple(shape)}, "
                             f"got {tuple(getattr(array, 'shape', ()))}")
    return seeds, mask.astype(bool, copy=False)


def stroke_count(seeds, block=1) -> int:
    """The strokes of ``seeds``: the connected parts (4-connected; of the ``block x block``
    blocks holding one, when ``block`` > 1) of each label's seed pixels, summed over the
    labels.

    Parameters
    ----------
    seeds : array (H, W) of int
        Seed labels, 0 = none; NumPy or CuPy.
    block : int
        Count on the grid of ``block x block`` blocks (large images).

    Returns
    -------
    int

    Examples
    --------
    >>> import numpy as np
    >>> seeds = np.zeros((5, 5), np.uint8)
    >>> seeds[0, 0] = seeds[4, 4] = 1
    >>> seeds[2, 2] = 2
    >>> stroke_count(seeds)
    3
    """
    from scipy import ndimage
    if block > 1 and array_module(seeds) is not np:  # a GPU's seeds: only the grids copied
        grids = [to_host(blocks_holding(seeds == label, block))
                 for label in (FOREGROUND, BACKGROUND)]
    else:  # the seed pixels' blocks on the host
        flat = seeds.reshape(-1)
        index = array_module(seeds).flatnonzero(flat != 0)
        labels, (rows, cols) = to_host(flat[index]), np.divmod(to_host(index), seeds.shape[1])
        grids = [_grid(rows[labels == label], cols[labels == label], seeds.shape, block)
                 for label in (FOREGROUND, BACKGROUND)]
    return sum(ndimage.label(grid)[1] for grid in grids)


def blocks_holding(chosen, block):
    """bool (ceil(H / block), ceil(W / block)) on ``chosen``'s device: the ``block x block``
    blocks holding a True pixel of the bool (H, W) ``chosen`` (NumPy or CuPy), found by one
    reduction over the blocks (on an H100 the stroke count took 0.9 ms this way against 4.0
    ms at 4 MP, 1.3 against 9.5 ms at 12 MP, gathering the chosen pixels' positions on the
    host, which :func:`stroke_count` still does on the CPU).

    Examples
    --------
    >>> import numpy as np
    >>> chosen = np.zeros((5, 7), bool)
    >>> chosen[0, 0] = chosen[4, 6] = True
    >>> blocks_holding(chosen, 3).astype(int)
    array([[1, 0, 0],
           [0, 0, 1]])
    """
    xp = array_module(chosen)
    rows, cols = (-(-n // block) for n in chosen.shape)
    if chosen.shape != (rows * block, cols * block):
        padded = xp.zeros((rows * block, cols * block), dtype=bool)
        padded[:chosen.shape[0], :chosen.shape[1]] = chosen
        chosen = padded
    return chosen.reshape(rows, block, cols, block).any(axis=(1, 3))


def hold_costs(previous, seeds, *, hold, reach, after=0, confident_after=None, margin=None,
               confident_hold=None, scale=None):
    """The hold's extra costs ``[object, None]`` (nats, float64 (H, W) on the seeds' device),
    or None when it does not apply (fewer than ``after`` strokes and no confidence-gated hold,
    or ``hold`` 0).

    The side a pixel was not on in the previous mask costs ``hold * w(d)`` more; given as the
    object's cost changed by ``-hold * w(d)`` on the previous object and ``+hold * w(d)``
    elsewhere (the same cut: a pixel's two costs differ by the same amount).

    With ``confident_after`` strokes or more (``confident_after < after``), the hold is *gated
    by the previous update's confidence*: each pixel's hold (``confident_hold`` nats far from
    the stroke) is multiplied by
    ``clip((s - GATE_FROM) / (GATE_FULL - GATE_FROM), 0, 1)``, ``s`` the previous update's
    classifier log-odds for the side the previous mask gave the pixel (``margin()``): pixels
    the previous classifier was unsure of follow the new one freely, the ones it was sure of
    hold (an early click's wrong global changes turn pixels the classifier was sure of, its
    gains mostly pixels it was not: docs/appearance-microscopy.md, "The falls, eleventh
    session"). From ``after`` strokes on, each pixel holds the larger of the two, ``hold``
    and the gated one, times :func:`release` (1 unless the previous classifier was sure the
    new stroke's pixels had the other label).

    Parameters
    ----------
    previous : tuple
        ``(seeds, mask)`` of the previous update (:func:`check_previous`).
    seeds : array (H, W) of int
        This update's seed labels (0 none, 1 object, 2 background).
    hold : float
        The full hold, nats (far from every changed pixel).
    reach : float
        ``r`` (pixels): the hold is ``hold * (1 - exp(-d^2 / (2 r^2)))`` at a distance ``d``
        from the nearest changed pixel; at least :data:`HOLD_THICKNESS` times the previous
        mask's :func:`thickness`.
    after : int
        The hold applies once the seeds hold at least this many strokes
        (:func:`stroke_count`).
    confident_after : int, optional
        From this many strokes the confidence-gated hold applies (alone before ``after``
        strokes, the larger of the two from then on); None, or not below ``after``: none.
    margin : callable, optional
        ``margin()`` -> the previous update's classifier log-odds of the object against the
        background (nats, float (H, W) on the seeds' device, > 0 where it favoured the
        object), or None when it cannot be known (then no gated hold); called only when the
        gated hold applies.
    confident_hold : float, optional
        The gated hold far from the stroke, nats; None: ``hold``.
    scale : callable, optional
        ``scale()`` -> per-pixel factors (H, W) of the hold from ``after`` strokes on, or
        None (the learned model's rim weights, :mod:`graphcut.models._rim`: from then on the
        hold weighs as much more as the classifier's costs near the previous outline); None: 1.

    Returns
    -------
    list ``[object cost, None]``, or None

    Examples
    --------
    >>> import numpy as np
    >>> mask = np.zeros((1, 60), bool)
    >>> mask[0, 50:] = True
    >>> before = np.zeros((1, 60), np.uint8)
    >>> seeds = before.copy()
    >>> seeds[0, 0] = 2
    >>> cost, _ = hold_costs((before, mask), seeds, hold=8, reach=10)
    >>> float(cost[0, 0]), round(float(cost[0, 59]), 3), round(float(cost[0, 49]), 3)
    (0.0, -8.0, 8.0)
    """
    from ._coarse import coarse_factor
    if hold <= 0:
        return None
    xp = array_module(seeds)
    before, mask = previous
    before, mask = xp.asarray(before), xp.asarray(mask)
    shape = tuple(seeds.shape)
    block = coarse_factor(shape)
    strokes = stroke_count(seeds, block) if after else 0
    gated = confident_after is not None and margin is not None and \
        confident_after < after and strokes >= confident_after
    if strokes < after and not gated:
        return None
    gate = margin() if gated else None  # the previous classifier's log-odds
    if gate is None and strokes < after:
        return None
    if gate is not None:
        odds = gate
        gate = xp.clip((xp.where(mask, odds, -odds) - GATE_FROM) / (GATE_FULL - GATE_FROM),
                       0.0, 1.0) * float(hold if confident_hold is None else confident_hold)
        # before ``after`` strokes the gated hold alone, from then on the larger of the two,
        # scaled down when the new stroke contradicts the previous classifier (the release)
        if strokes >= after:
            gate = xp.maximum(gate, float(hold))
            if RELEASE_FROM is not None:
                gate = gate * release(odds, before, seeds)
    else:
        gate = float(hold)
    rows, cols = _where(seeds != before)
    if rows.size:
        changed = _grid(rows, cols, shape, block)
        r = max(float(reach), HOLD_THICKNESS * thickness(mask))
        weight = xp.asarray(hold_weights(changed, block, r))
        if block > 1:  # each block's weight given to its pixels (on the device)
            rows, cols = weight.shape
            weight = xp.broadcast_to(weight[:, None, :, None], (rows, block, cols, block))
            weight = weight.reshape(rows * block, cols * block)[:shape[0], :shape[1]]
    else:  # the same seeds again: the whole previous mask holds
        weight = xp.ones(shape)
    weight = weight * gate
    factors = None if scale is None or strokes < after else scale()
    if factors is not None:
        weight = weight * factors
    return [xp.where(mask, -weight, weight), None]


def hold_weights(changed, block, reach):
    """``w(d) = 1 - exp(-d^2 / (2 r^2))`` (float64, host) of every block of the grid, ``d``
    the Euclidean distance (pixels: blocks times ``block``) to the nearest block of the bool
    grid ``changed`` (at least one True), ``r`` = ``reach`` pixels.

    The distances are transformed only within :data:`SATURATED` ``r`` of the changed blocks'
    bounding box: farther, ``d^2 / (2 r^2) > 40`` and ``w`` is exactly 1.0 in float64, so the
    weights equal those of a transform of the whole grid (a click with a 30-pixel reach on a
    4 MP image: about 4 800 blocks instead of 65 536; a large object's reach, three times its
    thickness, can cover the whole grid).

    Examples
    --------
    >>> import numpy as np
    >>> changed = np.zeros((1, 300), bool)
    >>> changed[0, 0] = True
    >>> weights = hold_weights(changed, 1, 10.0)
    >>> float(weights[0, 0]), round(float(weights[0, 10]), 4), float(weights[0, 299])
    (0.0, 0.3935, 1.0)
    """
    from scipy import ndimage
    weights = np.ones(changed.shape)
    margin = math.ceil(SATURATED * reach / block)
    rows, cols = np.nonzero(changed)
    window = (slice(max(0, int(rows.min()) - margin), int(rows.max()) + margin + 1),
              slice(max(0, int(cols.min()) - margin), int(cols.max()) + margin + 1))
    distance = ndimage.distance_transform_edt(~changed[window]) * block
    weights[window] = -np.expm1(-distance * distance / (2 * reach * reach))
    return weights


def release(odds, before, seeds) -> float:
    """The hold's scale from the new stroke's evidence (the release): ``c`` the mean, over the
    pixels whose seed label is new and not 0, of the previous classifier's log-odds *against*
    their label (nats), the scale is ``clip((RELEASE_FULL - c) / (RELEASE_FULL -
    RELEASE_FROM), 0, 1)``: 1 where that classifier agreed with the new stroke or doubted it,
    0 where it was sure of the other label (it is discredited: the mask it made is not held).

    Parameters
    ----------
    odds : array (H, W) of float
        The previous update's classifier log-odds of the object (nats); NumPy or CuPy.
    before, seeds : array (H, W) of int
        The previous update's seed labels and this update's (0 none, 1 object, 2 background).

    Returns
    -------
    float
        From 0 to 1; 1 when no pixel gained a label.

    Examples
    --------
    >>> import numpy as np
    >>> odds = np.full((1, 4), 7.5)          # the previous classifier: all object, 7.5 nats
    >>> before = np.zeros((1, 4), np.uint8)
    >>> seeds = before.copy()
    >>> seeds[0, 0] = 2                      # a background click there
    >>> release(odds, before, seeds)
    0.5
    """
    xp = array_module(seeds)
    new = (seeds != before) & (seeds != 0)
    count = int(new.sum())
    if not count:
        return 1.0
    against = float(xp.where(new, xp.where(seeds == FOREGROUND, -odds, odds), 0.0).sum())
    return float(np.clip((RELEASE_FULL - against / count) / (RELEASE_FULL - RELEASE_FROM),
                         0.0, 1.0))


def thickness(mask) -> float:
    """``2 * area / perimeter`` of a bool (H, W) mask (0 for an empty mask), the perimeter
    counted as the pixel edges between the mask and the rest (the image's border too): a
    square's half side; for a disk about ``pi / 4`` times its radius (the edges along rows and
    columns are ``4 / pi`` times its perimeter).

    Examples
    --------
    >>> import numpy as np
    >>> mask = np.zeros((40, 40), bool)
    >>> mask[10:30, 10:30] = True
    >>> thickness(mask)
    10.0
    """
    xp = array_module(mask)
    counts = [xp.count_nonzero(part) for part in (
        mask, mask[1:] != mask[:-1], mask[:, 1:] != mask[:, :-1], mask[0], mask[-1],
        mask[:, 0], mask[:, -1])]
    area, *edges = to_host(xp.stack(counts)).tolist()  # one wait and copy on a GPU
    if not area:
        return 0.0
    return 2.0 * area / max(sum(edges), 1)


def with_hold(priors, costs, xp):
    """``priors`` (per label, object first, None or (H, W) nats) with the hold's ``costs``
    (per label, None or an array) added."""
    priors = list(priors) if priors is not None else [None, None]
    for index, cost in enumerate(costs):
        if cost is not None:
            cost = xp.asarray(cost)
            priors[index] = cost if priors[index] is None else priors[index] + cost
    return priors


def _where(chosen):
    """The host (rows, cols) of the True pixels of a bool (H, W) array (NumPy or CuPy; a flat
    search of a bool array: NumPy's 2-D ``nonzero``, or one of uint8, is ~10 times slower)."""
    index = to_host(array_module(chosen).flatnonzero(chosen.reshape(-1)))
    return np.divmod(index, chosen.shape[1])


def _grid(rows, cols, shape, block):
    """bool (ceil(H / block), ceil(W / block)): the blocks holding one of the pixels."""
    grid = np.zeros((-(-shape[0] // block), -(-shape[1] // block)), bool)
    grid[rows // block, cols // block] = True
    return grid


__all__ = ["GATE_FROM", "GATE_FULL", "HOLD_THICKNESS", "RELEASE_FROM", "RELEASE_FULL",
           "SATURATED", "blocks_holding", "check_previous", "hold_costs", "hold_weights",
           "release", "stroke_count", "thickness", "with_hold"]
