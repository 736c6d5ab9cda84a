"""A model's outline cost for a box or lasso, on the image's device, kept between strokes.

The GMM (``GMM(outline=...)``) and the learned model raise the object's cost near a box's or
lasso's outline (:func:`graphcut.models._prior.outline_cost`: a distance transform of the
region on the host). A stroke's update would pay that transform and the upload of an (H, W)
float array every time (about 0.1 s at 4 MP); here:

- for a box the distance of a pixel to the nearest pixel outside is the smaller of its
  distances to the nearest row and the nearest column outside (straight across is always
  nearest), so the cost is computed in closed form on the device
  (:func:`box_outline_cost`), equal to the transform's;
- a box's side on the image border costs nothing (:data:`BORDER_SHARE`, since the
  thirteenth session): a box drawn to the border says nothing of where the object ends
  there (the object may run out of the picture), unlike a side drawn with a margin around it;
- the cost is kept on the model object for the next updates with the same box (or the same
  lasso region object) and strength;
- since the eighteenth session a large enough 2-D box of the learned model adds the box's
  own level prior (:mod:`._box_level`, the model's ``level`` nats) to the kept cost.
"""

from __future__ import annotations

import numpy as np

from graphcut._arrays import to_host

from . import _box_level
from ._box_neighbours import image_values

#: the share of the outline cost a box's side on the image border gets (1: the image border
#: counts as outline, as before the thirteenth session; on the real photographs' development
#: split the dining table, cut by the picture's bottom and right edges, went from box IoU
#: 0.37 to 0.58 and from 20 to 13 interactions to 0.90; docs/appearance.md)
BORDER_SHARE = 0.0


def box_outline_cost(shape, box, strength, reach, max_reach=None, xp=np):
    """The outline cost of a box, ``strength * clip(1 - d / scale, 0, 1)`` inside it (0
    outside), ``d`` the Euclidean distance of a pixel to the nearest pixel outside the box
    (the image border counts as outside), ``scale = min(reach * max d, max_reach)``: the
    same numbers as :func:`graphcut.models._prior.outline_cost` of the box's region, except
    that a side of the box on the image border costs :data:`BORDER_SHARE` of it (0: ``d``
    is then the distance to the nearest of the other sides; ``scale`` unchanged).

    Parameters
    ----------
    shape : tuple of int
        The image's (H, W).
    box : tuple of int
        ``(row0, col0, row1, col1)``, half-open, inside the image.
    strength : float
        The cost at the outline, nats.
    reach : float
        The share of the largest distance within which the cost rises.
    max_reach : float, optional
        The largest distance (pixels) within which it rises.
    xp : module
        NumPy or CuPy: where the array is made.

    Returns
    -------
    array (H, W) of float64, on ``xp``'s device

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.models._prior import outline_cost
    >>> region = np.zeros((7, 9), bool); region[1:6, 1:8] = True
    >>> bool(np.array_equal(box_outline_cost((7, 9), (1, 1, 6, 8), 3.0, 0.5),
    ...                     outline_cost(region, 3.0, 0.5)))
    True
    >>> box_outline_cost((7, 9), (0, 1, 6, 8), 3.0, 0.5)[:, 4].tolist()  # top side open
    [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    """
    h, w = (int(n) for n in shape)
    r0, c0, r1, c1 = (int(v) for v in box)
    rows = np.minimum(np.arange(1, r1 - r0 + 1), np.arange(r1 - r0, 0, -1)).astype(np.float64)
    cols = np.minimum(np.arange(1, c1 - c0 + 1), np.arange(c1 - c0, 0, -1)).astype(np.float64)
    largest = float(min(rows.max(), cols.max()))
    scale = max(reach, 1e-9) * largest
    if max_reach is not None:
        scale = min(scale, float(max_reach))
    # the cost falls with the distance, so the cost of the smaller of a pixel's two axis
    # distances is the larger of their costs: two vectors on the host, one maximum there
    row_cost = _side_costs(r0, r1, h, strength, scale)
    col_cost = _side_costs(c0, c1, w, strength, scale)
    cost = xp.zeros((h, w), dtype=xp.float64)
    cost[r0:r1, c0:c1] = xp.maximum(xp.asarray(row_cost)[:, None], xp.asarray(col_cost)[None, :])
    return cost


def _side_costs(start, stop, size, strength, scale):
    """Per row (column) of the box's span ``[start, stop)``: the larger of its two sides'
    costs, ``strength * clip(1 - d / scale, 0, 1)`` with ``d`` the distance to the nearest
    row (column) outside; a side on the image border costs :data:`BORDER_SHARE` of it."""
    before = np.arange(1, stop - start + 1, dtype=np.float64)
    after = before[::-1]
    share_before = BORDER_SHARE if start == 0 else 1.0
    share_after = BORDER_SHARE if stop == size else 1.0
    return np.maximum(share_before * strength * np.clip(1.0 - before / scale, 0.0, 1.0),
                      share_after * strength * np.clip(1.0 - after / scale, 0.0, 1.0))


def level_nats(model) -> float:
    """Nats of the box's level prior for ``model``: its ``level`` (None:
    :data:`~._box_level.LEVEL_COST`); 0 for a model without that knob (only the learned
    model has it)."""
    if not hasattr(model, "level"):
        return 0.0
    value = model.level
    return _box_level.LEVEL_COST if value is None else float(value)


def outline_priors(model, region, box, xp, values=None):
    """The labels' fixed costs ``[object's outline cost, None]`` for ``model`` (one with
    ``outline`` > 0) and the region (``box`` when it is exactly that box, else None), on
    ``xp``'s device, kept on the model for the next call with the same box (or region object)
    and strength.

    A 2-D box gets the closed form of :func:`box_outline_cost` (the model's ``outline_reach``
    and ``outline_pixels``); a lasso or a volume's box the model's ``outline_costs(region)``
    (then kept on the device). With the image's ``values`` ((H, W, C), on ``xp``'s device:
    the model's features whose first ``model._channels`` columns are the image's channels) a
    2-D box adds the box's level prior (:func:`~._box_level.with_level_cost`, the model's
    :func:`level_nats`), kept with the same values object.

    Returns
    -------
    list
        ``[cost (H, W), None]``.
    """
    shape = tuple(int(n) for n in region.shape)
    nats = level_nats(model) if values is not None and box is not None and len(shape) == 2 \
        else 0.0
    key = (shape, None if box is None else tuple(int(v) for v in box), float(model.outline),
           xp.__name__, nats)
    kept = getattr(model, "_outline_kept", None)
    if kept is not None and kept[0] == key and (box is not None or kept[1] is region) and \
            (nats == 0.0 or kept[3] is values):
        return [kept[2], None]
    if box is not None and len(shape) == 2:
        cost = box_outline_cost(shape, box, model.outline, model.outline_reach,
                                model.outline_pixels, xp)
        if nats > 0:
            cost = _box_level.with_level_cost(cost, image_values(values, model), box, nats)
    else:
        cost = xp.asarray(to_host(model.outline_costs(region)))
    model._outline_kept = (key, region, cost, values if nats > 0 else None)
    return [cost, None]
