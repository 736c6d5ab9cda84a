"""The learned model's costs weighed more near the previous mask's outline
(:class:`Learned <graphcut.models.Learned>`'s ``rim`` and ``rim_band``).

After five clicks on small touching nuclei what is still wrong is a rim about 2 pixels wide
inside the truth's outline (docs/appearance-microscopy.md, "The fourteenth session"): the
robot's and a user's clicks land inside the largest error regions, never on a 2-pixel rim, and
the boundary term holds the outline in where the classifier's evidence is weak. A lighter
boundary term everywhere gives the rims back but lets every early lesson of the classifier (a
dim nucleus clicked as object) spread across the image. Here, given the previous update's
mask (``previous``), the classifier's costs weigh :data:`RIM` times more only within
:data:`RIM_BAND` pixels of that mask's outline, and are unchanged elsewhere: the outline moves
by up to about a band per update towards where the classifier puts it. From ``hold_after``
strokes the hold's costs (:mod:`graphcut.segmentation._hold`) weigh as much more in
the band, so that a held object far from the new stroke keeps its outline too; before, the
confidence-gated hold is not weighed and the classifier outweighs it in the band (weighing it
alike kept the halos that a click on a dim nucleus had grown: more falls on the dev
trajectories; docs/appearance-microscopy.md, "The fifteenth session"). The weights are a
function of the previous mask only, so an update equals a fresh segmentation given the same
``previous``; the previous classifier's log-odds (the hold's gate) are the classifier's,
unweighted.
"""

from __future__ import annotations

from graphcut._arrays import array_module

#: the classifier's costs within RIM_BAND pixels of the previous outline weigh this much
#: (1: off; chosen on the dev trajectories)
RIM = 16.0
#: the band's half width (pixels, the Chebyshev distance to a pixel of the other side)
RIM_BAND = 1


def rim_weights(guide, trust=RIM, band=RIM_BAND):
    """Per-pixel weights of the classifier's costs: ``trust`` on the pixels that have a pixel
    of the other side of ``guide`` within ``band`` pixels (in their ``2 band + 1`` square,
    inside the image), 1 elsewhere; None when off.

    Two square filters of the mask (maximum and minimum) on its device; no copy to the host.

    Parameters
    ----------
    guide : array (H, W) of bool, or None
        The previous update's mask (NumPy or CuPy); None: off.
    trust : float
        The weight in the band; 1: off.
    band : int
        The band's half width in pixels; 0: off.

    Returns
    -------
    array (H, W) of float64, or None

    Examples
    --------
    >>> import numpy as np
    >>> mask = np.zeros((1, 8), bool); mask[0, :4] = True
    >>> rim_weights(mask, 3.0, 2)[0].tolist()
    [1.0, 1.0, 3.0, 3.0, 3.0, 3.0, 1.0, 1.0]
    >>> rim_weights(mask, 1.0, 2) is None
    True
    """
    trust, band = float(trust), int(band)
    if guide is None or trust == 1.0 or band < 1:
        return None
    xp = array_module(guide)
    guide = xp.asarray(guide, dtype=bool)
    if xp.__name__ == "numpy":
        from scipy import ndimage
    else:  # cupy
        from cupyx.scipy import ndimage
    size = 2 * band + 1
    grown = ndimage.maximum_filter(guide, size=size, mode="nearest")
    shrunk = ndimage.minimum_filter(guide, size=size, mode="nearest")
    return xp.where(grown & ~shrunk, trust, 1.0)


__all__ = ["RIM", "RIM_BAND", "rim_weights"]
