"""The learned model's weak prior from the image: which side of a global Otsu threshold of
the intensity each label's sample lies on, and how clearly (:func:`graded_prior`)."""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module, to_host

#: pixels at most whose intensities set the Otsu threshold (a regular subsample)
THRESHOLD_PIXELS = 1 << 16
#: marks are counted on a grid of at most this many cells a side (:func:`count_marks`)
MARK_GRID = 256


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


def graded_prior(features, samples, channels, *, bright=None):
    """Two labels' weak prior samples and their strength, graded by how far apart the
    labels' samples lie across the Otsu split: the label whose sample has the larger share of
    its weight on the bright side (:func:`bright_side`) gets the bright side, the other the
    dark side, and the strength is the difference of the two shares (0 to 1).

    Unlike :func:`intensity_prior`'s all-or-nothing rule, the strength changes by little when
    one click lands on a dim object or a bright patch of background, so that click cannot
    switch the whole prior off (on the development nuclei such a switch caused most falls of
    the IoU; docs/appearance.md, "The falls diagnosed").

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
    return (bright if first_bright else ~bright, ~bright if first_bright else bright), \
        strength


def count_marks(sample, *, grid=MARK_GRID):
    """How many separate marks (clicks or strokes: connected groups of pixels) a label's
    sample holds, counted on a grid of at most ``grid`` cells a side (each cell marked when
    any of its pixels is; 8-connected cells, 26 in a volume), so that the count costs the same
    at every image size and a mark's gaps of less than a cell do not split it.

    Parameters
    ----------
    sample : array (H, W) or (D, H, W)
        The label's sample: bool, or float weights (pixels > 0 count), NumPy or CuPy (pooled
        on its device, counted on the host).
    grid : int
        Cells a side at most.

    Returns
    -------
    int
        The number of marks (0 for an empty sample).

    Examples
    --------
    >>> import numpy as np
    >>> sample = np.zeros((40, 40), bool)
    >>> sample[2:6, 2:6] = sample[30:34, 5:9] = sample[20, 20:30] = True
    >>> count_marks(sample)
    3
    """
    from scipy import ndimage

    xp = array_module(sample)
    marked = sample > 0
    factor = max(1, -(-max(marked.shape) // int(grid)))
    if factor > 1:
        pads = [(0, (-n) % factor) for n in marked.shape]
        marked = xp.pad(marked, pads)
        pooled = marked.reshape(sum(((n // factor, factor) for n in marked.shape), ()))
        marked = pooled.any(axis=tuple(range(1, 2 * marked.ndim, 2)))
    cells = np.asarray(to_host(marked), dtype=bool)
    return int(ndimage.label(cells, structure=np.ones((3,) * cells.ndim))[1])


def prior_weight(samples, prior, marks_full) -> float:
    """The learned model's intensity prior weight before its strength, relative to a label's
    own sample: ``max(prior, min(1, marks_full / n))`` with ``n`` the mean number of marks
    (clicks or strokes, :func:`count_marks`) of the labels' samples; ``prior`` when
    ``marks_full`` is 0 (``Learned(prior=..., prior_marks=...)``).

    The classifier has ``2 F + 1`` weights; a few clicks do not pin them down, and one more
    click could turn a whole class of pixels over (on the development nuclei one background
    click made the object grow from 24 % to 45 % of the image). The image's own bright / dark
    split weighs as much as a label's sample while the clicks are few, and less as they add
    up, down to ``prior``.

    Parameters
    ----------
    samples : sequence of arrays (H, W)
        The labels' samples (bool or float weights), NumPy or CuPy.
    prior : float
        The weight once the marks are many (>= 0).
    marks_full : float
        Up to this many marks a label (on average) the weight is 1; 0: always ``prior``.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> one, four = np.zeros((64, 64), bool), np.zeros((64, 64), bool)
    >>> one[5, 5] = True
    >>> four[5, 5] = four[5, 50] = four[50, 5] = four[50, 50] = True
    >>> prior_weight((one, one), 0.3, 2), prior_weight((four, four), 0.3, 2)
    (1.0, 0.5)
    """
    if not marks_full:
        return float(prior)
    marks = sum(count_marks(sample) for sample in samples) / len(samples)
    return float(max(prior, min(1.0, marks_full / max(marks, 1.0))))


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
    flat = grey.reshape(-1)
    stride = max(1, flat.shape[0] // THRESHOLD_PIXELS)
    threshold = float(threshold_otsu(np.asarray(to_host(flat[::stride]), dtype=np.float64)))
    return grey > threshold
