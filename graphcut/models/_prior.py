"""The learned model's weak prior from the image: which side of a global Otsu threshold of
the intensity each label's sample lies on, and how clearly (:func:`graded_prior`)."""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module, to_host

#: pixels at most whose intensities set the Otsu threshold (a regular subsample)
THRESHOLD_PIXELS = 1 << 16
#: the graded prior is at full strength once the labels' bright shares differ by this much
#: (:func:`graded_prior`'s ``full_at``)
FULL_AT = 0.25


def intensity_prior(features, samples, channels, *, bright=None):
    """Two labels' weak prior samples from the image: a global Otsu threshold of the grey
    intensity smoothed at the first scale (the mean of the ``gauss*@1`` feature columns)
    splits the pixels into bright and dark; each label gets the side where most of its
    sample's weight lies, and neither gets one when both samples lie mostly on one side.
    The all-or-nothing rule :class:`~graphcut.models.Learned` used before 2026-11-27; it now
    uses :func:`graded_prior`.

    Parameters
    ----------
    features : array (H, W, F)
        :func:`~graphcut.models._features.pixel_features` of an image (NumPy or CuPy).
    samples : sequence of two arrays (H, W)
        The labels' samples: bool masks or float weights >= 0.
    channels : int
        The image's channel count (the ``gauss*@1`` columns are ``channels .. 2 channels``).
    bright : array (H, W) of bool, optional
        :func:`bright_side` of these features, if already known (it depends on the image
        only: a :class:`~graphcut.Segmenter` computes it once).

    Returns
    -------
    tuple
        ``(mask_0, mask_1)``: bool arrays (H, W) on the features' device, one the other's
        complement, or ``(None, None)``.

    Examples
    --------
    >>> import numpy as np
    >>> values = np.zeros((8, 8, 1), np.float32)
    >>> values[:, 4:] = 1.0
    >>> from graphcut.models._features import pixel_features
    >>> features = pixel_features(values, scales=(1.0,))
    >>> dark, bright = np.zeros((8, 8), bool), np.zeros((8, 8), bool)
    >>> dark[:, 0], bright[:, 7] = True, True
    >>> first, second = intensity_prior(features, (bright, dark), 1)
    >>> bool(first[:, 7].all() and second[:, 0].all())
    True
    """
    xp = array_module(features)
    if bright is None:
        bright = bright_side(features, channels)
    sides = []
    for sample in samples:
        weight = xp.asarray(sample, dtype=xp.float64)
        total = float(weight.sum())
        sides.append(float((weight * bright).sum()) / total > 0.5 if total > 0 else None)
    if None in sides or sides[0] == sides[1]:
        return None, None
    return tuple(bright if side else ~bright for side in sides)


def graded_prior(features, samples, channels, *, bright=None, full_at=None):
    """Two labels' weak prior samples and their strength, graded by how far apart the
    labels' samples lie across the Otsu split: the label whose sample has the larger share of
    its weight on the bright side (:func:`bright_side`) gets the bright side, the other the
    dark side, and the strength is the difference ``d`` of the two shares (0 to 1), or
    ``min(1, d / full_at)``.

    Unlike :func:`intensity_prior`'s all-or-nothing rule, the strength changes by little when
    one click lands on a dim object or a bright patch of background, so that click cannot
    switch the whole prior off (on the development nuclei such a switch caused most falls of
    the IoU; docs/appearance-microscopy.md, "The falls diagnosed"). With ``full_at`` (the learned
    model's :data:`FULL_AT`, 0.25), the strength stays full while the labels' samples lie
    clearly apart: corrective clicks land on the atypical pixels (pale nuclei, bright gaps
    between nuclei), and each such click would otherwise weaken the prior a little more, and
    most while the clicks are few.

    Parameters
    ----------
    features : array (H, W, F)
        :func:`~graphcut.models._features.pixel_features` of an image (NumPy or CuPy).
    samples : sequence of two arrays (H, W)
        The labels' samples: bool masks or float weights >= 0.
    channels : int
        The image's channel count.
    bright : array (H, W) of bool, optional
        :func:`bright_side` of these features, if already known.
    full_at : float, optional
        The difference of the shares (0, 1] from which the strength is 1; None: the
        difference itself is the strength.

    Returns
    -------
    tuple
        ``((mask_0, mask_1), strength)``: bool arrays (H, W) on the features' device, one the
        other's complement, and a float in (0, 1]; ``((None, None), 0.0)`` when a sample is
        empty or both have the same bright share.

    Examples
    --------
    >>> import numpy as np
    >>> values = np.zeros((8, 8, 1), np.float32)
    >>> values[:, 4:] = 1.0
    >>> from graphcut.models._features import pixel_features
    >>> features = pixel_features(values, scales=(1.0,))
    >>> obj, bg = np.zeros((8, 8), bool), np.zeros((8, 8), bool)
    >>> obj[0, 6], obj[0, 1], bg[7, 0] = True, True, True
    >>> (first, second), strength = graded_prior(features, (obj, bg), 1)
    >>> bool(first[:, 7].all() and second[:, 0].all()), strength
    (True, 0.5)
    >>> graded_prior(features, (obj, bg), 1, full_at=0.25)[1]
    1.0
    """
    xp = array_module(features)
    if bright is None:
        bright = bright_side(features, channels)
    shares = []
    for sample in samples:
        weight = xp.asarray(sample, dtype=xp.float64)
        total = float(weight.sum())
        if not total > 0:
            return (None, None), 0.0
        shares.append(float((weight * bright).sum()) / total)
    strength = abs(shares[0] - shares[1])
    if strength < 1e-9:
        return (None, None), 0.0
    first_bright = shares[0] > shares[1]
    if full_at is not None:
        strength = min(1.0, strength / full_at)
    return (bright if first_bright else ~bright, ~bright if first_bright else bright), \
        strength


def outline_cost(region, strength, reach, *, max_reach=None):
    """The learned model's position prior for a box or lasso: an extra object cost (nats)
    that is 0 deep in the region and rises linearly to ``strength`` at its outline,
    ``strength * max(0, 1 - d / min(reach * d_max, max_reach))`` with ``d`` the Euclidean
    distance (pixels) of a pixel of the region to the nearest pixel outside it (the image
    border counts as outline) and ``d_max`` its largest value; 0 outside the region (pinned
    there anyway).

    A box is drawn around the object with a margin: its corners and the band along its sides
    are mostly background, which a classifier trained on the core against the outside does not
    know (the halo of a small nucleus resembles the nucleus more than the far background).

    Parameters
    ----------
    region : array (H, W) or (D, H, W) of bool
        The box's or lasso's inside (NumPy or CuPy; the distances are computed on the host
        over the region's bounding window, with SciPy).
    strength : float
        The cost at the outline, nats (> 0).
    reach : float
        The share (0, 1] of the largest distance within which the cost rises (the learned
        model's ``OUTLINE_REACH``, 0.35: inside its core of 0.5, which costs nothing).
    max_reach : float, optional
        The largest distance (pixels) within which the cost rises (the learned model's
        ``OUTLINE_PIXELS``, 10): the halo a box's margin holds is a few pixels wide whatever
        the object's size, and a large object's outline lies close to its box.

    Returns
    -------
    numpy.ndarray of float64, the region's shape

    Examples
    --------
    >>> import numpy as np
    >>> region = np.zeros((7, 9), bool); region[1:6, 1:8] = True
    >>> cost = outline_cost(region, 3.0, 0.5)
    >>> float(cost[3, 4]), float(cost[1, 1]), float(cost[0, 0])
    (0.0, 1.0, 0.0)
    """
    from scipy import ndimage

    inside = np.asarray(to_host(region), dtype=bool)
    cost = np.zeros(inside.shape)
    if not inside.any():
        return cost
    window = ndimage.find_objects(inside.astype(np.uint8))[0]
    part = inside[window]
    distance = ndimage.distance_transform_edt(np.pad(part, 1))[(slice(1, -1),) * part.ndim]
    scale = max(reach, 1e-9) * float(distance.max())
    if max_reach is not None:
        scale = min(scale, float(max_reach))
    cost[window] = np.where(part, strength * np.clip(1.0 - distance / scale, 0.0, 1.0), 0.0)
    return cost


def bright_side(features, channels):
    """The pixels brighter than a global Otsu threshold of the grey intensity smoothed at the
    first scale (bool (H, W), on the features' device).

    Parameters
    ----------
    features : array (H, W, F)
        :func:`~graphcut.models._features.pixel_features` of an image (NumPy or CuPy).
    channels : int
        The image's channel count.

    Returns
    -------
    array (H, W) of bool
    """
    from skimage.filters import threshold_otsu

    grey = features[..., channels:2 * channels].mean(axis=-1)
    return grey > float(threshold_otsu(grey_sample(grey)))


def grey_sample(grey):
    """A regular subsample of at most about :data:`THRESHOLD_PIXELS` of ``grey``'s values
    (any shape, NumPy or CuPy), on the host in float64: what the global thresholds and
    medians are taken on (one copy from a GPU)."""
    flat = grey.reshape(-1)
    stride = max(1, flat.shape[0] // THRESHOLD_PIXELS)
    return np.asarray(to_host(flat[::stride]), dtype=np.float64)
