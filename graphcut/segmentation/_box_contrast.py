"""The contrast term's sigma from the box: a box's n-links weigh colour differences against the
box's own contrast, not the whole image's.

``w_pq = exp(-||I_p - I_q||^2 / (2 sigma^2))`` (:mod:`._boundary`) with sigma, when the caller
gave none, :data:`BOX_SIGMA_SHARE` times :func:`~graphcut.segmentation.estimate_sigma` of the
box's pixels (:func:`~._neighbours.estimate_sigma8` with 8-connected n-links) instead of the
whole image's. A box around one small nucleus on a large micrograph holds one object's edge and
a little background: its own contrast sets the scale at which an edge is an edge there (the
image's is mostly other nuclei and flat background). Measured on the 76 dev boxes of real
micrographs and the photo cut-outs (bench/RESULTS.md, "fifteenth session, box15"): only for
the models named in :data:`BOX_SIGMA_MODELS`, and an image's box (a volume's keeps the
volume's sigma).

A :class:`~graphcut.segmentation.Segmenter` rebuilds its n-links when a box arrives, changes or
goes (:class:`BoxContrast`): the sigma is a function of the box alone, so an update equals a
fresh :func:`graphcut.segment` with the same seeds, box and options. The cost of a new box is
one computation of the image's n-link weights (as the ``Segmenter`` makes at its start: the
squared differences and ``exp`` per neighbour pair, on the image's device, GPU kernels
included) and the solver's n-links replaced (``GridCuts.set_nlinks``: the GPU keeps its
preflow through the change, Kohli-Torr; PyMaxflow's graph starts over). The same box again
costs nothing.
"""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module, to_host

from ._boundary import estimate_sigma, weights_of_values
from ._neighbours import diagonal_weights, estimate_sigma8
from ._regions import box_mask

#: the box's sigma is this share of its pixels' estimate (dimensionless; None or 0: off).
#: Chosen on the 76 dev boxes (fourteenth session, box14: 0.25-2 tried, 0.5 best).
BOX_SIGMA_SHARE = 0.5
#: the appearance models (by name) whose box takes its own sigma
BOX_SIGMA_MODELS = ("learned",)


def box_sigma(values, box, *, connectivity: int = 4, share: float | None = None) -> float:
    """The contrast sigma of ``box``'s pixels: ``share`` times their estimate.

    Parameters
    ----------
    values : array
        The image's float values with their channels last, (H, W, C) or (D, H, W, C), scaled
        as :func:`graphcut._arrays.image_as_float` does; NumPy or CuPy.
    box : sequence of int
        ``(row0, col0, row1, col1)`` (a volume's ``(z0, y0, x0, z1, y1, x1)``), half-open,
        inside the image.
    connectivity : {4, 8}
        8: the estimate over the 8 neighbours (an image only), as ``connectivity=8`` takes the
        image's.
    share : float, optional
        The factor (dimensionless); None: :data:`BOX_SIGMA_SHARE`.

    Returns
    -------
    float
        sigma, in the units of ``values`` (colour difference).

    Raises
    ------
    ValueError
        A malformed box or one reaching outside the image (:func:`box_mask`'s message).

    Examples
    --------
    >>> import numpy as np
    >>> values = np.zeros((4, 6, 1))
    >>> values[:, 3:] = 0.8                # an edge of 0.8 at column 3
    >>> box = (0, 2, 4, 5)                 # 17 neighbour pairs, 4 of them across the edge
    >>> box_sigma(values, box) == 0.5 * (4 * 0.8 ** 2 / 17) ** 0.5
    True
    """
    spatial = values.ndim - 1
    box_mask(values.shape[:-1], box)  # the pipeline's checks and messages
    box = [int(v) for v in box]
    inside = tuple(slice(a, b) for a, b in zip(box[:spatial], box[spatial:]))
    pixels = array_module(values).ascontiguousarray(values[inside])
    share = BOX_SIGMA_SHARE if share is None else float(share)
    if connectivity == 8:
        return share * estimate_sigma8(to_host(pixels))
    return share * estimate_sigma(pixels, channel_axis=-1)


def takes_box_sigma(options, box) -> bool:
    """Whether this update's n-links take the box's sigma: an image's box (four numbers; a
    volume's keeps the volume's sigma: not measured), no sigma from the caller, a model of
    :data:`BOX_SIGMA_MODELS` and :data:`BOX_SIGMA_SHARE` set; ``options`` as
    :func:`~._options.resolve_options` returns them."""
    return (box is not None and np.size(box) == 4 and options["sigma"] is None
            and bool(BOX_SIGMA_SHARE) and options["model"] in BOX_SIGMA_MODELS)


class BoxContrast:
    """The :class:`~graphcut.segmentation.Segmenter`'s n-links for the box of an update (a
    mix-in: it reads and sets the session's weights, lam and solver)."""

    #: the sigma the n-links were last built with from a box; None: the image's
    _contrast_sigma = None
    #: the box (its four values) that sigma came from; None: no box took its own sigma
    _contrast_box = None

    def _contrast_weights(self, sigma) -> None:
        """The float n-link weights of the image's values with this ``sigma`` (None: the
        image's estimate), last axis first, and the diagonals' with 8-connected n-links."""
        self._weights = weights_of_values(self._values, sigma, self._options["spacing"])
        if self._options["connectivity"] == 8:
            self._diagonal_weights = diagonal_weights(to_host(self._values), sigma)

    def _contrast_for(self, box) -> None:
        """Build the n-links of this update's ``box`` (its sigma, :func:`box_sigma`), or the
        image's again when the box goes; nothing when they are already these."""
        if self._values is None:  # the table route (the histogram) keeps the image's
            return
        o = self._options
        key = tuple(np.ravel(box).tolist()) if takes_box_sigma(o, box) else None
        if key is not None and key == self._contrast_box:
            return  # the same box again: its sigma is a function of the box alone
        sigma = None if key is None else box_sigma(self._values, box,
                                                   connectivity=o["connectivity"])
        self._contrast_box = key  # after box_sigma's checks of the box
        if sigma == self._contrast_sigma:
            return
        self._contrast_sigma = sigma
        one_shot = self._weights is None  # graphcut.segment's session: no later set_lam
        self._contrast_weights(self.sigma if sigma is None else sigma)
        lam, self.lam = self.lam, None
        self._set_lam(lam)  # quantised again (pins, diagonals); the solver's replaced
        if one_shot:
            self._weights = None


__all__ = ["BOX_SIGMA_MODELS", "BOX_SIGMA_SHARE", "BoxContrast", "box_sigma",
           "takes_box_sigma"]
