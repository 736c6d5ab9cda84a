"""The learned model's intensity prior split locally (:class:`Learned(split="local")
<graphcut.models.Learned>`; the eighteenth session): the global Otsu
threshold lowered where the image is dim, but not below a share of the way to the nearest
bright peak (:func:`local_bright_side`).

One global Otsu split of the grey (:func:`~._prior.bright_side`) is too strict on most
microscopy: it misses the rims of nuclei and whole dim nuclei next to bright ones (on the
development images its object side holds 65-84 % of the truth on the DSB groups;
docs/appearance-microscopy.md, "The seventeenth session"), and the classifier, which learns
from the prior's two sides, follows it. Here the threshold of each pixel is

``min(t, max(local, (t + median) / 2, median + PEAK_SHARE (peak - median)))``

with ``t`` the global Otsu threshold, ``median`` the image's median grey, ``local`` the grey's
Gaussian mean over about :data:`BLOCK` pixels (the local background and its nuclei) and
``peak`` the largest grey (smoothed at 2 pixels) within :data:`PEAK_RADIUS` pixels. It is never
above Otsu's (only more pixels join the object's side), dim regions get a lower one down to
halfway from Otsu's to the median, and the guard of the nearby peak keeps the halo of a bright
nucleus (grey well below its peak) on the background's side. The object's side is the brighter
one when Otsu's bright side is the smaller (fluorescence), the darker one otherwise (stained
tissue): the split is written for the image's nuclei.
"""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module, to_host

#: pixels at most whose intensities set the Otsu threshold and the median (a regular subsample;
#: as :data:`~._prior.THRESHOLD_PIXELS`)
THRESHOLD_PIXELS = 1 << 16
#: the local mean's window (pixels): a Gaussian of sigma ``(BLOCK - 1) / 6``
BLOCK = 101
#: the nearby peak: its radius (pixels; a ``2 r + 1`` square) and the smoothing of the grey
#: before its maximum (pixels)
PEAK_RADIUS, PEAK_SIGMA = 10, 2.0
#: a pixel lies on the object's side only above this share of the way from the median grey to
#: its nearby peak
PEAK_SHARE = 0.3


def _ndimage(xp):
    if xp.__name__ == "numpy":
        from scipy import ndimage
    else:  # pragma: no cover - CuPy (the NumPy stand-in in the tests)
        from cupyx.scipy import ndimage
    return ndimage


def local_threshold(grey, *, block=BLOCK, radius=PEAK_RADIUS, share=PEAK_SHARE):
    """The local threshold map of a grey image whose objects are its bright side (see the
    module's notes) and the image's global Otsu threshold.

    Parameters
    ----------
    grey : array (H, W) of float
        The grey intensity (NumPy or CuPy; any units).
    block : int
        The local mean's window (pixels).
    radius : int
        The nearby peak's radius (pixels).
    share : float
        The share (0 to 1) of the way from the median to the nearby peak below which a pixel
        lies on the dark side.

    Returns
    -------
    tuple
        ``(threshold, otsu)``: float64 array (H, W) on the grey's device (grey's units), at
        most ``otsu`` everywhere, and the global threshold (float).

    Examples
    --------
    >>> import numpy as np
    >>> grey = np.zeros((64, 64)); grey[4:28, 4:28] = 1.0; grey[40:46, 40:46] = 0.2
    >>> threshold, otsu = local_threshold(grey, block=21, radius=4)
    >>> bool((grey > threshold)[43, 43]), bool(grey[43, 43] > otsu)  # the dim square
    (True, False)
    >>> bool(threshold[29, 12] == otsu)           # next to the bright one: Otsu's threshold
    True
    """
    from skimage.filters import threshold_otsu

    xp = array_module(grey)
    ndimage = _ndimage(xp)
    grey = xp.asarray(grey, dtype=xp.float64)
    flat = grey.reshape(-1)
    sample = np.asarray(to_host(flat[::max(1, flat.shape[0] // THRESHOLD_PIXELS)]),
                        dtype=np.float64)
    otsu = float(threshold_otsu(sample))
    median = float(np.median(sample))
    local = ndimage.gaussian_filter(grey, (int(block) - 1) / 6.0, mode="nearest")
    peak = ndimage.maximum_filter(ndimage.gaussian_filter(grey, PEAK_SIGMA),
                                  size=2 * int(radius) + 1, mode="nearest")
    floor = xp.maximum(local, 0.5 * (otsu + median))
    return xp.minimum(otsu, xp.maximum(floor, median + share * (peak - median))), otsu


def local_bright_side(features, channels, *, block=BLOCK, radius=PEAK_RADIUS,
                      share=PEAK_SHARE):
    """The pixels on the bright side of the local split of the grey intensity smoothed at the
    first scale (bool (H, W), on the features' device): :func:`local_threshold` of the grey
    when Otsu's bright side is at most half the image, else of the negated grey (the objects
    dark), its object side then the dark side.

    Parameters
    ----------
    features : array (H, W, F)
        :func:`~graphcut.models._features.pixel_features` of an image (NumPy or CuPy).
    channels : int
        The image's channel count (the ``gauss*@1`` columns are ``channels .. 2 channels``).
    block, radius, share
        :func:`local_threshold`'s.

    Returns
    -------
    array (H, W) of bool

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.models._features import pixel_features
    >>> values = np.full((64, 64, 1), 0.9, np.float32)            # bright background
    >>> values[8:16, 8:16], values[40:48, 40:48] = 0.0, 0.6       # a dark and a pale nucleus
    >>> bright = local_bright_side(pixel_features(values, scales=(1.0,)), 1, block=21)
    >>> bool(bright[2, 2]), bool(bright[12, 12]), bool(bright[44, 44])
    (True, False, False)
    """
    from skimage.filters import threshold_otsu

    xp = array_module(features)
    grey = features[..., channels:2 * channels].mean(axis=-1).astype(xp.float64)
    flat = grey.reshape(-1)
    otsu = float(threshold_otsu(np.asarray(
        to_host(flat[::max(1, flat.shape[0] // THRESHOLD_PIXELS)]), dtype=np.float64)))
    if float((grey > otsu).mean()) <= 0.5:  # the objects are the bright side
        return grey > local_threshold(grey, block=block, radius=radius, share=share)[0]
    return ~(-grey > local_threshold(-grey, block=block, radius=radius, share=share)[0])


__all__ = ["BLOCK", "PEAK_RADIUS", "PEAK_SHARE", "PEAK_SIGMA", "local_bright_side",
           "local_threshold"]
